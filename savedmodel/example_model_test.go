package savedmodel_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// exportAffine exports y = x·w + 1 (w a variable) with the signature
// "serving_default" to dir.
func exportAffine(dir string) error {
	s := op.NewScope()
	w, _ := structtensor.NewTensor(structtensor.Shape{2, 1}, []float32{2, -1})
	kernel := savedmodel.NewVariable(s, "kernel", w)
	x := op.Placeholder(s.SubScope("x"), tfbridge.Float, op.PlaceholderShape(op.ShapeOf(-1, 2)))
	y := op.AddV2(s, op.MatMul(s, x, kernel.Read(s)), op.Constant(s, float32(1)))
	g, err := s.Finalize()
	if err != nil {
		return err
	}
	return savedmodel.Export(dir, &savedmodel.Model{
		Graph: g,
		Signatures: map[string]*savedmodel.Signature{"serving_default": {
			Inputs:  map[string]savedmodel.Value{"x": savedmodel.Tensor(x)},
			Outputs: map[string]savedmodel.Value{"y": savedmodel.Tensor(y)},
		}},
		Variables: []*savedmodel.Variable{kernel},
	})
}

// Export a graph built in Go, with a variable initialised from a Go
// tensor, then load it and call its signature.
func ExampleExport() {
	tmp, err := os.MkdirTemp("", "model-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "affine")
	if err := exportAffine(dir); err != nil {
		log.Fatal(err)
	}

	m, err := savedmodel.Load(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	in, out, _ := m.Signature("serving_default")
	fmt.Println(in["x"], "->", out["y"])
	x, _ := structtensor.NewTensor(structtensor.Shape{2, 2}, []float32{1, 1, 3, 0})
	res, err := m.Run(context.Background(), "serving_default", map[string]structtensor.Value{"x": x})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res["y"].(*structtensor.Tensor).Float32s())
	// Output:
	// TensorSpec([None, 2], float32) -> TensorSpec([None, 1], float32)
	// [2 7]
}
