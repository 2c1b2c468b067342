package tfbridge_test

import (
	"fmt"
	"log"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// Build x + 1 over a placeholder and run it.
func ExampleGraph_AddOperation() {
	g := tfbridge.NewGraph()
	defer g.Close()
	x, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "x", Attrs: map[string]any{"dtype": tfbridge.Int64}})
	if err != nil {
		log.Fatal(err)
	}
	one, _ := structtensor.NewScalar(int64(1))
	c, err := g.AddOperation(tfbridge.OpSpec{Type: "Const", Name: "one", Attrs: map[string]any{"dtype": tfbridge.Int64, "value": one}})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := g.AddOperation(tfbridge.OpSpec{Type: "AddV2", Input: []tfbridge.Input{x.Output(0), c.Output(0)}})
	if err != nil {
		log.Fatal(err)
	}
	s, err := tfbridge.NewSession(g)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	v, _ := structtensor.NewTensor(nil, []int64{1, 2, 3})
	in, err := tfbridge.NewTensor(v)
	if err != nil {
		log.Fatal(err)
	}
	out, err := s.Run(map[tfbridge.Output]*tfbridge.Tensor{x.Output(0): in}, []tfbridge.Output{sum.Output(0)}, nil)
	if err != nil {
		log.Fatal(err)
	}
	got, err := out[0].Value()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Int64s())
	// Output: [2 3 4]
}
