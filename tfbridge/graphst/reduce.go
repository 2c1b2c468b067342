package graphst

import (
	"fmt"

	"github.com/structtensor/structtensor-go/cops/reduceop"
	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// outerOf returns the partitions of r above its innermost one, through
// Identity, so that the result's splits are outputs of its own (fetchable
// even when r's are fed placeholders).
func outerOf(s *op.Scope, r Ragged) []tfbridge.Output {
	outer := make([]tfbridge.Output, len(r.rowSplits)-1)
	for i := range outer {
		outer[i] = op.Identity(s, r.rowSplits[i])
	}
	return outer
}

// perRow returns values, one per row of r's innermost ragged dimension,
// under r's other partitions.
func perRow(s *op.Scope, what string, r Ragged, values tfbridge.Output) Ragged {
	outer := r.outerShape()
	return newRagged(s, what, values, outerOf(s, r), outer[:len(outer)-1])
}

// innermost returns the innermost row splits of r, or records an error.
func innermost(s *op.Scope, what string, r Ragged) (tfbridge.Output, bool) {
	if r.spec == nil {
		s.UpdateErr(what, fmt.Errorf("%w: the zero Ragged (an op that failed?)", ErrSpec))
		return tfbridge.Output{}, false
	}
	if len(r.rowSplits) == 0 {
		s.UpdateErr(what, fmt.Errorf("%w: a dense value has no ragged dimension", ErrRank))
		return tfbridge.Output{}, false
	}
	return r.rowSplits[len(r.rowSplits)-1], s.Err() == nil
}

// RowLengths returns the lengths of the rows of r's innermost ragged
// dimension, keeping its other partitions: RaggedTensor.row_lengths at
// axis ragged_rank.
func RowLengths(s *op.Scope, r Ragged) Ragged {
	s = s.SubScope("RowLengths")
	splits, ok := innermost(s, "RowLengths", r)
	if !ok {
		return Ragged{}
	}
	return perRow(s, "RowLengths", r, rowLengths(s, splits))
}

func rowLengths(s *op.Scope, splits tfbridge.Output) tfbridge.Output {
	return op.Sub(s,
		op.Slice(s, splits, op.Constant(s, []int64{1}), op.Constant(s, []int64{-1})),
		op.Slice(s, splits, op.Constant(s, []int64{0}), op.Sub(s, op.Shape(s, splits, op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{1}))))
}

// RowIDs returns, for every value of r's innermost ragged dimension, the
// row it belongs to (int64): RaggedTensor.value_rowids.
func RowIDs(s *op.Scope, r Ragged) tfbridge.Output {
	s = s.SubScope("RowIDs")
	splits, ok := innermost(s, "RowIDs", r)
	if !ok {
		return tfbridge.Output{}
	}
	return rowIDs(s, splits, r.values)
}

// rowIDs marks where each row after the first starts (a 1 at value
// position splits[i] for each row i >= 1; empty rows add up) and takes the
// running sum: each value's row id, in O(values + rows).
func rowIDs(s *op.Scope, splits, values tfbridge.Output) tfbridge.Output {
	return rowIDsN(s, splits, op.Slice(s, op.Shape(s, values, op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{0}), op.Constant(s, []int64{1})))
}

// rowIDsN is rowIDs for n values (an int64 vector of one element).
func rowIDsN(s *op.Scope, splits, n tfbridge.Output) tfbridge.Output {
	starts := op.Slice(s, splits, op.Constant(s, []int64{1}), op.Constant(s, []int64{-1}))
	starts = op.Slice(s, starts, op.Constant(s, []int64{0}), op.Sub(s, op.Shape(s, starts, op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{1})))
	// One slot past the end takes the starts of trailing empty rows.
	marks := op.ScatterNd(s, op.ExpandDims(s, starts, op.Constant(s, int32(1))), op.OnesLike(s, starts), op.AddV2(s, n, op.Constant(s, []int64{1})))
	ids := op.Cumsum(s, marks, op.Constant(s, int32(0)))
	return op.Slice(s, ids, op.Constant(s, []int64{0}), n)
}

// ReduceRows reduces the innermost ragged dimension of r: each of its
// rows becomes one element. It is ops.ReduceRows in the graph (the same
// reductions, dtypes and empty-row values), built on the
// StructTensorReduceRows kernel of the project's op library (package
// reduceop, registered on first use).
func ReduceRows(s *op.Scope, r Ragged, red ops.Reduction) Ragged {
	s = s.SubScope("ReduceRows")
	splits, ok := innermost(s, "ReduceRows", r)
	if !ok {
		return Ragged{}
	}
	if red == ops.ReduceCount {
		return perRow(s, "ReduceRows", r, rowLengths(s, splits))
	}
	dt := r.values.DType()
	numeric := dt == tfbridge.Int32 || dt == tfbridge.Int64 || dt == tfbridge.Uint32 || dt == tfbridge.Uint64 || dt == tfbridge.Float || dt == tfbridge.Double
	isFloat := dt == tfbridge.Float || dt == tfbridge.Double
	switch {
	case (red == ops.ReduceSum || red == ops.ReduceMin || red == ops.ReduceMax) && numeric,
		red == ops.ReduceMean && isFloat,
		(red == ops.ReduceAny || red == ops.ReduceAll) && dt == tfbridge.Bool:
	default:
		s.UpdateErr("ReduceRows", fmt.Errorf("%w: reduce %v of %v values", ErrSpec, red, dt))
		return Ragged{}
	}
	// One pass of the project's kernel over the splits: TensorFlow's own
	// ops (row ids, then a segment reduction) ran at a fraction of package
	// ops' speed (see BenchmarkReduceRows).
	if err := reduceop.Register(); err != nil {
		s.UpdateErr("ReduceRows", err)
		return Ragged{}
	}
	out := op.StructTensorReduceRows(s, splits, r.values, red.String())
	return perRow(s, "ReduceRows", r, out)
}

// ToDense returns r as a dense tensor, rows padded with defaultValue (a
// scalar of r's dtype) to the longest row, or to shape where shape (int64
// vector, -1 for "as long as the longest") says, truncating longer rows:
// RaggedTensor.to_tensor(default_value, shape).
func ToDense(s *op.Scope, r Ragged, defaultValue tfbridge.Output, shape []int64) tfbridge.Output {
	s = s.SubScope("ToDense")
	if len(r.rowSplits) == 0 {
		return r.values
	}
	var sh tfbridge.Output
	if shape == nil {
		sh = op.Constant(s, int64(-1))
	} else {
		sh = op.Constant(s, shape)
	}
	types := make([]string, len(r.rowSplits))
	for i := range types {
		types[i] = "ROW_SPLITS"
	}
	return op.RaggedTensorToTensor(s, sh, r.values, defaultValue, r.rowSplits, types)
}
