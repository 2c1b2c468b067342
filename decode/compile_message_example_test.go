package decode_test

import (
	"fmt"
	"log"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/structtensor/structtensor-go/decode"
)

// A generated message type is enough to compile a plan: no descriptor
// set, no .proto files.
func ExampleCompileMessage() {
	plan, err := decode.CompileMessage((*descriptorpb.FieldDescriptorProto)(nil), "name", "number")
	if err != nil {
		log.Fatal(err)
	}
	var records [][]byte
	for i, name := range []string{"id", "title"} {
		b, err := proto.Marshal(&descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(int32(i + 1))})
		if err != nil {
			log.Fatal(err)
		}
		records = append(records, b)
	}
	st, err := plan.Decode(records)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.ToValue())
	// Output:
	// [map[name:[id] number:[1]] map[name:[title] number:[2]]]
}

// Encode is the inverse of Decode: a StructTensor shaped as the plan
// decodes becomes serialized records again.
func ExamplePlan_Encode() {
	plan, err := decode.CompileMessage((*descriptorpb.FieldDescriptorProto)(nil), "name", "number")
	if err != nil {
		log.Fatal(err)
	}
	st, err := plan.Decode([][]byte{mustMarshal(&descriptorpb.FieldDescriptorProto{Name: proto.String("id"), Number: proto.Int32(1)})})
	if err != nil {
		log.Fatal(err)
	}
	records, err := plan.Encode(st)
	if err != nil {
		log.Fatal(err)
	}
	var back descriptorpb.FieldDescriptorProto
	if err := proto.Unmarshal(records[0], &back); err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.GetName(), back.GetNumber())
	// Output:
	// id 1
}

func mustMarshal(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		log.Fatal(err)
	}
	return b
}
