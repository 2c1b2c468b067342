package structtensor

import (
	"bytes"

	"github.com/structtensor/structtensor-go/internal/memview"
)

// Equal reports whether a and b are the same value: the same kind, equal
// specs, equal partitions and equal elements. Floats compare by value,
// with NaN equal to NaN. String tensors must also agree on the UTF-8
// mark (text or binary), which decides how they are exported (an Arrow
// utf8 or binary column, a JSON string or base64).
func Equal(a, b Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	switch x := a.(type) {
	case *Tensor:
		y, ok := b.(*Tensor)
		return ok && tensorsEqual(x, y)
	case *Ragged:
		y, ok := b.(*Ragged)
		return ok && partitionsEqual(x.partitions, y.partitions) && tensorsEqual(x.values, y.values)
	case *StructTensor:
		y, ok := b.(*StructTensor)
		if !ok || x.rank != y.rank || x.nrows != y.nrows || len(x.fields) != len(y.fields) ||
			!partitionsEqual(x.partitions, y.partitions) {
			return false
		}
		for i := range x.fields {
			if x.fields[i].Name != y.fields[i].Name || !Equal(x.fields[i].Value, y.fields[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

func partitionsEqual(a, b []*RowPartition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].IsUniform() != b[i].IsUniform() || !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func tensorsEqual(a, b *Tensor) bool {
	if a.dtype != b.dtype || !a.shape.Equal(b.shape) || a.utf8 != b.utf8 {
		return false
	}
	n := a.Len()
	switch x := a.data.(type) {
	case []bool:
		return sliceEqual(x, b.data.([]bool))
	case []int32:
		return sliceEqual(x, b.data.([]int32))
	case []int64:
		return sliceEqual(x, b.data.([]int64))
	case []uint32:
		return sliceEqual(x, b.data.([]uint32))
	case []uint64:
		return sliceEqual(x, b.data.([]uint64))
	case []float32:
		return floatsEqual(x, b.data.([]float32))
	case []float64:
		return floatsEqual(x, b.data.([]float64))
	}
	for i := 0; i < n; i++ {
		if string(a.StringAt(i)) != string(b.StringAt(i)) {
			return false
		}
	}
	return true
}

// sliceEqual compares the elements' bytes, which for these types are
// equal exactly when the elements are.
func sliceEqual[T bool | int32 | int64 | uint32 | uint64](a, b []T) bool {
	return len(a) == len(b) && bytes.Equal(memview.Bytes(a), memview.Bytes(b))
}

// floatsEqual compares by value with NaN equal to NaN: equal bytes are
// equal values, and only columns whose bytes differ (a NaN's payload, a
// zero's sign, or a real difference) are compared element by element.
func floatsEqual[T float32 | float64](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	if bytes.Equal(memview.Bytes(a), memview.Bytes(b)) {
		return true
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}
