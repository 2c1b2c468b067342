package cops_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// Build a graph that decodes records fed to a placeholder, and run it.
func ExampleDecodeGraph() {
	b, err := os.ReadFile("../testdata/proto/testdata.pb")
	if err != nil {
		log.Fatal(err)
	}
	d, err := decode.LoadDescriptorSet(b)
	if err != nil {
		log.Fatal(err)
	}
	plan, err := decode.Compile(d, "structtensor.testdata.recipe.Recipe", "title", "ingredients.name")
	if err != nil {
		log.Fatal(err)
	}
	g := tfbridge.NewGraph()
	defer g.Close()
	records, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records",
		Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		log.Fatal(err)
	}
	sym, err := cops.DecodeGraph(g, records.Output(0), plan)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sym.Spec())
	sess, err := tfbridge.NewSession(g)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	batch, _ := structtensor.NewTensor(nil, []string{"\x0a\x08Pancakes\x12\x07\x0a\x05flour", "\x12\x05\x0a\x03egg"})
	in, err := tfbridge.NewTensor(batch)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	v, err := graphst.Run(context.Background(), sess, map[tfbridge.Output]*tfbridge.Tensor{records.Output(0): in}, sym)
	if err != nil {
		log.Fatal(err)
	}
	names, _ := v.(*structtensor.StructTensor).FieldValue("ingredients", "name")
	fmt.Println(names.(*structtensor.Ragged).Partitions()[0])
	// Output:
	// StructSpec([None], {title: TensorSpec([None], string), ingredients: StructSpec([None, None], {name: RaggedTensorSpec([None, None], string, ragged_rank=1)})})
	// [0 1 2]
}
