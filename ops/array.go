package ops

import (
	"fmt"

	"github.com/structtensor/structtensor-go/ops/internal/kernel"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// Shape returns the shape of v; ragged dimensions are
// structtensor.Unknown.
func Shape(v st.Value) st.Shape { return v.Shape() }

// Rank returns the number of dimensions of v.
func Rank(v st.Value) int { return v.Rank() }

// Size returns the number of elements of v: for a Tensor or Ragged value
// the number of scalars, for a StructTensor the number of structures (its
// fields' values are not counted).
func Size(v st.Value) int {
	switch x := v.(type) {
	case *st.Tensor:
		return x.Len()
	case *st.Ragged:
		return x.Values().Len()
	case *st.StructTensor:
		return x.NumElements()
	}
	return 0
}

func normAxis(axis, rank int, what string) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, fmt.Errorf("%w: %s %d for rank %d", ErrAxis, what, axis, rank)
	}
	return a, nil
}

// ExpandDims inserts a dimension of size 1 at axis (negative counts from
// rank+1, so -1 appends one), sharing every buffer of v.
func ExpandDims(v st.Value, axis int) (st.Value, error) {
	a, err := normAxis(axis, v.Rank()+1, "axis")
	if err != nil {
		return nil, err
	}
	if a == 0 {
		return expandOuter(v)
	}
	parts, flat, err := splitOuter(v, a)
	if err != nil {
		return nil, err
	}
	one, err := st.NewUniformPartition(flat.NumRows(), 1)
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(append(parts, one), flat)
}

// splitOuter is SplitOuterDims returning a partition slice the caller may
// append to.
func splitOuter(v st.Value, dims int) ([]*st.RowPartition, st.Value, error) {
	parts, flat, err := st.SplitOuterDims(v, dims)
	if err != nil {
		return nil, nil, err
	}
	return append([]*st.RowPartition(nil), parts...), flat, nil
}

// Squeeze removes the dimension axis, which must have size 1 in every row
// (a uniform dimension of size 1, or a ragged one whose rows all have one
// element). It shares every buffer of v.
func Squeeze(v st.Value, axis int) (st.Value, error) {
	a, err := normAxis(axis, v.Rank(), "axis")
	if err != nil {
		return nil, err
	}
	if a == 0 {
		if v.NumRows() != 1 {
			return nil, fmt.Errorf("%w: cannot squeeze axis 0 of size %d", ErrShape, v.NumRows())
		}
		return squeezeOuter(v)
	}
	parts, flat, err := splitOuter(v, a+1)
	if err != nil {
		return nil, err
	}
	p := parts[a-1]
	if l, ok := p.UniformRowLength(); !ok || l != 1 {
		for i := 0; i < p.NumRows(); i++ {
			if p.RowLength(i) != 1 {
				return nil, fmt.Errorf("%w: cannot squeeze axis %d: row %d has %d elements", ErrShape, a, i, p.RowLength(i))
			}
		}
	}
	return st.JoinOuterDims(parts[:a-1], flat)
}

// MergeDims merges dimensions outer..inner (inclusive) into one, as
// StructuredTensor.merge_dims: the row partitions between them are
// composed, and no values are copied.
func MergeDims(v st.Value, outer, inner int) (st.Value, error) {
	o, err := normAxis(outer, v.Rank(), "outer axis")
	if err != nil {
		return nil, err
	}
	i, err := normAxis(inner, v.Rank(), "inner axis")
	if err != nil {
		return nil, err
	}
	if o > i {
		return nil, fmt.Errorf("%w: outer axis %d is after inner axis %d", ErrAxis, outer, inner)
	}
	if o == i {
		return v, nil
	}
	parts, flat, err := splitOuter(v, i+1)
	if err != nil {
		return nil, err
	}
	if o == 0 {
		return flat, nil
	}
	merged, err := composePartitions(parts[o-1:])
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(append(parts[:o-1], merged), flat)
}

// PartitionOuterDimension adds an outer dimension: the rows of v are
// split by p (whose number of values must equal v's number of rows), as
// StructuredTensor.partition_outer_dimension. Nothing is copied.
func PartitionOuterDimension(v st.Value, p *st.RowPartition) (st.Value, error) {
	if v.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot partition a scalar", ErrShape)
	}
	if p.NumValues() != v.NumRows() {
		return nil, fmt.Errorf("%w: partition of %d values for %d rows", ErrShape, p.NumValues(), v.NumRows())
	}
	return st.JoinOuterDims([]*st.RowPartition{p}, v)
}

