package ops

import (
	"fmt"

	"github.com/structtensor/structtensor-go/ops/internal/kernel"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// This file holds the row-level primitives every op is written with. A
// value of rank >= 1 is a list of outer rows; the primitives select rows
// (by index or by ranges), concatenate rows of several values, and add or
// remove an outer dimension of size 1. They push a selection down through
// the row partitions once (a range of rows at one level is one contiguous
// range of values at the next), so a StructTensor's partitions are
// processed once and each field then copies whole ranges of its flat rows.

type span = kernel.Span

// takeSpans returns the rows of v covered by spans, in order. A selection
// of all rows returns v itself and a single range of a Tensor shares its
// buffer.
func takeSpans(v st.Value, spans []span) (st.Value, error) {
	if v.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot take rows of a scalar", ErrShape)
	}
	total := kernel.TotalLen(spans)
	if len(spans) == 1 && spans[0].Lo == 0 && spans[0].Hi == v.NumRows() {
		return v, nil
	}
	switch x := v.(type) {
	case *st.Tensor:
		return tensorSpans(x, spans, total)
	case *st.Ragged:
		parts, vs, err := partitionsSpans(x.Partitions(), spans)
		if err != nil {
			return nil, err
		}
		vals, err := tensorSpans(x.Values(), vs, kernel.TotalLen(vs))
		if err != nil {
			return nil, err
		}
		return st.NewRagged(vals, parts...)
	case *st.StructTensor:
		parts, vs, err := partitionsSpans(x.Partitions(), spans)
		if err != nil {
			return nil, err
		}
		fields := make([]st.Field, x.NumFields())
		for i, f := range x.Fields() {
			fv, err := takeSpans(f.Value, vs)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[i] = st.Field{Name: f.Name, Value: fv}
		}
		return st.NewPartitionedStruct(total, parts, fields...)
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrArgument, v)
}

// gatherRows returns rows idx of v (each in [0, v.NumRows())), in order.
func gatherRows(v st.Value, idx []int) (st.Value, error) {
	if v.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot gather rows of a scalar", ErrShape)
	}
	switch x := v.(type) {
	case *st.Tensor:
		return tensorGather(x, idx)
	case *st.Ragged:
		parts := x.Partitions()
		if len(parts) == 1 && !parts[0].IsUniform() {
			return raggedGather(x, idx)
		}
		q0, vs, err := partitionGather(parts[0], idx)
		if err != nil {
			return nil, err
		}
		rest, vs, err := partitionsSpans(parts[1:], vs)
		if err != nil {
			return nil, err
		}
		vals, err := tensorSpans(x.Values(), vs, kernel.TotalLen(vs))
		if err != nil {
			return nil, err
		}
		return st.NewRagged(vals, append([]*st.RowPartition{q0}, rest...)...)
	case *st.StructTensor:
		parts := x.Partitions()
		fields := make([]st.Field, x.NumFields())
		if len(parts) == 0 {
			for i, f := range x.Fields() {
				fv, err := gatherRows(f.Value, idx)
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
				fields[i] = st.Field{Name: f.Name, Value: fv}
			}
			return st.NewStruct(len(idx), fields...)
		}
		q0, vs, err := partitionGather(parts[0], idx)
		if err != nil {
			return nil, err
		}
		rest, vs, err := partitionsSpans(parts[1:], vs)
		if err != nil {
			return nil, err
		}
		for i, f := range x.Fields() {
			fv, err := takeSpans(f.Value, vs)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[i] = st.Field{Name: f.Name, Value: fv}
		}
		return st.NewPartitionedStruct(len(idx), append([]*st.RowPartition{q0}, rest...), fields...)
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrArgument, v)
}

// partitionsSpans pushes a selection of rows through nested partitions and
// returns the new partitions and the selected ranges of the innermost
// values.
func partitionsSpans(parts []*st.RowPartition, spans []span) ([]*st.RowPartition, []span, error) {
	out := make([]*st.RowPartition, len(parts))
	for i, p := range parts {
		q, vs, err := partitionSpans(p, spans)
		if err != nil {
			return nil, nil, err
		}
		out[i], spans = q, vs
	}
	return out, spans, nil
}

// partitionSpans returns the partition of the rows of p covered by spans
// and the value ranges those rows hold. A uniform partition stays uniform.
func partitionSpans(p *st.RowPartition, spans []span) (*st.RowPartition, []span, error) {
	rows := kernel.TotalLen(spans)
	vs := make([]span, 0, len(spans))
	if l, ok := p.UniformRowLength(); ok {
		for _, s := range spans {
			vs = kernel.AppendSpan(vs, s.Lo*l, s.Hi*l)
		}
		q, err := st.NewUniformPartition(rows, l)
		return q, vs, err
	}
	splits := p.RowSplits()
	out := make([]int64, 1, rows+1)
	for _, s := range spans {
		base, off := splits[s.Lo], out[len(out)-1]
		for _, e := range splits[s.Lo+1 : s.Hi+1] {
			out = append(out, off+e-base)
		}
		vs = kernel.AppendSpan(vs, int(base), int(splits[s.Hi]))
	}
	q, err := st.NewRowSplits(out)
	return q, vs, err
}

