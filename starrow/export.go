package starrow

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/structtensor/structtensor-go/internal/memview"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// ToArrow returns st as a record batch with one column per field. st must
// have rank >= 1; the batch has st.NumRows() rows and column i holds field
// i with the struct's inner dimensions re-applied (its full-shape view).
//
// Buffers are shared with st, not copied (Bool values excepted: Arrow packs
// them into bits). The batch keeps st's memory alive through ordinary Go
// references, so calling Release on it is allowed but not required.
func ToArrow(s *st.StructTensor) (arrow.RecordBatch, error) {
	if s.Rank() == 0 {
		return nil, fmt.Errorf("%w: a record batch needs a struct of rank >= 1, got a scalar struct", ErrUnsupported)
	}
	fields := s.Fields()
	cols := make([]arrow.Array, len(fields))
	afields := make([]arrow.Field, len(fields))
	for i, f := range fields {
		full, err := st.JoinOuterDims(s.Partitions(), f.Value)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		a, err := exportValue(full, f.Name)
		if err != nil {
			return nil, err
		}
		cols[i] = a
		afields[i] = arrow.Field{Name: f.Name, Type: a.DataType()}
	}
	schema := arrow.NewSchema(afields, nil)
	rec := array.NewRecordBatch(schema, cols, int64(s.NumRows()))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// ToArrowArray returns v as an Arrow array: a Tensor as a primitive array
// (FixedSizeList for each inner dimension), a Ragged as LargeList for each
// ragged dimension (its row_splits are the offsets buffer), a StructTensor
// as a Struct array under its partitions. A value of rank >= 1 becomes an
// array of v.NumRows() elements; a scalar (rank 0) becomes an array of one
// element.
func ToArrowArray(v st.Value) (arrow.Array, error) {
	return exportValue(v, "")
}

func exportValue(v st.Value, path string) (arrow.Array, error) {
	if v.Rank() == 0 {
		var err error
		if v, err = expandScalar(v); err != nil {
			return nil, pathErr(path, err)
		}
	}
	d, err := exportData(v, path)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// expandScalar gives a rank-0 value a leading dimension of size 1.
func expandScalar(v st.Value) (st.Value, error) {
	switch x := v.(type) {
	case *st.Tensor:
		return x.Reshape(st.Shape{1})
	case *st.StructTensor:
		fields := x.Fields()
		out := make([]st.Field, len(fields))
		for i, f := range fields {
			if f.Value.Rank() == 0 {
				e, err := expandScalar(f.Value)
				if err != nil {
					return nil, err
				}
				out[i] = st.Field{Name: f.Name, Value: e}
				continue
			}
			p, err := st.NewUniformPartition(1, f.Value.NumRows())
			if err != nil {
				return nil, err
			}
			e, err := st.JoinOuterDims([]*st.RowPartition{p}, f.Value)
			if err != nil {
				return nil, err
			}
			out[i] = st.Field{Name: f.Name, Value: e}
		}
		return st.NewStruct(1, out...)
	}
	return nil, fmt.Errorf("%w: scalar %T", ErrUnsupported, v)
}

// exportData builds the ArrayData of a value of rank >= 1.
func exportData(v st.Value, path string) (*array.Data, error) {
	switch x := v.(type) {
	case *st.Tensor:
		return tensorData(x, path)
	case *st.Ragged:
		inner, err := tensorData(x.Values(), path)
		if err != nil {
			return nil, err
		}
		return wrapPartitions(inner, x.Partitions()), nil
	case *st.StructTensor:
		parts, flat, err := st.SplitOuterDims(x, x.Rank())
		if err != nil {
			return nil, pathErr(path, err)
		}
		inner, err := structData(flat.(*st.StructTensor), path)
		if err != nil {
			return nil, err
		}
		return wrapPartitions(inner, parts), nil
	}
	return nil, fmt.Errorf("%s: %w: value type %T", pathName(path), ErrUnsupported, v)
}

// structData exports a rank-1 struct (one element per flat structure).
func structData(s *st.StructTensor, path string) (*array.Data, error) {
	fields := s.Fields()
	children := make([]arrow.ArrayData, len(fields))
	afields := make([]arrow.Field, len(fields))
	for i, f := range fields {
		cp := joinPath(path, f.Name)
		d, err := exportData(f.Value, cp)
		if err != nil {
			for _, c := range children[:i] {
				c.Release()
			}
			return nil, err
		}
		children[i] = d
		afields[i] = arrow.Field{Name: f.Name, Type: d.DataType()}
	}
	d := array.NewData(arrow.StructOf(afields...), s.NumRows(), []*memory.Buffer{nil}, children, 0, 0)
	for _, c := range children {
		c.Release()
	}
	return d, nil
}

// wrapPartitions puts list levels over inner, innermost partition first:
// a ragged partition becomes a LargeList whose offsets buffer is the
// partition's row_splits memory, a uniform one a FixedSizeList.
func wrapPartitions(inner *array.Data, parts []*st.RowPartition) *array.Data {
	d := inner
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		var next *array.Data
		if n, ok := p.UniformRowLength(); ok {
			next = array.NewData(arrow.FixedSizeListOfNonNullable(int32(n), d.DataType()), p.NumRows(),
				[]*memory.Buffer{nil}, []arrow.ArrayData{d}, 0, 0)
		} else {
			next = array.NewData(arrow.LargeListOfNonNullable(d.DataType()), p.NumRows(),
				[]*memory.Buffer{nil, sliceBuffer(p.RowSplits())}, []arrow.ArrayData{d}, 0, 0)
		}
		d.Release()
		d = next
	}
	return d
}

// tensorData exports a dense tensor of rank >= 1: the flat values, then
// a FixedSizeList per inner dimension.
func tensorData(t *st.Tensor, path string) (*array.Data, error) {
	n := t.Len()
	var d *array.Data
	switch t.DType() {
	case st.Bool:
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i, b := range t.Bools() {
			if b {
				bitutil.SetBit(bits, i)
			}
		}
		d = array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, memory.NewBufferBytes(bits)}, nil, 0, 0)
	case st.Int32:
		d = primitiveData(arrow.PrimitiveTypes.Int32, n, sliceBuffer(t.Int32s()))
	case st.Int64:
		d = primitiveData(arrow.PrimitiveTypes.Int64, n, sliceBuffer(t.Int64s()))
	case st.Uint32:
		d = primitiveData(arrow.PrimitiveTypes.Uint32, n, sliceBuffer(t.Uint32s()))
	case st.Uint64:
		d = primitiveData(arrow.PrimitiveTypes.Uint64, n, sliceBuffer(t.Uint64s()))
	case st.Float32:
		d = primitiveData(arrow.PrimitiveTypes.Float32, n, sliceBuffer(t.Float32s()))
	case st.Float64:
		d = primitiveData(arrow.PrimitiveTypes.Float64, n, sliceBuffer(t.Float64s()))
	case st.String:
		data, offsets := t.StringData()
		var typ arrow.DataType = arrow.BinaryTypes.LargeBinary
		if t.UTF8() {
			typ = arrow.BinaryTypes.LargeString
		}
		d = array.NewData(typ, n, []*memory.Buffer{nil, sliceBuffer(offsets), memory.NewBufferBytes(data)}, nil, 0, 0)
	default:
		return nil, fmt.Errorf("%s: %w: dtype %v", pathName(path), ErrUnsupported, t.DType())
	}
	shape := t.Shape()
	for i := len(shape) - 1; i >= 1; i-- {
		rows := shape[:i].NumElements()
		next := array.NewData(arrow.FixedSizeListOfNonNullable(int32(shape[i]), d.DataType()), rows,
			[]*memory.Buffer{nil}, []arrow.ArrayData{d}, 0, 0)
		d.Release()
		d = next
	}
	return d, nil
}

func primitiveData(typ arrow.DataType, n int, values *memory.Buffer) *array.Data {
	return array.NewData(typ, n, []*memory.Buffer{nil, values}, nil, 0, 0)
}

// sliceBuffer wraps the memory of a numeric slice as an Arrow buffer
// without copying: the buffer's bytes start at &s[0].
func sliceBuffer[T int32 | int64 | uint32 | uint64 | float32 | float64](s []T) *memory.Buffer {
	return memory.NewBufferBytes(memview.Bytes(s))
}