// Concat concatenates values along axis. They must share a schema (the
// same kind, dtype, rank and fields; the error names the first differing
// field path) and agree on every dimension before axis.
func Concat(vals []st.Value, axis int) (st.Value, error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("%w: nothing to concatenate", ErrArgument)
	}
	a, err := normAxis(axis, vals[0].Rank(), "axis")
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if v.Rank() != vals[0].Rank() {
			return nil, fmt.Errorf("%w: input %d has rank %d, input 0 has rank %d", ErrSchema, i, v.Rank(), vals[0].Rank())
		}
	}
	if a == 0 {
		return concatRows(vals, "")
	}
	outers := make([][]*st.RowPartition, len(vals))
	flats := make([]st.Value, len(vals))
	for i, v := range vals {
		parts, flat, err := splitOuter(v, a+1)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			if v.NumRows() != vals[0].NumRows() || !partitionsEqual(parts[:a-1], outers[0][:a-1]) || parts[a-1].NumRows() != outers[0][a-1].NumRows() {
				return nil, fmt.Errorf("%w: input %d differs from input 0 in the dimensions before axis %d", ErrShape, i, a)
			}
		}
		outers[i], flats[i] = parts, flat
	}
	all, err := concatRows(flats, "")
	if err != nil {
		return nil, err
	}
	ncells := outers[0][a-1].NumRows()
	offsets := make([]int, len(vals))
	for i := 1; i < len(vals); i++ {
		offsets[i] = offsets[i-1] + flats[i-1].NumRows()
	}
	lengths := make([]int64, ncells)
	spans := make([]span, 0, ncells*len(vals))
	uniform := true
	for _, parts := range outers {
		_, ok := parts[a-1].UniformRowLength()
		uniform = uniform && ok
	}
	for c := 0; c < ncells; c++ {
		for i, parts := range outers {
			p := parts[a-1]
			spans = kernel.AppendSpan(spans, offsets[i]+p.RowStart(c), offsets[i]+p.RowLimit(c))
			lengths[c] += int64(p.RowLength(c))
		}
	}
	var q *st.RowPartition
	if uniform {
		l := 0
		for _, parts := range outers {
			n, _ := parts[a-1].UniformRowLength()
			l += n
		}
		q, err = st.NewUniformPartition(ncells, l)
	} else {
		q, err = st.NewRowLengths(lengths)
	}
	if err != nil {
		return nil, err
	}
	flat, err := takeSpans(all, spans)
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(append(outers[0][:a-1:a-1], q), flat)
}

// Stack stacks values of one schema and shape along a new axis.
func Stack(vals []st.Value, axis int) (st.Value, error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("%w: nothing to stack", ErrArgument)
	}
	a, err := normAxis(axis, vals[0].Rank()+1, "axis")
	if err != nil {
		return nil, err
	}
	ex := make([]st.Value, len(vals))
	for i, v := range vals {
		if v.Rank() != vals[0].Rank() {
			return nil, fmt.Errorf("%w: input %d has rank %d, input 0 has rank %d", ErrSchema, i, v.Rank(), vals[0].Rank())
		}
		if ex[i], err = ExpandDims(v, a); err != nil {
			return nil, err
		}
	}
	return Concat(ex, a)
}

