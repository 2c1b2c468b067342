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

// flowModel has two signatures built with graphst's control flow (graph
// functions in the graph's library, which the export must carry):
// "loop" takes records (recordsSpec) and n, reverses the records when
// the sum of b is positive (Cond), then adds i to every a for i in
// [0, n) (While); "count" takes n and returns 0+1+...+(n-1) (While over
// plain tensors, for TensorFlow's C API loader).
func flowModel(t *testing.T) *Model {
	t.Helper()
	s := op.NewScope()
	rec, err := graphst.Placeholders(s.Graph(), recordsSpec, "rec")
	if err != nil {
		t.Fatal(err)
	}
	n := op.Placeholder(s.SubScope("n"), tfbridge.Int64, op.PlaceholderShape(op.ShapeOf()))
	bOf := func(s *op.Scope, x *graphst.Struct) tfbridge.Output {
		b, err := x.Field("b")
		if err != nil {
			s.UpdateErr("b", err)
			return tfbridge.Output{}
		}
		return b.(graphst.Ragged).Values()
	}
	pred := op.Greater(s, op.Sum(s, bOf(s, rec), op.Constant(s, int32(0))), op.Constant(s, float32(0)))
	y := graphst.Cond(s, pred, []graphst.Value{rec},
		func(s *op.Scope, in []graphst.Value) []graphst.Value {
			x := in[0].(*graphst.Struct)
			rows := op.Size(s, bOf(s, x), op.SizeOutType(tfbridge.Int64))
			rev := op.Range(s, op.Sub(s, rows, op.Constant(s, int64(1))), op.Constant(s, int64(-1)), op.Constant(s, int64(-1)))
			return []graphst.Value{graphst.Gather(s, x, rev)}
		},
		func(s *op.Scope, in []graphst.Value) []graphst.Value { return in })
	zero := graphst.NewRagged(s, op.Constant(s, int64(0)))
	counter := graphst.NewRagged(s, n)
	var loop []graphst.Value
	if y != nil {
		loop = graphst.While(s, []graphst.Value{zero, y[0], counter},
			func(s *op.Scope, v []graphst.Value) tfbridge.Output {
				return op.Less(s, v[0].(graphst.Ragged).Values(), v[2].(graphst.Ragged).Values())
			},
			func(s *op.Scope, v []graphst.Value) []graphst.Value {
				i := v[0].(graphst.Ragged).Values()
				x := v[1].(*graphst.Struct)
				comps := x.Components()
				for k, c := range x.ComponentSpecs() {
					if c.Path == "a" && c.Kind == graphst.ValuesComponent {
						comps[k] = op.AddV2(s, comps[k], op.Cast(s, i, tfbridge.Int32))
					}
				}
				nx, err := graphst.NewStruct(recordsSpec, comps)
				if err != nil {
					s.UpdateErr("struct", err)
					return nil
				}
				return []graphst.Value{graphst.NewRagged(s, op.AddV2(s, i, op.Constant(s, int64(1)))), nx, v[2]}
			})
	}
	total := graphst.While(s, []graphst.Value{zero, zero, counter},
		func(s *op.Scope, v []graphst.Value) tfbridge.Output {
			return op.Less(s, v[0].(graphst.Ragged).Values(), v[2].(graphst.Ragged).Values())
		},
		func(s *op.Scope, v []graphst.Value) []graphst.Value {
			i, acc := v[0].(graphst.Ragged).Values(), v[1].(graphst.Ragged).Values()
			return []graphst.Value{graphst.NewRagged(s, op.AddV2(s, i, op.Constant(s, int64(1)))), graphst.NewRagged(s, op.AddV2(s, acc, i)), v[2]}
		})
	g, err := s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return &Model{Graph: g, Signatures: map[string]*Signature{
		"loop": {
			Inputs:  map[string]Value{"rec": Struct(rec), "n": Tensor(n)},
			Outputs: map[string]Value{"out": Struct(loop[1].(*graphst.Struct))},
		},
		"count": {
			Inputs:  map[string]Value{"n": Tensor(n)},
			Outputs: map[string]Value{"total": Tensor(total[1].(graphst.Ragged).Values())},
		},
	}}
}

// flowWant is what "loop" returns for recordsJSON and n = 3, worked out
// by hand: the sum of b is 2.5, so the rows are reversed; every a gains
// 0+1+2.
const flowWant = `[{"a": [10], "b": 0, "c": []}, {"a": [], "b": -1, "c": [{"d": 5}]}, {"a": [4, 5], "b": 3.5, "c": [{"d": 1}, {"d": 2}]}]`

// TestExportControlFlow exports a model whose signatures hold Cond and
// While (StatelessIf and StatelessWhile over functions of the graph's
// library) and loads it with Load, TensorFlow's C API loader and
// Python's tf.saved_model.load.
func TestExportControlFlow(t *testing.T) {
	m := flowModel(t)
	dir := filepath.Join(t.TempDir(), "model")
	if err := Export(dir, m); err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal([]byte(flowWant), &want); err != nil {
		t.Fatal(err)
	}
	n3 := mustTensor(t, structtensor.Shape{}, []int64{3})

	lm, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	res, err := lm.Run(context.Background(), "loop", map[string]structtensor.Value{"rec": recordsValue(t), "n": n3})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonValue(t, res["out"]); !reflect.DeepEqual(got, want) {
		t.Errorf("Load: loop = %v, want %v", got, want)
	}

	sm, err := tfbridge.LoadSavedModel(dir, []string{Tag})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	sig, err := sm.Signature("count")
	if err != nil {
		t.Fatal(err)
	}
	n5, err := tfbridge.NewTensor(mustTensor(t, structtensor.Shape{}, []int64{5}))
	if err != nil {
		t.Fatal(err)
	}
	defer n5.Close()
	out, err := sm.Session.Run(map[tfbridge.Output]*tfbridge.Tensor{sig.Inputs["n"].Output: n5}, []tfbridge.Output{sig.Outputs["total"].Output}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := out[0].Value()
	out[0].Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Int64s(); !reflect.DeepEqual(got, []int64{10}) {
		t.Errorf("C API: count(5) = %v, want [10]", got)
	}

	py := testenv.RunPython(t, ".venv", `
import json, sys
import tensorflow as tf
m = tf.saved_model.load(sys.argv[1])
rec = tf.experimental.StructuredTensor.from_pyval(json.loads(sys.argv[2]))
r = m.signatures["loop"](rec=rec, n=tf.constant(3, tf.int64))
c = m.signatures["count"](n=tf.constant(5, tf.int64))
print(json.dumps({"out": r["out"].to_pyval(), "total": int(c["total"].numpy())}))
`, dir, recordsJSON)
	var got map[string]any
	if err := json.Unmarshal(py, &got); err != nil {
		t.Fatalf("%v: %s", err, py)
	}
	if !reflect.DeepEqual(got["out"], want) || got["total"] != float64(10) {
		t.Errorf("Python: %v, want out %v and total 10", got, want)
	}
}
