package savedmodel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// linearModel is a graph with two variables and two signatures:
// "score" (x float [None, 3] -> x·kernel + bias, a dense [None, 1]) and
// "double" (a ragged int64 ids -> ids*2 with the same row splits, and
// the row sums as a dense vector).
type linearModel struct {
	model          *Model
	x, ids, splits tfbridge.Output
	score          tfbridge.Output
	doubled, sums  tfbridge.Output
}

func newLinearModel(t testing.TB) *linearModel {
	t.Helper()
	s := op.NewScope()
	kernel := NewVariable(s, "dense/kernel", mustTensor(t, structtensor.Shape{3, 1}, []float32{0.5, -1, 2}))
	bias := NewVariable(s, "dense/bias", mustTensor(t, structtensor.Shape{1}, []float32{0.25}))
	m := &linearModel{}
	m.x = op.Placeholder(s.SubScope("x"), tfbridge.Float, op.PlaceholderShape(op.ShapeOf(-1, 3)))
	m.score = op.AddV2(s, op.MatMul(s, m.x, kernel.Read(s)), bias.Read(s))
	m.ids = op.Placeholder(s.SubScope("ids"), tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1)))
	m.splits = op.Placeholder(s.SubScope("ids_splits"), tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1)))
	m.doubled = op.Mul(s, m.ids, op.Constant(s, int64(2)))
	ids := graphst.NewRagged(s, m.ids, m.splits)
	doubled := graphst.NewRagged(s, m.doubled, m.splits)
	m.sums = graphst.ReduceRows(s, ids, ops.ReduceSum).Values()
	g, err := s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	m.model = &Model{
		Graph: g,
		Signatures: map[string]*Signature{
			"score": {Inputs: map[string]Value{"x": Tensor(m.x)}, Outputs: map[string]Value{"score": Tensor(m.score)}},
			"double": {Inputs: map[string]Value{"ids": Ragged(ids)},
				Outputs: map[string]Value{"doubled": Ragged(doubled), "sums": Tensor(m.sums)}},
		},
		Variables: []*Variable{kernel, bias},
	}
	return m
}