// partitionGather returns the partition of rows idx of p and the value
// ranges those rows hold.
func partitionGather(p *st.RowPartition, idx []int) (*st.RowPartition, []span, error) {
	vs := make([]span, 0, len(idx))
	if l, ok := p.UniformRowLength(); ok {
		for _, i := range idx {
			vs = kernel.AppendSpan(vs, i*l, (i+1)*l)
		}
		q, err := st.NewUniformPartition(len(idx), l)
		return q, vs, err
	}
	splits := p.RowSplits()
	out := make([]int64, len(idx)+1)
	for k, i := range idx {
		lo, hi := splits[i], splits[i+1]
		out[k+1] = out[k] + hi - lo
		vs = kernel.AppendSpan(vs, int(lo), int(hi))
	}
	q, err := st.NewRowSplits(out)
	return q, vs, err
}

// innerSize is the number of flat elements in one outer row of t.
func innerSize(t *st.Tensor) int {
	if t.Rank() == 0 {
		return 1
	}
	return st.Shape(t.Shape()[1:]).NumElements()
}

func withRows(shape st.Shape, n int) st.Shape {
	s := append(st.Shape(nil), shape...)
	s[0] = n
	return s
}

func stringsOf(t *st.Tensor) kernel.Strings {
	d, o := t.StringData()
	return kernel.Strings{Data: d, Offsets: o}
}

func tensorSpans(t *st.Tensor, spans []span, total int) (*st.Tensor, error) {
	if len(spans) == 1 {
		return t.SliceRows(spans[0].Lo, spans[0].Hi)
	}
	inner := innerSize(t)
	shape := withRows(t.Shape(), total)
	var out any
	switch s := t.Data().(type) {
	case []bool:
		out = spanData(s, spans, total, inner)
	case []int32:
		out = spanData(s, spans, total, inner)
	case []int64:
		out = spanData(s, spans, total, inner)
	case []uint32:
		out = spanData(s, spans, total, inner)
	case []uint64:
		out = spanData(s, spans, total, inner)
	case []float32:
		out = spanData(s, spans, total, inner)
	case []float64:
		out = spanData(s, spans, total, inner)
	default:
		c := kernel.SpanStrings(stringsOf(t), spans, inner)
		return st.NewStringTensor(shape, c.Data, c.Offsets, t.UTF8())
	}
	return st.NewTensor(shape, out)
}

func spanData[T any](src []T, spans []span, total, inner int) []T {
	dst := make([]T, total*inner)
	kernel.CopySpans(dst, src, spans, inner)
	return dst
}

func tensorGather(t *st.Tensor, idx []int) (*st.Tensor, error) {
	inner := innerSize(t)
	shape := withRows(t.Shape(), len(idx))
	var out any
	switch s := t.Data().(type) {
	case []bool:
		out = gatherData(s, idx, inner)
	case []int32:
		out = gatherData(s, idx, inner)
	case []int64:
		out = gatherData(s, idx, inner)
	case []uint32:
		out = gatherData(s, idx, inner)
	case []uint64:
		out = gatherData(s, idx, inner)
	case []float32:
		out = gatherData(s, idx, inner)
	case []float64:
		out = gatherData(s, idx, inner)
	default:
		c := kernel.GatherStrings(stringsOf(t), idx, inner)
		return st.NewStringTensor(shape, c.Data, c.Offsets, t.UTF8())
	}
	return st.NewTensor(shape, out)
}

func gatherData[T any](src []T, idx []int, inner int) []T {
	dst := make([]T, len(idx)*inner)
	kernel.Gather(dst, src, idx, inner)
	return dst
}

// squeezeOuter removes an outer dimension of size 1: the single row of v
// as a value of rank v.Rank()-1, sharing v's buffers.
func squeezeOuter(v st.Value) (st.Value, error) {
	if v.Rank() == 0 || v.NumRows() != 1 {
		return nil, fmt.Errorf("%w: outer dimension has %d rows, not 1", ErrShape, v.NumRows())
	}
	switch x := v.(type) {
	case *st.Tensor:
		return x.Reshape(x.Shape()[1:])
	case *st.Ragged:
		parts := x.Partitions()
		if len(parts) == 1 {
			return x.Values(), nil
		}
		return st.NewRagged(x.Values(), parts[1:]...)
	case *st.StructTensor:
		parts := x.Partitions()
		if len(parts) > 0 {
			return st.NewPartitionedStruct(parts[0].NumValues(), parts[1:], x.Fields()...)
		}
		fields := make([]st.Field, x.NumFields())
		for i, f := range x.Fields() {
			fv, err := squeezeOuter(f.Value)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[i] = st.Field{Name: f.Name, Value: fv}
		}
		return st.NewScalarStruct(fields...)
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrArgument, v)
}

