package starrow

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// FromArrowOptions configures the conversion of Arrow data to values. The
// zero value is the default: nulls become optional values.
type FromArrowOptions struct {
	// NullsAsError makes a null scalar, string or struct slot an ErrNull
	// error naming its column and row. By default a column that holds
	// nulls gains an inner dimension of 0 or 1 values per row (an optional
	// value, like a protobuf field with presence).
	NullsAsError bool
	// NullListsAsError makes a null list slot an ErrNull error. By default
	// a null list is an empty row.
	NullListsAsError bool
	// MaxIPCBufferBytes bounds the decompressed size one buffer of a
	// compressed IPC stream may claim; 0 means 4 GiB. A corrupt header must
	// not be able to make the reader allocate more than the data can be.
	MaxIPCBufferBytes int64
}

// FromArrow converts a record batch to a rank-1 StructTensor with one field
// per column, with the default options. See FromArrowOptions.Record.
func FromArrow(rec arrow.RecordBatch) (*st.StructTensor, error) {
	return FromArrowOptions{}.Record(rec)
}

// FromArrowArray converts an Arrow array to a value of rank >= 1 whose
// outer dimension is the array's length, with the default options. See
// FromArrowOptions.Array.
func FromArrowArray(arr arrow.Array) (st.Value, error) {
	return FromArrowOptions{}.Array(arr)
}

// Record converts a record batch to a rank-1 StructTensor of
// rec.NumRows() rows. Column names must be valid field names.
//
// Every column is validated first (offsets monotone and in bounds, child
// and buffer lengths), so corrupt data returns an ErrInvalid error naming
// the column instead of reading out of bounds. The result shares the
// batch's buffers wherever the layouts agree (see the package doc).
//
// Lifetimes: the result does not depend on rec, which the caller may
// release at once. Buffers in Go memory (memory.DefaultAllocator, the
// checked allocator over it, the readers of this package) are shared, and
// the garbage collector keeps them alive through the result. A column
// holding any buffer in other memory (a C allocator, a C Data import),
// which rec's last Release frees whatever still points into it, is first
// copied into Go memory. ImportCData is the form that shares C memory,
// under an explicit release.
func (o FromArrowOptions) Record(rec arrow.RecordBatch) (*st.StructTensor, error) {
	return o.record(rec, false)
}

// record is Record; shareForeign shares buffers outside Go memory too,
// for a caller that keeps them alive itself (ImportCData).
func (o FromArrowOptions) record(rec arrow.RecordBatch, shareForeign bool) (*st.StructTensor, error) {
	schema := rec.Schema()
	n := rec.NumRows()
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("%w: %d columns for a schema of %d fields", ErrInvalid, rec.NumCols(), schema.NumFields())
	}
	fields := make([]st.Field, 0, rec.NumCols())
	for i, col := range rec.Columns() {
		name := schema.Field(i).Name
		if int64(col.Len()) != n {
			return nil, fmt.Errorf("column %q: %w: %d rows in a batch of %d", name, ErrInvalid, col.Len(), n)
		}
		if !st.ValidFieldName(name) {
			return nil, fmt.Errorf("column %d: %w: %q is not a valid field name", i, ErrUnsupported, name)
		}
		if !shareForeign {
			col = goMemoryArray(col)
			defer col.Release()
		}
		v, err := o.convertChecked(col, name)
		if err != nil {
			return nil, err
		}
		fields = append(fields, st.Field{Name: name, Value: v})
	}
	s, err := st.NewStruct(int(n), fields...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s, nil
}

// Array converts an Arrow array to a value of rank >= 1 with arr.Len()
// rows: a Struct array becomes a rank-1 StructTensor, a list of anything a
// value with one more (ragged or uniform) dimension, a primitive array a
// Tensor. Like Record, it shares buffers in Go memory and copies the
// array first if any of its buffers is elsewhere, so the result does not
// depend on arr.
func (o FromArrowOptions) Array(arr arrow.Array) (st.Value, error) {
	arr = goMemoryArray(arr)
	defer arr.Release()
	return o.convertChecked(arr, "")
}

func (o FromArrowOptions) convertChecked(arr arrow.Array, path string) (v st.Value, err error) {
	if err := validateFull(arr); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", pathName(path), ErrInvalid, err)
	}
	return o.convert(arr, path)
}

