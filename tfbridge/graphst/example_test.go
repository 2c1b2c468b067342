package graphst_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// Sum one ragged feature per record and keep the records whose sum is
// positive, in the graph.
func Example() {
	spec := &structtensor.StructSpec{Shape: structtensor.Shape{structtensor.Unknown}, Fields: []structtensor.FieldSpec{
		{Name: "id", Spec: &structtensor.TensorSpec{DType: structtensor.Int64, Shape: structtensor.Shape{structtensor.Unknown}}},
		{Name: "x", Spec: &structtensor.RaggedSpec{DType: structtensor.Float32, Shape: structtensor.Shape{structtensor.Unknown, structtensor.Unknown}, RaggedRank: 1}},
	}}
	s := op.NewScope()
	records, err := graphst.Placeholders(s.Graph(), spec, "records")
	if err != nil {
		fmt.Println(err)
		return
	}
	x, _ := records.Field("x")
	sums := graphst.ReduceRows(s, x.(graphst.Ragged), ops.ReduceSum)
	kept := graphst.BooleanMask(s, records, op.Greater(s, sums.Values(), op.Constant(s, float32(0))))
	if err := s.Err(); err != nil {
		fmt.Println(err)
		return
	}

	// Three records: ids 1, 2, 3 with x [1, 2], [-5], [].
	ids, _ := structtensor.NewTensor(structtensor.Shape{3}, []int64{1, 2, 3})
	xs, _ := structtensor.NewTensor(structtensor.Shape{3}, []float32{1, 2, -5})
	xr, _ := structtensor.NewRaggedFromSplits(xs, []int64{0, 2, 3, 3})
	batch, _ := structtensor.NewStruct(3, structtensor.Field{Name: "id", Value: ids}, structtensor.Field{Name: "x", Value: xr})
	feeds, err := graphst.Feed(records, batch)
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, _ := tfbridge.NewSession(s.Graph())
	defer sess.Close()
	got, err := graphst.Run(context.Background(), sess, feeds, kept)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(structtensor.ToValue(got))
	// Output: [map[id:1 x:[1 2]]]
}

// Feed a ragged, nested StructTensor to a graph through placeholders built
// from its Spec, and fetch it back as a StructTensor.
func ExampleRun() {
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
	in, err := graphst.Placeholders(g, spec, "in")
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
	feeds, err := graphst.Feed(in, st)
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
	sym, err := graphst.NewStruct(spec, outs)
	if err != nil {
		log.Fatal(err)
	}
	got, err := graphst.Run(context.Background(), s, feeds, sym)
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

// Sum one tf.Example feature per record in the graph: decode the records
// generically (any message wire compatible with tensorflow.Example), select
// the float_list of feature "x" by key, reduce each record's row.
func ExampleExampleFeature() {
	b, err := os.ReadFile("../../testdata/proto/testdata.pb")
	if err != nil {
		log.Fatal(err)
	}
	d, err := decode.LoadDescriptorSet(b)
	if err != nil {
		log.Fatal(err)
	}
	plan, err := decode.Compile(d, "structtensor.testdata.example.Example", "features.feature.key", "features.feature.value.float_list.value")
	if err != nil {
		log.Fatal(err)
	}
	s := op.NewScope()
	records := op.Placeholder(s, tfbridge.String, op.PlaceholderShape(op.ShapeOf(-1)))
	examples, err := cops.DecodeGraph(s.Graph(), records, plan)
	if err != nil {
		log.Fatal(err)
	}
	x := graphst.ExampleFeature(s, examples, "x", structtensor.Float32)
	sums := graphst.ReduceRows(s, x, ops.ReduceSum)
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}

	// Two records: x = [1.5, 2] and no x at all (features {"y": [3]}).
	in, _ := structtensor.NewTensor(nil, []string{
		"\x0a\x13\x0a\x11\x0a\x01x\x12\x0c\x12\x0a\x0a\x08\x00\x00\xc0\x3f\x00\x00\x00\x40",
		"\x0a\x0f\x0a\x0d\x0a\x01y\x12\x08\x12\x06\x0a\x04\x00\x00\x40\x40",
	})
	t, _ := tfbridge.NewTensor(in)
	sess, _ := tfbridge.NewSession(s.Graph())
	defer sess.Close()
	got, err := graphst.Run(context.Background(), sess, map[tfbridge.Output]*tfbridge.Tensor{records: t}, sums)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output: Tensor([3.5, 0], shape=[2], dtype=float32)
}
