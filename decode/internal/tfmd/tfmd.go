// Package tfmd describes the part of tensorflow_metadata's Schema
// (tensorflow.metadata.v0, the schema.pbtxt that TFDV and TFX write) that
// a feature spec is made from, as a protobuf descriptor built in code, so
// that a schema.pbtxt can be read with prototext and no .proto file.
//
// Only the fields a feature spec needs are declared (with the
// TensorRepresentations of a tensor_representation_group); a schema's other
// fields (domains, statistics constraints, comparators, annotations...)
// are skipped when read with DiscardUnknown. The field numbers and enum
// values are tensorflow_metadata's, so a binary Schema reads the same.
// The descriptor is private to this package: it is not registered in the
// global registry, and so does not clash with a generated
// tensorflow_metadata package in the same binary.
package tfmd

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// FeatureType values (tensorflow.metadata.v0.FeatureType).
const (
	TypeUnknown = 0
	TypeBytes   = 1
	TypeInt     = 2
	TypeFloat   = 3
	TypeStruct  = 4
)

// TensorRepresentation.RowPartitionDType values.
const (
	RowPartitionUnspecified = 0
	RowPartitionInt64       = 1
	RowPartitionInt32       = 2
)

// LifecycleStage values (tensorflow.metadata.v0.LifecycleStage).
const (
	StageUnknown           = 0
	StagePlanned           = 1
	StageAlpha             = 2
	StageBeta              = 3
	StageProduction        = 4
	StageDeprecated        = 5
	StageDebugOnly         = 6
	StageDisabled          = 7
	StageValidationDerived = 9
)

var (
	once   sync.Once
	schema protoreflect.MessageDescriptor
	err    error
)

// Schema returns the descriptor of tensorflow.metadata.v0.Schema.
func Schema() (protoreflect.MessageDescriptor, error) {
	once.Do(func() {
		var fd protoreflect.FileDescriptor
		fd, err = protodesc.NewFile(file(), new(protoregistry.Files))
		if err != nil {
			err = fmt.Errorf("tfmd: building the Schema descriptor: %w", err)
			return
		}
		schema = fd.Messages().ByName("Schema")
	})
	return schema, err
}

