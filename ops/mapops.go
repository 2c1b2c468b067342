package ops

import (
	"fmt"
	"slices"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// Map adds the field newPath next to the sources srcPaths (sibling leaves
// of one shape): fn is called once per value position with the sources'
// values there (bool, int32, int64, uint32, uint64, float32, float64 or
// string, in the order of srcPaths) and returns the new value, a Go scalar
// of type out. The new field has the sources' shape, and shares their
// partitions. newPath is a field name or a path with the sources' parent.
//
// Map boxes each value in an interface; MapValues is the typed, unboxed
// form for one source.
func Map(root *st.StructTensor, newPath string, out st.DType, fn func(args []any) (any, error), srcPaths ...string) (*st.StructTensor, error) {
	if len(srcPaths) == 0 || fn == nil {
		return nil, fmt.Errorf("%w: Map needs a function and at least one source", ErrArgument)
	}
	if !out.Valid() {
		return nil, fmt.Errorf("%w: output dtype %v", ErrArgument, out)
	}
	return mapLeaves(root, newPath, srcPaths, func(vals []*st.Tensor) (*st.Tensor, error) {
		n := vals[0].Len()
		args := make([]any, len(vals))
		res := newBuilder(out, n)
		for i := 0; i < n; i++ {
			for k, t := range vals {
				args[k] = t.Elem(i)
			}
			r, err := fn(args)
			if err != nil {
				return nil, fmt.Errorf("map to %q at value %d: %w", newPath, i, err)
			}
			if err := res.add(r); err != nil {
				return nil, fmt.Errorf("map to %q at value %d: %w", newPath, i, err)
			}
		}
		return res.tensor(vals[0].Shape())
	})
}

// Elem is the set of Go element types of non-string tensors.
type Elem interface {
	bool | int32 | int64 | uint32 | uint64 | float32 | float64
}

// MapValues adds the field newPath next to src, a leaf of element type T:
// fn applied to each of its values, in a typed loop with no boxing. The
// new field has src's shape and shares its partitions.
func MapValues[T, R Elem](root *st.StructTensor, src, newPath string, fn func(T) R) (*st.StructTensor, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: MapValues needs a function", ErrArgument)
	}
	return mapLeaves(root, newPath, []string{src}, func(vals []*st.Tensor) (*st.Tensor, error) {
		in, ok := vals[0].Data().([]T)
		if !ok {
			return nil, fmt.Errorf("%w: %q is %v, not %T", ErrArgument, src, vals[0].DType(), *new(T))
		}
		res := make([]R, len(in))
		for i, x := range in {
			res[i] = fn(x)
		}
		return st.NewTensor(vals[0].Shape(), res)
	})
}

// mapLeaves is the frame of Map and MapValues: fn turns the flat value
// tensors of the sibling leaves srcPaths into the flat values of newPath,
// which gets the sources' partitions. fn is called once with all the
// values, so the caller's per-value loop stays its own (typed in MapValues).
// The new field goes next to the first source, like every field addNextTo
// adds; mapSources looks all the sources up, the first one included.
func mapLeaves(root *st.StructTensor, newPath string, srcPaths []string, fn func(vals []*st.Tensor) (*st.Tensor, error)) (*st.StructTensor, error) {
	_, name, err := mapTarget(srcPaths, newPath)
	if err != nil {
		return nil, err
	}
	return addNextTo(root, srcPaths[0], name, func(root *st.StructTensor, _ []string, _ st.Value) (st.Value, error) {
		parts, vals, err := mapSources(root, srcPaths)
		if err != nil {
			return nil, err
		}
		t, err := fn(vals)
		if err != nil {
			return nil, err
		}
		return st.JoinOuterDims(parts, t)
	})
}

// mapTarget checks that the sources are siblings and returns their parent
// and the new field's name.
func mapTarget(srcPaths []string, newPath string) ([]string, string, error) {
	first, err := parsePath(srcPaths[0])
	if err != nil {
		return nil, "", err
	}
	parent := first[:len(first)-1]
	for _, p := range srcPaths[1:] {
		s, err := parsePath(p)
		if err != nil {
			return nil, "", err
		}
		if !slices.Equal(s[:len(s)-1], parent) {
			return nil, "", fmt.Errorf("%w: %q and %q are not siblings", ErrPath, srcPaths[0], p)
		}
	}
	name, err := siblingPath(parent, newPath)
	return parent, name, err
}

