package structtensor

import (
	"fmt"
	"unicode/utf8"
)

// Tensor is a dense, row-major array with a fully known shape and one typed
// flat slice. Strings are stored Arrow-style, as one data buffer plus
// len+1 offsets, so a string tensor of any size costs three allocations and
// exports to an Arrow large_binary array without copying.
//
// A Tensor is immutable: the slices returned by its accessors must not be
// modified, because other values may share them.
type Tensor struct {
	dtype DType
	shape Shape
	// data is []bool, []int32, []int64, []uint32, []uint64, []float32 or
	// []float64 holding exactly shape.NumElements() values; nil for String.
	data any
	// strData and strOffsets hold String elements: element i is
	// strData[strOffsets[i]:strOffsets[i+1]]. strOffsets[0] need not be 0
	// (a slice of a larger buffer), but offsets never decrease.
	strData    []byte
	strOffsets []int64
	utf8       bool
}

func (*Tensor) isValue() {}

// NewTensor returns a tensor of the given shape over values, which must be
// one of []bool, []int32, []int64, []uint32, []uint64, []float32, []float64
// (shared, not copied), or []string or [][]byte (copied into one buffer).
// len(values) must equal the product of shape; a nil shape means a vector
// of len(values).
func NewTensor(shape Shape, values any) (*Tensor, error) {
	n := -1
	var t *Tensor
	switch v := values.(type) {
	case []bool:
		n, t = len(v), &Tensor{dtype: Bool, data: v}
	case []int32:
		n, t = len(v), &Tensor{dtype: Int32, data: v}
	case []int64:
		n, t = len(v), &Tensor{dtype: Int64, data: v}
	case []uint32:
		n, t = len(v), &Tensor{dtype: Uint32, data: v}
	case []uint64:
		n, t = len(v), &Tensor{dtype: Uint64, data: v}
	case []float32:
		n, t = len(v), &Tensor{dtype: Float32, data: v}
	case []float64:
		n, t = len(v), &Tensor{dtype: Float64, data: v}
	case []string:
		n = len(v)
		t = &Tensor{dtype: String, utf8: true}
		t.strData, t.strOffsets = packStrings(v)
		for _, s := range v {
			if !utf8.ValidString(s) {
				t.utf8 = false
				break
			}
		}
	case [][]byte:
		n = len(v)
		t = &Tensor{dtype: String}
		t.strData, t.strOffsets = packStrings(v)
	default:
		return nil, fmt.Errorf("%w: unsupported element slice %T", ErrDType, values)
	}
	if shape == nil {
		shape = Shape{n}
	}
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if shape.NumElements() != n {
		return nil, fmt.Errorf("%w: %d values for shape %v", ErrShape, n, shape)
	}
	t.shape = shape.clone()
	checkInvariants(t)
	return t, nil
}

// packStrings copies values into one data buffer and the len+1 offsets
// that delimit them, the form a String tensor holds.
func packStrings[S ~string | ~[]byte](values []S) (data []byte, offsets []int64) {
	size := 0
	for _, s := range values {
		size += len(s)
	}
	data = make([]byte, 0, size)
	offsets = make([]int64, 1, len(values)+1)
	for _, s := range values {
		data = append(data, s...)
		offsets = append(offsets, int64(len(data)))
	}
	return data, offsets
}

// NewStringTensor returns a String tensor over data and offsets without
// copying them: element i is data[offsets[i]:offsets[i+1]]. len(offsets)
// must be the product of shape plus one and offsets must not decrease or
// point past data. utf8 records whether every element is UTF-8 text, which
// Arrow export uses to choose large_utf8 over large_binary; it is not
// checked here (see ValidateUTF8).
func NewStringTensor(shape Shape, data []byte, offsets []int64, utf8 bool) (*Tensor, error) {
	if shape == nil {
		if len(offsets) == 0 {
			return nil, fmt.Errorf("%w: string offsets are empty", ErrShape)
		}
		shape = Shape{len(offsets) - 1}
	}
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if n := shape.NumElements(); len(offsets) != n+1 {
		return nil, fmt.Errorf("%w: %d string offsets for shape %v (want %d)", ErrShape, len(offsets), shape, n+1)
	}
	if offsets[0] < 0 {
		return nil, fmt.Errorf("%w: string offset 0 is negative (%d)", ErrShape, offsets[0])
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return nil, fmt.Errorf("%w: string offsets decrease at %d (%d < %d)", ErrShape, i, offsets[i], offsets[i-1])
		}
	}
	if last := offsets[len(offsets)-1]; last > int64(len(data)) {
		return nil, fmt.Errorf("%w: string offset %d past data of %d bytes", ErrShape, last, len(data))
	}
	t := &Tensor{dtype: String, shape: shape.clone(), strData: data, strOffsets: offsets, utf8: utf8}
	checkInvariants(t)
	return t, nil
}