// file is schema.proto's subset: messages with the fields a feature spec
// reads, numbered as in tensorflow_metadata.
func file() *descriptorpb.FileDescriptorProto {
	type field struct {
		name     string
		number   int32
		typ      descriptorpb.FieldDescriptorProto_Type
		repeated bool
		typeName string // message or enum, relative to the package
	}
	const (
		tString  = descriptorpb.FieldDescriptorProto_TYPE_STRING
		tBool    = descriptorpb.FieldDescriptorProto_TYPE_BOOL
		tInt64   = descriptorpb.FieldDescriptorProto_TYPE_INT64
		tDouble  = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
		tBytes   = descriptorpb.FieldDescriptorProto_TYPE_BYTES
		tUint64  = descriptorpb.FieldDescriptorProto_TYPE_UINT64
		tMessage = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		tEnum    = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	)
	const pkg = "tensorflow.metadata.v0"
	message := func(name string, fields ...field) *descriptorpb.DescriptorProto {
		m := &descriptorpb.DescriptorProto{Name: proto.String(name)}
		for _, f := range fields {
			label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
			if f.repeated {
				label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
			}
			fp := &descriptorpb.FieldDescriptorProto{
				Name: proto.String(f.name), Number: proto.Int32(f.number), Type: f.typ.Enum(), Label: label.Enum(),
				JsonName: proto.String(f.name),
			}
			if f.typeName != "" {
				fp.TypeName = proto.String("." + pkg + "." + f.typeName)
			}
			m.Field = append(m.Field, fp)
		}
		return m
	}
	enum := func(name string, values ...any) *descriptorpb.EnumDescriptorProto {
		e := &descriptorpb.EnumDescriptorProto{Name: proto.String(name)}
		for i := 0; i < len(values); i += 2 {
			e.Value = append(e.Value, &descriptorpb.EnumValueDescriptorProto{
				Name: proto.String(values[i].(string)), Number: proto.Int32(int32(values[i+1].(int))),
			})
		}
		return e
	}
	// mapEntry is the entry message of a map<string, valueType> field.
	mapEntry := func(name, valueType string) *descriptorpb.DescriptorProto {
		m := message(name, field{"key", 1, tString, false, ""}, field{"value", 2, tMessage, false, valueType})
		m.Options = &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}
		return m
	}
	nested := func(m *descriptorpb.DescriptorProto, inner ...*descriptorpb.DescriptorProto) *descriptorpb.DescriptorProto {
		m.NestedType = inner
		return m
	}
	dim := message("Dim", field{"size", 1, tInt64, false, ""}, field{"name", 2, tString, false, ""})
	fixedShape := nested(message("FixedShape", field{"dim", 2, tMessage, true, "FixedShape.Dim"}), dim)
	// TensorRepresentation (schema.proto) and Path (path.proto): how a
	// schema's tensor_representation_group shapes features into tensors.
	const rep = "TensorRepresentation"
	tensorRepresentation := nested(message(rep,
		field{"dense_tensor", 1, tMessage, false, rep + ".DenseTensor"},
		field{"varlen_sparse_tensor", 2, tMessage, false, rep + ".VarLenSparseTensor"},
		field{"sparse_tensor", 3, tMessage, false, rep + ".SparseTensor"},
		field{"ragged_tensor", 4, tMessage, false, rep + ".RaggedTensor"}),
		message("DefaultValue",
			field{"float_value", 1, tDouble, false, ""},
			field{"int_value", 2, tInt64, false, ""},
			field{"bytes_value", 3, tBytes, false, ""},
			field{"uint_value", 4, tUint64, false, ""}),
		message("DenseTensor",
			field{"column_name", 1, tString, false, ""},
			field{"shape", 2, tMessage, false, "FixedShape"},
			field{"default_value", 3, tMessage, false, rep + ".DefaultValue"}),
		message("VarLenSparseTensor", field{"column_name", 1, tString, false, ""}),
		message("SparseTensor",
			field{"dense_shape", 1, tMessage, false, "FixedShape"},
			field{"index_column_names", 2, tString, true, ""},
			field{"value_column_name", 3, tString, false, ""},
			field{"already_sorted", 4, tBool, false, ""}),
		nested(message("RaggedTensor",
			field{"feature_path", 1, tMessage, false, "Path"},
			field{"row_partition_dtype", 2, tEnum, false, rep + ".RowPartitionDType"},
			field{"partition", 3, tMessage, true, rep + ".RaggedTensor.Partition"}),
			message("Partition",
				field{"uniform_row_length", 1, tInt64, false, ""},
				field{"row_length", 2, tString, false, ""})),
	)
	tensorRepresentation.EnumType = []*descriptorpb.EnumDescriptorProto{
		enum("RowPartitionDType", "UNSPECIFIED", RowPartitionUnspecified, "INT64", RowPartitionInt64, "INT32", RowPartitionInt32),
	}
	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String("structtensor/tfmd/schema_subset.proto"),
		Package: proto.String(pkg),
		Syntax:  proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{
			nested(message("Schema",
				field{"feature", 1, tMessage, true, "Feature"},
				field{"default_environment", 5, tString, true, ""},
				field{"sparse_feature", 6, tMessage, true, "SparseFeature"},
				field{"represent_variable_length_as_ragged", 14, tBool, false, ""},
				field{"tensor_representation_group", 13, tMessage, true, "Schema.TensorRepresentationGroupEntry"}),
				mapEntry("TensorRepresentationGroupEntry", "TensorRepresentationGroup")),
			message("Feature",
				field{"name", 1, tString, false, ""},
				field{"deprecated", 2, tBool, false, ""},
				field{"value_count", 5, tMessage, false, "ValueCount"},
				field{"type", 6, tEnum, false, "FeatureType"},
				field{"presence", 14, tMessage, false, "FeaturePresence"},
				field{"not_in_environment", 19, tString, true, ""},
				field{"in_environment", 20, tString, true, ""},
				field{"lifecycle_stage", 22, tEnum, false, "LifecycleStage"},
				field{"shape", 23, tMessage, false, "FixedShape"},
				field{"struct_domain", 29, tMessage, false, "StructDomain"},
				field{"value_counts", 32, tMessage, false, "ValueCountList"}),
			message("SparseFeature",
				field{"name", 1, tString, false, ""},
				field{"deprecated", 2, tBool, false, ""},
				field{"lifecycle_stage", 7, tEnum, false, "LifecycleStage"}),
			message("FeaturePresence",
				field{"min_fraction", 1, tDouble, false, ""},
				field{"min_count", 2, tInt64, false, ""}),
			message("ValueCount",
				field{"min", 1, tInt64, false, ""},
				field{"max", 2, tInt64, false, ""}),
			message("ValueCountList",
				field{"value_count", 1, tMessage, true, "ValueCount"}),
			fixedShape,
			tensorRepresentation,
			nested(message("TensorRepresentationGroup",
				field{"tensor_representation", 1, tMessage, true, "TensorRepresentationGroup.TensorRepresentationEntry"}),
				mapEntry("TensorRepresentationEntry", rep)),
			message("Path", field{"step", 1, tString, true, ""}),
			message("StructDomain",
				field{"feature", 1, tMessage, true, "Feature"},
				field{"sparse_feature", 2, tMessage, true, "SparseFeature"}),
		},
		EnumType: []*descriptorpb.EnumDescriptorProto{
			enum("FeatureType", "TYPE_UNKNOWN", TypeUnknown, "BYTES", TypeBytes, "INT", TypeInt, "FLOAT", TypeFloat,
				"STRUCT", TypeStruct),
			enum("LifecycleStage", "UNKNOWN_STAGE", StageUnknown, "PLANNED", StagePlanned, "ALPHA", StageAlpha,
				"BETA", StageBeta, "PRODUCTION", StageProduction, "DEPRECATED", StageDeprecated,
				"DEBUG_ONLY", StageDebugOnly, "DISABLED", StageDisabled, "VALIDATION_DERIVED", StageValidationDerived),
		},
	}
}