// validateFull is array.ValidateFull made safe on corrupt data. Arrow's
// validator is third-party code reading untrusted offsets, and it can
// index before it checks: arrow-go v18.8.0's (Large)String.ValidateFull
// checks only the first and last offsets against the data, then slices
// the data by each pair of offsets before testing that the next one is
// not smaller, so offsets [0, 1<<40, 5] panic instead of failing the
// monotonicity test. A panic while validating therefore means the array
// is invalid, and is returned as the error it should have been.
func validateFull(arr arrow.Array) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt offsets or buffers (arrow validation failed: %v)", p)
		}
	}()
	return array.ValidateFull(arr)
}

// convert turns a validated array into a value of arr.Len() rows.
func (o FromArrowOptions) convert(arr arrow.Array, path string) (st.Value, error) {
	switch arr.DataType().ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.MAP:
		return o.convertList(arr, path)
	case arrow.EXTENSION:
		return o.convert(arr.(array.ExtensionArray).Storage(), path)
	case arrow.NULL:
		return nil, fmt.Errorf("%s: %w: null type (a column with no values has no dtype)", pathName(path), ErrUnsupported)
	}
	if arr.NullN() == 0 {
		return o.convertRows(arr, path, nil)
	}
	// Some slots are null: keep the valid rows and give each row 0 or 1 of
	// them.
	n := arr.Len()
	keep := make([]int, 0, n-arr.NullN())
	lengths := make([]int64, n)
	for i := 0; i < n; i++ {
		if arr.IsValid(i) {
			keep = append(keep, i)
			lengths[i] = 1
		} else if o.NullsAsError {
			return nil, fmt.Errorf("%s row %d: %w", pathName(path), i, ErrNull)
		}
	}
	v, err := o.convertRows(arr, path, keep)
	if err != nil {
		return nil, err
	}
	p, err := st.NewRowLengths(lengths)
	if err != nil {
		return nil, pathErr(path, err)
	}
	return st.JoinOuterDims([]*st.RowPartition{p}, v)
}

// convertRows converts the rows of arr listed in keep (all rows when keep
// is nil), ignoring the validity bitmap.
func (o FromArrowOptions) convertRows(arr arrow.Array, path string, keep []int) (st.Value, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		return o.convertDictionary(d, path, keep)
	}
	v, err := o.convertAll(arr, path)
	if err != nil || keep == nil {
		return v, err
	}
	return st.TakeRows(v, keep)
}

