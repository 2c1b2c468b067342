package objectgraph

import (
	"fmt"
	"sort"

	"github.com/structtensor/structtensor-go/structtensor"
	shapepb "github.com/wamuir/graft/tensorflow/core/framework/tensor_shape_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	pb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
)

// Value is a structured value as TensorFlow's nest module sees it: the
// input signature or the output structure of a function, encoded as a
// tensorflow.StructuredValue.
type Value interface {
	// proto returns the StructuredValue encoding.
	proto() *pb.StructuredValue
	// flat appends the specs of the tensors the value flattens to (with
	// composites expanded), in TensorFlow's nest.flatten order.
	flat(dst []TensorSpec) []TensorSpec
}

// Dict is a Python dict. nest.flatten visits it in sorted key order, so
// a function returning a Dict returns its flat outputs in that order.
type Dict map[string]Value

// Tuple is a Python tuple.
type Tuple []Value

// List is a Python list.
type List []Value

// None is Python's None.
type None struct{}

// TensorSpec is a tf.TensorSpec. Shape uses structtensor.Unknown (-1) for
// a dimension of unknown size.
type TensorSpec struct {
	Name  string
	Shape structtensor.Shape
	DType typespb.DataType
}

// RaggedTensorSpec is a tf.RaggedTensorSpec: Shape is the full shape
// (Unknown at the batch and ragged dimensions), RaggedRank the number of
// row partitions. It flattens to its flat values (shape [Unknown] plus the
// dimensions after the ragged ones) and then one row-splits vector per
// partition, outermost first.
type RaggedTensorSpec struct {
	Shape          structtensor.Shape
	DType          typespb.DataType
	RaggedRank     int
	RowSplitsDType typespb.DataType
}

// TypeSpec is any other composite tf.TypeSpec, given as its proto parts:
// the class (with its registered name for REGISTERED_TYPE_SPEC and
// EXTENSION_TYPE_SPEC), the serialized state, and the specs of the
// tensors it flattens to, in its _to_components order.
type TypeSpec struct {
	Class      pb.TypeSpecProto_TypeSpecClass
	ClassName  string
	State      Value
	Components []TensorSpec
}

func (d Dict) proto() *pb.StructuredValue {
	f := make(map[string]*pb.StructuredValue, len(d))
	for k, v := range d {
		f[k] = v.proto()
	}
	return &pb.StructuredValue{Kind: &pb.StructuredValue_DictValue{DictValue: &pb.DictValue{Fields: f}}}
}

func (d Dict) flat(dst []TensorSpec) []TensorSpec {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dst = d[k].flat(dst)
	}
	return dst
}

func protos(vs []Value) []*pb.StructuredValue {
	out := make([]*pb.StructuredValue, len(vs))
	for i, v := range vs {
		out[i] = v.proto()
	}
	return out
}

func (t Tuple) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_TupleValue{TupleValue: &pb.TupleValue{Values: protos(t)}}}
}

func (t Tuple) flat(dst []TensorSpec) []TensorSpec {
	for _, v := range t {
		dst = v.flat(dst)
	}
	return dst
}

func (l List) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_ListValue{ListValue: &pb.ListValue{Values: protos(l)}}}
}

func (l List) flat(dst []TensorSpec) []TensorSpec { return Tuple(l).flat(dst) }

func (None) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_NoneValue{NoneValue: &pb.NoneValue{}}}
}

func (None) flat(dst []TensorSpec) []TensorSpec { return dst }

// ShapeProto returns the TensorShapeProto of s (-1 for Unknown).
func ShapeProto(s structtensor.Shape) *shapepb.TensorShapeProto {
	p := &shapepb.TensorShapeProto{}
	for _, d := range s {
		p.Dim = append(p.Dim, &shapepb.TensorShapeProto_Dim{Size: int64(d)})
	}
	return p
}

func (s TensorSpec) specProto() *pb.TensorSpecProto {
	return &pb.TensorSpecProto{Name: s.Name, Shape: ShapeProto(s.Shape), Dtype: s.DType}
}

func (s TensorSpec) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_TensorSpecValue{TensorSpecValue: s.specProto()}}
}

