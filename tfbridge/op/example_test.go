package op_test

import (
	"fmt"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// Build a graph with the wrappers, check it once, and run it.
func Example() {
	s := op.NewScope()
	x := op.Placeholder(s, tfbridge.Float, op.PlaceholderShape(op.ShapeOf(-1, 3)))
	layer := s.SubScope("layer")
	w := op.Constant(layer, []float32{0.5, -1, 2})
	y := op.Sum(layer, op.Mul(layer, x, w), op.Constant(layer, int32(1)))
	g, err := s.Finalize()
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := tfbridge.NewSession(g)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	in, _ := structtensor.NewTensor(structtensor.Shape{2, 3}, []float32{2, 1, 1, 4, 0, 0.5})
	feed, _ := tfbridge.NewTensor(in)
	out, err := sess.Run(map[tfbridge.Output]*tfbridge.Tensor{x: feed}, []tfbridge.Output{y}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := out[0].Value()
	fmt.Println(y.Op.Name(), v.Float32s())
	// Output: layer/Sum [2 3]
}

// A bad graph is an error of the scope, not a panic.
func ExampleScope_Err() {
	s := op.NewScope()
	op.AddV2(s, op.Constant(s, float32(1)), op.Constant(s, int64(1)))
	fmt.Println(s.Err() != nil)
	// Output: true
}
