package ops

import (
	"fmt"
	"slices"
	"strings"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// This file holds the machinery shared by the path ops: parsing paths,
// walking down nested struct fields, and rebuilding the structs along a
// path after one of them gained a field. A rebuilt struct shares every
// field it did not change, and its partitions.
//
// Path ops see a struct's elements (its innermost structures, one per row
// of each flat field), never its outer dimensions: a field's value "per
// element" is one row of its flat value. A root of rank 0 is treated as a
// root of one element and given back as rank 0.

// parsePath splits "a.b.c" into its steps.
func parsePath(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty path", ErrPath)
	}
	steps := strings.Split(path, ".")
	for _, s := range steps {
		if !st.ValidFieldName(s) {
			return nil, fmt.Errorf("%w: %q: bad step %q", ErrPath, path, s)
		}
	}
	return steps, nil
}

// parseOptionalPath is parsePath where "" means the root.
func parseOptionalPath(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	return parsePath(path)
}

func joinPath(steps []string) string {
	if len(steps) == 0 {
		return "(root)"
	}
	return strings.Join(steps, ".")
}

// structChain returns the structs along steps: chain[0] is root and
// chain[i] the flat value of field steps[i-1] of chain[i-1].
func structChain(root *st.StructTensor, steps []string) ([]*st.StructTensor, error) {
	chain := make([]*st.StructTensor, len(steps)+1)
	chain[0] = root
	for i, s := range steps {
		v, ok := chain[i].Field(s)
		if !ok {
			return nil, fmt.Errorf("%w: %q: no field %q (fields: %s)", ErrPath, joinPath(steps[:i+1]), s, strings.Join(chain[i].FieldNames(), ", "))
		}
		c, ok := v.(*st.StructTensor)
		if !ok {
			return nil, fmt.Errorf("%w: %q is a %s, not a struct", ErrPath, joinPath(steps[:i+1]), kindName(v))
		}
		chain[i+1] = c
	}
	return chain, nil
}

// leaf returns the flat value of the last step of steps and the chain of
// structs above it.
func leaf(root *st.StructTensor, steps []string) ([]*st.StructTensor, st.Value, error) {
	chain, err := structChain(root, steps[:len(steps)-1])
	if err != nil {
		return nil, nil, err
	}
	parent := chain[len(chain)-1]
	v, ok := parent.Field(steps[len(steps)-1])
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q: no field %q (fields: %s)", ErrPath, joinPath(steps), steps[len(steps)-1], strings.Join(parent.FieldNames(), ", "))
	}
	return chain, v, nil
}

// withFields returns a struct of s's shape with the given flat fields.
func withFields(s *st.StructTensor, fields []st.Field) (*st.StructTensor, error) {
	if s.Rank() == 0 {
		return st.NewScalarStruct(fields...)
	}
	return st.NewPartitionedStruct(s.NumRows(), s.Partitions(), fields...)
}

// setField returns s with field name replaced by v, or added at the end.
func setField(s *st.StructTensor, name string, v st.Value) (*st.StructTensor, error) {
	fields := slices.Clone(s.Fields())
	i := slices.IndexFunc(fields, func(f st.Field) bool { return f.Name == name })
	if i < 0 {
		fields = append(fields, st.Field{Name: name, Value: v})
	} else {
		fields[i].Value = v
	}
	return withFields(s, fields)
}

// rebuild replaces the deepest struct of chain (at steps) by deep and
// rebuilds the structs above it.
func rebuild(chain []*st.StructTensor, steps []string, deep *st.StructTensor) (*st.StructTensor, error) {
	for i := len(steps); i > 0; i-- {
		var err error
		if deep, err = setField(chain[i-1], steps[i-1], deep); err != nil {
			return nil, fmt.Errorf("%q: %w", joinPath(steps[:i]), err)
		}
	}
	return deep, nil
}

// addField adds the flat value v as a new field name of the struct at
// steps.
func addField(root *st.StructTensor, steps []string, name string, v st.Value) (*st.StructTensor, error) {
	if !st.ValidFieldName(name) {
		return nil, fmt.Errorf("%w: new field name %q", ErrPath, name)
	}
	chain, err := structChain(root, steps)
	if err != nil {
		return nil, err
	}
	target := chain[len(chain)-1]
	if _, dup := target.Field(name); dup {
		return nil, fmt.Errorf("%w: %q", ErrFieldExists, joinPath(append(slices.Clone(steps), name)))
	}
	deep, err := setField(target, name, v)
	if err != nil {
		return nil, fmt.Errorf("new field %q: %w", joinPath(append(slices.Clone(steps), name)), err)
	}
	return rebuild(chain, steps, deep)
}

// onElements runs f on root, giving a rank-0 root one outer row while f
// runs, so that every struct f sees has rank >= 1 and flat fields.
func onElements(root *st.StructTensor, f func(*st.StructTensor) (*st.StructTensor, error)) (*st.StructTensor, error) {
	if root.Rank() > 0 {
		return f(root)
	}
	e, err := expandOuter(root)
	if err != nil {
		return nil, err
	}
	out, err := f(e.(*st.StructTensor))
	if err != nil {
		return nil, err
	}
	s, err := squeezeOuter(out)
	if err != nil {
		return nil, err
	}
	return s.(*st.StructTensor), nil
}

// siblingPath returns the steps of newPath, which is either a bare field
// name (placed under parent) or a path whose parent is parent.
func siblingPath(parent []string, newPath string) (string, error) {
	steps, err := parsePath(newPath)
	if err != nil {
		return "", err
	}
	if len(steps) == 1 {
		return steps[0], nil
	}
	if !slices.Equal(steps[:len(steps)-1], parent) {
		return "", fmt.Errorf("%w: %q is not under %s", ErrPath, newPath, joinPath(parent))
	}
	return steps[len(steps)-1], nil
}

// firstDim splits the flat value v (one row per parent element) into the
// partition of its first per-element dimension and the values that
// partition groups. A value with no per-element dimension (one scalar or
// one struct per element) is an error naming path.
func firstDim(v st.Value, path []string) (*st.RowPartition, st.Value, error) {
	if v.Rank() < 2 {
		return nil, nil, fmt.Errorf("%w: %q has one value per parent, not a list", ErrPath, joinPath(path))
	}
	parts, flat, err := st.SplitOuterDims(v, 2)
	if err != nil {
		return nil, nil, err
	}
	return parts[0], flat, nil
}
