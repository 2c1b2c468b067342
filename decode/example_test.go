package decode_test

import (
	"fmt"
	"log"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/structtensor/structtensor-go/decode"
)

func ExampleCompile() {
	desc, err := decode.ParseProtoFiles([]string{"../testdata/proto"}, "recipe.proto")
	if err != nil {
		log.Fatal(err)
	}
	plan, err := decode.Compile(desc, "structtensor.testdata.recipe.Recipe", "title", "steps.tools.name")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(plan.Spec())

	// One record by hand: title "Tea", one step with tools "kettle" and "cup".
	tool := func(name string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name)
	}
	var step []byte
	for _, name := range []string{"kettle", "cup"} {
		step = protowire.AppendBytes(protowire.AppendTag(step, 3, protowire.BytesType), tool(name))
	}
	rec := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "Tea")
	rec = protowire.AppendBytes(protowire.AppendTag(rec, 4, protowire.BytesType), step)

	st, err := plan.Decode([][]byte{rec, nil})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.ToValue())
	// Output:
	// StructSpec([None], {title: TensorSpec([None], string), steps: StructSpec([None, None], {tools: StructSpec([None, None, None], {name: RaggedTensorSpec([None, None, None], string, ragged_rank=2)})})})
	// [map[steps:[map[tools:[map[name:kettle] map[name:cup]]]] title:Tea] map[steps:[] title:]]
}
