package graphst_test

import (
	"fmt"

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
	records, err := tfbridge.PlaceholdersFromSpec(s.Graph(), spec, "records")
	if err != nil {
		fmt.Println(err)
		return
	}
	x, _ := records.Field("x")
	sums := graphst.ReduceRows(s, graphst.FieldRagged(x.(*tfbridge.SymbolicTensor)), ops.ReduceSum)
	kept := graphst.BooleanMask(s, records, op.Greater(s, sums.Values, op.Constant(s, float32(0))))
	if err := s.Err(); err != nil {
		fmt.Println(err)
		return
	}

	// Three records: ids 1, 2, 3 with x [1, 2], [-5], [].
	ids, _ := structtensor.NewTensor(structtensor.Shape{3}, []int64{1, 2, 3})
	xs, _ := structtensor.NewTensor(structtensor.Shape{3}, []float32{1, 2, -5})
	xr, _ := structtensor.NewRaggedFromSplits(xs, []int64{0, 2, 3, 3})
	batch, _ := structtensor.NewStruct(3, structtensor.Field{Name: "id", Value: ids}, structtensor.Field{Name: "x", Value: xr})
	feeds, err := tfbridge.FeedStruct(records, batch)
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, _ := tfbridge.NewSession(s.Graph())
	defer sess.Close()
	got, err := sess.RunStruct(feeds, kept)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(structtensor.ToValue(got))
	// Output: [map[id:1 x:[1 2]]]
}
