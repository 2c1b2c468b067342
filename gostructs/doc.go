// Package gostructs converts between slices of Go structs and
// StructTensors by reflection: the Go counterpart of the StructTensor RFC's
// pandas row form, where each struct is one row.
//
// # The mapping
//
// FromStructs([]T) returns a rank-1 StructTensor with one row per element
// and one field per exported struct field, named by its `structtensor:"name"`
// tag or else by the Go field name (a tag of "-" skips the field). Each Go
// type maps to one shape:
//
//	bool                       Bool
//	int8, int16, int32         Int32 (widened; narrowed back with a range check)
//	int, int64                 Int64
//	uint8, uint16, uint32      Uint32
//	uint, uint64               Uint64
//	float32, float64           Float32, Float64
//	string                     String (marked UTF-8 when every value is)
//	[]byte                     String (bytes, not marked UTF-8)
//	struct                     a nested struct field
//	[]E                        a ragged dimension over E
//	[N]E                       a uniform dimension of N over E
//	*E                         a ragged dimension of 0 or 1 values: an
//	                           optional value, nil when absent
//
// Nesting composes: []*[]Ingredient is a field with three dimensions. This
// is the same shape a protobuf message decodes to (repeated fields are
// lists, fields with presence 0/1 lists), so a Go struct mirroring a
// message round-trips with the decoded tensors.
//
// The conversion is column-wise: FromStructs appends each Go value straight
// into a typed column (one flat slice per leaf field plus row_splits per
// list level), never into intermediate maps; ToStructs walks the columns
// and fills the Go values.
//
// Maps, interfaces, channels, functions and complex numbers have no
// StructTensor counterpart and are refused with ErrType naming the field.
// Errors while filling Go values (a value out of int8 range, an optional
// field holding two values, a missing field) name the field path and row.
package gostructs
