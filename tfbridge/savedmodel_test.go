package tfbridge

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	tsppb "github.com/wamuir/graft/tensorflow/core/framework/tensor_shape_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// venvPython is the interpreter `make setup` installs TensorFlow into.
func venvPython(t *testing.T) string {
	t.Helper()
	return testenv.Python(t, ".venv")
}

// TestLoadPythonSavedModel loads a SavedModel written by Python TensorFlow
// (with a variable to restore) and runs both of its signatures.
func TestLoadPythonSavedModel(t *testing.T) {
	py := venvPython(t)
	dir := filepath.Join(t.TempDir(), "model")
	cmd := exec.Command(py, "testdata/make_savedmodel.py", dir)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make_savedmodel.py: %v\n%s", err, out)
	}
	m, err := LoadSavedModel(dir, []string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// TF 2 also records its init op as a signature.
	if keys := m.SignatureKeys(); len(keys) != 3 || keys[0] != "__saved_model_init_op" || keys[1] != "double" || keys[2] != "serving_default" {
		t.Errorf("SignatureKeys = %q", keys)
	}
	if _, err := m.Signature("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Signature(nope): %v", err)
	}
	for _, key := range []string{"serving_default", "double"} {
		sig, err := m.Signature(key)
		if err != nil {
			t.Fatal(err)
		}
		x, s := sig.Inputs["x"], sig.Inputs["s"]
		if x.DType != Int64 || s.DType != String || !x.Shape.Equal(structtensor.Shape{structtensor.Unknown}) {
			t.Errorf("%s inputs: %+v %+v", key, x, s)
		}
		xv, _ := NewTensor(mustTensor(t, nil, []int64{1, -2, 30}))
		sv, _ := NewTensor(mustTensor(t, nil, []string{"a", "", "b\x00"}))
		out, err := m.Session.Run(map[Output]*Tensor{x.Output: xv, s.Output: sv},
			[]Output{sig.Outputs["doubled"].Output, sig.Outputs["joined"].Output}, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := out[0].Value()
		j, _ := out[1].Value()
		if !structtensor.Equal(d, mustTensor(t, nil, []int64{2, -4, 60})) ||
			!structtensor.Equal(j, mustTensor(t, nil, []string{"a-a", "-", "b\x00-b\x00"})) {
			t.Errorf("%s: doubled %v joined %v", key, d, j)
		}
	}
}

// TestLoadGoSavedModel writes a SavedModel from a Go-built graph (no
// variables) and loads it: the path a DataView export takes.
func TestLoadGoSavedModel(t *testing.T) {
	g := NewGraph()
	x := mustOp(t, g, OpSpec{Type: "Placeholder", Name: "records", Attrs: map[string]any{"dtype": String, "shape": structtensor.Shape{structtensor.Unknown}}}).Output(0)
	mustOp(t, g, OpSpec{Type: "StringLength", Name: "lengths", Input: []Input{x}})
	def, err := g.ToGraphDef()
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	var gd graphpb.GraphDef
	if err := proto.Unmarshal(def, &gd); err != nil {
		t.Fatal(err)
	}
	vec := &tsppb.TensorShapeProto{Dim: []*tsppb.TensorShapeProto_Dim{{Size: -1}}}
	sm := &metapb.SavedModel{SavedModelSchemaVersion: 1, MetaGraphs: []*metapb.MetaGraphDef{{
		MetaInfoDef: &metapb.MetaGraphDef_MetaInfoDef{Tags: []string{"serve"}},
		GraphDef:    &gd,
		SignatureDef: map[string]*metapb.SignatureDef{"lengths": {
			MethodName: "tensorflow/serving/predict",
			Inputs:     map[string]*metapb.TensorInfo{"records": {Encoding: &metapb.TensorInfo_Name{Name: "records:0"}, Dtype: typespb.DataType_DT_STRING, TensorShape: vec}},
			Outputs:    map[string]*metapb.TensorInfo{"lengths": {Encoding: &metapb.TensorInfo_Name{Name: "lengths:0"}, Dtype: typespb.DataType_DT_INT32, TensorShape: vec}},
		}},
	}}}
	raw, err := proto.Marshal(sm)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "saved_model.pb"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSavedModel(dir, []string{"train"}); err == nil {
		t.Error("loading a tag the model lacks succeeded")
	}
	m, err := LoadSavedModel(dir, []string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sig, err := m.Signature("lengths")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := NewTensor(mustTensor(t, nil, []string{"", "abc", "\x00\x00"}))
	got := runOne(t, m.Session, map[Output]*Tensor{sig.Inputs["records"].Output: in}, sig.Outputs["lengths"].Output)
	if !structtensor.Equal(got, mustTensor(t, nil, []int32{0, 3, 2})) {
		t.Errorf("lengths %v", got)
	}
	var back metapb.MetaGraphDef
	if err := proto.Unmarshal(m.MetaGraphDef, &back); err != nil || back.GetMetaInfoDef().GetTags()[0] != "serve" {
		t.Errorf("MetaGraphDef bytes: %v", err)
	}
}

func TestLoadSavedModelErrors(t *testing.T) {
	_, err := LoadSavedModel(filepath.Join(t.TempDir(), "absent"), []string{"serve"})
	if err == nil || CodeOf(err) == CodeOK {
		t.Fatalf("missing dir: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "saved_model.pb"), []byte("garbage"), 0o644)
	if _, err := LoadSavedModel(dir, []string{"serve"}); err == nil {
		t.Fatal("garbage saved_model.pb loaded")
	}
}
