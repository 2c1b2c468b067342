package tfbridge

import (
	"errors"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	attrpb "github.com/wamuir/graft/tensorflow/core/framework/attr_value_go_proto"
)

// affineFunction returns the FunctionDef of x -> x*k + 1 (float), built in
// a graph of its own that is closed before the function is used.
func affineFunction(t *testing.T, name string, k float32) []byte {
	t.Helper()
	g := NewGraph()
	defer g.Close()
	x := placeholder(t, g, "x", Float)
	c := func(v float32) Output {
		return mustOp(t, g, OpSpec{Type: "Const", Attrs: map[string]any{"value": mustTensor(t, structtensor.Shape{}, []float32{v}), "dtype": Float}}).Output(0)
	}
	y := mustOp(t, g, OpSpec{Type: "AddV2", Input: []Input{mustOp(t, g, OpSpec{Type: "Mul", Input: []Input{x, c(k)}}).Output(0), c(1)}}).Output(0)
	def, err := g.ToFunctionDef(name, []Output{x}, []Output{y}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// TestAddFunction adds a FunctionDef built in another graph (closed by
// then: the library holds its own copy) and calls it; adding it twice is
// a no-op, a different function of the same name an error.
func TestAddFunction(t *testing.T) {
	def := affineFunction(t, "affine", 2)
	g := NewGraph()
	defer g.Close()
	if err := g.AddFunction(def); err != nil {
		t.Fatal(err)
	}
	if err := g.AddFunction(def); err != nil {
		t.Errorf("adding the same function again: %v", err)
	}
	if err := g.AddFunction(affineFunction(t, "affine", 3)); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("a different function of the same name: %v, want ErrAlreadyExists", err)
	}
	if err := g.AddFunction([]byte{0xff, 0xff}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bytes that are no FunctionDef: %v, want ErrInvalidArgument", err)
	}
	defs, err := g.FunctionDefs()
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs["affine"] == nil {
		t.Fatalf("FunctionDefs has %d functions", len(defs))
	}
	x := placeholder(t, g, "in", Float)
	f := &attrpb.AttrValue{Value: &attrpb.AttrValue_Func{Func: &attrpb.NameAttrList{Name: "affine"}}}
	call := mustOp(t, g, OpSpec{Type: "PartitionedCall", Input: []Input{OutputList{x}},
		Attrs: map[string]any{"Tin": []DType{Float}, "Tout": []DType{Float}, "f": f}})
	sess, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	in, err := NewTensor(mustTensor(t, structtensor.Shape{3}, []float32{0, 1, -2}))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got := runOne(t, sess, map[Output]*Tensor{x: in}, call.Output(0))
	if want := []float32{1, 3, -3}; !reflect.DeepEqual(got.Float32s(), want) {
		t.Errorf("affine(x) = %v, want %v", got.Float32s(), want)
	}
}
