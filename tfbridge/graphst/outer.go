package graphst

import (
	"fmt"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// root checks that x is a whole StructTensor (not a nested field selected
// with Field, which carries its parents' partitions) of rank >= 1.
func root(x *Struct) (*levels, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil struct", ErrSpec)
	}
	comps, err := Components(x.StructSpec())
	if err != nil {
		return nil, err
	}
	if len(comps) != len(x.Components()) {
		return nil, fmt.Errorf("%w: a nested field (it carries %d partitions of its parents); apply the op to the root", ErrSpec, len(x.Components())-len(comps))
	}
	return levelsOf(x.StructSpec())
}

// selectRows returns the components of x restricted to rows sel (int64
// indices into the outer dimension, in order, repeats allowed): each
// partition's selected rows become a RaggedRange over its row splits,
// giving the new splits and the selection of the next level at once; each
// values component is gathered by its level's selection.
func selectRows(s *op.Scope, x *Struct, l *levels, sel tfbridge.Output) []tfbridge.Output {
	comps := x.Components()
	selOf := make([]tfbridge.Output, l.n)
	selOf[0] = sel
	one := op.Constant(s, int64(1))
	zero := op.Constant(s, int32(0))
	out := make([]tfbridge.Output, len(comps))
	for i, c := range comps {
		p := selOf[l.parent[i]]
		if l.child[i] < 0 {
			out[i] = op.GatherV2(s, c, p, zero)
			continue
		}
		starts := op.GatherV2(s, c, p, zero)
		limits := op.GatherV2(s, c, op.AddV2(s, p, one), zero)
		out[i], selOf[l.child[i]] = op.RaggedRange(s, starts, limits, op.OnesLike(s, starts), op.RaggedRangeTsplits(tfbridge.Int64))
	}
	return out
}

func build(s *op.Scope, what string, spec st.Spec, comps []tfbridge.Output) *Struct {
	if s.Err() != nil {
		return nil
	}
	r, err := NewStruct(spec.(*st.StructSpec), comps)
	if err != nil {
		s.UpdateErr(what, err)
		return nil
	}
	return r
}

// Gather returns the rows indices (an int32 or int64 vector) of x's outer
// dimension, in order: ops.Gather(x, indices, 0, 0) in the graph. An index
// out of range is an InvalidArgument error when the graph runs.
func Gather(s *op.Scope, x *Struct, indices tfbridge.Output) *Struct {
	s = s.SubScope("Gather")
	l, err := root(x)
	if err != nil {
		s.UpdateErr("Gather", err)
		return nil
	}
	if s.Err() != nil {
		return nil
	}
	idx := op.Cast(s, indices, tfbridge.Int64)
	comps := selectRows(s, x, l, idx)
	return build(s, "Gather", withOuterDims(x.StructSpec(), 1, st.Unknown), comps)
}

// BooleanMask returns the rows of x's outer dimension where mask (a bool
// vector of the same length) is true: ops.BooleanMask(x, mask, 0).
func BooleanMask(s *op.Scope, x *Struct, mask tfbridge.Output) *Struct {
	s = s.SubScope("BooleanMask")
	l, err := root(x)
	if err != nil {
		s.UpdateErr("BooleanMask", err)
		return nil
	}
	if s.Err() != nil {
		return nil
	}
	// The mask must cover the outer dimension exactly, as in package ops.
	n := outerRows(s, x, l)
	check := op.Assert(s, op.Equal(s, op.Size(s, mask, op.SizeOutType(tfbridge.Int64)), n),
		[]tfbridge.Output{op.Constant(s, "BooleanMask: the mask's length differs from the number of rows")})
	idx := op.Reshape(s, op.Where(s.WithControlDependencies(check), mask), op.Constant(s, []int64{-1}))
	comps := selectRows(s, x, l, idx)
	return build(s, "BooleanMask", withOuterDims(x.StructSpec(), 1, st.Unknown), comps)
}

// outerRows returns the number of rows of x's outer dimension (int64
// scalar): from the first partition of the root or the first field at the
// root level.
func outerRows(s *op.Scope, x *Struct, l *levels) tfbridge.Output {
	if d := x.StructSpec().Shape[0]; d >= 0 {
		return op.Constant(s, int64(d))
	}
	for i, c := range x.Components() {
		if l.parent[i] != 0 {
			continue
		}
		if l.child[i] >= 0 {
			return op.Sub(s, op.Size(s, c, op.SizeOutType(tfbridge.Int64)), op.Constant(s, int64(1)))
		}
		return op.Squeeze(s, op.Slice(s, op.Shape(s, c, op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{0}), op.Constant(s, []int64{1})))
	}
	s.UpdateErr("outer rows", fmt.Errorf("%w: a struct of unknown length without fields", ErrSpec))
	return tfbridge.Output{}
}