// Unstack splits v along axis into its slices. Axis 0 may be of any size;
// the rows of an inner axis must all have the same length.
func Unstack(v st.Value, axis int) ([]st.Value, error) {
	a, err := normAxis(axis, v.Rank(), "axis")
	if err != nil {
		return nil, err
	}
	if a == 0 {
		out := make([]st.Value, v.NumRows())
		for i := range out {
			if out[i], err = rowValue(v, i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	n := v.Shape()[a]
	if n < 0 {
		// A ragged axis unstacks when all its rows have one length.
		parts, _, err := st.SplitOuterDims(v, a+1)
		if err != nil {
			return nil, err
		}
		p := parts[a-1]
		for i := 0; i < p.NumRows(); i++ {
			if l := p.RowLength(i); i == 0 {
				n = l
			} else if l != n {
				return nil, fmt.Errorf("%w: cannot unstack ragged axis %d: row %d has %d elements, row 0 has %d", ErrAxis, a, i, l, n)
			}
		}
		n = max(n, 0)
	}
	out := make([]st.Value, n)
	for i := range out {
		idx, err := st.NewScalar(int64(i))
		if err != nil {
			return nil, err
		}
		if out[i], err = Gather(v, idx, a, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Tile repeats v multiples[d] times along each dimension d, as tf.tile
// (ragged dimensions repeat each row's own contents).
func Tile(v st.Value, multiples []int) (st.Value, error) {
	if len(multiples) != v.Rank() {
		return nil, fmt.Errorf("%w: %d multiples for rank %d", ErrArgument, len(multiples), v.Rank())
	}
	for d, m := range multiples {
		if m < 0 {
			return nil, fmt.Errorf("%w: multiple %d for axis %d is negative", ErrArgument, m, d)
		}
	}
	out := v
	for d, m := range multiples {
		if m == 1 {
			continue
		}
		var err error
		if out, err = tileAxis(out, d, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func tileAxis(v st.Value, axis, m int) (st.Value, error) {
	if axis == 0 {
		spans := make([]span, m)
		for i := range spans {
			spans[i] = span{Lo: 0, Hi: v.NumRows()}
		}
		if m == 0 || v.NumRows() == 0 {
			spans = nil
		}
		return takeSpansRows(v, spans, m*v.NumRows())
	}
	parts, flat, err := splitOuter(v, axis+1)
	if err != nil {
		return nil, err
	}
	p := parts[axis-1]
	spans := make([]span, 0, p.NumRows()*m)
	for c := 0; c < p.NumRows(); c++ {
		for k := 0; k < m; k++ {
			spans = append(spans, span{Lo: p.RowStart(c), Hi: p.RowLimit(c)})
		}
	}
	var q *st.RowPartition
	if l, ok := p.UniformRowLength(); ok {
		q, err = st.NewUniformPartition(p.NumRows(), l*m)
	} else {
		lengths := make([]int64, p.NumRows())
		for c := range lengths {
			lengths[c] = int64(p.RowLength(c) * m)
		}
		q, err = st.NewRowLengths(lengths)
	}
	if err != nil {
		return nil, err
	}
	f, err := takeSpans(flat, spans)
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(append(parts[:axis-1], q), f)
}

// takeSpansRows is takeSpans for spans that may repeat rows (so they are
// not coalesced) or be empty.
func takeSpansRows(v st.Value, spans []span, total int) (st.Value, error) {
	if total == 0 {
		return gatherRows(v, nil)
	}
	return takeSpans(v, spans)
}

// Where picks, for each element of cond, the corresponding sub-value of x
// where cond is true and of y where it is false, as tf.where(cond, x, y).
// cond is a bool Tensor or Ragged value whose dimensions are the outer
// dimensions of x and y (a cond of x's full rank selects single values; a
// shorter cond selects whole rows or records). x and y share a schema and
// those outer dimensions.
func Where(cond, x, y st.Value) (st.Value, error) {
	k := cond.Rank()
	if x.Rank() != y.Rank() {
		return nil, fmt.Errorf("%w: x has rank %d, y has rank %d", ErrSchema, x.Rank(), y.Rank())
	}
	if k > x.Rank() {
		return nil, fmt.Errorf("%w: condition of rank %d for values of rank %d", ErrShape, k, x.Rank())
	}
	if k == 0 {
		t, ok := cond.(*st.Tensor)
		if !ok || t.DType() != st.Bool {
			return nil, fmt.Errorf("%w: condition is not a bool tensor", ErrArgument)
		}
		if err := sameSchema(x, y, ""); err != nil {
			return nil, err
		}
		if t.Bools()[0] {
			return x, nil
		}
		return y, nil
	}
	cp, cf, err := splitOuter(cond, k)
	if err != nil {
		return nil, err
	}
	ct, ok := cf.(*st.Tensor)
	if !ok || ct.DType() != st.Bool || ct.Rank() != 1 {
		return nil, fmt.Errorf("%w: condition is not a bool tensor or ragged tensor", ErrArgument)
	}
	xp, xf, err := splitOuter(x, k)
	if err != nil {
		return nil, err
	}
	yp, yf, err := splitOuter(y, k)
	if err != nil {
		return nil, err
	}
	if cond.NumRows() != x.NumRows() || !partitionsEqual(cp, xp) || xf.NumRows() != ct.NumRows() {
		return nil, fmt.Errorf("%w: condition shape %v does not match x shape %v", ErrShape, cond.Shape(), x.Shape())
	}
	if y.NumRows() != x.NumRows() || !partitionsEqual(yp, xp) || yf.NumRows() != xf.NumRows() {
		return nil, fmt.Errorf("%w: y shape %v does not match x shape %v", ErrShape, y.Shape(), x.Shape())
	}
	both, err := concatRows([]st.Value{xf, yf}, "")
	if err != nil {
		return nil, err
	}
	n := xf.NumRows()
	spans := make([]span, 0, 16)
	for j, c := range ct.Bools() {
		if c {
			spans = kernel.AppendSpan(spans, j, j+1)
		} else {
			spans = kernel.AppendSpan(spans, n+j, n+j+1)
		}
	}
	f, err := takeSpansRows(both, spans, n)
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(xp, f)
}

// BooleanMask keeps the elements of v along axis where mask is true.
//
// mask is a bool Tensor or Ragged value. Of rank axis+1, it matches the
// outer dimensions of v (dimensions 0..axis) and masks each row's
// elements separately, so the result keeps v's rank with axis becoming
// ragged (tf.ragged.boolean_mask). Of rank 1 with axis > 0, the same mask
// applies to every row, which must all have len(mask) elements, and a
// uniform axis stays uniform (tf.boolean_mask with axis). Kept runs of
// rows are copied as whole ranges.
func BooleanMask(v, mask st.Value, axis int) (st.Value, error) {
	a, err := normAxis(axis, v.Rank(), "axis")
	if err != nil {
		return nil, err
	}
	var parts []*st.RowPartition
	var flat st.Value = v
	if a > 0 {
		if parts, flat, err = splitOuter(v, a+1); err != nil {
			return nil, err
		}
	}
	var bits []bool
	shared := false
	switch {
	case mask.Rank() == a+1:
		mp, mf, err := splitOuter(mask, a+1)
		if err != nil {
			return nil, err
		}
		mt, ok := mf.(*st.Tensor)
		if !ok || mt.DType() != st.Bool || mt.Rank() != 1 {
			return nil, fmt.Errorf("%w: mask is not a bool tensor or ragged tensor", ErrArgument)
		}
		if mask.NumRows() != v.NumRows() || !partitionsEqual(mp, parts) || mt.NumRows() != flat.NumRows() {
			return nil, fmt.Errorf("%w: mask shape %v does not match the first %d dimensions of %v", ErrShape, mask.Shape(), a+1, v.Shape())
		}
		bits = mt.Bools()
	case mask.Rank() == 1:
		mt, ok := mask.(*st.Tensor)
		if !ok || mt.DType() != st.Bool {
			return nil, fmt.Errorf("%w: mask is not a bool tensor", ErrArgument)
		}
		bits, shared = mt.Bools(), true
	default:
		return nil, fmt.Errorf("%w: mask of rank %d for axis %d (want rank 1 or %d)", ErrShape, mask.Rank(), a, a+1)
	}
	return maskRows(parts, flat, bits, shared, a)
}

// maskRows keeps the rows of flat where keep is true; parts are the
// partitions above flat, the last of which groups flat's rows into the
// lists being masked. With shared, keep is one row's mask applied to every
// list.
func maskRows(parts []*st.RowPartition, flat st.Value, keep []bool, shared bool, axis int) (st.Value, error) {
	var spans []span
	if !shared {
		spans = make([]span, 0, countRuns(keep))
	}
	if axis == 0 {
		kept := 0
		for j, k := range keep {
			if k {
				spans = kernel.AppendSpan(spans, j, j+1)
				kept++
			}
		}
		return takeSpansRows(flat, spans, kept)
	}
	p := parts[axis-1]
	ncells := p.NumRows()
	lengths := make([]int64, ncells)
	kept := 0
	for c := 0; c < ncells; c++ {
		start, n := p.RowStart(c), p.RowLength(c)
		m := keep
		if shared {
			if n != len(keep) {
				return nil, fmt.Errorf("%w: mask of %d for row %d of %d elements along axis %d", ErrShape, len(keep), c, n, axis)
			}
		} else {
			m = keep[start : start+n]
		}
		for j, k := range m {
			if k {
				spans = kernel.AppendSpan(spans, start+j, start+j+1)
				lengths[c]++
			}
		}
		kept += int(lengths[c])
	}
	var q *st.RowPartition
	var err error
	if _, ok := p.UniformRowLength(); ok && shared {
		q, err = st.NewUniformPartition(ncells, kept/max(ncells, 1))
	} else {
		q, err = st.NewRowLengths(lengths)
	}
	if err != nil {
		return nil, err
	}
	f, err := takeSpansRows(flat, spans, kept)
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims(append(parts[:axis-1], q), f)
}

// countRuns returns the number of runs of true in keep: the number of
// spans a mask selects, at most, so that the span list is sized once.
func countRuns(keep []bool) int {
	n, prev := 0, false
	for _, k := range keep {
		if k && !prev {
			n++
		}
		prev = k
	}
	return n
}
