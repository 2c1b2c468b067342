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

// Feed a ragged, nested StructTensor to a graph through placeholders built
// from its Spec, and fetch it back as a StructTensor.
func ExampleSession_RunStruct() {
	v, err := structtensor.FromValue([]any{
		map[string]any{"name": "a", "tags": []any{"x", "y"}},
		map[string]any{"name": "b", "tags": []any{}},
	})
	if err != nil {
		log.Fatal(err)
	}
	st := v.(*structtensor.StructTensor)
	spec := st.Spec().(*structtensor.StructSpec)

	g := tfbridge.NewGraph()
	defer g.Close()
	in, err := tfbridge.PlaceholdersFromSpec(g, spec, "in")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range in.ComponentSpecs() {
		fmt.Println(c.Name(), c.DType)
	}
	s, err := tfbridge.NewSession(g)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	feeds, err := tfbridge.FeedStruct(in, st)
	if err != nil {
		log.Fatal(err)
	}
	// A graph computing on the components would go here; fetching the
	// fed tensors themselves is not allowed, so pass them through Identity.
	var outs []tfbridge.Output
	for _, c := range in.Components() {
		op, err := g.AddOperation(tfbridge.OpSpec{Type: "Identity", Input: []tfbridge.Input{c}})
		if err != nil {
			log.Fatal(err)
		}
		outs = append(outs, op.Output(0))
	}
	sym, err := tfbridge.NewSymbolicStruct(spec, outs)
	if err != nil {
		log.Fatal(err)
	}
	got, err := s.RunStruct(feeds, sym)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(structtensor.Equal(got, st))
	// Output:
	// name/values string
	// tags/row_splits_0 int64
	// tags/values string
	// true
}
