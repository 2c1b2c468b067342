package ops

import (
	"fmt"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// Gather returns the slices of params at indices along axis, as
// TensorFlow's tf.gather does, for Tensors, Ragged values and StructTensors
// alike. indices is an int32 or int64 Tensor or Ragged value of any rank;
// a negative index counts from the end of its row. The result has shape
// params.shape[:axis] + indices.shape[batchDims:] + params.shape[axis+1:]:
// a scalar index removes the axis (gathering one record of a rank-1
// StructTensor gives a scalar StructTensor).
//
// With batchDims > 0 the first batchDims dimensions of params and indices
// are batch dimensions that must agree, and each batch element gathers from
// its own part of params. axis and batchDims may be negative (counted from
// the ranks of params and indices); batchDims <= axis.
//
// A StructTensor is gathered through its shared partitions once; each field
// then copies whole ranges of its flat rows. Dimensions outside the axis
// are shared with params.
func Gather(params, indices st.Value, axis, batchDims int) (st.Value, error) {
	r, ir := params.Rank(), indices.Rank()
	if r == 0 {
		return nil, fmt.Errorf("%w: cannot gather from a scalar", ErrAxis)
	}
	b := batchDims
	if b < 0 {
		b += ir
	}
	if b < 0 || b > ir {
		return nil, fmt.Errorf("%w: batch_dims %d for indices of rank %d", ErrAxis, batchDims, ir)
	}
	a := axis
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r {
		return nil, fmt.Errorf("%w: axis %d for params of rank %d", ErrAxis, axis, r)
	}
	if b > a {
		return nil, fmt.Errorf("%w: batch_dims %d is greater than axis %d", ErrAxis, b, a)
	}
	if err := checkBatchDims(params, indices, b); err != nil {
		return nil, err
	}
	if a == 0 {
		idxParts, flat, err := indexValues(indices)
		if err != nil {
			return nil, err
		}
		rows := make([]int, len(flat))
		n := params.NumRows()
		for j, i := range flat {
			if i < 0 {
				i += int64(n)
			}
			if i < 0 || i >= int64(n) {
				return nil, fmt.Errorf("%w: index %d (at flat position %d) for %d rows", ErrIndex, flat[j], j, n)
			}
			rows[j] = int(i)
		}
		return gatherUnder(params, rows, idxParts, ir == 0)
	}
	// The cells are the lists along axis: rows of cellsVal, whose elements
	// are the rows of f, grouped by q.
	pa, cellsVal, err := st.SplitOuterDims(params, a)
	if err != nil {
		return nil, err
	}
	qs, f, err := st.SplitOuterDims(cellsVal, 2)
	if err != nil {
		return nil, err
	}
	q := qs[0]
	ncells := q.NumRows()
	// Each cell gathers with the indices of its batch element.
	var ib st.Value
	if b == 0 {
		if ib, err = expandOuter(indices); err != nil {
			return nil, err
		}
	} else if _, ib, err = st.SplitOuterDims(indices, b); err != nil {
		return nil, err
	}
	var batchOf []int
	switch {
	case b == 0:
		batchOf = make([]int, ncells)
	case b < a:
		if batchOf, err = valueRowIDs(pa[b-1:]); err != nil {
			return nil, err
		}
	}
	g := ib
	if batchOf != nil {
		if g, err = gatherRows(ib, batchOf); err != nil {
			return nil, err
		}
	}
	gParts, gFlat, err := splitAll(g)
	if err != nil {
		return nil, err
	}
	flat, err := int64s(gFlat)
	if err != nil {
		return nil, err
	}
	var cellOf []int
	if len(gParts) > 0 {
		if cellOf, err = valueRowIDs(gParts); err != nil {
			return nil, err
		}
	}
	rows := make([]int, len(flat))
	for j, i := range flat {
		c := j
		if cellOf != nil {
			c = cellOf[j]
		}
		n := int64(q.RowLength(c))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: index %d (at flat position %d) for a row of %d along axis %d", ErrIndex, flat[j], j, n, a)
		}
		rows[j] = q.RowStart(c) + int(i)
	}
	out, err := gatherRows(f, rows)
	if err != nil {
		return nil, err
	}
	cells, err := st.JoinOuterDims(gParts, out)
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(pa, cells)
}

// BatchGather is Gather with batch_dims and axis both rank(indices)-1:
// each row of the innermost batch gathers from its own row of params
// (TensorFlow's batch_gather).
func BatchGather(params, indices st.Value) (st.Value, error) {
	if indices.Rank() == 0 {
		return nil, fmt.Errorf("%w: batch gather needs indices of rank >= 1", ErrAxis)
	}
	b := indices.Rank() - 1
	return Gather(params, indices, b, b)
}

