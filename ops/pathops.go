package ops

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/structtensor/structtensor-go/ops/internal/kernel"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// Promote adds newName to the grandparent of src (a path of two steps or
// more, "docs.tokens"): for each grandparent element, the values of src
// under all of its parent's elements, in order, with the parent's
// dimensions and src's first dimension merged into one (struct2tensor's
// promote). Promoting docs.tokens of
//
//	[{"docs":[{"tokens":[7,17]},{"tokens":[3,13]}]},{"docs":[{"tokens":[5,15]}]}]
//
// adds docs_tokens [[7,17,3,13],[5,15]]. src may be a leaf or a struct;
// its flat values are shared, only the row partitions are composed.
func Promote(root *st.StructTensor, src, newName string) (*st.StructTensor, error) {
	steps, err := parsePath(src)
	if err != nil {
		return nil, err
	}
	if len(steps) < 2 {
		return nil, fmt.Errorf("%w: cannot promote %q: it has no grandparent", ErrPath, src)
	}
	return onElements(root, func(root *st.StructTensor) (*st.StructTensor, error) {
		v, err := promoted(root, steps)
		if err != nil {
			return nil, err
		}
		return addField(root, steps[:len(steps)-2], newName, v)
	})
}

// promoted returns the flat value src promoted to its grandparent.
func promoted(root *st.StructTensor, steps []string) (st.Value, error) {
	chain, l, err := leaf(root, steps)
	if err != nil {
		return nil, err
	}
	parent := chain[len(chain)-1]
	full, err := st.JoinOuterDims(parent.Partitions(), l)
	if err != nil {
		return nil, err
	}
	m := len(parent.Partitions()) + min(l.Rank()-1, 1)
	if m >= 2 {
		return MergeDims(full, 1, m)
	}
	return full, nil
}

// Broadcast adds newName under each element of sibling, a struct field
// next to src: a copy of src's value for that element's parent
// (struct2tensor's broadcast). sibling is a field name, or a path with the
// same parent as src. A sibling with one struct per parent shares src's
// buffers; otherwise src's rows are gathered once per sibling element.
func Broadcast(root *st.StructTensor, src, sibling, newName string) (*st.StructTensor, error) {
	steps, err := parsePath(src)
	if err != nil {
		return nil, err
	}
	parent := steps[:len(steps)-1]
	sib, err := siblingPath(parent, sibling)
	if err != nil {
		return nil, err
	}
	return onElements(root, func(root *st.StructTensor) (*st.StructTensor, error) {
		v, err := broadcasted(root, steps, sib)
		if err != nil {
			return nil, err
		}
		return addField(root, append(slices.Clone(parent), sib), newName, v)
	})
}

func broadcasted(root *st.StructTensor, steps []string, sib string) (st.Value, error) {
	parent := steps[:len(steps)-1]
	_, x, err := leaf(root, steps)
	if err != nil {
		return nil, err
	}
	sibSteps := append(slices.Clone(parent), sib)
	_, sv, err := leaf(root, sibSteps)
	if err != nil {
		return nil, err
	}
	s, ok := sv.(*st.StructTensor)
	if !ok {
		return nil, fmt.Errorf("%w: broadcast target %q is a %s, not a struct", ErrPath, joinPath(sibSteps), kindName(sv))
	}
	if len(s.Partitions()) == 0 {
		return x, nil
	}
	ids, err := valueRowIDs(s.Partitions())
	if err != nil {
		return nil, err
	}
	return gatherRows(x, ids)
}