func (s TensorSpec) flat(dst []TensorSpec) []TensorSpec { return append(dst, s) }

// scalar values of a type spec's state.
type (
	shapeValue structtensor.Shape
	dtypeValue typespb.DataType
	int64Value int64
)

func (s shapeValue) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_TensorShapeValue{TensorShapeValue: ShapeProto(structtensor.Shape(s))}}
}
func (shapeValue) flat(dst []TensorSpec) []TensorSpec { return dst }
func (d dtypeValue) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_TensorDtypeValue{TensorDtypeValue: typespb.DataType(d)}}
}
func (dtypeValue) flat(dst []TensorSpec) []TensorSpec { return dst }
func (i int64Value) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_Int64Value{Int64Value: int64(i)}}
}
func (int64Value) flat(dst []TensorSpec) []TensorSpec { return dst }

// Shape, DType and Int64 wrap a shape, an element type and an integer as
// Values, for TypeSpec states.
func Shape(s structtensor.Shape) Value { return shapeValue(s) }

// DType wraps an element type as a Value.
func DType(d typespb.DataType) Value { return dtypeValue(d) }

// Int64 wraps an integer as a Value.
func Int64(i int64) Value { return int64Value(i) }

func (r RaggedTensorSpec) typeSpec() TypeSpec {
	inner := structtensor.Shape{structtensor.Unknown}
	if len(r.Shape) > r.RaggedRank+1 {
		inner = append(inner, r.Shape[r.RaggedRank+1:]...)
	}
	comps := []TensorSpec{{Shape: inner, DType: r.DType}}
	for i := 0; i < r.RaggedRank; i++ {
		comps = append(comps, TensorSpec{Shape: structtensor.Shape{structtensor.Unknown}, DType: r.RowSplitsDType})
	}
	// The state is (shape, dtype, ragged_rank, row_splits_dtype), the
	// tuple RaggedTensorSpec._serialize returns.
	return TypeSpec{
		Class: pb.TypeSpecProto_RAGGED_TENSOR_SPEC, ClassName: "RaggedTensorSpec",
		State:      Tuple{Shape(r.Shape), DType(r.DType), Int64(int64(r.RaggedRank)), DType(r.RowSplitsDType)},
		Components: comps,
	}
}

func (r RaggedTensorSpec) proto() *pb.StructuredValue         { return r.typeSpec().proto() }
func (r RaggedTensorSpec) flat(dst []TensorSpec) []TensorSpec { return r.typeSpec().flat(dst) }

func (t TypeSpec) proto() *pb.StructuredValue {
	var state *pb.StructuredValue
	if t.State != nil {
		state = t.State.proto()
	}
	return &pb.StructuredValue{Kind: &pb.StructuredValue_TypeSpecValue{TypeSpecValue: &pb.TypeSpecProto{
		TypeSpecClass: t.Class, TypeState: state, TypeSpecClassName: t.ClassName,
		NumFlatComponents: int32(len(t.Components)),
	}}}
}

func (t TypeSpec) flat(dst []TensorSpec) []TensorSpec { return append(dst, t.Components...) }

// Flatten returns the specs of the tensors v flattens to with composites
// expanded, in the order of a function's flat inputs or outputs.
func Flatten(v Value) []TensorSpec {
	if v == nil {
		return nil
	}
	return v.flat(nil)
}

func checkValue(v Value) error {
	switch x := v.(type) {
	case RaggedTensorSpec:
		if x.RaggedRank < 1 || len(x.Shape) < x.RaggedRank+1 {
			return fmt.Errorf("ragged rank %d of a shape %v", x.RaggedRank, x.Shape)
		}
	case Dict:
		for k, e := range x {
			if err := checkValue(e); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
		}
	case Tuple:
		for i, e := range x {
			if err := checkValue(e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case List:
		return checkValue(Tuple(x))
	}
	return nil
}

type stringValue string

func (s stringValue) proto() *pb.StructuredValue {
	return &pb.StructuredValue{Kind: &pb.StructuredValue_StringValue{StringValue: string(s)}}
}
func (stringValue) flat(dst []TensorSpec) []TensorSpec { return dst }

// String wraps a string as a Value, for TypeSpec states.
func String(s string) Value { return stringValue(s) }
