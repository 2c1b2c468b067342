package objectgraph

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	"google.golang.org/protobuf/proto"
)

type graphBuilder struct {
	t testing.TB
	g *tfbridge.Graph
}

func (b graphBuilder) op(typ, name string, attrs map[string]any, in ...tfbridge.Input) tfbridge.Output {
	b.t.Helper()
	op, err := b.g.AddOperation(tfbridge.OpSpec{Type: typ, Name: name, Input: in, Attrs: attrs})
	if err != nil {
		b.t.Fatal(err)
	}
	return op.Output(0)
}

func scalar(t testing.TB, v any) *structtensor.Tensor {
	t.Helper()
	x, err := structtensor.NewScalar(v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// lengthsFunction builds a function of x (string [None]) returning, in
// the flat order of lengthsOutput, the length of each string as a dense
// int64 vector and as a ragged [None, None] tensor with one value a row.
func lengthsFunction(t *testing.T, name string) *fnpb.FunctionDef {
	b := graphBuilder{t, tfbridge.NewGraph()}
	defer b.g.Close()
	x := b.op("Placeholder", "x", map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{-1}})
	n := b.op("Cast", "", map[string]any{"DstT": structtensor.Int64}, b.op("StringLength", "", nil, x))
	size := b.op("Size", "", map[string]any{"out_type": structtensor.Int64}, x)
	zero := b.op("Const", "", map[string]any{"dtype": structtensor.Int64, "value": scalar(t, int64(0))})
	one := b.op("Const", "", map[string]any{"dtype": structtensor.Int64, "value": scalar(t, int64(1))})
	splits := b.op("Range", "", nil, zero, b.op("AddV2", "", nil, size, one), one)
	return toFunctionDef(t, b.g, name, []tfbridge.Output{x}, []tfbridge.Output{n, n, splits})
}

var lengthsOutput = Dict{
	"len": TensorSpec{Name: "len", Shape: structtensor.Shape{-1}, DType: typespb.DataType_DT_INT64},
	"rag": RaggedTensorSpec{Shape: structtensor.Shape{-1, -1}, DType: typespb.DataType_DT_INT64, RaggedRank: 1, RowSplitsDType: typespb.DataType_DT_INT64},
}

// scaledFunction builds a function of y (float [2]) and a captured float
// [2] variable v returning {"sum": y + v, "v": v}.
func scaledFunction(t *testing.T, name string) *fnpb.FunctionDef {
	b := graphBuilder{t, tfbridge.NewGraph()}
	defer b.g.Close()
	y := b.op("Placeholder", "y", map[string]any{"dtype": structtensor.Float32, "shape": structtensor.Shape{2}})
	h := b.op("Placeholder", "v", map[string]any{"dtype": tfbridge.Resource, "shape": structtensor.Shape{}})
	v := b.op("ReadVariableOp", "", map[string]any{"dtype": structtensor.Float32}, h)
	return toFunctionDef(t, b.g, name, []tfbridge.Output{y, h}, []tfbridge.Output{b.op("AddV2", "", nil, y, v), v})
}

var scaledOutput = Dict{
	"sum": TensorSpec{Name: "sum", Shape: structtensor.Shape{2}, DType: typespb.DataType_DT_FLOAT},
	"v":   TensorSpec{Name: "v", Shape: structtensor.Shape{2}, DType: typespb.DataType_DT_FLOAT},
}

func toFunctionDef(t *testing.T, g *tfbridge.Graph, name string, in, out []tfbridge.Output) *fnpb.FunctionDef {
	t.Helper()
	names := make([]string, len(out))
	for i := range out {
		names[i] = "output_" + string(rune('0'+i))
	}
	b, err := g.ToFunctionDef(name, in, out, names)
	if err != nil {
		t.Fatal(err)
	}
	f := &fnpb.FunctionDef{}
	if err := proto.Unmarshal(b, f); err != nil {
		t.Fatal(err)
	}
	return f
}

func testModel(t *testing.T) *Model {
	g := tfbridge.NewGraph()
	gd, err := g.ToGraphDef()
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	graph := &graphpb.GraphDef{}
	if err := proto.Unmarshal(gd, graph); err != nil {
		t.Fatal(err)
	}
	graph.Library = &fnpb.FunctionDefLibrary{Function: []*fnpb.FunctionDef{
		lengthsFunction(t, "lengths_fn"), lengthsFunction(t, "lengths_sig"),
		scaledFunction(t, "scaled_fn"), scaledFunction(t, "scaled_sig"),
	}}
	v, err := structtensor.NewTensor(structtensor.Shape{2}, []float32{1.5, -2})
	if err != nil {
		t.Fatal(err)
	}
	vObj := &Object{Variable: &Variable{Name: "my/v", Value: v, Trainable: true}}
	str := TensorSpec{Name: "x", Shape: structtensor.Shape{-1}, DType: typespb.DataType_DT_STRING}
	flt := TensorSpec{Name: "y", Shape: structtensor.Shape{2}, DType: typespb.DataType_DT_FLOAT}
	return &Model{
		Tags: []string{"serve"}, TensorFlowVersion: tfbridge.Version(), Graph: graph,
		Root: &Object{Children: []Child{
			{Name: "lengths", Object: &Object{Function: &Function{Name: "lengths_fn", Inputs: []Arg{{Name: "x", Spec: str}}, Output: lengthsOutput}}},
			{Name: "weights", Object: &Object{Children: []Child{{Name: "v.1/a", Object: vObj}}}},
			{Name: "scaled", Object: &Object{Function: &Function{Name: "scaled_fn", Inputs: []Arg{{Name: "y", Spec: flt}}, Output: scaledOutput, Captures: []*Object{vObj}}}},
		}},
		Signatures: map[string]*Function{
			"lengths": {Name: "lengths_sig", Inputs: []Arg{{Name: "x", Spec: str}}, KeywordOnly: true, Output: lengthsOutput},
			"scaled":  {Name: "scaled_sig", Inputs: []Arg{{Name: "y", Spec: flt}}, KeywordOnly: true, Output: scaledOutput, Captures: []*Object{vObj}},
		},
	}
}

// TestPythonLoads has TensorFlow 2.21's tf.saved_model.load restore a
// model with functions (dense and ragged outputs), a captured variable
// and signatures, and compares what they return; it also reads the
// checkpoint with tf.train.list_variables.
func TestPythonLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	if err := Write(dir, testModel(t)); err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv", `
import json, sys
import tensorflow as tf
m = tf.saved_model.load(sys.argv[1])
x = tf.constant([b"ab", b"", b"xyz"])
y = tf.constant([10.0, 20.0])
l = m.lengths(x)
s = m.scaled(y)
sl = m.signatures["lengths"](x=x)
ss = m.signatures["scaled"](y=y)
print(json.dumps({
  "len": l["len"].numpy().tolist(), "rag": l["rag"].to_list(),
  "rag_spec": str(m.lengths.structured_outputs["rag"]),
  "sum": s["sum"].numpy().tolist(), "v": m.weights.__dict__["v.1/a"].numpy().tolist() if "v.1/a" in m.weights.__dict__ else getattr(m.weights, "v.1/a").numpy().tolist(),
  "sig_keys": sorted(m.signatures.keys()),
  "sig_len": sl["len"].numpy().tolist(), "sig_rag": sl["rag"].to_list(), "sig_sum": ss["sum"].numpy().tolist(),
  "ckpt": sorted(k for k, _ in tf.train.list_variables(sys.argv[1] + "/variables/variables")),
}))
`, dir)
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{
		"len": []any{2.0, 0.0, 3.0}, "rag": []any{[]any{2.0}, []any{0.0}, []any{3.0}},
		"rag_spec": "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)",
		"sum":      []any{11.5, 18.0}, "v": []any{1.5, -2.0},
		"sig_keys": []any{"lengths", "scaled"},
		"sig_len":  []any{2.0, 0.0, 3.0}, "sig_rag": []any{[]any{2.0}, []any{0.0}, []any{3.0}}, "sig_sum": []any{11.5, 18.0},
		"ckpt": []any{"_CHECKPOINTABLE_OBJECT_GRAPH", "weights/v..1.Sa/.ATTRIBUTES/VARIABLE_VALUE"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TensorFlow returns\n%v\nwant\n%v", got, want)
	}
}

// TestCAPILoads loads the model with TensorFlow's C API (the TF1-style
// loader TF Serving also uses): it restores the variable through the
// writer's restore op and runs a signature.
func TestCAPILoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	if err := Write(dir, testModel(t)); err != nil {
		t.Fatal(err)
	}
	m, err := tfbridge.LoadSavedModel(dir, []string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sig, err := m.Signature("scaled")
	if err != nil {
		t.Fatal(err)
	}
	y, err := structtensor.NewTensor(structtensor.Shape{2}, []float32{10, 20})
	if err != nil {
		t.Fatal(err)
	}
	yt, err := tfbridge.NewTensor(y)
	if err != nil {
		t.Fatal(err)
	}
	defer yt.Close()
	res, err := m.Session.Run(map[tfbridge.Output]*tfbridge.Tensor{sig.Inputs["y"].Output: yt},
		[]tfbridge.Output{sig.Outputs["sum"].Output, sig.Outputs["v"].Output}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float32{{11.5, 18}, {1.5, -2}} {
		v, err := res[i].Value()
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Float32s(); !reflect.DeepEqual(got, want) {
			t.Errorf("output %d = %v, want %v", i, got, want)
		}
		res[i].Close()
	}
}

func TestModelErrors(t *testing.T) {
	for name, edit := range map[string]func(m *Model){
		"function not in library": func(m *Model) { m.Root.Children[0].Object.Function.Name = "nope" },
		"output count":            func(m *Model) { m.Root.Children[0].Object.Function.Output = Dict{"len": lengthsOutput["len"]} },
		"input type": func(m *Model) {
			m.Root.Children[0].Object.Function.Inputs = []Arg{{Name: "x", Spec: TensorSpec{DType: typespb.DataType_DT_FLOAT}}}
		},
		"capture count":        func(m *Model) { m.Root.Children[2].Object.Function.Captures = nil },
		"positional signature": func(m *Model) { m.Signatures["lengths"].KeywordOnly = false },
		"repeated child": func(m *Model) {
			m.Root.Children = append(m.Root.Children, m.Root.Children[0])
		},
		"reserved node": func(m *Model) {
			g := tfbridge.NewGraph()
			defer g.Close()
			graphBuilder{t, g}.op("Placeholder", "saver_filename", map[string]any{"dtype": structtensor.String})
			gd, _ := g.ToGraphDef()
			extra := &graphpb.GraphDef{}
			if err := proto.Unmarshal(gd, extra); err != nil {
				t.Fatal(err)
			}
			m.Graph.Node = append(m.Graph.Node, extra.Node...)
		},
	} {
		m := testModel(t)
		edit(m)
		if _, err := Files(m); err == nil {
			t.Errorf("%s: Files succeeded", name)
		}
	}
}
