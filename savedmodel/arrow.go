package savedmodel

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/structtensor/structtensor-go/internal/memview"
	"github.com/structtensor/structtensor-go/structtensor"
)

// ToArrow returns st, a batch of records this DataView decoded, as the
// Arrow record batch TFXIO's BeamSource gives for the same records
// (RecordToTensorTFXIO over decode_fun): ArrowRecord of the DataView's
// leaves.
func (dv *DataView) ToArrow(st *structtensor.StructTensor) (arrow.RecordBatch, error) {
	return ArrowRecord(dv.meta.Leaves, st)
}

// ArrowRecord returns the leaves of st, a rank-1 batch of the DataView
// whose Metadata.Leaves are leaves, as an Arrow record batch laid out as
// TFXIO lays out decode_fun's outputs (tensor_to_arrow): one column per
// leaf, in path order, named by the leaf's path; a leaf of ragged rank k
// is k nested large_list levels (offsets = its row splits, outermost
// first, the innermost counting the elements of the inner dimensions)
// over its values, a dense leaf one large_list level holding each row's
// values; strings are large_binary, bools uint8 (1 for true), the
// other types Arrow's of the same width. Every field is nullable, as
// pyarrow's defaults make them, and no value is null.
//
// Numeric values, strings and row splits are shared with st, not copied
// (bools are converted): st must stay unmodified while the record is in
// use. Release the record when done.
func ArrowRecord(leaves []Leaf, st *structtensor.StructTensor) (arrow.RecordBatch, error) {
	if st.Rank() != 1 {
		return nil, fmt.Errorf("savedmodel: Arrow record of a rank-%d StructTensor, want a batch (rank 1)", st.Rank())
	}
	fields := make([]arrow.Field, len(leaves))
	cols := make([]arrow.Array, len(leaves))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, l := range leaves {
		v, err := st.FieldValue(strings.Split(l.Path, ".")...)
		if err != nil {
			return nil, fmt.Errorf("savedmodel: leaf %s: %w", l.Path, err)
		}
		d, err := leafData(l, v, st.NumRows())
		if err != nil {
			return nil, fmt.Errorf("savedmodel: leaf %s: %w", l.Path, err)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
		fields[i] = arrow.Field{Name: l.Path, Type: cols[i].DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(st.NumRows())), nil
}

// leafData lays out one leaf's value (a Tensor or a Ragged over the
// batch's rows) as TFXIO does: a list level per row partition of the
// leaf (uniform ones above a ragged one included, as their row splits);
// the innermost list holds whole rows of the inner dimensions (the
// innermost uniform partitions and the values' own), its offsets scaled
// by their number of elements.
func leafData(l Leaf, v structtensor.Value, rows int) (arrow.ArrayData, error) {
	var t *structtensor.Tensor
	var parts []*structtensor.RowPartition
	switch x := v.(type) {
	case *structtensor.Tensor:
		t = x
		if t.Rank() == 0 {
			return nil, fmt.Errorf("a scalar, not a batch")
		}
	case *structtensor.Ragged:
		t, parts = x.Values(), x.Partitions()
	default:
		return nil, fmt.Errorf("a %T, not a leaf", v)
	}
	if len(parts) < l.RaggedRank {
		return nil, fmt.Errorf("ragged rank %d, the DataView's leaf has %d", len(parts), l.RaggedRank)
	}
	// Every element of the inner dimensions, per innermost row.
	inner := int64(t.Shape()[1:].NumElements())
	for _, p := range parts[l.RaggedRank:] {
		n, ok := p.UniformRowLength()
		if !ok {
			return nil, fmt.Errorf("ragged rank %d, the DataView's leaf has %d", len(parts), l.RaggedRank)
		}
		inner *= int64(n)
	}
	var splits [][]int64
	for _, p := range parts[:l.RaggedRank] {
		splits = append(splits, p.RowSplits())
	}
	if len(splits) == 0 {
		// A dense leaf: one list per row of its elements (TFXIO's dense
		// tensor handler).
		n := t.Shape()[0]
		if len(parts) > 0 {
			n = parts[0].NumRows()
		}
		if n != rows {
			return nil, fmt.Errorf("%d rows, want %d", n, rows)
		}
		offsets := make([]int64, rows+1)
		for i := range offsets {
			offsets[i] = int64(i) * inner
		}
		splits = [][]int64{offsets}
	} else if inner != 1 {
		last := splits[len(splits)-1]
		scaled := make([]int64, len(last))
		for i, o := range last {
			scaled[i] = o * inner
		}
		splits[len(splits)-1] = scaled
	}
	values, err := valuesData(t)
	if err != nil {
		return nil, err
	}
	d := values
	for i := len(splits) - 1; i >= 0; i-- {
		next := array.NewData(arrow.LargeListOf(d.DataType()), len(splits[i])-1,
			[]*memory.Buffer{nil, int64Buffer(splits[i])}, []arrow.ArrayData{d}, 0, 0)
		d.Release()
		d = next
	}
	return d, nil
}

// valuesData returns a tensor's flat values as an Arrow array's data:
// bools as uint8, strings as large_binary.
func valuesData(t *structtensor.Tensor) (arrow.ArrayData, error) {
	n := t.Len()
	var typ arrow.DataType
	var buf []byte
	switch t.DType() {
	case structtensor.Bool:
		typ, buf = arrow.PrimitiveTypes.Uint8, make([]byte, n)
		for i, b := range t.Bools() {
			if b {
				buf[i] = 1
			}
		}
	case structtensor.Int32:
		typ, buf = arrow.PrimitiveTypes.Int32, memview.Bytes(t.Int32s())
	case structtensor.Int64:
		typ, buf = arrow.PrimitiveTypes.Int64, memview.Bytes(t.Int64s())
	case structtensor.Uint32:
		typ, buf = arrow.PrimitiveTypes.Uint32, memview.Bytes(t.Uint32s())
	case structtensor.Uint64:
		typ, buf = arrow.PrimitiveTypes.Uint64, memview.Bytes(t.Uint64s())
	case structtensor.Float32:
		typ, buf = arrow.PrimitiveTypes.Float32, memview.Bytes(t.Float32s())
	case structtensor.Float64:
		typ, buf = arrow.PrimitiveTypes.Float64, memview.Bytes(t.Float64s())
	case structtensor.String:
		data, offsets := t.StringData()
		return array.NewData(arrow.BinaryTypes.LargeBinary, n,
			[]*memory.Buffer{nil, int64Buffer(offsets), memory.NewBufferBytes(data)}, nil, 0, 0), nil
	default:
		return nil, fmt.Errorf("dtype %v has no TFXIO column type", t.DType())
	}
	return array.NewData(typ, n, []*memory.Buffer{nil, memory.NewBufferBytes(buf)}, nil, 0, 0), nil
}

func int64Buffer(s []int64) *memory.Buffer { return memory.NewBufferBytes(memview.Bytes(s)) }