// GatherND gathers slices of params addressed by index tuples, as
// tf.gather_nd: the last dimension of indices (dense, of size d) holds
// tuples that index dimensions batchDims..batchDims+d-1 of params. The
// result has shape indices.shape[:-1] + params.shape[batchDims+d:].
func GatherND(params, indices st.Value, batchDims int) (st.Value, error) {
	r, ir := params.Rank(), indices.Rank()
	if ir == 0 {
		return nil, fmt.Errorf("%w: gather_nd needs indices of rank >= 1", ErrAxis)
	}
	b := batchDims
	if b < 0 || b >= ir {
		return nil, fmt.Errorf("%w: batch_dims %d for indices of rank %d", ErrAxis, batchDims, ir)
	}
	// tuples: one row per index tuple, dense [ntuples, d].
	var outer []*st.RowPartition
	var tv st.Value = indices
	var err error
	if ir == 1 {
		if tv, err = expandOuter(indices); err != nil {
			return nil, err
		}
	} else if outer, tv, err = st.SplitOuterDims(indices, ir-1); err != nil {
		return nil, err
	}
	tuples, ok := tv.(*st.Tensor)
	if r, isRagged := tv.(*st.Ragged); isRagged {
		tuples, ok = uniformRows(r)
	}
	if !ok || tuples.Rank() != 2 {
		return nil, fmt.Errorf("%w: the last dimension of gather_nd indices must be dense", ErrShape)
	}
	d := tuples.Shape()[1]
	if d > r-b {
		return nil, fmt.Errorf("%w: index tuples of %d for params of rank %d with batch_dims %d", ErrAxis, d, r, b)
	}
	if err := checkBatchDims(params, indices, b); err != nil {
		return nil, err
	}
	if d == 0 {
		return nil, fmt.Errorf("%w: empty index tuples", ErrShape)
	}
	vals, err := int64s(tuples)
	if err != nil {
		return nil, err
	}
	ntuples := tuples.NumRows()
	var batchOf []int
	if b > 0 && b < ir-1 {
		if batchOf, err = valueRowIDs(outer[b-1:]); err != nil {
			return nil, err
		}
	}
	var pp []*st.RowPartition
	var f st.Value = params
	if b+d > 1 {
		if pp, f, err = st.SplitOuterDims(params, b+d); err != nil {
			return nil, err
		}
	}
	rows := make([]int, ntuples)
	for j := 0; j < ntuples; j++ {
		// pos is an element at depth level-1 (a row of params when
		// level is 0); each component selects within its row.
		level, pos := b, 0
		if b > 0 {
			pos = j
			if batchOf != nil {
				pos = batchOf[j]
			}
		}
		for k := 0; k < d; k++ {
			i := vals[j*d+k]
			var start, n int
			if level == 0 {
				start, n = 0, params.NumRows()
			} else {
				p := pp[level-1]
				start, n = p.RowStart(pos), p.RowLength(pos)
			}
			if i < 0 {
				i += int64(n)
			}
			if i < 0 || i >= int64(n) {
				return nil, fmt.Errorf("%w: index tuple %d component %d is %d for a dimension of %d", ErrIndex, j, k, vals[j*d+k], n)
			}
			pos = start + int(i)
			level++
		}
		rows[j] = pos
	}
	return gatherUnder(f, rows, outer, ir == 1)
}

// gatherUnder gathers rows of v and gives them the outer dimensions outer
// of the indices; a single index (scalar, or one tuple) gives its row
// itself, with no outer dimension.
func gatherUnder(v st.Value, rows []int, outer []*st.RowPartition, single bool) (st.Value, error) {
	g, err := gatherRows(v, rows)
	if err != nil {
		return nil, err
	}
	if single {
		return squeezeOuter(g)
	}
	return st.JoinOuterDims(outer, g)
}

// checkBatchDims verifies that the first b dimensions of params and
// indices agree.
func checkBatchDims(params, indices st.Value, b int) error {
	if b == 0 {
		return nil
	}
	if b > params.Rank() {
		return fmt.Errorf("%w: batch_dims %d for params of rank %d", ErrAxis, b, params.Rank())
	}
	if params.NumRows() != indices.NumRows() {
		return fmt.Errorf("%w: batch dimension 0: params has %d rows, indices %d", ErrShape, params.NumRows(), indices.NumRows())
	}
	if b == 1 {
		return nil
	}
	pp, _, err := st.SplitOuterDims(params, b)
	if err != nil {
		return err
	}
	ip, _, err := st.SplitOuterDims(indices, b)
	if err != nil {
		return err
	}
	for i := range pp {
		if !pp[i].Equal(ip[i]) {
			return fmt.Errorf("%w: batch dimension %d differs between params and indices", ErrShape, i+1)
		}
	}
	return nil
}

// indexValues returns the partitions of every dimension of indices and its
// flat values as int64.
func indexValues(indices st.Value) ([]*st.RowPartition, []int64, error) {
	if indices.Rank() == 0 {
		t, ok := indices.(*st.Tensor)
		if !ok {
			return nil, nil, fmt.Errorf("%w: indices are a %s", ErrIndex, kindName(indices))
		}
		v, err := int64s(t)
		return nil, v, err
	}
	parts, flat, err := splitAll(indices)
	if err != nil {
		return nil, nil, err
	}
	v, err := int64s(flat)
	return parts, v, err
}

// int64s returns the flat values of an int32 or int64 tensor, or of an
// empty tensor of any dtype, as int64 (shared when already int64).
func int64s(v st.Value) ([]int64, error) {
	t, ok := v.(*st.Tensor)
	if !ok {
		return nil, fmt.Errorf("%w: indices are a %s, not a tensor", ErrIndex, kindName(v))
	}
	if t.Len() == 0 {
		// An empty list has no element type of its own (FromValue makes
		// it float32, as TensorFlow does); it selects nothing.
		return nil, nil
	}
	switch t.DType() {
	case st.Int64:
		return t.Int64s(), nil
	case st.Int32:
		s := t.Int32s()
		out := make([]int64, len(s))
		for i, x := range s {
			out[i] = int64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: indices have dtype %v, want int32 or int64", ErrIndex, t.DType())
}

// uniformRows returns a Ragged value of one partition whose rows all have
// the same length as a dense Tensor, sharing its values.
func uniformRows(r *st.Ragged) (*st.Tensor, bool) {
	if r.RaggedRank() != 1 {
		return nil, false
	}
	p, vals := r.Partitions()[0], r.Values()
	n := 0
	for i := 0; i < p.NumRows(); i++ {
		if i == 0 {
			n = p.RowLength(0)
		} else if p.RowLength(i) != n {
			return nil, false
		}
	}
	t, err := vals.Reshape(append(st.Shape{p.NumRows(), n}, vals.Shape()[1:]...))
	return t, err == nil
}
