package op_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

func tensor(t testing.TB, shape structtensor.Shape, values any) *tfbridge.Tensor {
	t.Helper()
	v, err := structtensor.NewTensor(shape, values)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := tfbridge.NewTensor(v)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func run(t testing.TB, g *tfbridge.Graph, feeds map[tfbridge.Output]*tfbridge.Tensor, fetches ...tfbridge.Output) []*structtensor.Tensor {
	t.Helper()
	sess, err := tfbridge.NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.Run(feeds, fetches, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]*structtensor.Tensor, len(out))
	for i, o := range out {
		if vals[i], err = o.Value(); err != nil {
			t.Fatal(err)
		}
		o.Close()
	}
	return vals
}

// TestWrappersMatchRawSpecs builds one computation twice, with the
// generated wrappers and with raw OpSpecs, runs both on the same feeds and
// compares every fetched value. It covers single and list inputs, list
// outputs, required attributes, optional attributes set by options, and
// shape and type attributes.
func TestWrappersMatchRawSpecs(t *testing.T) {
	xs := tensor(t, structtensor.Shape{2, 3}, []float32{1, 5, 2, 7, 0, 3})
	words := tensor(t, structtensor.Shape{2}, []string{"a b c", "d e"})

	// Wrappers.
	s := op.NewScope()
	x := op.Placeholder(s, tfbridge.Float, op.PlaceholderShape(op.ShapeOf(-1, 3)))
	w := op.Placeholder(s, tfbridge.String)
	two := op.Constant(s, float32(2))
	axis := op.Constant(s, int32(1))
	sum := op.AddV2(s, op.Mul(s, x, two), x)
	cum := op.Cumsum(s, sum, axis, op.CumsumExclusive(true), op.CumsumReverse(true))
	arg := op.ArgMax(s, x, axis, op.ArgMaxOutputType(tfbridge.Int32))
	rows := op.Unpack(s, x, 2)
	cat := op.ConcatV2(s, []tfbridge.Output{rows[1], rows[0], rows[1]}, op.Constant(s, int32(0)))
	_, words2, _ := op.StringSplitV2(s, w, op.Constant(s, " "))
	g, err := s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, g, map[tfbridge.Output]*tfbridge.Tensor{x: xs, w: words}, cum, arg, cat, words2)

	// Raw specs.
	rg := tfbridge.NewGraph()
	add := func(spec tfbridge.OpSpec) *tfbridge.Operation {
		t.Helper()
		o, err := rg.AddOperation(spec)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	constant := func(v any) tfbridge.Output {
		sc, err := structtensor.NewScalar(v)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := tfbridge.DTypeOf(sc.DType())
		return add(tfbridge.OpSpec{Type: "Const", Attrs: map[string]any{"value": sc, "dtype": d}}).Output(0)
	}
	rx := add(tfbridge.OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": tfbridge.Float, "shape": structtensor.Shape{structtensor.Unknown, 3}}}).Output(0)
	rw := add(tfbridge.OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": tfbridge.String}}).Output(0)
	rmul := add(tfbridge.OpSpec{Type: "Mul", Input: []tfbridge.Input{rx, constant(float32(2))}}).Output(0)
	rsum := add(tfbridge.OpSpec{Type: "AddV2", Input: []tfbridge.Input{rmul, rx}}).Output(0)
	raxis := constant(int32(1))
	rcum := add(tfbridge.OpSpec{Type: "Cumsum", Input: []tfbridge.Input{rsum, raxis}, Attrs: map[string]any{"exclusive": true, "reverse": true}}).Output(0)
	rarg := add(tfbridge.OpSpec{Type: "ArgMax", Input: []tfbridge.Input{rx, raxis}, Attrs: map[string]any{"output_type": tfbridge.Int32}}).Output(0)
	unpack := add(tfbridge.OpSpec{Type: "Unpack", Input: []tfbridge.Input{rx}, Attrs: map[string]any{"num": 2}})
	rcat := add(tfbridge.OpSpec{Type: "ConcatV2", Input: []tfbridge.Input{tfbridge.OutputList{unpack.Output(1), unpack.Output(0), unpack.Output(1)}, constant(int32(0))}}).Output(0)
	rsplit := add(tfbridge.OpSpec{Type: "StringSplitV2", Input: []tfbridge.Input{rw, constant(" ")}}).Output(1)
	want := run(t, rg, map[tfbridge.Output]*tfbridge.Tensor{rx: xs, rw: words}, rcum, rarg, rcat, rsplit)

	for i := range want {
		if !structtensor.Equal(got[i], want[i]) {
			t.Errorf("fetch %d: wrappers give %v, raw specs %v", i, got[i], want[i])
		}
	}
	if want := []int32{1, 0}; !reflect.DeepEqual(got[1].Int32s(), want) {
		t.Errorf("ArgMax = %v, want %v", got[1].Int32s(), want)
	}
}

func TestSubScopeNames(t *testing.T) {
	s := op.NewScope()
	a := s.SubScope("layer")
	b := s.SubScope("layer")
	c := a.SubScope("inner")
	names := []string{
		op.Constant(a, int64(1)).Op.Name(),
		op.Constant(a, int64(2)).Op.Name(),
		op.Constant(b, int64(3)).Op.Name(),
		op.Constant(c, int64(4)).Op.Name(),
		op.Constant(s, int64(5)).Op.Name(),
	}
	want := []string{"layer/Const", "layer/Const_1", "layer_1/Const", "layer/inner/Const", "Const"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	// A name already in the graph (added without the scope) is avoided.
	g := tfbridge.NewGraph()
	if _, err := g.AddOperation(tfbridge.OpSpec{Type: "NoOp", Name: "x/NoOp"}); err != nil {
		t.Fatal(err)
	}
	s2 := op.NewScopeWithGraph(g).SubScope("x")
	if n := op.NoOp(s2).Name(); n != "x/NoOp_1" {
		t.Errorf("NoOp named %q, want x/NoOp_1", n)
	}
	dep := op.NoOp(s2)
	after := op.Constant(s2.WithControlDependencies(dep), int32(0))
	if after.Op == nil || s2.Err() != nil {
		t.Fatal(s2.Err())
	}
}

// TestBadGraphs: the scope keeps the first error, never panics, and adds
// nothing after it.
func TestBadGraphs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(s *op.Scope)
		want  error  // errors.Is target
		msg   string // substring of the message
	}{
		{"dtype mismatch", func(s *op.Scope) {
			op.AddV2(s, op.Constant(s, float32(1)), op.Constant(s, int32(1)))
		}, tfbridge.ErrInvalidArgument, "AddV2"},
		{"empty list", func(s *op.Scope) {
			op.Pack(s, nil)
		}, tfbridge.ErrInvalidArgument, "Pack"},
		{"list of mixed dtypes", func(s *op.Scope) {
			op.ConcatV2(s, []tfbridge.Output{op.Constant(s, []int64{1}), op.Constant(s, []float64{2})}, op.Constant(s, int32(0)))
		}, tfbridge.ErrInvalidArgument, "ConcatV2"},
		{"rank mismatch", func(s *op.Scope) {
			op.MatMul(s, op.Constant(s, []float32{1, 2}), op.Constant(s, []float32{1, 2}))
		}, tfbridge.ErrInvalidArgument, "MatMul"},
		{"input of another graph", func(s *op.Scope) {
			other := op.NewScope()
			op.Neg(s, op.Constant(other, int32(1)))
		}, tfbridge.ErrGraph, "Neg"},
		{"zero output", func(s *op.Scope) {
			op.Neg(s, tfbridge.Output{})
		}, tfbridge.ErrGraph, "Neg"},
		{"bad sub-scope name", func(s *op.Scope) {
			s.SubScope("a/b")
		}, op.ErrScope, "a/b"},
		{"bad constant", func(s *op.Scope) {
			op.Constant(s, struct{}{})
		}, nil, "Constant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := op.NewScope()
			tc.build(s)
			err := s.Err()
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v is not %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not name %q", err, tc.msg)
			}
			// Everything after the error is a no-op, list outputs included.
			before := len(s.Graph().Operations())
			c := op.Constant(s, int32(1))
			parts := op.Unpack(s, c, 3)
			if c.Op != nil || len(parts) != 0 || op.NoOp(s) != nil {
				t.Error("an operation was added after the error")
			}
			if n := len(s.Graph().Operations()); n != before {
				t.Errorf("graph grew from %d to %d operations after the error", before, n)
			}
			if _, ferr := s.Finalize(); ferr != err {
				t.Errorf("Finalize error %v, want %v", ferr, err)
			}
		})
	}
}
