package tfbridge_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// Load a SavedModel with TensorFlow's C API loader (what TF Serving uses)
// and run a signature by its tensors' names. The model here is exported
// from Go (savedmodel.Export); one exported by Python loads the same way.
func ExampleLoadSavedModel() {
	tmp, err := os.MkdirTemp("", "savedmodel-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "double")
	s := op.NewScope()
	x := op.Placeholder(s.SubScope("x"), tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1)))
	y := op.Mul(s, x, op.Constant(s, int64(2)))
	g, err := s.Finalize()
	if err != nil {
		log.Fatal(err)
	}
	if err := savedmodel.Export(dir, &savedmodel.Model{Graph: g, Signatures: map[string]*savedmodel.Signature{
		"serving_default": {Inputs: map[string]savedmodel.Value{"x": savedmodel.Tensor(x)}, Outputs: map[string]savedmodel.Value{"y": savedmodel.Tensor(y)}},
	}}); err != nil {
		log.Fatal(err)
	}

	m, err := tfbridge.LoadSavedModel(dir, []string{"serve"})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	sig, err := m.Signature("serving_default")
	if err != nil {
		log.Fatal(err)
	}
	v, _ := structtensor.NewTensor(structtensor.Shape{3}, []int64{1, 2, 3})
	in, _ := tfbridge.NewTensor(v)
	defer in.Close()
	out, err := m.Session.Run(map[tfbridge.Output]*tfbridge.Tensor{sig.Inputs["x"].Output: in}, []tfbridge.Output{sig.Outputs["y"].Output}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer out[0].Close()
	r, _ := out[0].Value()
	fmt.Println(sig.Inputs["x"].Shape, r.Int64s())
	// Output: [None] [2 4 6]
}
