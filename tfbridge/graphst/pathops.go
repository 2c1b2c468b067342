package graphst

import (
	"fmt"
	"slices"
	"strings"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// The path ops add a field to a struct inside the root and return the
// root with it, as their twins in package ops do. They work on the flat
// form of the component layout: a field of struct P is stored as the
// partitions it adds to P's elements (its "own" row splits) and its flat
// values, so a new field is a list of own row splits plus values, and the
// new root's components are the old ones with the new field's inserted
// where Components(newSpec) puts them.

// flatLeaf is a leaf relative to the elements of its parent struct: its
// own row splits, outermost first, and its flat values.
type flatLeaf struct {
	splits []tfbridge.Output
	values tfbridge.Output
}

// pathNodes returns the struct nodes along steps (chain[0] is the root's,
// chain[i] the struct at steps[:i]) and the node of the last step, a leaf
// or a struct.
func pathNodes(root *Struct, steps []string) ([]*structNode, *fieldNode, error) {
	chain := []*structNode{root.node}
	for i, name := range steps {
		cur := chain[len(chain)-1]
		k := slices.IndexFunc(cur.fields, func(f fieldNode) bool { return f.name == name })
		if k < 0 {
			names := make([]string, len(cur.fields))
			for j, f := range cur.fields {
				names[j] = f.name
			}
			return nil, nil, fmt.Errorf("%w: %q (fields: %s)", st.ErrNoField, strings.Join(steps[:i+1], "."), strings.Join(names, ", "))
		}
		f := &cur.fields[k]
		if i == len(steps)-1 {
			return chain, f, nil
		}
		if f.st == nil {
			return nil, nil, fmt.Errorf("%w: %q is a leaf, not a struct", ErrSpec, strings.Join(steps[:i+1], "."))
		}
		chain = append(chain, f.st)
	}
	return chain, nil, fmt.Errorf("%w: empty path", st.ErrNoField)
}

// parsePath splits "a.b.c", checking each step.
func parsePath(path string) ([]string, error) {
	steps := strings.Split(path, ".")
	for _, s := range steps {
		if !st.ValidFieldName(s) {
			return nil, fmt.Errorf("%w: path %q: bad step %q", st.ErrNoField, path, s)
		}
	}
	return steps, nil
}

// leafAt returns the leaf at path in flat form, with its node.
func leafAt(root *Struct, steps []string) (*leafNode, flatLeaf, error) {
	_, f, err := pathNodes(root, steps)
	if err != nil {
		return nil, flatLeaf{}, err
	}
	if f.leaf == nil {
		return nil, flatLeaf{}, fmt.Errorf("%w: %q is a struct; the graph ops take a leaf here", ErrSpec, strings.Join(steps, "."))
	}
	return f.leaf, flatLeaf{splits: pick(root.outs, f.leaf.parts), values: root.outs[f.leaf.values]}, nil
}

// withField returns root with the new leaf v (flat, relative to the
// elements of the struct at parent) added as field name of that struct.
func withField(s *op.Scope, what string, root *Struct, parent []string, name string, v flatLeaf) *Struct {
	if s.Err() != nil {
		return nil
	}
	if !st.ValidFieldName(name) {
		s.UpdateErr(what, fmt.Errorf("%w: new field name %q", ErrSpec, name))
		return nil
	}
	chain, err := func() ([]*structNode, error) {
		if len(parent) == 0 {
			return []*structNode{root.node}, nil
		}
		chain, f, err := pathNodes(root, parent)
		if err != nil {
			return nil, err
		}
		if f.st == nil {
			return nil, fmt.Errorf("%w: %q is a leaf, not a struct", ErrSpec, strings.Join(parent, "."))
		}
		return append(chain, f.st), nil
	}()
	if err != nil {
		s.UpdateErr(what, err)
		return nil
	}
	p := chain[len(chain)-1]
	if slices.ContainsFunc(p.fields, func(f fieldNode) bool { return f.name == name }) {
		s.UpdateErr(what, fmt.Errorf("%w: field %q exists", ErrSpec, strings.Join(append(slices.Clone(parent), name), ".")))
		return nil
	}
	dt, err := v.values.DType().StructDType()
	if err != nil {
		s.UpdateErr(what, fmt.Errorf("%w: %v", ErrSpec, err))
		return nil
	}
	vshape, known, err := v.values.Shape()
	if err != nil || !known || len(vshape) == 0 {
		s.UpdateErr(what, fmt.Errorf("%w: the new field's values %s need a known rank >= 1 (%v)", ErrRank, v.values.Name(), err))
		return nil
	}
	// The leaf's full shape: the struct's, then a dimension per own
	// partition, then the values' inner dimensions.
	pshape := p.spec.Shape
	shape := append(slices.Clone(pshape), make(st.Shape, len(v.splits))...)
	for i := len(pshape); i < len(shape); i++ {
		shape[i] = st.Unknown
	}
	shape = append(shape, vshape[1:]...)
	var leaf st.Spec
	parts := max(len(pshape)-1, 0) + len(v.splits)
	uniform := len(v.splits) == 0 && !slices.Contains(pshape[1:], st.Unknown)
	if parts == 0 || uniform {
		leaf = &st.TensorSpec{DType: dt, Shape: shape}
	} else {
		leaf = &st.RaggedSpec{DType: dt, Shape: shape, RaggedRank: parts}
	}
	// The new spec: copies of the structs along parent, the last one with
	// the new field.
	var grow func(spec *st.StructSpec, depth int) *st.StructSpec
	grow = func(spec *st.StructSpec, depth int) *st.StructSpec {
		out := &st.StructSpec{Shape: spec.Shape, Fields: slices.Clone(spec.Fields)}
		if depth == len(parent) {
			out.Fields = append(out.Fields, st.FieldSpec{Name: name, Spec: leaf})
			return out
		}
		for i, f := range out.Fields {
			if f.Name == parent[depth] {
				out.Fields[i].Spec = grow(f.Spec.(*st.StructSpec), depth+1)
			}
		}
		return out
	}
	spec := grow(root.node.spec, 0)
	comps, err := Components(spec)
	if err != nil {
		s.UpdateErr(what, err)
		return nil
	}
	// Old components keep their names; the new field's are the rest, in
	// order: its row splits, then its values. The old ones pass through
	// Identity, so that the result is fetchable even where x's components
	// are fed placeholders.
	old := make(map[string]tfbridge.Output, len(root.specs))
	for i, c := range root.specs {
		old[c.Name()] = op.Identity(s, root.outs[i])
	}
	fresh := append(slices.Clone(v.splits), v.values)
	outs := make([]tfbridge.Output, len(comps))
	for i, c := range comps {
		if o, ok := old[c.Name()]; ok {
			outs[i] = o
			continue
		}
		if len(fresh) == 0 {
			s.UpdateErr(what, fmt.Errorf("%w: spec %v has more components than the new field gives", ErrSpec, spec))
			return nil
		}
		outs[i], fresh = fresh[0], fresh[1:]
	}
	if len(fresh) != 0 {
		s.UpdateErr(what, fmt.Errorf("%w: %d components of the new field %q left over", ErrSpec, len(fresh), name))
		return nil
	}
	return build(s, what, spec, outs)
}

// rootOf checks that x is a whole StructTensor of rank >= 1, as the path
// ops need, recording the error in s.
func rootOf(s *op.Scope, what string, x *Struct) bool {
	if _, err := root(x); err != nil {
		s.UpdateErr(what, err)
		return false
	}
	return s.Err() == nil
}

// composeSplits composes consecutive row partitions into one: the rows of
// the outer one split directly into the values of the inner one.
func composeSplits(s *op.Scope, splits []tfbridge.Output) tfbridge.Output {
	out := splits[0]
	for _, inner := range splits[1:] {
		out = op.GatherV2(s, inner, out, op.Constant(s, int32(0)))
	}
	return out
}

// Promote adds newName to the grandparent of src (a leaf two or more
// steps down, "docs.tokens"): for each grandparent element, the values of
// src under all of its parent's elements, in order, the parent's
// dimensions and src's first one merged into one: ops.Promote in the
// graph (struct2tensor's promote). The row splits are composed; the flat
// values are src's own, reshaped where a dense dimension merges.
func Promote(s *op.Scope, x *Struct, src, newName string) *Struct {
	s = s.SubScope("Promote")
	if !rootOf(s, "Promote", x) {
		return nil
	}
	steps, err := parsePath(src)
	if err == nil && len(steps) < 2 {
		err = fmt.Errorf("%w: cannot promote %q: it has no grandparent", ErrSpec, src)
	}
	var chain []*structNode
	var l flatLeaf
	if err == nil {
		chain, _, err = pathNodes(x, steps)
	}
	if err == nil {
		_, l, err = leafAt(x, steps)
	}
	if err != nil {
		s.UpdateErr("Promote", err)
		return nil
	}
	parentSplits := pick(x.outs, chain[len(chain)-1].parts) // the parent's own partitions
	vshape, known, err := l.values.Shape()
	if err != nil || !known {
		s.UpdateErr("Promote", fmt.Errorf("%w: %q has values of unknown rank (%v)", ErrRank, src, err))
		return nil
	}
	var v flatLeaf
	switch {
	case len(parentSplits) == 0:
		// One parent per grandparent element: nothing to merge.
		v = flatLeaf{splits: identities(s, l.splits), values: op.Identity(s, l.values)}
	case len(l.splits) > 0:
		merged := composeSplits(s, append(slices.Clone(parentSplits), l.splits[0]))
		v = flatLeaf{splits: append([]tfbridge.Output{merged}, identities(s, l.splits[1:])...), values: op.Identity(s, l.values)}
	case len(vshape) > 1:
		// src's first dimension is dense (d values per parent element):
		// it merges as a uniform partition of d.
		d := op.Slice(s, op.Shape(s, l.values, op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{1}), op.Constant(s, []int64{1}))
		merged := op.Mul(s, composeSplits(s, parentSplits), d)
		rest := op.Slice(s, op.Shape(s, l.values, op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{2}), op.Constant(s, []int64{-1}))
		flat := op.Reshape(s, l.values, op.ConcatV2(s, []tfbridge.Output{op.Constant(s, []int64{-1}), rest}, op.Constant(s, int32(0))))
		v = flatLeaf{splits: []tfbridge.Output{merged}, values: flat}
	default:
		// One scalar per parent element: the parent's partitions merge.
		v = flatLeaf{splits: []tfbridge.Output{composeSplits(s, identities(s, parentSplits))}, values: op.Identity(s, l.values)}
	}
	return withField(s, "Promote", x, steps[:len(steps)-2], newName, v)
}

// identities passes outs through Identity, so that a new field's
// components are outputs of their own (a fed placeholder cannot be
// fetched, and a Struct lists each component once).
func identities(s *op.Scope, outs []tfbridge.Output) []tfbridge.Output {
	r := make([]tfbridge.Output, len(outs))
	for i, o := range outs {
		r[i] = op.Identity(s, o)
	}
	return r
}

// Broadcast adds newName under each element of sibling, a struct field
// next to src (a leaf): a copy of src's value for that element's parent,
// ops.Broadcast in the graph (struct2tensor's broadcast). sibling is a
// field name or a path with src's parent. src's rows are gathered once
// per sibling element (by the elements' row ids).
func Broadcast(s *op.Scope, x *Struct, src, sibling, newName string) *Struct {
	s = s.SubScope("Broadcast")
	if !rootOf(s, "Broadcast", x) {
		return nil
	}
	steps, err := parsePath(src)
	var sib []string
	if err == nil {
		sib, err = siblingOf(steps, sibling)
	}
	var l flatLeaf
	var target *fieldNode
	if err == nil {
		_, l, err = leafAt(x, steps)
	}
	if err == nil {
		_, target, err = pathNodes(x, sib)
	}
	if err == nil && target.st == nil {
		err = fmt.Errorf("%w: broadcast target %q is a leaf, not a struct", ErrSpec, strings.Join(sib, "."))
	}
	if err != nil {
		s.UpdateErr("Broadcast", err)
		return nil
	}
	parts := pick(x.outs, target.st.parts)
	var v flatLeaf
	if len(parts) == 0 {
		v = flatLeaf{splits: identities(s, l.splits), values: op.Identity(s, l.values)}
	} else {
		// ids[e] is the parent element of sibling element e.
		ids := splitsRowIDs(s, parts[0])
		for _, p := range parts[1:] {
			ids = op.GatherV2(s, ids, splitsRowIDs(s, p), op.Constant(s, int32(0)))
		}
		v = gatherRows(s, l, ids)
	}
	return withField(s, "Broadcast", x, sib, newName, v)
}

// siblingOf returns the path of sibling, a field name or a path with the
// parent of steps.
func siblingOf(steps []string, sibling string) ([]string, error) {
	parent := steps[:len(steps)-1]
	sib, err := parsePath(sibling)
	if err != nil {
		return nil, err
	}
	if len(sib) == 1 {
		return append(slices.Clone(parent), sib[0]), nil
	}
	if !slices.Equal(sib[:len(sib)-1], parent) {
		return nil, fmt.Errorf("%w: %q is not next to %q", ErrSpec, sibling, strings.Join(steps, "."))
	}
	return sib, nil
}

// gatherRows returns the rows sel (int64) of l: each own partition's
// selected rows become a RaggedRange over its splits, giving the new
// splits and the selection of the next level at once, as selectRows does
// for a whole struct.
func gatherRows(s *op.Scope, l flatLeaf, sel tfbridge.Output) flatLeaf {
	one := op.Constant(s, int64(1))
	zero := op.Constant(s, int32(0))
	out := flatLeaf{splits: make([]tfbridge.Output, len(l.splits))}
	for i, p := range l.splits {
		starts := op.GatherV2(s, p, sel, zero)
		limits := op.GatherV2(s, p, op.AddV2(s, sel, one), zero)
		out.splits[i], sel = op.RaggedRange(s, starts, limits, op.OnesLike(s, starts), op.RaggedRangeTsplits(tfbridge.Int64))
	}
	out.values = op.GatherV2(s, l.values, sel, zero)
	return out
}

// MapValues adds the field newPath next to src, a leaf: fn, built by the
// caller with op wrappers under the scope it is given, turns src's flat
// values into the new field's (one row per value row, any dtype and inner
// shape). The new field has src's partitions: ops.MapValues in the graph,
// with the per-value Go function replaced by graph ops.
func MapValues(s *op.Scope, x *Struct, src, newPath string, fn func(s *op.Scope, values tfbridge.Output) tfbridge.Output) *Struct {
	s = s.SubScope("MapValues")
	if fn == nil {
		s.UpdateErr("MapValues", fmt.Errorf("%w: MapValues needs a function", ErrSpec))
		return nil
	}
	return mapLeaves(s, "MapValues", x, newPath, []string{src}, func(s *op.Scope, vals []tfbridge.Output) tfbridge.Output {
		return fn(s, vals[0])
	})
}

// Map adds the field newPath next to the sources srcPaths, sibling leaves
// of one shape: fn turns their flat values (in the order of srcPaths) into
// the new field's. The new field has the sources' partitions: ops.Map in
// the graph. Sources whose row splits differ are an InvalidArgument error
// of the run.
func Map(s *op.Scope, x *Struct, newPath string, fn func(s *op.Scope, values []tfbridge.Output) tfbridge.Output, srcPaths ...string) *Struct {
	s = s.SubScope("Map")
	if fn == nil || len(srcPaths) == 0 {
		s.UpdateErr("Map", fmt.Errorf("%w: Map needs a function and at least one source", ErrSpec))
		return nil
	}
	return mapLeaves(s, "Map", x, newPath, srcPaths, fn)
}

func mapLeaves(s *op.Scope, what string, x *Struct, newPath string, srcPaths []string, fn func(s *op.Scope, values []tfbridge.Output) tfbridge.Output) *Struct {
	if !rootOf(s, what, x) {
		return nil
	}
	first, err := parsePath(srcPaths[0])
	if err != nil {
		s.UpdateErr(what, err)
		return nil
	}
	parent := first[:len(first)-1]
	name, err := siblingOf(first, newPath)
	if err != nil {
		s.UpdateErr(what, err)
		return nil
	}
	leaves := make([]flatLeaf, len(srcPaths))
	for i, p := range srcPaths {
		steps, err := parsePath(p)
		if err == nil && !slices.Equal(steps[:len(steps)-1], parent) {
			err = fmt.Errorf("%w: %q and %q are not siblings", ErrSpec, srcPaths[0], p)
		}
		if err == nil {
			_, leaves[i], err = leafAt(x, steps)
		}
		if err == nil && len(leaves[i].splits) != len(leaves[0].splits) {
			err = fmt.Errorf("%w: %q has %d ragged dimensions, %q %d", ErrSpec, p, len(leaves[i].splits), srcPaths[0], len(leaves[0].splits))
		}
		if err != nil {
			s.UpdateErr(what, err)
			return nil
		}
	}
	// Every source must have the first one's partitions, as in package
	// ops; the check runs before fn's ops.
	var checks []*tfbridge.Operation
	for i, l := range leaves[1:] {
		for j, p := range l.splits {
			same := op.All(s, op.Equal(s, p, leaves[0].splits[j]), op.Constant(s, int32(0)))
			sameLen := op.Equal(s, op.Size(s, p), op.Size(s, leaves[0].splits[j]))
			checks = append(checks, op.Assert(s, op.LogicalAnd(s, sameLen, same),
				[]tfbridge.Output{op.Constant(s, fmt.Sprintf("%s: %q and %q differ in row partition %d", what, srcPaths[i+1], srcPaths[0], j))}))
		}
	}
	vals := make([]tfbridge.Output, len(leaves))
	for i, l := range leaves {
		vals[i] = l.values
	}
	if len(checks) > 0 {
		vals = identities(s.WithControlDependencies(checks...), vals)
	}
	out := fn(s.SubScope("fn"), vals)
	if s.Err() != nil {
		return nil
	}
	if out.Op == nil {
		s.UpdateErr(what, fmt.Errorf("%w: the function returned no output", ErrSpec))
		return nil
	}
	return withField(s, what, x, parent, name[len(name)-1], flatLeaf{splits: identities(s, leaves[0].splits), values: out})
}

// splitsRowIDs returns, for each value the row splits partition, its row.
func splitsRowIDs(s *op.Scope, splits tfbridge.Output) tfbridge.Output {
	n := op.Slice(s, splits, op.Reshape(s, op.Sub(s, op.Size(s, splits, op.SizeOutType(tfbridge.Int64)), op.Constant(s, int64(1))), op.Constant(s, []int64{1})), op.Constant(s, []int64{1}))
	return rowIDsN(s, splits, n)
}
