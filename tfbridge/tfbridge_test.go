package tfbridge

import (
	"errors"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
)

func mustTensor(t *testing.T, shape structtensor.Shape, values any) *structtensor.Tensor {
	t.Helper()
	v, err := structtensor.NewTensor(shape, values)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustOp(t *testing.T, g *Graph, spec OpSpec) *Operation {
	t.Helper()
	op, err := g.AddOperation(spec)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func placeholder(t *testing.T, g *Graph, name string, dt DType) Output {
	t.Helper()
	return mustOp(t, g, OpSpec{Type: "Placeholder", Name: name, Attrs: map[string]any{"dtype": dt}}).Output(0)
}

func runOne(t *testing.T, s *Session, feeds map[Output]*Tensor, fetch Output) *structtensor.Tensor {
	t.Helper()
	out, err := s.Run(feeds, []Output{fetch}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out[0].Close()
	v, err := out[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVersion(t *testing.T) {
	if v := Version(); !strings.HasPrefix(v, "2.") {
		t.Fatalf("Version() = %q, want 2.x", v)
	}
}

// TestAddGraph builds x + c with a placeholder and a constant and checks the
// sums, and that the graph's shape inference sees the constant's shape.
func TestAddGraph(t *testing.T) {
	g := NewGraph()
	defer g.Close()
	c := mustOp(t, g, OpSpec{Type: "Const", Name: "c", Attrs: map[string]any{
		"dtype": Int64, "value": mustTensor(t, structtensor.Shape{3}, []int64{10, 20, 30})}}).Output(0)
	x := placeholder(t, g, "x", Int64)
	sum := mustOp(t, g, OpSpec{Type: "AddV2", Input: []Input{x, c}}).Output(0)
	if sum.Op.Name() != "AddV2" || sum.Op.Type() != "AddV2" {
		t.Errorf("generated name %q, type %q", sum.Op.Name(), sum.Op.Type())
	}
	if shape, known, err := c.Shape(); err != nil || !known || !shape.Equal(structtensor.Shape{3}) {
		t.Errorf("const shape = %v, %v, %v", shape, known, err)
	}
	if sum.DType() != Int64 {
		t.Errorf("sum dtype %v", sum.DType())
	}
	s, err := NewSession(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := NewTensor(mustTensor(t, structtensor.Shape{3}, []int64{1, 2, 3}))
	if err != nil {
		t.Fatal(err)
	}
	got := runOne(t, s, map[Output]*Tensor{x: in}, sum)
	if want := mustTensor(t, structtensor.Shape{3}, []int64{11, 22, 33}); !structtensor.Equal(got, want) {
		t.Fatalf("x + c = %v, want %v", got.Int64s(), want.Int64s())
	}
	if op := g.Operation("c"); op == nil || op.Type() != "Const" {
		t.Errorf("Operation(c) = %v", op)
	}
	if g.Operation("nope") != nil {
		t.Error("Operation(nope) found something")
	}
	if o, err := g.OutputByName("x:0"); err != nil || o.Op.Name() != "x" {
		t.Errorf("OutputByName(x:0) = %v, %v", o, err)
	}
	if _, err := g.OutputByName("x:1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OutputByName(x:1) error %v", err)
	}
}
