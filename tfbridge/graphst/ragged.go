package graphst

import (
	"fmt"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// Ragged is a tensor in a graph that may have ragged dimensions: the row
// splits of its partitions, outermost first, and its flat values; without
// row splits it is a dense tensor. A leaf field of a Struct is one (Field
// returns it in full shape, its ancestors' partitions included), and so is
// the result of a per-row op. It is a small value, copied freely; the zero
// Ragged is what an op that failed returns.
type Ragged struct {
	rowSplits []tfbridge.Output
	values    tfbridge.Output
	spec      structtensor.Spec
	// dims is, per partition, its row length where the spec knows it
	// (rebuilt as a uniform partition), else structtensor.Unknown.
	dims        []int
	valuesShape structtensor.Shape
	names       []string  // per component, for errors
	leaf        *leafNode // the Struct leaf r is, for its binary mark; nil otherwise
}

// NewRagged returns the ragged value of flat values and rowSplits (int64
// vectors, outermost first; none for a dense tensor). It checks what the
// graph knows (dtypes, ranks; the values' rank must be known) and records
// a failure in s, returning the zero Ragged. The splits' consistency with
// the values is checked when the value is fetched (Run), as the value
// model's constructors check it.
func NewRagged(s *op.Scope, values tfbridge.Output, rowSplits ...tfbridge.Output) Ragged {
	return newRagged(s, "NewRagged", values, rowSplits, nil)
}

// newRagged is NewRagged with the outer shape known to the caller: outer
// is [rows, partition dims...] (len(rowSplits)+1 entries, Unknown where
// unknown) or nil for all unknown.
func newRagged(s *op.Scope, what string, values tfbridge.Output, rowSplits []tfbridge.Output, outer structtensor.Shape) Ragged {
	if s.Err() != nil {
		return Ragged{}
	}
	fail := func(format string, args ...any) Ragged {
		s.UpdateErr(what, fmt.Errorf(format, args...))
		return Ragged{}
	}
	if values.Op == nil {
		return fail("%w: values have no operation", ErrSpec)
	}
	dt, err := values.DType().StructDType()
	if err != nil {
		return fail("%w: values %s: %v", ErrSpec, values.Name(), err)
	}
	shape, known, err := values.Shape()
	if err != nil {
		s.UpdateErr(what, err)
		return Ragged{}
	}
	if !known {
		return fail("%w: values %s have an unknown rank", ErrRank, values.Name())
	}
	k := len(rowSplits)
	if k > 0 && len(shape) == 0 {
		return fail("%w: values %s are a scalar; partitioned values need rank >= 1", ErrRank, values.Name())
	}
	if outer == nil {
		outer = make(structtensor.Shape, k+1)
		for i := range outer {
			outer[i] = structtensor.Unknown
		}
	}
	names := make([]string, 0, k+1)
	for i, sp := range rowSplits {
		if sp.Op == nil {
			return fail("%w: row splits %d have no operation", ErrSpec, i)
		}
		if sp.DType() != tfbridge.Int64 {
			return fail("%w: row splits %d (%s) are %v, want int64", ErrSpec, i, sp.Name(), sp.DType())
		}
		ss, known, err := sp.Shape()
		if err != nil {
			s.UpdateErr(what, err)
			return Ragged{}
		}
		if known && len(ss) != 1 {
			return fail("%w: row splits %d (%s) have shape %v, want [N+1]", ErrRank, i, sp.Name(), ss)
		}
		if i == 0 && known && ss[0] > 0 && outer[0] < 0 {
			outer[0] = ss[0] - 1
		}
		names = append(names, sp.Name())
	}
	r := Ragged{
		rowSplits:   append([]tfbridge.Output(nil), rowSplits...),
		values:      values,
		dims:        append([]int(nil), outer[1:]...),
		valuesShape: shape,
		names:       append(names, values.Name()),
	}
	full := append(append(structtensor.Shape{}, outer...), shape[min(1, len(shape)):]...)
	if k == 0 {
		r.spec = &structtensor.TensorSpec{DType: dt, Shape: shape}
		return r
	}
	uniform := true
	for _, d := range r.dims {
		uniform = uniform && d >= 0
	}
	if uniform {
		r.spec = &structtensor.TensorSpec{DType: dt, Shape: full}
	} else {
		r.spec = &structtensor.RaggedSpec{DType: dt, Shape: full, RaggedRank: k}
	}
	return r
}

// RowSplits returns the outputs holding the row splits, outermost first.
func (r Ragged) RowSplits() []tfbridge.Output {
	return append([]tfbridge.Output(nil), r.rowSplits...)
}

// Values returns the output holding the flat values.
func (r Ragged) Values() tfbridge.Output { return r.values }

// RaggedRank returns the number of partitions (row splits).
func (r Ragged) RaggedRank() int { return len(r.rowSplits) }

// Spec returns the value's full-shape spec: a leaf's own spec, or what the
// graph knows of a computed value (ragged dimensions unknown). Nil for the
// zero Ragged.
func (r Ragged) Spec() structtensor.Spec { return r.spec }

// Components returns the row splits then the values: what to fetch.
func (r Ragged) Components() []tfbridge.Output {
	return append(r.RowSplits(), r.values)
}

// outerShape returns r's shape down to its innermost partition: [rows,
// partition dims...], Unknown where unknown.
func (r Ragged) outerShape() structtensor.Shape {
	full := r.spec.ValueShape()
	return append(structtensor.Shape{}, full[:len(r.rowSplits)+1]...)
}