// NewScalar returns a rank-0 tensor holding v, which must be a bool, int32,
// int64, int, uint32, uint64, float32, float64, string or []byte.
func NewScalar(v any) (*Tensor, error) {
	switch x := v.(type) {
	case bool:
		return NewTensor(Shape{}, []bool{x})
	case int32:
		return NewTensor(Shape{}, []int32{x})
	case int64:
		return NewTensor(Shape{}, []int64{x})
	case int:
		return NewTensor(Shape{}, []int64{int64(x)})
	case uint32:
		return NewTensor(Shape{}, []uint32{x})
	case uint64:
		return NewTensor(Shape{}, []uint64{x})
	case float32:
		return NewTensor(Shape{}, []float32{x})
	case float64:
		return NewTensor(Shape{}, []float64{x})
	case string:
		return NewTensor(Shape{}, []string{x})
	case []byte:
		return NewTensor(Shape{}, [][]byte{x})
	}
	return nil, fmt.Errorf("%w: unsupported scalar %T", ErrDType, v)
}

// EmptyTensor returns a tensor of the given dtype and shape [0, inner...].
func EmptyTensor(dtype DType, inner ...int) *Tensor {
	shape := append(Shape{0}, inner...)
	if dtype == String {
		return &Tensor{dtype: String, shape: shape, strOffsets: []int64{0}, utf8: true}
	}
	return &Tensor{dtype: dtype, shape: shape, data: makeSlice(dtype, 0)}
}