// Concat joins the rows of xs, which must share a spec but for the outer
// dimension: ops.Concat(xs, 0). Values are concatenated; each partition's
// row splits are shifted by the number of values before them.
func Concat(s *op.Scope, xs []*Struct) *Struct {
	s = s.SubScope("Concat")
	spec, comps, err := sameSpecs(xs)
	if err != nil {
		s.UpdateErr("Concat", err)
		return nil
	}
	out := concatComponents(s, xs, comps)
	dim := 0
	for _, x := range xs {
		if d := x.StructSpec().Shape[0]; d < 0 || dim < 0 {
			dim = st.Unknown
		} else {
			dim += d
		}
	}
	return build(s, "Concat", withOuterDims(spec, 1, dim), out)
}

// Stack stacks xs along a new outer dimension: ops.Stack(xs, 0). The old
// outer dimension becomes a partition (ragged unless every input has the
// same known length).
func Stack(s *op.Scope, xs []*Struct) *Struct {
	s = s.SubScope("Stack")
	spec, comps, err := sameSpecs(xs)
	if err != nil {
		s.UpdateErr("Stack", err)
		return nil
	}
	out := concatComponents(s, xs, comps)
	// The new partition's splits: 0, n0, n0+n1, ...
	counts := make([]tfbridge.Output, len(xs))
	dim := xs[0].StructSpec().Shape[0]
	for i, x := range xs {
		l, _ := levelsOf(x.StructSpec())
		counts[i] = op.Reshape(s, outerRows(s, x, l), op.Constant(s, []int64{1}))
		if x.StructSpec().Shape[0] != dim {
			dim = st.Unknown
		}
	}
	splits := op.Cumsum(s, op.ConcatV2(s, append([]tfbridge.Output{op.Constant(s, []int64{0})}, counts...), op.Constant(s, int32(0))), op.Constant(s, int32(0)))
	newSpec := withOuterDims(spec, 1, len(xs), dim)
	return build(s, "Stack", newSpec, append([]tfbridge.Output{splits}, out...))
}

// sameSpecs checks that xs are roots of one spec but for the outer
// dimension, and returns the spec of xs[0] and the components' kinds.
func sameSpecs(xs []*Struct) (*st.StructSpec, []ComponentSpec, error) {
	if len(xs) == 0 {
		return nil, nil, fmt.Errorf("%w: no structs", ErrSpec)
	}
	for i, x := range xs {
		if _, err := root(x); err != nil {
			return nil, nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	spec := xs[0].StructSpec()
	want := withOuterDims(spec, 1, st.Unknown)
	for i, x := range xs[1:] {
		if !withOuterDims(x.StructSpec(), 1, st.Unknown).IsCompatibleWith(want) {
			return nil, nil, fmt.Errorf("%w: input %d has spec %v, input 0 %v", ErrSpec, i+1, x.StructSpec(), spec)
		}
	}
	return spec, xs[0].ComponentSpecs(), nil
}

// concatComponents concatenates each component across xs, shifting the
// row splits of input k by the values of the inputs before it.
func concatComponents(s *op.Scope, xs []*Struct, comps []ComponentSpec) []tfbridge.Output {
	axis := op.Constant(s, int32(0))
	out := make([]tfbridge.Output, len(comps))
	for i, c := range comps {
		parts := make([]tfbridge.Output, 0, len(xs)+1)
		if c.Kind == ValuesComponent {
			for _, x := range xs {
				parts = append(parts, x.Components()[i])
			}
			if len(parts) == 1 {
				out[i] = op.Identity(s, parts[0]) // ConcatV2 takes two or more
			} else {
				out[i] = op.ConcatV2(s, parts, axis)
			}
			continue
		}
		parts = append(parts, op.Constant(s, []int64{0}))
		offset := op.Constant(s, int64(0))
		for _, x := range xs {
			splits := x.Components()[i]
			tail := op.Slice(s, splits, op.Constant(s, []int64{1}), op.Constant(s, []int64{-1}))
			parts = append(parts, op.AddV2(s, tail, offset))
			// Row splits start at 0 and never decrease: the last is the max.
			offset = op.AddV2(s, offset, op.Max(s, splits, axis))
		}
		out[i] = op.ConcatV2(s, parts, axis)
	}
	return out
}
