package decode

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/structtensor/structtensor-go/structtensor"
)

// kindDTypes is the one table from a protobuf field kind to the element
// type of its output column (the mapping table of the package doc).
// protoreflect.Kind numbers are FieldDescriptorProto.Type numbers, and the
// plan's byte form stores them as such; the engine keeps its own copy of
// the table for the columns it allocates, and Compile and UnmarshalPlan
// check the engine's column types against this one for every plan.
// Message and group kinds have no column (Invalid).
var kindDTypes = [...]structtensor.DType{
	protoreflect.DoubleKind:   structtensor.Float64,
	protoreflect.FloatKind:    structtensor.Float32,
	protoreflect.Int64Kind:    structtensor.Int64,
	protoreflect.Uint64Kind:   structtensor.Uint64,
	protoreflect.Int32Kind:    structtensor.Int32,
	protoreflect.Fixed64Kind:  structtensor.Uint64,
	protoreflect.Fixed32Kind:  structtensor.Uint32,
	protoreflect.BoolKind:     structtensor.Bool,
	protoreflect.StringKind:   structtensor.String,
	protoreflect.GroupKind:    structtensor.Invalid,
	protoreflect.MessageKind:  structtensor.Invalid,
	protoreflect.BytesKind:    structtensor.String,
	protoreflect.Uint32Kind:   structtensor.Uint32,
	protoreflect.EnumKind:     structtensor.Int32,
	protoreflect.Sfixed32Kind: structtensor.Int32,
	protoreflect.Sfixed64Kind: structtensor.Int64,
	protoreflect.Sint32Kind:   structtensor.Int32,
	protoreflect.Sint64Kind:   structtensor.Int64,
}

// kindDType is the output element type of a scalar kind; Invalid for
// message and group kinds and for numbers that are no kind.
func kindDType(k protoreflect.Kind) structtensor.DType {
	if k < 0 || int(k) >= len(kindDTypes) {
		return structtensor.Invalid
	}
	return kindDTypes[k]
}

// validKind reports whether k is a protobuf field kind.
func validKind(k protoreflect.Kind) bool {
	return k > 0 && int(k) < len(kindDTypes)
}

// isMessageKind reports whether fields of kind k hold submessages.
func isMessageKind(k protoreflect.Kind) bool {
	return k == protoreflect.MessageKind || k == protoreflect.GroupKind
}