func makeSlice(d DType, n int) any {
	switch d {
	case Bool:
		return make([]bool, n)
	case Int32:
		return make([]int32, n)
	case Int64:
		return make([]int64, n)
	case Uint32:
		return make([]uint32, n)
	case Uint64:
		return make([]uint64, n)
	case Float32:
		return make([]float32, n)
	case Float64:
		return make([]float64, n)
	}
	return nil
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns the shape. The result must not be modified.
func (t *Tensor) Shape() Shape { return t.shape }

// Rank returns the number of dimensions.
func (t *Tensor) Rank() int { return len(t.shape) }

// Len returns the number of elements (the product of the shape).
func (t *Tensor) Len() int { return t.shape.NumElements() }

// Spec returns the TensorSpec of t.
func (t *Tensor) Spec() Spec { return &TensorSpec{DType: t.dtype, Shape: t.shape.clone()} }

// NumRows returns the size of the outermost dimension, or 1 for a scalar.
func (t *Tensor) NumRows() int {
	if len(t.shape) == 0 {
		return 1
	}
	return t.shape[0]
}

// Data returns the flat typed slice ([]int64 for Int64, ...), or nil for
// String tensors (see StringData). The slice is t's own storage, shared
// with every value built from t: it must not be modified (Values and
// CopyValues are the typed and copying forms).
func (t *Tensor) Data() any { return t.data }

// Bools returns the flat values of a Bool tensor, nil for other dtypes.
// Like every typed accessor below, it returns t's own storage, which must
// not be modified; Values[T] reports a dtype mismatch as an error and
// CopyValues[T] returns a copy.
func (t *Tensor) Bools() []bool { v, _ := t.data.([]bool); return v }

// Int32s returns the flat values of an Int32 tensor, nil for other dtypes.
func (t *Tensor) Int32s() []int32 { v, _ := t.data.([]int32); return v }

// Int64s returns the flat values of an Int64 tensor, nil for other dtypes.
func (t *Tensor) Int64s() []int64 { v, _ := t.data.([]int64); return v }

// Uint32s returns the flat values of a Uint32 tensor, nil for other dtypes.
func (t *Tensor) Uint32s() []uint32 { v, _ := t.data.([]uint32); return v }

// Uint64s returns the flat values of a Uint64 tensor, nil for other dtypes.
func (t *Tensor) Uint64s() []uint64 { v, _ := t.data.([]uint64); return v }

// Float32s returns the flat values of a Float32 tensor, nil for other dtypes.
func (t *Tensor) Float32s() []float32 { v, _ := t.data.([]float32); return v }

// Float64s returns the flat values of a Float64 tensor, nil for other dtypes.
func (t *Tensor) Float64s() []float64 { v, _ := t.data.([]float64); return v }

// StringData returns the data buffer and the len+1 offsets of a String
// tensor. offsets[0] may be non-zero. Both are t's own storage and must
// not be modified; CopyStrings returns copies of the elements.
func (t *Tensor) StringData() (data []byte, offsets []int64) { return t.strData, t.strOffsets }

// StringAt returns flat element i of a String tensor, sharing its bytes:
// the slice must not be modified.
func (t *Tensor) StringAt(i int) []byte { return t.strData[t.strOffsets[i]:t.strOffsets[i+1]] }

// UTF8 reports whether the String elements are marked as UTF-8 text.
func (t *Tensor) UTF8() bool { return t.utf8 }

// WithUTF8 returns a tensor sharing t's buffers with the UTF-8 mark set to
// flag.
func (t *Tensor) WithUTF8(flag bool) *Tensor {
	c := *t
	c.utf8 = flag && t.dtype == String
	return &c
}

// ValidateUTF8 reports whether every String element is valid UTF-8.
func (t *Tensor) ValidateUTF8() bool {
	if t.dtype != String {
		return false
	}
	return ValidUTF8Strings(t.strData, t.strOffsets)
}

// ValidUTF8Strings reports whether each string data[offsets[i]:offsets[i+1]]
// is valid UTF-8 on its own. The strings' concatenation being valid is not
// enough: "\xc3" and "\xa9" are each invalid and together "é". So one
// pass validates the concatenation and a second looks at each interior
// boundary: in valid UTF-8 a boundary falls inside a character exactly
// when the byte after it is a continuation byte (10xxxxxx). Offsets that
// decrease or leave data (which NewStringTensor refuses) give false.
func ValidUTF8Strings(data []byte, offsets []int64) bool {
	if len(offsets) < 2 {
		return true
	}
	first, last := offsets[0], offsets[len(offsets)-1]
	if first < 0 || last < first || last > int64(len(data)) || !utf8.Valid(data[first:last]) {
		return false
	}
	prev := first
	for _, o := range offsets[1 : len(offsets)-1] {
		if o < prev || o > last || o < last && data[o]&0xc0 == 0x80 {
			return false
		}
		prev = o
	}
	return true
}

// Elem returns flat element i as a Go scalar (bool, int32, int64, uint32,
// uint64, float32, float64, or string for String).
func (t *Tensor) Elem(i int) any {
	switch v := t.data.(type) {
	case []bool:
		return v[i]
	case []int32:
		return v[i]
	case []int64:
		return v[i]
	case []uint32:
		return v[i]
	case []uint64:
		return v[i]
	case []float32:
		return v[i]
	case []float64:
		return v[i]
	}
	return string(t.StringAt(i))
}

// Reshape returns a tensor with the same elements and a new fully known
// shape, sharing t's buffers.
func (t *Tensor) Reshape(shape Shape) (*Tensor, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if shape.NumElements() != t.Len() {
		return nil, fmt.Errorf("%w: cannot reshape %v to %v", ErrShape, t.shape, shape)
	}
	c := *t
	c.shape = shape.clone()
	checkInvariants(&c)
	return &c, nil
}

// innerSize is the number of flat elements in one outer row.
func (t *Tensor) innerSize() int {
	if len(t.shape) == 0 {
		return 1
	}
	return Shape(t.shape[1:]).NumElements()
}

// SliceRows returns rows [start, end) of the outermost dimension, sharing
// t's buffers.
func (t *Tensor) SliceRows(start, end int) (*Tensor, error) {
	if len(t.shape) == 0 {
		return nil, fmt.Errorf("%w: cannot slice a scalar", ErrIndex)
	}
	if start < 0 || end < start || end > t.shape[0] {
		return nil, fmt.Errorf("%w: rows [%d, %d) of %d", ErrIndex, start, end, t.shape[0])
	}
	inner := t.innerSize()
	c := *t
	c.shape = t.shape.clone()
	c.shape[0] = end - start
	lo, hi := start*inner, end*inner
	switch v := t.data.(type) {
	case []bool:
		c.data = v[lo:hi:hi]
	case []int32:
		c.data = v[lo:hi:hi]
	case []int64:
		c.data = v[lo:hi:hi]
	case []uint32:
		c.data = v[lo:hi:hi]
	case []uint64:
		c.data = v[lo:hi:hi]
	case []float32:
		c.data = v[lo:hi:hi]
	case []float64:
		c.data = v[lo:hi:hi]
	default:
		c.strOffsets = t.strOffsets[lo : hi+1 : hi+1]
	}
	checkInvariants(&c)
	return &c, nil
}
