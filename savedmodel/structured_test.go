package savedmodel

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// recordsSpec is a batch of records {a: [int32], b: float32, c: [{d:
// int32}]}, fields in name order (as Python's StructuredTensor orders
// them).
var recordsSpec = &structtensor.StructSpec{Shape: structtensor.Shape{-1}, Fields: []structtensor.FieldSpec{
	{Name: "a", Spec: &structtensor.RaggedSpec{DType: structtensor.Int32, Shape: structtensor.Shape{-1, -1}, RaggedRank: 1}},
	{Name: "b", Spec: &structtensor.TensorSpec{DType: structtensor.Float32, Shape: structtensor.Shape{-1}}},
	{Name: "c", Spec: &structtensor.StructSpec{Shape: structtensor.Shape{-1, -1}, Fields: []structtensor.FieldSpec{
		{Name: "d", Spec: &structtensor.RaggedSpec{DType: structtensor.Int32, Shape: structtensor.Shape{-1, -1}, RaggedRank: 1}},
	}}},
}}

const recordsJSON = `[{"a": [1, 2], "b": 3.5, "c": [{"d": 1}, {"d": 2}]}, {"a": [], "b": -1, "c": [{"d": 5}]}, {"a": [7], "b": 0, "c": []}]`

// structModel has one signature taking a StructTensor "rec" and
// returning it with its rows reversed ("reversed", a StructTensor) and
// the sum of b ("b_sum").
func structModel(t *testing.T) (*Model, *graphst.Struct, *graphst.Struct, tfbridge.Output) {
	t.Helper()
	s := op.NewScope()
	rec, err := graphst.Placeholders(s.Graph(), recordsSpec, "rec")
	if err != nil {
		t.Fatal(err)
	}
	b, err := rec.Field("b")
	if err != nil {
		t.Fatal(err)
	}
	bv := b.(graphst.Ragged).Values()
	n := op.Size(s, bv, op.SizeOutType(tfbridge.Int64))
	idx := op.Range(s, op.Sub(s, n, op.Constant(s, int64(1))), op.Constant(s, int64(-1)), op.Constant(s, int64(-1)))
	reversed := graphst.Gather(s, rec, idx)
	sum := op.Sum(s, bv, op.Constant(s, int32(0)))
	g, err := s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return &Model{Graph: g, Signatures: map[string]*Signature{"reverse": {
		Inputs:  map[string]Value{"rec": Struct(rec)},
		Outputs: map[string]Value{"reversed": Struct(reversed), "b_sum": Tensor(sum)},
	}}}, rec, reversed, sum
}

func recordsValue(t *testing.T) *structtensor.StructTensor {
	t.Helper()
	v, err := structtensor.FromJSON([]byte(recordsJSON), recordsSpec)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*structtensor.StructTensor)
}

func jsonValue(t *testing.T, v structtensor.Value) any {
	t.Helper()
	b, err := structtensor.ToJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestExportStruct exports a signature over StructTensors and checks
// that Load, and Python's tf.saved_model.load with StructuredTensors,
// give what the Go session gives.
func TestExportStruct(t *testing.T) {
	m, rec, reversed, sum := structModel(t)
	in := recordsValue(t)
	// The Go session's result.
	sess, err := tfbridge.NewSession(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	feeds, err := graphst.Feed(rec, in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := graphst.Run(t.Context(), sess, feeds, reversed)
	if err != nil {
		t.Fatal(err)
	}
	sumOut, err := sess.Run(feeds, []tfbridge.Output{sum}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sumVal, err := sumOut[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := jsonValue(t, want)
	if got := wantJSON; !reflect.DeepEqual(got, jsonValue(t, mustReverse(t))) {
		t.Fatalf("session: reversed = %v", got)
	}

	dir := filepath.Join(t.TempDir(), "model")
	if err := Export(dir, m); err != nil {
		t.Fatal(err)
	}
	lm, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	res, err := lm.Run(context.Background(), "reverse", map[string]structtensor.Value{"rec": in})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonValue(t, res["reversed"]); !reflect.DeepEqual(got, wantJSON) {
		t.Errorf("Load: reversed = %v, want %v", got, wantJSON)
	}
	if got := res["b_sum"].(*structtensor.Tensor).Float32s(); !reflect.DeepEqual(got, sumVal.Float32s()) {
		t.Errorf("Load: b_sum = %v, want %v", got, sumVal.Float32s())
	}

	out := testenv.RunPython(t, ".venv", `
import json, sys
import tensorflow as tf
m = tf.saved_model.load(sys.argv[1])
rec = tf.experimental.StructuredTensor.from_pyval(json.loads(sys.argv[2]))
r = m.signatures["reverse"](rec=rec)
def plain(v):
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list): return [plain(x) for x in v]
    return v
print(json.dumps({"reversed": plain(r["reversed"].to_pyval()), "b_sum": float(r["b_sum"].numpy()),
  "spec": str(m.signatures["reverse"].structured_outputs["reversed"]),
  "in_spec": str(m.signatures["reverse"].structured_input_signature[1]["rec"])}))
`, dir, recordsJSON)
	var py map[string]any
	if err := json.Unmarshal(out, &py); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !reflect.DeepEqual(py["reversed"], wantJSON) {
		t.Errorf("Python: reversed = %v, want %v", py["reversed"], wantJSON)
	}
	if py["b_sum"] != float64(sumVal.Float32s()[0]) {
		t.Errorf("Python: b_sum = %v, want %v", py["b_sum"], sumVal.Float32s()[0])
	}
	t.Logf("Python sees %s", py["spec"])
}

func mustReverse(t *testing.T) structtensor.Value {
	var rows []any
	if err := json.Unmarshal([]byte(recordsJSON), &rows); err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	v, err := structtensor.FromJSON(b, recordsSpec)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