// PromoteAndBroadcast adds, for each entry newName -> src of sources, a
// field newName under the struct destParent holding src's values: src is
// promoted until its parent is the least common ancestor of src and
// destParent, then broadcast down to destParent (struct2tensor's
// promote_and_broadcast). Only the final fields are added.
func PromoteAndBroadcast(root *st.StructTensor, sources map[string]string, destParent string) (*st.StructTensor, error) {
	dest, err := parseOptionalPath(destParent)
	if err != nil {
		return nil, err
	}
	return onElements(root, func(root *st.StructTensor) (*st.StructTensor, error) {
		out := root
		for _, name := range slices.Sorted(maps.Keys(sources)) {
			v, err := promoteAndBroadcastOne(root, sources[name], dest)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if out, err = addField(out, dest, name, v); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// addTemp adds v under the struct at steps with a field name unused
// there, and returns the new root and that name.
func addTemp(root *st.StructTensor, steps []string, v st.Value) (*st.StructTensor, string, error) {
	chain, err := structChain(root, steps)
	if err != nil {
		return nil, "", err
	}
	s := chain[len(chain)-1]
	for i := 0; ; i++ {
		name := fmt.Sprintf("promoteAndBroadcast%d", i)
		if _, used := s.Field(name); !used {
			root, err = addField(root, steps, name, v)
			return root, name, err
		}
	}
}

func promoteAndBroadcastOne(root *st.StructTensor, src string, dest []string) (st.Value, error) {
	steps, err := parsePath(src)
	if err != nil {
		return nil, err
	}
	lca := 0
	for lca < len(steps) && lca < len(dest) && steps[lca] == dest[lca] {
		lca++
	}
	if lca == len(steps) {
		return nil, fmt.Errorf("%w: %q is an ancestor of %q", ErrPath, src, joinPath(dest))
	}
	cur, work := steps, root
	for len(cur)-1 > lca {
		v, err := promoted(work, cur)
		if err != nil {
			return nil, err
		}
		gp := cur[:len(cur)-2]
		var name string
		if work, name, err = addTemp(work, gp, v); err != nil {
			return nil, err
		}
		cur = append(slices.Clone(gp), name)
	}
	for len(cur)-1 < len(dest) {
		sib := dest[len(cur)-1]
		v, err := broadcasted(work, cur, sib)
		if err != nil {
			return nil, err
		}
		at := append(slices.Clone(cur[:len(cur)-1]), sib)
		var name string
		if work, name, err = addTemp(work, at, v); err != nil {
			return nil, err
		}
		cur = append(at, name)
	}
	_, v, err := leaf(work, cur)
	return v, err
}

// Reroot makes the struct collection at path the new root: a rank-1
// StructTensor with one record per element of path, whose fields are
// path's fields (shared, not copied). When indexField is not empty, the
// new root also has that int64 field: for each record, the index of the
// element of the original root it came from (struct2tensor's reroot with
// create_proto_index_field).
func Reroot(root *st.StructTensor, path, indexField string) (*st.StructTensor, error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	if root.Rank() == 0 {
		e, err := expandOuter(root)
		if err != nil {
			return nil, err
		}
		root = e.(*st.StructTensor)
	}
	chain, err := structChain(root, steps)
	if err != nil {
		return nil, err
	}
	target := chain[len(chain)-1]
	n := target.NumElements()
	fields := target.Fields()
	if indexField != "" {
		if !st.ValidFieldName(indexField) {
			return nil, fmt.Errorf("%w: index field name %q", ErrPath, indexField)
		}
		if _, dup := target.Field(indexField); dup {
			return nil, fmt.Errorf("%w: %q", ErrFieldExists, indexField)
		}
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		for k := len(chain) - 1; k >= 1; k-- {
			parts := chain[k].Partitions()
			if len(parts) == 0 {
				continue
			}
			up, err := valueRowIDs(parts)
			if err != nil {
				return nil, err
			}
			for i, id := range ids {
				ids[i] = up[id]
			}
		}
		idx := make([]int64, n)
		for i, id := range ids {
			idx[i] = int64(id)
		}
		t, err := st.NewTensor(nil, idx)
		if err != nil {
			return nil, err
		}
		fields = append(slices.Clone(fields), st.Field{Name: indexField, Value: t})
	}
	return st.NewStruct(n, fields...)
}

// Project returns root with only the fields at paths (and the structs
// leading to them). A path to a struct keeps all of it.
func Project(root *st.StructTensor, paths ...string) (*st.StructTensor, error) {
	tree := map[string]any{}
	for _, p := range paths {
		steps, err := parsePath(p)
		if err != nil {
			return nil, err
		}
		node := tree
		for i, s := range steps {
			next, ok := node[s].(map[string]any)
			if ok && len(next) == 0 {
				break // the whole field is already kept
			}
			if i == len(steps)-1 {
				node[s] = map[string]any{}
				break
			}
			if !ok {
				next = map[string]any{}
				node[s] = next
			}
			node = next
		}
	}
	return project(root, tree, nil)
}

func project(s *st.StructTensor, tree map[string]any, at []string) (*st.StructTensor, error) {
	for name := range tree {
		if _, ok := s.Field(name); !ok {
			return nil, fmt.Errorf("%w: %q: no field %q", ErrPath, joinPath(append(slices.Clone(at), name)), name)
		}
	}
	var fields []st.Field
	for _, f := range s.Fields() {
		sub, ok := tree[f.Name].(map[string]any)
		if !ok {
			continue
		}
		if len(sub) == 0 {
			fields = append(fields, f)
			continue
		}
		c, ok := f.Value.(*st.StructTensor)
		if !ok {
			return nil, fmt.Errorf("%w: %q is a %s, not a struct", ErrPath, joinPath(append(slices.Clone(at), f.Name)), kindName(f.Value))
		}
		pc, err := project(c, sub, append(slices.Clone(at), f.Name))
		if err != nil {
			return nil, err
		}
		fields = append(fields, st.Field{Name: f.Name, Value: pc})
	}
	return withFields(s, fields)
}

// SizeField adds newName next to path: for each parent element, the
// number of values of path's first dimension as int64 (1 for a field with
// one value per parent).
func SizeField(root *st.StructTensor, path, newName string) (*st.StructTensor, error) {
	return countField(root, path, newName, false)
}

// HasField adds newName next to path: for each parent element, whether
// path has at least one value (always true for a field with one value per
// parent).
func HasField(root *st.StructTensor, path, newName string) (*st.StructTensor, error) {
	return countField(root, path, newName, true)
}

// addNextTo is the frame of the ops that add newName next to path: in
// every element of root, derive turns path's flat value v (steps is path
// split, for errors and sibling paths) into the new field's flat value.
func addNextTo(root *st.StructTensor, path, newName string, derive func(root *st.StructTensor, steps []string, v st.Value) (st.Value, error)) (*st.StructTensor, error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	return onElements(root, func(root *st.StructTensor) (*st.StructTensor, error) {
		_, v, err := leaf(root, steps)
		if err != nil {
			return nil, err
		}
		out, err := derive(root, steps, v)
		if err != nil {
			return nil, err
		}
		return addField(root, steps[:len(steps)-1], newName, out)
	})
}

func countField(root *st.StructTensor, path, newName string, has bool) (*st.StructTensor, error) {
	return addNextTo(root, path, newName, func(_ *st.StructTensor, steps []string, v st.Value) (st.Value, error) {
		n := v.NumRows()
		lengths := make([]int64, n)
		if v.Rank() < 2 {
			for i := range lengths {
				lengths[i] = 1
			}
		} else {
			p, _, err := firstDim(v, steps)
			if err != nil {
				return nil, err
			}
			for i := range lengths {
				lengths[i] = int64(p.RowLength(i))
			}
		}
		if has {
			b := make([]bool, n)
			for i, l := range lengths {
				b[i] = l > 0
			}
			return st.NewTensor(nil, b)
		}
		return st.NewTensor(nil, lengths)
	})
}

// PositionalIndex adds newName next to path, with path's shape down to its
// first dimension: each value's index within its parent (0, 1, ...).
func PositionalIndex(root *st.StructTensor, path, newName string) (*st.StructTensor, error) {
	return positional(root, path, newName, false)
}

// PositionalIndexFromEnd is PositionalIndex counting from the end: the
// last value of each parent is -1.
func PositionalIndexFromEnd(root *st.StructTensor, path, newName string) (*st.StructTensor, error) {
	return positional(root, path, newName, true)
}

func positional(root *st.StructTensor, path, newName string, fromEnd bool) (*st.StructTensor, error) {
	return addNextTo(root, path, newName, func(_ *st.StructTensor, steps []string, v st.Value) (st.Value, error) {
		p, _, err := firstDim(v, steps)
		if err != nil {
			return nil, err
		}
		idx := make([]int64, p.NumValues())
		for r := 0; r < p.NumRows(); r++ {
			start, n := p.RowStart(r), p.RowLength(r)
			for j := 0; j < n; j++ {
				idx[start+j] = int64(j)
				if fromEnd {
					idx[start+j] -= int64(n)
				}
			}
		}
		t, err := st.NewTensor(nil, idx)
		if err != nil {
			return nil, err
		}
		return st.JoinOuterDims([]*st.RowPartition{p}, t)
	})
}

// SliceEnd as Slice's end keeps everything to the end of each parent.
const SliceEnd = math.MaxInt

// Slice adds newName next to path: for each parent element, the values of
// path's first dimension in [begin, end), with Python's rules (negative
// bounds count from the end of each parent; bounds are clamped). It is
// struct2tensor's slice_expression; path may be a leaf or a struct.
func Slice(root *st.StructTensor, path, newName string, begin, end int) (*st.StructTensor, error) {
	return addNextTo(root, path, newName, func(_ *st.StructTensor, steps []string, v st.Value) (st.Value, error) {
		p, flat, err := firstDim(v, steps)
		if err != nil {
			return nil, err
		}
		lengths := make([]int64, p.NumRows())
		spans := make([]span, 0, p.NumRows())
		for r := range lengths {
			n := p.RowLength(r)
			lo, hi := clampIndex(begin, n), clampIndex(end, n)
			if hi < lo {
				hi = lo
			}
			lengths[r] = int64(hi - lo)
			spans = kernel.AppendSpan(spans, p.RowStart(r)+lo, p.RowStart(r)+hi)
		}
		var q *st.RowPartition
		if l, ok := p.UniformRowLength(); ok {
			q, err = st.NewUniformPartition(p.NumRows(), max(0, clampIndex(end, l)-clampIndex(begin, l)))
		} else {
			q, err = st.NewRowLengths(lengths)
		}
		if err != nil {
			return nil, err
		}
		f, err := takeSpansRows(flat, spans, q.NumValues())
		if err != nil {
			return nil, err
		}
		return st.JoinOuterDims([]*st.RowPartition{q}, f)
	})
}

// clampIndex applies Python's slice-bound rules for a list of n.
func clampIndex(i, n int) int {
	if i < 0 {
		i += n
		if i < 0 {
			return 0
		}
	}
	return min(i, n)
}

// Truncate adds newName next to path with at most the first limit values
// of path under each parent.
func Truncate(root *st.StructTensor, path, newName string, limit int) (*st.StructTensor, error) {
	if limit < 0 {
		return nil, fmt.Errorf("%w: negative truncation limit %d", ErrArgument, limit)
	}
	return Slice(root, path, newName, 0, limit)
}

// FilterByChild adds newName next to path (a struct collection): a copy of
// it keeping only the elements whose boolean child field child is present
// and true (struct2tensor's filter_by_child). child has one bool per
// element, or a list of at most one.
func FilterByChild(root *st.StructTensor, path, child, newName string) (*st.StructTensor, error) {
	return addNextTo(root, path, newName, func(_ *st.StructTensor, _ []string, v st.Value) (st.Value, error) {
		s, ok := v.(*st.StructTensor)
		if !ok {
			return nil, fmt.Errorf("%w: %q is a %s, not a struct", ErrPath, path, kindName(v))
		}
		if s.Rank() < 2 {
			return nil, fmt.Errorf("%w: %q has one struct per parent; only a list can be filtered", ErrPath, path)
		}
		cv, ok := s.Field(child)
		if !ok {
			return nil, fmt.Errorf("%w: %q has no field %q", ErrPath, path, child)
		}
		keep, err := presentAndTrue(cv, path+"."+child)
		if err != nil {
			return nil, err
		}
		parts := s.Partitions()
		_, flat, err := st.SplitOuterDims(s, s.Rank())
		if err != nil {
			return nil, err
		}
		return maskRows(append([]*st.RowPartition(nil), parts...), flat, keep, false, len(parts))
	})
}

// presentAndTrue reads a bool field with one value, or at most one, per
// row.
func presentAndTrue(v st.Value, path string) ([]bool, error) {
	switch x := v.(type) {
	case *st.Tensor:
		if x.DType() != st.Bool {
			break
		}
		if x.Rank() == 1 {
			return x.Bools(), nil
		}
		if x.Rank() == 2 && x.Shape()[1] <= 1 {
			if x.Shape()[1] == 1 {
				return x.Bools(), nil
			}
			return make([]bool, x.NumRows()), nil
		}
	case *st.Ragged:
		if x.DType() != st.Bool || x.RaggedRank() != 1 || x.Values().Rank() != 1 {
			break
		}
		p, vals := x.Partitions()[0], x.Values().Bools()
		keep := make([]bool, p.NumRows())
		for i := range keep {
			switch p.RowLength(i) {
			case 0:
			case 1:
				keep[i] = vals[p.RowStart(i)]
			default:
				return nil, fmt.Errorf("%w: %q has %d values at element %d, want at most one", ErrShape, path, p.RowLength(i), i)
			}
		}
		return keep, nil
	}
	return nil, fmt.Errorf("%w: %q is not an optional bool (%v)", ErrArgument, path, v.Spec())
}

// FilterBySibling adds newName next to path: a copy of path keeping, within
// each parent, the values whose matching value of the bool field sibling
// is true (struct2tensor's filter_by_sibling). path and sibling must have
// the same shape.
func FilterBySibling(root *st.StructTensor, path, sibling, newName string) (*st.StructTensor, error) {
	return addNextTo(root, path, newName, func(root *st.StructTensor, steps []string, v st.Value) (st.Value, error) {
		sibSteps := append(slices.Clone(steps[:len(steps)-1]), sibling)
		_, m, err := leaf(root, sibSteps)
		if err != nil {
			return nil, err
		}
		if v.Rank() < 2 {
			return nil, fmt.Errorf("%w: %q has one value per parent; only a list can be filtered", ErrPath, path)
		}
		if m.Rank() != 2 {
			return nil, fmt.Errorf("%w: mask %q has rank %d per parent, want a list of bools", ErrShape, joinPath(sibSteps), m.Rank()-1)
		}
		out, err := BooleanMask(v, m, 1)
		if err != nil {
			return nil, fmt.Errorf("filter %q by %q: %w", path, joinPath(sibSteps), err)
		}
		return out, nil
	})
}
