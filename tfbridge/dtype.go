package tfbridge

// #include "bridge.h"
import "C"

import (
	"fmt"

	"github.com/structtensor/structtensor-go/structtensor"
)

// DType is a TensorFlow element type (TF_DataType). It names more types
// than structtensor.DType because graphs carry types, such as variants and
// resources, that never become StructTensor values.
type DType int

// The TensorFlow element types tfbridge names. Any other TF_DataType value
// still passes through graphs unchanged.
const (
	Float    DType = C.TF_FLOAT
	Double   DType = C.TF_DOUBLE
	Int32    DType = C.TF_INT32
	Uint8    DType = C.TF_UINT8
	Int16    DType = C.TF_INT16
	Int8     DType = C.TF_INT8
	String   DType = C.TF_STRING
	Int64    DType = C.TF_INT64
	Bool     DType = C.TF_BOOL
	Uint16   DType = C.TF_UINT16
	Half     DType = C.TF_HALF
	Resource DType = C.TF_RESOURCE
	Variant  DType = C.TF_VARIANT
	Uint32   DType = C.TF_UINT32
	Uint64   DType = C.TF_UINT64
)

var dtypeNames = map[DType]string{
	Float: "float32", Double: "float64", Int32: "int32", Uint8: "uint8", Int16: "int16",
	Int8: "int8", String: "string", Int64: "int64", Bool: "bool", Uint16: "uint16",
	Half: "float16", Resource: "resource", Variant: "variant", Uint32: "uint32", Uint64: "uint64",
}

// String returns the TensorFlow Python name of the type ("float32", ...).
func (d DType) String() string {
	if n, ok := dtypeNames[d]; ok {
		return n
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// DTypeOf returns the TensorFlow type of a structtensor element type.
func DTypeOf(d structtensor.DType) (DType, error) {
	switch d {
	case structtensor.Bool:
		return Bool, nil
	case structtensor.Int32:
		return Int32, nil
	case structtensor.Int64:
		return Int64, nil
	case structtensor.Uint32:
		return Uint32, nil
	case structtensor.Uint64:
		return Uint64, nil
	case structtensor.Float32:
		return Float, nil
	case structtensor.Float64:
		return Double, nil
	case structtensor.String:
		return String, nil
	}
	return 0, fmt.Errorf("%w: structtensor dtype %v has no TensorFlow type", ErrDType, d)
}

// StructDType returns the structtensor element type of d, or an error
// wrapping ErrDType for types StructTensors do not hold (int8, half,
// variant, ...).
func (d DType) StructDType() (structtensor.DType, error) {
	switch d {
	case Bool:
		return structtensor.Bool, nil
	case Int32:
		return structtensor.Int32, nil
	case Int64:
		return structtensor.Int64, nil
	case Uint32:
		return structtensor.Uint32, nil
	case Uint64:
		return structtensor.Uint64, nil
	case Float:
		return structtensor.Float32, nil
	case Double:
		return structtensor.Float64, nil
	case String:
		return structtensor.String, nil
	}
	return structtensor.Invalid, fmt.Errorf("%w: TensorFlow dtype %v has no structtensor type", ErrDType, d)
}