func mustTensor(t testing.TB, shape structtensor.Shape, v any) *structtensor.Tensor {
	t.Helper()
	x, err := structtensor.NewTensor(shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// inputs of the test signatures, and what the graph computes from them.
var (
	testX      = []float32{1, 2, 3, -1, 0, 0.5}
	testIDs    = []int64{1, 2, 3, 10}
	testSplits = []int64{0, 2, 2, 4}
)

// sessionOutputs runs the graph in a Go session (variables initialized
// from their Go values): the reference the exported model must match.
func (m *linearModel) sessionOutputs(t *testing.T) (score []float32, doubled, sums []int64) {
	t.Helper()
	sess, err := tfbridge.NewSession(m.model.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var inits []*tfbridge.Operation
	for _, v := range m.model.Variables {
		inits = append(inits, v.Initializer())
	}
	if _, err := sess.Run(nil, nil, inits); err != nil {
		t.Fatal(err)
	}
	feed := func(shape structtensor.Shape, v any) *tfbridge.Tensor {
		x, err := tfbridge.NewTensor(mustTensor(t, shape, v))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	res, err := sess.Run(map[tfbridge.Output]*tfbridge.Tensor{
		m.x: feed(structtensor.Shape{2, 3}, testX), m.ids: feed(structtensor.Shape{4}, testIDs), m.splits: feed(structtensor.Shape{4}, testSplits),
	}, []tfbridge.Output{m.score, m.doubled, m.sums}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]*structtensor.Tensor, len(res))
	for i, r := range res {
		if vals[i], err = r.Value(); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	return vals[0].Float32s(), vals[1].Int64s(), vals[2].Int64s()
}

func exportLinear(t *testing.T) (*linearModel, string) {
	t.Helper()
	m := newLinearModel(t)
	dir := filepath.Join(t.TempDir(), "model")
	if err := Export(dir, m.model); err != nil {
		t.Fatal(err)
	}
	return m, dir
}

// TestExportRoundTrip exports a graph with variables and loads it with
// Load: the variables are restored with their values (the scores depend
// on them) and every signature output equals the Go session's.
func TestExportRoundTrip(t *testing.T) {
	m, dir := exportLinear(t)
	score, doubled, sums := m.sessionOutputs(t)
	if want := []float32{0.5*1 - 2 + 6 + 0.25, -0.5 + 0 + 1 + 0.25}; !reflect.DeepEqual(score, want) {
		t.Fatalf("session score = %v, want %v", score, want)
	}
	lm, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	if got := lm.SignatureKeys(); !reflect.DeepEqual(got, []string{"double", "score"}) {
		t.Errorf("signature keys %q", got)
	}
	in, out, err := lm.Signature("double")
	if err != nil {
		t.Fatal(err)
	}
	if got := in["ids"].String() + " -> " + out["doubled"].String() + ", " + out["sums"].String(); got != "RaggedTensorSpec([None, None], int64, ragged_rank=1) -> RaggedTensorSpec([None, None], int64, ragged_rank=1), TensorSpec([None], int64)" {
		t.Errorf("specs: %s", got)
	}
	ctx := context.Background()
	res, err := lm.Run(ctx, "score", map[string]structtensor.Value{"x": mustTensor(t, structtensor.Shape{2, 3}, testX)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res["score"].(*structtensor.Tensor).Float32s(); !reflect.DeepEqual(got, score) {
		t.Errorf("loaded score = %v, session %v", got, score)
	}
	ids, err := structtensor.NewRaggedFromSplits(mustTensor(t, structtensor.Shape{4}, testIDs), testSplits)
	if err != nil {
		t.Fatal(err)
	}
	res, err = lm.Run(ctx, "double", map[string]structtensor.Value{"ids": ids})
	if err != nil {
		t.Fatal(err)
	}
	r := res["doubled"].(*structtensor.Ragged)
	if got := r.Values().Int64s(); !reflect.DeepEqual(got, doubled) || !reflect.DeepEqual(r.Partitions()[0].RowSplits(), testSplits) {
		t.Errorf("loaded doubled = %v %v, session %v %v", got, r.Partitions()[0].RowSplits(), doubled, testSplits)
	}
	if got := res["sums"].(*structtensor.Tensor).Int64s(); !reflect.DeepEqual(got, sums) {
		t.Errorf("loaded sums = %v, session %v", got, sums)
	}
	if _, err := lm.Run(ctx, "score", map[string]structtensor.Value{"x": mustTensor(t, structtensor.Shape{2}, []float32{1, 2})}); !errors.Is(err, tfbridge.ErrInvalidArgument) {
		t.Errorf("a rank-1 x: %v, want ErrInvalidArgument", err)
	}
}

// TestExportCAPI loads the export with TensorFlow's C API directly (the
// loader TF Serving uses) and runs the "score" signature.
func TestExportCAPI(t *testing.T) {
	m, dir := exportLinear(t)
	score, _, _ := m.sessionOutputs(t)
	sm, err := tfbridge.LoadSavedModel(dir, []string{Tag})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	sig, err := sm.Signature("score")
	if err != nil {
		t.Fatal(err)
	}
	x, err := tfbridge.NewTensor(mustTensor(t, structtensor.Shape{2, 3}, testX))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	res, err := sm.Session.Run(map[tfbridge.Output]*tfbridge.Tensor{sig.Inputs["x"].Output: x}, []tfbridge.Output{sig.Outputs["score"].Output}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := res[0].Value()
	res[0].Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Float32s(); !reflect.DeepEqual(got, score) {
		t.Errorf("C API score = %v, session %v", got, score)
	}
}

// TestExportPython loads the export with Python TensorFlow's
// tf.saved_model.load and compares its signatures' results and restored
// variables with Go's.
func TestExportPython(t *testing.T) {
	m, dir := exportLinear(t)
	score, doubled, sums := m.sessionOutputs(t)
	pyDir := filepath.Join(t.TempDir(), "python")
	out := testenv.RunPython(t, ".venv", `
import json, sys
import tensorflow as tf

# A model Python exports, for Go's Load below.
class Affine(tf.Module):
    def __init__(self):
        self.w = tf.Variable([[2.0], [-1.0]])
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def __call__(self, x):
        return {"y": tf.matmul(x, self.w) + 1.0}
a = Affine()
tf.saved_model.save(a, sys.argv[2], signatures={"serving_default": a.__call__})

# The sums signature runs graphst.ReduceRows' op, StructTensorReduceRows:
# a model using it loads where the op library is (as one using the decode
# op does).
tf.load_op_library(sys.argv[3])
m = tf.saved_model.load(sys.argv[1])
x = tf.constant([[1, 2, 3], [-1, 0, 0.5]], tf.float32)
ids = tf.RaggedTensor.from_row_splits(tf.constant([1, 2, 3, 10], tf.int64), tf.constant([0, 2, 2, 4], tf.int64))
s = m.signatures["score"](x=x)
d = m.signatures["double"](ids=ids)
print(json.dumps({
  "score": s["score"].numpy().reshape(-1).tolist(),
  "doubled": d["doubled"].flat_values.numpy().tolist(), "splits": d["doubled"].row_splits.numpy().tolist(),
  "sums": d["sums"].numpy().tolist(),
  "kernel": m.dense.kernel.numpy().reshape(-1).tolist(), "bias": m.dense.bias.numpy().tolist(),
  "spec": str(m.signatures["double"].structured_outputs["doubled"]),
  "input": str(m.signatures["double"].structured_input_signature[1]["ids"]),
}))
`, dir, pyDir, testenv.OpsLibrary(t))
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	floats := func(v []float32) []any {
		r := make([]any, len(v))
		for i, x := range v {
			r[i] = float64(x)
		}
		return r
	}
	ints := func(v []int64) []any {
		r := make([]any, len(v))
		for i, x := range v {
			r[i] = float64(x)
		}
		return r
	}
	want := map[string]any{
		"score": floats(score), "doubled": ints(doubled), "splits": ints(testSplits), "sums": ints(sums),
		"kernel": []any{0.5, -1.0, 2.0}, "bias": []any{0.25},
		"spec":  "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)",
		"input": "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Python returns\n%v\nGo\n%v", got, want)
	}

	// Load passes a model Python exported (its saver runs in functions).
	lm, err := Load(pyDir)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	res, err := lm.Run(context.Background(), "serving_default", map[string]structtensor.Value{"x": mustTensor(t, structtensor.Shape{2, 2}, []float32{1, 1, 3, 0})})
	if err != nil {
		t.Fatal(err)
	}
	if got := res["y"].(*structtensor.Tensor).Float32s(); !reflect.DeepEqual(got, []float32{2, 7}) {
		t.Errorf("Python's model in Go: y = %v, want [2 7]", got)
	}
}

func TestExportErrors(t *testing.T) {
	for name, edit := range map[string]func(m *linearModel){
		"undeclared placeholder": func(m *linearModel) {
			m.model.Signatures["score"].Inputs = map[string]Value{}
		},
		"undeclared variable": func(m *linearModel) { m.model.Variables = m.model.Variables[:1] },
		"input not a placeholder": func(m *linearModel) {
			m.model.Signatures["score"].Inputs["x"] = Tensor(m.score)
		},
		"bad signature key": func(m *linearModel) { m.model.Signatures["a b"] = m.model.Signatures["score"] },
		"no outputs":        func(m *linearModel) { m.model.Signatures["score"].Outputs = nil },
		"ragged of a scalar": func(m *linearModel) {
			// NewRagged refuses it and returns the zero Ragged.
			sc := op.NewScopeWithGraph(m.model.Graph)
			m.model.Signatures["double"].Outputs["x"] = Ragged(graphst.NewRagged(sc, op.Constant(sc, int64(1)), m.splits))
			if !errors.Is(sc.Err(), graphst.ErrRank) {
				t.Errorf("NewRagged of a scalar: %v", sc.Err())
			}
		},
		"shared placeholder": func(m *linearModel) { m.model.Signatures["score"].Inputs["y"] = Tensor(m.x) },
		"zero output":        func(m *linearModel) { m.model.Signatures["score"].Outputs["z"] = Tensor(tfbridge.Output{}) },
	} {
		m := newLinearModel(t)
		edit(m)
		err := Export(filepath.Join(t.TempDir(), "m"), m.model)
		if !errors.Is(err, ErrExport) {
			t.Errorf("%s: %v, want ErrExport", name, err)
		}
	}
	s := op.NewScope()
	NewVariable(s, "bad name", mustTensor(t, structtensor.Shape{}, []float32{1}))
	if err := s.Err(); !errors.Is(err, ErrExport) {
		t.Errorf("bad variable name: %v", err)
	}
}

// TestLoadRefuses checks what Load refuses before anything of a
// SavedModel runs.
func TestLoadRefuses(t *testing.T) {
	_, good := exportLinear(t)
	digest, err := Digest(good)
	if err != nil {
		t.Fatal(err)
	}
	copyModel := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "m")
		files, _, err := readDir(good, modelLayout, loadOptions{maxBytes: DefaultMaxFileBytes})
		if err != nil {
			t.Fatal(err)
		}
		if err := objectgraph.WriteFiles(dir, files); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	editGraph := func(t *testing.T, dir string, edit func(*metapb.SavedModel)) {
		p := filepath.Join(dir, objectgraph.SavedModelFile)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var sm metapb.SavedModel
		if err := proto.Unmarshal(b, &sm); err != nil {
			t.Fatal(err)
		}
		edit(&sm)
		if b, err = proto.Marshal(&sm); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A model whose signature reads a file the caller names.
	s := op.NewScope()
	name := op.Placeholder(s.SubScope("name"), tfbridge.String, op.PlaceholderShape(op.ShapeOf()))
	g, err := s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	readFile := op.ReadFile(op.NewScopeWithGraph(g), name)
	reader := filepath.Join(t.TempDir(), "reader")
	if err := Export(reader, &Model{Graph: g, Signatures: map[string]*Signature{
		"read": {Inputs: map[string]Value{"name": Tensor(name)}, Outputs: map[string]Value{"content": Tensor(readFile)}},
	}}); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		dir  func(t *testing.T) string
		opts []LoadOptions
		want error
	}{
		{"a symbolic link", func(t *testing.T) string {
			dir := copyModel(t)
			p := filepath.Join(dir, objectgraph.SavedModelFile)
			if err := os.Rename(p, p+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(p+".real", p); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, ErrModel},
		{"an unexpected file", func(t *testing.T) string {
			dir := copyModel(t)
			if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, ErrModel},
		{"a FIFO", func(t *testing.T) string {
			dir := copyModel(t)
			if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "assets", "vocab"), 0o644); err != nil {
				t.Skip(err)
			}
			return dir
		}, nil, ErrModel},
		{"a file over the size limit", func(t *testing.T) string { return good }, []LoadOptions{{MaxFileBytes: 64}}, ErrModel},
		{"no saved_model.pb", func(t *testing.T) string {
			dir := copyModel(t)
			os.Remove(filepath.Join(dir, objectgraph.SavedModelFile))
			return dir
		}, nil, ErrModel},
		{"saved_model.pb that does not parse", func(t *testing.T) string {
			dir := copyModel(t)
			os.WriteFile(filepath.Join(dir, objectgraph.SavedModelFile), []byte("\xff\xff\xff"), 0o644)
			return dir
		}, nil, ErrModel},
		{"another digest", func(t *testing.T) string { return good }, []LoadOptions{{Digest: "sha256:00"}}, ErrFingerprint},
		{"an edited file under a pinned digest", func(t *testing.T) string {
			dir := copyModel(t)
			editGraph(t, dir, func(sm *metapb.SavedModel) { sm.MetaGraphs[0].MetaInfoDef.TensorflowVersion = "x" })
			return dir
		}, []LoadOptions{{Digest: digest}}, ErrFingerprint},
		{"no serve tag", func(t *testing.T) string {
			dir := copyModel(t)
			editGraph(t, dir, func(sm *metapb.SavedModel) { sm.MetaGraphs[0].MetaInfoDef.Tags = []string{"train"} })
			return dir
		}, nil, ErrModel},
		{"an asset outside assets/", func(t *testing.T) string {
			dir := copyModel(t)
			editGraph(t, dir, func(sm *metapb.SavedModel) {
				sm.MetaGraphs[0].AssetFileDef = append(sm.MetaGraphs[0].AssetFileDef, &metapb.AssetFileDef{Filename: "../../etc/passwd"})
			})
			return dir
		}, nil, ErrModel},
		{"a ReadFile op", func(t *testing.T) string { return reader }, nil, ErrModel},
		{"a RestoreV2 outside the saver", func(t *testing.T) string {
			dir := copyModel(t)
			editGraph(t, dir, func(sm *metapb.SavedModel) {
				for _, n := range sm.MetaGraphs[0].GraphDef.Node {
					if n.Op == "RestoreV2" {
						n.Name = "elsewhere"
					}
				}
			})
			return dir
		}, nil, ErrModel},
	} {
		t.Run(c.name, func(t *testing.T) {
			lm, err := Load(c.dir(t), c.opts...)
			if err == nil {
				lm.Close()
			}
			if !errors.Is(err, c.want) {
				t.Errorf("Load: %v, want %v", err, c.want)
			}
			t.Log(err)
		})
	}
	lm, err := Load(good, LoadOptions{Digest: digest})
	if err != nil {
		t.Fatalf("the pinned model: %v", err)
	}
	lm.Close()
}

// FuzzCheckModel parses arbitrary bytes as saved_model.pb, as Load does
// before TensorFlow sees them: an error or nil, never a panic.
func FuzzCheckModel(f *testing.F) {
	m := newLinearModel(f)
	files, err := exportModelFiles(m.model)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(files[objectgraph.SavedModelFile])
	f.Add([]byte{})
	f.Add([]byte("\x12\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files := map[string][]byte{objectgraph.SavedModelFile: b, "assets/vocab": nil}
		_ = checkModel(files)
	})
}