// convertAll converts every row of arr, ignoring its validity bitmap.
func (o FromArrowOptions) convertAll(arr arrow.Array, path string) (st.Value, error) {
	n := arr.Len()
	switch a := arr.(type) {
	case *array.Boolean:
		vals := make([]bool, n)
		for i := range vals {
			vals[i] = a.Value(i)
		}
		return st.NewTensor(nil, vals)
	case *array.Int8:
		return st.NewTensor(nil, widen[int8, int32](a.Int8Values()))
	case *array.Int16:
		return st.NewTensor(nil, widen[int16, int32](a.Int16Values()))
	case *array.Int32:
		return st.NewTensor(nil, a.Int32Values())
	case *array.Int64:
		return st.NewTensor(nil, a.Int64Values())
	case *array.Uint8:
		return st.NewTensor(nil, widen[uint8, uint32](a.Uint8Values()))
	case *array.Uint16:
		return st.NewTensor(nil, widen[uint16, uint32](a.Uint16Values()))
	case *array.Uint32:
		return st.NewTensor(nil, a.Uint32Values())
	case *array.Uint64:
		return st.NewTensor(nil, a.Uint64Values())
	case *array.Float16:
		vals := make([]float32, n)
		for i, h := range a.Values() {
			vals[i] = h.Float32()
		}
		return st.NewTensor(nil, vals)
	case *array.Float32:
		return st.NewTensor(nil, a.Float32Values())
	case *array.Float64:
		return st.NewTensor(nil, a.Float64Values())
	// Dates, times and durations keep their integer representation; the
	// unit is dropped.
	case *array.Date32:
		return st.NewTensor(nil, reinterpret[arrow.Date32, int32](a.Date32Values()))
	case *array.Time32:
		return st.NewTensor(nil, reinterpret[arrow.Time32, int32](a.Time32Values()))
	case *array.Date64:
		return st.NewTensor(nil, reinterpret[arrow.Date64, int64](a.Date64Values()))
	case *array.Time64:
		return st.NewTensor(nil, reinterpret[arrow.Time64, int64](a.Time64Values()))
	case *array.Timestamp:
		return st.NewTensor(nil, reinterpret[arrow.Timestamp, int64](a.TimestampValues()))
	case *array.Duration:
		return st.NewTensor(nil, reinterpret[arrow.Duration, int64](a.DurationValues()))
	case *array.String:
		return st.NewStringTensor(nil, valueBuffer(a), widen[int32, int64](a.ValueOffsets()), true)
	case *array.LargeString:
		return st.NewStringTensor(nil, valueBuffer(a), a.ValueOffsets(), true)
	case *array.Binary:
		return st.NewStringTensor(nil, valueBuffer(a), widen[int32, int64](a.ValueOffsets()), false)
	case *array.LargeBinary:
		return st.NewStringTensor(nil, valueBuffer(a), a.ValueOffsets(), false)
	case *array.FixedSizeBinary:
		w := int64(a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth)
		offsets := make([]int64, n+1)
		base := int64(a.Data().Offset()) * w
		for i := range offsets {
			offsets[i] = base + int64(i)*w
		}
		return st.NewStringTensor(nil, valueBuffer(a), offsets, false)
	case *array.StringView:
		return viewStrings(n, func(i int) []byte { return []byte(a.Value(i)) }, true)
	case *array.BinaryView:
		return viewStrings(n, a.Value, false)
	case *array.FixedSizeList:
		size := int(a.DataType().(*arrow.FixedSizeListType).Len())
		off := a.Data().Offset()
		child := array.NewSlice(a.ListValues(), int64(off*size), int64((off+n)*size))
		defer child.Release()
		cv, err := o.convert(child, path+"[]")
		if err != nil {
			return nil, err
		}
		p, err := st.NewUniformPartition(n, size)
		if err != nil {
			return nil, pathErr(path, err)
		}
		return st.JoinOuterDims([]*st.RowPartition{p}, cv)
	case *array.Struct:
		typ := a.DataType().(*arrow.StructType)
		fields := make([]st.Field, a.NumField())
		for i := range fields {
			name := typ.Field(i).Name
			cp := joinPath(path, name)
			if !st.ValidFieldName(name) {
				return nil, fmt.Errorf("%s: %w: %q is not a valid field name", pathName(cp), ErrUnsupported, name)
			}
			v, err := o.convert(a.Field(i), cp)
			if err != nil {
				return nil, err
			}
			fields[i] = st.Field{Name: name, Value: v}
		}
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s: %w: struct with no fields", pathName(path), ErrUnsupported)
		}
		s, err := st.NewStruct(n, fields...)
		if err != nil {
			return nil, pathErr(path, err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: %w: %v", pathName(path), ErrUnsupported, arr.DataType())
}

// convertList converts a List, LargeList or Map array: its offsets become a
// ragged partition (shared when they are int64 and start at 0; rebased or
// widened copies otherwise) over the converted child rows they cover. A
// null list is an empty row.
func (o FromArrowOptions) convertList(arr arrow.Array, path string) (st.Value, error) {
	var offsets []int64
	var child arrow.Array
	n, off := arr.Len(), arr.Data().Offset()
	var err error
	switch a := arr.(type) {
	case *array.Map:
		offsets, err = ownOffsets(a.Offsets(), n, off)
		child = a.ListValues()
	case *array.List:
		offsets, err = ownOffsets(a.Offsets(), n, off)
		child = a.ListValues()
	case *array.LargeList:
		offsets, err = ownOffsets(a.Offsets(), n, off)
		child = a.ListValues()
	default:
		return nil, fmt.Errorf("%s: %w: %v", pathName(path), ErrUnsupported, arr.DataType())
	}
	if err != nil {
		return nil, pathErr(path, err)
	}
	base, end := offsets[0], offsets[n]
	// gather lists the child rows to keep when a null list covers values.
	var gather []int
	if arr.NullN() > 0 {
		splits := make([]int64, n+1)
		dropped := false
		for i := 0; i < n; i++ {
			l := offsets[i+1] - offsets[i]
			if arr.IsNull(i) {
				if o.NullListsAsError {
					return nil, fmt.Errorf("%s row %d: %w (null list)", pathName(path), i, ErrNull)
				}
				dropped = dropped || l != 0
				l = 0
			}
			splits[i+1] = splits[i] + l
		}
		if dropped {
			gather = make([]int, 0, splits[n])
			for i := 0; i < n; i++ {
				if arr.IsValid(i) {
					for j := offsets[i]; j < offsets[i+1]; j++ {
						gather = append(gather, int(j-base))
					}
				}
			}
		}
		offsets = splits
	} else if base != 0 {
		splits := make([]int64, n+1)
		for i, x := range offsets {
			splits[i] = x - base
		}
		offsets = splits
	}
	if base != 0 || int64(child.Len()) != end {
		child = array.NewSlice(child, base, end)
		defer child.Release()
	}
	cv, err := o.convert(child, path+"[]")
	if err != nil {
		return nil, err
	}
	if gather != nil {
		if cv, err = st.TakeRows(cv, gather); err != nil {
			return nil, pathErr(path, err)
		}
	}
	p, err := st.NewRowSplits(offsets)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", pathName(path), ErrInvalid, err)
	}
	v, err := st.JoinOuterDims([]*st.RowPartition{p}, cv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", pathName(path), ErrInvalid, err)
	}
	return v, nil
}

// ownOffsets returns this array's n+1 entries of an offsets buffer (which
// Offsets() gives whole, possibly padded), as int64: shared when they
// already are, widened otherwise.
func ownOffsets[T int32 | int64](all []T, n, off int) ([]int64, error) {
	switch {
	case off+n+1 <= len(all):
		own := all[off : off+n+1]
		if o, ok := any(own).([]int64); ok {
			return o, nil
		}
		out := make([]int64, len(own))
		for i, x := range own {
			out[i] = int64(x)
		}
		return out, nil
	case n == 0:
		return []int64{0}, nil // an empty list array may carry no offsets
	}
	return nil, fmt.Errorf("%w: %d offsets for %d rows at offset %d", ErrInvalid, len(all), n, off)
}

// convertDictionary decodes a dictionary array to its values: the
// dictionary is converted once and its rows gathered by the indices of
// the kept rows.
func (o FromArrowOptions) convertDictionary(d *array.Dictionary, path string, keep []int) (st.Value, error) {
	dict, err := o.convert(d.Dictionary(), path)
	if err != nil {
		return nil, err
	}
	if keep == nil {
		keep = make([]int, d.Len())
		for i := range keep {
			keep[i] = i
		}
	}
	idx := make([]int, len(keep))
	m := d.Dictionary().Len()
	for j, i := range keep {
		k := d.GetValueIndex(i)
		if k < 0 || k >= m {
			return nil, fmt.Errorf("%s row %d: %w: dictionary index %d of %d", pathName(path), i, ErrInvalid, k, m)
		}
		idx[j] = k
	}
	return st.TakeRows(dict, idx)
}

// valueBuffer returns the whole data buffer of a binary-like array.
func valueBuffer(a arrow.Array) []byte {
	bufs := a.Data().Buffers()
	if len(bufs) < 3 || bufs[2] == nil {
		if len(bufs) == 2 && bufs[1] != nil { // fixed-size binary
			return bufs[1].Bytes()
		}
		return nil
	}
	return bufs[2].Bytes()
}

func viewStrings(n int, at func(int) []byte, utf8 bool) (*st.Tensor, error) {
	offsets := make([]int64, n+1)
	for i := 0; i < n; i++ {
		offsets[i+1] = offsets[i] + int64(len(at(i)))
	}
	data := make([]byte, 0, offsets[n])
	for i := 0; i < n; i++ {
		data = append(data, at(i)...)
	}
	return st.NewStringTensor(nil, data, offsets, utf8)
}

// widen copies s converting each element to a wider integer type.
func widen[T int8 | int16 | int32 | uint8 | uint16, U int32 | int64 | uint32](s []T) []U {
	out := make([]U, len(s))
	for i, x := range s {
		out[i] = U(x)
	}
	return out
}

// reinterpret views a slice of a named integer type as its underlying
// type, sharing memory.
func reinterpret[T ~int32 | ~int64, U int32 | int64](s []T) []U {
	if len(s) == 0 {
		return []U{}
	}
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