// rowValue returns row i of v as a value of rank v.Rank()-1.
func rowValue(v st.Value, i int) (st.Value, error) {
	r, err := takeSpans(v, []span{{Lo: i, Hi: i + 1}})
	if err != nil {
		return nil, err
	}
	return squeezeOuter(r)
}

// expandOuter adds an outer dimension of size 1, sharing v's buffers.
func expandOuter(v st.Value) (st.Value, error) {
	switch x := v.(type) {
	case *st.Tensor:
		return x.Reshape(append(st.Shape{1}, x.Shape()...))
	case *st.StructTensor:
		if x.Rank() == 0 {
			fields := make([]st.Field, x.NumFields())
			for i, f := range x.Fields() {
				fv, err := expandOuter(f.Value)
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
				fields[i] = st.Field{Name: f.Name, Value: fv}
			}
			return st.NewStruct(1, fields...)
		}
	}
	p, err := st.NewUniformPartition(1, v.NumRows())
	if err != nil {
		return nil, err
	}
	return st.JoinOuterDims([]*st.RowPartition{p}, v)
}

// composePartitions returns one partition equivalent to the nested
// partitions parts: row i of the result holds the innermost values of row
// i of parts[0]. Uniform partitions compose to a uniform one.
func composePartitions(parts []*st.RowPartition) (*st.RowPartition, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	nrows := parts[0].NumRows()
	l, uniform := 1, true
	for _, p := range parts {
		n, ok := p.UniformRowLength()
		uniform = uniform && ok
		l *= n
	}
	if uniform {
		return st.NewUniformPartition(nrows, l)
	}
	splits := make([]int64, nrows+1)
	for i := range splits {
		pos := i
		for _, p := range parts {
			pos = p.RowStart(pos)
		}
		splits[i] = int64(pos)
	}
	return st.NewRowSplits(splits)
}

// valueRowIDs returns, for each value of the nested partitions parts, the
// outer row of parts[0] it belongs to.
func valueRowIDs(parts []*st.RowPartition) ([]int, error) {
	p, err := composePartitions(parts)
	if err != nil {
		return nil, err
	}
	ids := make([]int, p.NumValues())
	if l, ok := p.UniformRowLength(); ok {
		for i := range ids {
			ids[i] = i / l
		}
		return ids, nil
	}
	splits := p.RowSplits()
	for r := 0; r+1 < len(splits); r++ {
		for j := splits[r]; j < splits[r+1]; j++ {
			ids[j] = r
		}
	}
	return ids, nil
}

// allPartitions returns the partitions of every dimension of v but the
// last dense ones, and the flat values: for a StructTensor its partitions
// and itself split to rank 1; for a Ragged its partitions and values; for a
// Tensor nothing and itself.
func splitAll(v st.Value) ([]*st.RowPartition, st.Value, error) {
	if v.Rank() <= 1 {
		return nil, v, nil
	}
	return st.SplitOuterDims(v, v.Rank())
}

func partitionsEqual(a, b []*st.RowPartition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// raggedGather is gatherRows for a Ragged value with one ragged partition:
// the rows are copied straight from the values, with no span list.
func raggedGather(x *st.Ragged, idx []int) (st.Value, error) {
	splits := x.Partitions()[0].RowSplits()
	vals := x.Values()
	inner := innerSize(vals)
	outSplits := make([]int64, len(idx)+1)
	starts := make([]int64, len(idx))
	total := kernel.RaggedSplits(splits, idx, outSplits, starts)
	shape := withRows(vals.Shape(), total)
	var out any
	switch s := vals.Data().(type) {
	case []bool:
		out = raggedData(s, starts, inner, total, outSplits)
	case []int32:
		out = raggedData(s, starts, inner, total, outSplits)
	case []int64:
		out = raggedData(s, starts, inner, total, outSplits)
	case []uint32:
		out = raggedData(s, starts, inner, total, outSplits)
	case []uint64:
		out = raggedData(s, starts, inner, total, outSplits)
	case []float32:
		out = raggedData(s, starts, inner, total, outSplits)
	case []float64:
		out = raggedData(s, starts, inner, total, outSplits)
	default:
		q, vs, err := partitionGather(x.Partitions()[0], idx)
		if err != nil {
			return nil, err
		}
		t, err := tensorSpans(vals, vs, total)
		if err != nil {
			return nil, err
		}
		return st.NewRagged(t, q)
	}
	t, err := st.NewTensor(shape, out)
	if err != nil {
		return nil, err
	}
	q, err := st.NewRowSplits(outSplits)
	if err != nil {
		return nil, err
	}
	return st.NewRagged(t, q)
}

func raggedData[T any](src []T, starts []int64, inner, total int, outSplits []int64) []T {
	dst := make([]T, total*inner)
	kernel.GatherRagged(dst, src, starts, inner, outSplits)
	return dst
}