// mapSources returns the partitions shared by the sources and their flat
// value tensors, checking that they have one shape.
func mapSources(root *st.StructTensor, srcPaths []string) ([]*st.RowPartition, []*st.Tensor, error) {
	var parts []*st.RowPartition
	vals := make([]*st.Tensor, len(srcPaths))
	for k, p := range srcPaths {
		steps, _ := parsePath(p)
		_, v, err := leaf(root, steps)
		if err != nil {
			return nil, nil, err
		}
		var ps []*st.RowPartition
		var t *st.Tensor
		switch x := v.(type) {
		case *st.Tensor:
			t = x
		case *st.Ragged:
			ps, t = x.Partitions(), x.Values()
		default:
			return nil, nil, fmt.Errorf("%w: %q is a %s, not a leaf", ErrPath, p, kindName(v))
		}
		if k > 0 && (!partitionsEqual(ps, parts) || !t.Shape().Equal(vals[0].Shape())) {
			return nil, nil, fmt.Errorf("%w: %q has shape %v, %q has %v", ErrShape, p, v.Shape(), srcPaths[0], vals[0].Shape())
		}
		if k == 0 {
			parts = ps
		}
		vals[k] = t
	}
	return parts, vals, nil
}

// builder collects Go scalars of one dtype into a typed slice.
type builder struct {
	dtype st.DType
	data  any
	strs  []string
}

func newBuilder(d st.DType, n int) *builder {
	b := &builder{dtype: d}
	switch d {
	case st.Bool:
		b.data = make([]bool, 0, n)
	case st.Int32:
		b.data = make([]int32, 0, n)
	case st.Int64:
		b.data = make([]int64, 0, n)
	case st.Uint32:
		b.data = make([]uint32, 0, n)
	case st.Uint64:
		b.data = make([]uint64, 0, n)
	case st.Float32:
		b.data = make([]float32, 0, n)
	case st.Float64:
		b.data = make([]float64, 0, n)
	default:
		b.strs = make([]string, 0, n)
	}
	return b
}

func (b *builder) add(x any) error {
	ok := false
	switch d := b.data.(type) {
	case []bool:
		b.data, ok = appendAs(d, x)
	case []int32:
		b.data, ok = appendAs(d, x)
	case []int64:
		b.data, ok = appendAs(d, x)
	case []uint32:
		b.data, ok = appendAs(d, x)
	case []uint64:
		b.data, ok = appendAs(d, x)
	case []float32:
		b.data, ok = appendAs(d, x)
	case []float64:
		b.data, ok = appendAs(d, x)
	default:
		b.strs, ok = appendAs(b.strs, x)
	}
	if !ok {
		return fmt.Errorf("%w: function returned %T, want %v", ErrArgument, x, b.dtype)
	}
	return nil
}

// appendAs appends x to d if x is a T; ok says whether it was.
func appendAs[T any](d []T, x any) (_ []T, ok bool) {
	v, ok := x.(T)
	if ok {
		d = append(d, v)
	}
	return d, ok
}

func (b *builder) tensor(shape st.Shape) (*st.Tensor, error) {
	if b.dtype == st.String {
		return st.NewTensor(shape, b.strs)
	}
	return st.NewTensor(shape, b.data)
}

// MapRagged adds newName under the struct parentPath ("" for the root):
// fn receives, for each source field of that struct (srcNames, in order),
// its value with one row per element of the struct, and returns the new
// field's value, which must have one row per element too (struct2tensor's
// map_ragged_tensor). fn sees and returns whole rows: it may change their
// lengths, dtypes and inner shapes.
func MapRagged(root *st.StructTensor, parentPath string, srcNames []string, newName string, fn func(args []st.Value) (st.Value, error)) (*st.StructTensor, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: MapRagged needs a function", ErrArgument)
	}
	parent, err := parseOptionalPath(parentPath)
	if err != nil {
		return nil, err
	}
	return onElements(root, func(root *st.StructTensor) (*st.StructTensor, error) {
		chain, err := structChain(root, parent)
		if err != nil {
			return nil, err
		}
		s := chain[len(chain)-1]
		args := make([]st.Value, len(srcNames))
		for i, n := range srcNames {
			v, ok := s.Field(n)
			if !ok {
				return nil, fmt.Errorf("%w: %q has no field %q", ErrPath, joinPath(parent), n)
			}
			args[i] = v
		}
		v, err := fn(args)
		if err != nil {
			return nil, fmt.Errorf("map to %q: %w", newName, err)
		}
		if v == nil || v.Rank() == 0 || v.NumRows() != s.NumElements() {
			return nil, fmt.Errorf("%w: map to %q returned %d rows for %d elements", ErrArgument, newName, rowsOf(v), s.NumElements())
		}
		return addField(root, parent, newName, v)
	})
}

func rowsOf(v st.Value) int {
	if v == nil || v.Rank() == 0 {
		return 0
	}
	return v.NumRows()
}
