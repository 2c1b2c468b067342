package structtensor

import "fmt"

// DType is the element type of a Tensor.
type DType uint8

// The element types. String is a byte string; whether it holds UTF-8 text
// is a property of the Tensor (see Tensor.UTF8), not of the DType, because
// protobuf bytes and string fields decode to the same representation.
const (
	Invalid DType = iota
	Bool
	Int32
	Int64
	Uint32
	Uint64
	Float32
	Float64
	String
)

var dtypeNames = [...]string{
	Invalid: "invalid",
	Bool:    "bool",
	Int32:   "int32",
	Int64:   "int64",
	Uint32:  "uint32",
	Uint64:  "uint64",
	Float32: "float32",
	Float64: "float64",
	String:  "string",
}

// String returns the TensorFlow name of the type ("int64", "string", ...).
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d > Invalid && d <= String }

// Size returns the width in bytes of one element, or 0 for String.
func (d DType) Size() int {
	switch d {
	case Bool:
		return 1
	case Int32, Uint32, Float32:
		return 4
	case Int64, Uint64, Float64:
		return 8
	}
	return 0
}

// ParseDType returns the DType named s, as printed by DType.String.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if i != 0 && n == s {
			return DType(i), nil
		}
	}
	return Invalid, fmt.Errorf("%w: unknown dtype %q", ErrDType, s)
}

// MarshalText implements encoding.TextMarshaler.
func (d DType) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("%w: %v", ErrDType, d)
	}
	return []byte(d.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *DType) UnmarshalText(b []byte) error {
	v, err := ParseDType(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
