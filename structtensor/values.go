package structtensor

import "fmt"

// Element is the Go element type of a non-string Tensor: the type T of the
// []T a Tensor of that DType holds.
type Element interface {
	bool | int32 | int64 | uint32 | uint64 | float32 | float64
}

// Values returns the flat values of t as a []T. It fails with ErrDType,
// naming both types, when T is not the element type of t's DType, and
// for String tensors (see StringData and Strings).
//
// The slice is t's own storage, shared with every value built from t
// (zero-copy decoding and Arrow export lend it further): it must not be
// modified. CopyValues returns a copy that may be.
func Values[T Element](t *Tensor) ([]T, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil tensor", ErrDType)
	}
	v, ok := t.data.([]T)
	if !ok {
		var zero T
		return nil, fmt.Errorf("%w: tensor of %s read as []%T", ErrDType, t.dtype, zero)
	}
	return v, nil
}

// CopyValues is Values returning a copy of the values, which the caller
// owns.
func CopyValues[T Element](t *Tensor) ([]T, error) {
	v, err := Values[T](t)
	if err != nil {
		return nil, err
	}
	return append([]T(nil), v...), nil
}

// Strings returns the elements of a String tensor as byte slices, or
// ErrDType for another DType. Every element is a view of t's data buffer
// and must not be modified; CopyStrings returns copies.
func Strings(t *Tensor) ([][]byte, error) {
	if t == nil || t.dtype != String {
		return nil, fmt.Errorf("%w: %s tensor read as strings", ErrDType, dtypeName(t))
	}
	out := make([][]byte, t.Len())
	for i := range out {
		out[i] = t.StringAt(i)
	}
	return out, nil
}

// CopyStrings returns the elements of a String tensor as Go strings (which
// are copies), or ErrDType for another DType.
func CopyStrings(t *Tensor) ([]string, error) {
	if t == nil || t.dtype != String {
		return nil, fmt.Errorf("%w: %s tensor read as strings", ErrDType, dtypeName(t))
	}
	out := make([]string, t.Len())
	for i := range out {
		out[i] = string(t.StringAt(i))
	}
	return out, nil
}

func dtypeName(t *Tensor) string {
	if t == nil {
		return "nil"
	}
	return t.dtype.String()
}
