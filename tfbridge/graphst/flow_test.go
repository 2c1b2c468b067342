package graphst_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	"pgregory.net/rapid"
)

// Control flow: each test runs Cond or While in a session on random
// values and compares with the same computation done in Go on values.

// idOf returns the values of x's int64 field "id".
func idOf(s *op.Scope, x *graphst.Struct) tfbridge.Output {
	f, err := x.Field("id")
	if err != nil {
		s.UpdateErr("idOf", err)
		return tfbridge.Output{}
	}
	return f.(graphst.Ragged).Values()
}

// condGraph is the graph of TestCondMatchesOps for one schema: a Cond on
// a data-dependent predicate (the sum of the ids above a threshold) whose
// branches are outer-dimension ops: reverse the rows, or keep those of
// positive id.
type condGraph struct {
	sess *tfbridge.Session
	ph   *graphst.Struct
	thr  tfbridge.Output
	out  *graphst.Struct
}

func newCondGraph(t *rapid.T, spec *st.StructSpec) *condGraph {
	s := op.NewScope()
	ph := must(graphst.Placeholders(s.Graph(), spec, "x"))
	thr := op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf()))
	pred := op.Greater(s, op.Sum(s, idOf(s, ph), op.Constant(s, int32(0))), thr)
	out := graphst.Cond(s, pred, []graphst.Value{ph},
		func(s *op.Scope, in []graphst.Value) []graphst.Value {
			x := in[0].(*graphst.Struct)
			n := op.Size(s, idOf(s, x), op.SizeOutType(tfbridge.Int64))
			rev := op.Range(s, op.Sub(s, n, op.Constant(s, int64(1))), op.Constant(s, int64(-1)), op.Constant(s, int64(-1)))
			return []graphst.Value{graphst.Gather(s, x, rev)}
		},
		func(s *op.Scope, in []graphst.Value) []graphst.Value {
			x := in[0].(*graphst.Struct)
			return []graphst.Value{graphst.BooleanMask(s, x, op.Greater(s, idOf(s, x), op.Constant(s, int64(0))))}
		})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return &condGraph{sess: must(tfbridge.NewSession(s.Graph())), ph: ph, thr: thr, out: out[0].(*graphst.Struct)}
}

// TestCondMatchesOps runs a Cond (condGraph) on random structs and
// thresholds, and compares with package ops on the same values. One
// graph per schema serves every draw of it.
func TestCondMatchesOps(t *testing.T) {
	graphs := map[string]*condGraph{}
	defer func() {
		for _, g := range graphs {
			g.sess.Close()
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		x := drawStruct(t, drawSchema(t), "x")
		thr := rapid.Int64Range(-60, 60).Draw(t, "threshold")
		spec := unknownOuter(x)
		g := graphs[spec.String()]
		if g == nil {
			g = newCondGraph(t, spec)
			graphs[spec.String()] = g
		}
		feeds := must(graphst.Feed(g.ph, x))
		feeds[g.thr] = must(tfbridge.NewTensor(must(st.NewScalar(thr))))
		got := must(graphst.Run(context.Background(), g.sess, feeds, g.out)).(*st.StructTensor)

		ids := must(x.FieldValue("id")).(*st.Tensor).Int64s()
		var sum int64
		for _, v := range ids {
			sum += v
		}
		var want st.Value
		if sum > thr {
			rev := make([]int64, len(ids))
			for i := range rev {
				rev[i] = int64(len(ids) - 1 - i)
			}
			want = must(ops.Gather(x, must(st.NewTensor(st.Shape{len(rev)}, rev)), 0, 0))
		} else {
			mask := make([]bool, len(ids))
			for i, v := range ids {
				mask[i] = v > 0
			}
			want = must(ops.BooleanMask(x, must(st.NewTensor(st.Shape{len(mask)}, mask)), 0))
		}
		checkSame(t, got, want)
	})
}

// counterSpec is the struct of the While tests: an int64 id per row and
// a ragged int64 field that the loop grows.
var counterSpec = &st.StructSpec{Shape: st.Shape{st.Unknown}, Fields: []st.FieldSpec{
	{Name: "id", Spec: &st.TensorSpec{DType: st.Int64, Shape: st.Shape{st.Unknown}}},
	{Name: "seen", Spec: &st.RaggedSpec{DType: st.Int64, Shape: st.Shape{st.Unknown, st.Unknown}, RaggedRank: 1}},
}}

// appendToRows returns the ragged value r with v appended to every row:
// each old value moves right by its row index, the new values land at
// the new rows' ends (DynamicStitch of both).
func appendToRows(s *op.Scope, r graphst.Ragged, v tfbridge.Output) graphst.Ragged {
	splits := r.RowSplits()[0]
	nSplits := op.Size(s, splits, op.SizeOutType(tfbridge.Int64))
	newSplits := op.AddV2(s, splits, op.Range(s, op.Constant(s, int64(0)), nSplits, op.Constant(s, int64(1))))
	nVals := op.Size(s, r.Values(), op.SizeOutType(tfbridge.Int64))
	oldPos := op.AddV2(s, op.Range(s, op.Constant(s, int64(0)), nVals, op.Constant(s, int64(1))), graphst.RowIDs(s, r))
	newPos := op.Sub(s, op.Slice(s, newSplits, op.Constant(s, []int64{1}), op.Constant(s, []int64{-1})), op.Constant(s, int64(1)))
	fill := op.Fill(s, op.Reshape(s, op.Sub(s, nSplits, op.Constant(s, int64(1))), op.Constant(s, []int64{1})), v)
	vals := op.DynamicStitch(s,
		[]tfbridge.Output{op.Cast(s, oldPos, tfbridge.Int32), op.Cast(s, newPos, tfbridge.Int32)},
		[]tfbridge.Output{r.Values(), fill})
	return graphst.NewRagged(s, vals, newSplits)
}

// growLoop is the loop of the While tests: for i in [0, n), append to
// every row of x.seen the value i when even, -i when odd (a nested Cond).
func growLoop(s *op.Scope, x *graphst.Struct, n tfbridge.Output) *graphst.Struct {
	i0 := graphst.NewRagged(s, op.Constant(s, int64(0)))
	out := graphst.While(s, []graphst.Value{i0, x, graphst.NewRagged(s, n)},
		func(s *op.Scope, v []graphst.Value) tfbridge.Output {
			return op.Less(s, v[0].(graphst.Ragged).Values(), v[2].(graphst.Ragged).Values())
		},
		func(s *op.Scope, v []graphst.Value) []graphst.Value {
			i := v[0].(graphst.Ragged).Values()
			x := v[1].(*graphst.Struct)
			even := op.Equal(s, op.FloorMod(s, i, op.Constant(s, int64(2))), op.Constant(s, int64(0)))
			signed := graphst.Cond(s, even, []graphst.Value{graphst.NewRagged(s, i)},
				func(s *op.Scope, in []graphst.Value) []graphst.Value { return in },
				func(s *op.Scope, in []graphst.Value) []graphst.Value {
					return []graphst.Value{graphst.NewRagged(s, op.Neg(s, in[0].(graphst.Ragged).Values()))}
				})
			if s.Err() != nil {
				return nil
			}
			seen, err := x.Field("seen")
			if err != nil {
				s.UpdateErr("seen", err)
				return nil
			}
			grown := appendToRows(s, seen.(graphst.Ragged), signed[0].(graphst.Ragged).Values())
			comps := []tfbridge.Output{op.Identity(s, idOf(s, x)), grown.RowSplits()[0], grown.Values()}
			nx, err := graphst.NewStruct(counterSpec, comps)
			if err != nil {
				s.UpdateErr("struct", err)
				return nil
			}
			return []graphst.Value{graphst.NewRagged(s, op.AddV2(s, i, op.Constant(s, int64(1)))), nx, v[2]}
		})
	if out == nil {
		return nil
	}
	return out[1].(*graphst.Struct)
}

// growInGo is growLoop on values.
func growInGo(ids []int64, seen [][]int64, n int64) []any {
	rows := make([]any, len(ids))
	for r := range ids {
		l := append([]int64(nil), seen[r]...)
		for i := int64(0); i < n; i++ {
			v := i
			if i%2 == 1 {
				v = -i
			}
			l = append(l, v)
		}
		items := make([]any, len(l))
		for k, v := range l {
			items[k] = v
		}
		rows[r] = map[string]any{"id": ids[r], "seen": items}
	}
	return rows
}

func drawCounterStruct(t *rapid.T) ([]int64, [][]int64, *st.StructTensor) {
	n := rapid.IntRange(0, 5).Draw(t, "rows")
	ids := rapid.SliceOfN(rapid.Int64Range(-9, 9), n, n).Draw(t, "ids")
	seen := make([][]int64, n)
	for r := range seen {
		seen[r] = rapid.SliceOfN(rapid.Int64Range(-9, 9), 0, 3).Draw(t, "seen")
	}
	return ids, seen, counterStruct(ids, seen)
}

// counterStruct is the StructTensor of counterSpec with ids and the rows
// of seen.
func counterStruct(ids []int64, seen [][]int64) *st.StructTensor {
	flat := []int64{}
	splits := []int64{0}
	for _, row := range seen {
		flat = append(flat, row...)
		splits = append(splits, int64(len(flat)))
	}
	return must(st.NewStruct(len(ids),
		st.Field{Name: "id", Value: must(st.NewTensor(st.Shape{len(ids)}, ids))},
		st.Field{Name: "seen", Value: must(st.NewRaggedFromSplits(must(st.NewTensor(st.Shape{len(flat)}, flat)), splits))}))
}

// TestWhileGrowsRaggedField runs a While whose loop variables are a
// counter, a StructTensor whose ragged field gains one value per row per
// iteration, and the bound; its body holds a nested Cond. One graph
// serves every draw.
func TestWhileGrowsRaggedField(t *testing.T) {
	s := op.NewScope()
	ph := must(graphst.Placeholders(s.Graph(), counterSpec, "x"))
	bound := op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf()))
	out := growLoop(s, ph, bound)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	rapid.Check(t, func(t *rapid.T) {
		ids, seen, x := drawCounterStruct(t)
		n := rapid.Int64Range(0, 4).Draw(t, "iterations")
		feeds := must(graphst.Feed(ph, x))
		feeds[bound] = must(tfbridge.NewTensor(must(st.NewScalar(n))))
		got := must(graphst.Run(context.Background(), sess, feeds, out)).(*st.StructTensor)
		if want := growInGo(ids, seen, n); !reflect.DeepEqual(st.ToValue(got), want) {
			t.Fatalf("graph %v\nGo    %v", st.ToValue(got), want)
		}
	})
}

// TestControlFlowOps checks the operations Cond and While add: the
// stateless ones when the functions are, If and While when a function
// holds a stateful operation; the same function traced twice is added
// to the library once.
func TestControlFlowOps(t *testing.T) {
	s := op.NewScope()
	x := graphst.NewRagged(s, op.Placeholder(s, tfbridge.Float, op.PlaceholderShape(op.ShapeOf(3))))
	double := func(s *op.Scope, in []graphst.Value) []graphst.Value {
		return []graphst.Value{graphst.NewRagged(s, op.Mul(s, in[0].(graphst.Ragged).Values(), op.Constant(s, float32(2))))}
	}
	noise := func(s *op.Scope, in []graphst.Value) []graphst.Value {
		u := op.RandomUniform(s, op.Constant(s, []int32{3}), tfbridge.Float)
		return []graphst.Value{graphst.NewRagged(s, op.AddV2(s, in[0].(graphst.Ragged).Values(), u))}
	}
	pred := op.Constant(s, true)
	a := graphst.Cond(s, pred, []graphst.Value{x}, double, double)
	b := graphst.Cond(s, pred, []graphst.Value{x}, double, noise)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := a[0].(graphst.Ragged).Values().Op.Type(); got != "StatelessIf" {
		t.Errorf("pure branches: %s, want StatelessIf", got)
	}
	if got := b[0].(graphst.Ragged).Values().Op.Type(); got != "If" {
		t.Errorf("a RandomUniform branch: %s, want If", got)
	}
	if sh, _, _ := a[0].(graphst.Ragged).Values().Shape(); !reflect.DeepEqual(sh, st.Shape{3}) {
		t.Errorf("result shape %v, want [3]", sh)
	}
	defs := must(s.Graph().FunctionDefs())
	if len(defs) != 2 {
		names := []string{}
		for n := range defs {
			names = append(names, n)
		}
		t.Errorf("library %q: want the doubling function once and the noisy one", names)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	in := must(tfbridge.NewTensor(must(st.NewTensor(st.Shape{3}, []float32{1, 2, 3}))))
	out := must(sess.Run(map[tfbridge.Output]*tfbridge.Tensor{x.Values(): in}, []tfbridge.Output{a[0].(graphst.Ragged).Values()}, nil))
	if got := must(out[0].Value()).Float32s(); !reflect.DeepEqual(got, []float32{2, 4, 6}) {
		t.Errorf("Cond = %v, want [2 4 6]", got)
	}
}

// TestWhileShapeInvariants: a dense loop variable that grows needs an
// invariant with an unknown dimension; without one the body's result is
// refused, with one the loop runs.
func TestWhileShapeInvariants(t *testing.T) {
	build := func(opts ...graphst.WhileOptions) (*op.Scope, []graphst.Value) {
		s := op.NewScope()
		v := graphst.NewRagged(s, op.Constant(s, []int64{1}))
		out := graphst.While(s, []graphst.Value{v},
			func(s *op.Scope, v []graphst.Value) tfbridge.Output {
				return op.Less(s, op.Size(s, v[0].(graphst.Ragged).Values()), op.Constant(s, int32(4)))
			},
			func(s *op.Scope, v []graphst.Value) []graphst.Value {
				x := v[0].(graphst.Ragged).Values()
				return []graphst.Value{graphst.NewRagged(s, op.ConcatV2(s, []tfbridge.Output{x, op.Mul(s, x, op.Constant(s, int64(2)))}, op.Constant(s, int32(0))))}
			}, opts...)
		return s, out
	}
	s, _ := build()
	if err := s.Err(); !errors.Is(err, graphst.ErrBranch) {
		t.Fatalf("a growing dense variable without invariant: %v, want ErrBranch", err)
	}
	s, out := build(graphst.WhileOptions{ShapeInvariants: []st.Spec{&st.TensorSpec{DType: st.Int64, Shape: st.Shape{st.Unknown}}}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	res := must(sess.Run(nil, []tfbridge.Output{out[0].(graphst.Ragged).Values()}, nil))
	if got := must(res[0].Value()).Int64s(); !reflect.DeepEqual(got, []int64{1, 2, 2, 4}) {
		t.Errorf("loop = %v, want [1 2 2 4]", got)
	}
}

// TestControlFlowErrors: mismatched branches, bad predicates, values of
// another graph, bodies that do not fit their loop variables: each is
// an error recorded in the scope, never a panic, and the scope adds
// nothing afterwards.
func TestControlFlowErrors(t *testing.T) {
	structs := func(s *op.Scope) (*graphst.Struct, graphst.Ragged) {
		ph := must(graphst.Placeholders(s.Graph(), counterSpec, "x"))
		return ph, graphst.NewRagged(s, op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1))))
	}
	same := func(s *op.Scope, in []graphst.Value) []graphst.Value { return in }
	cases := []struct {
		name string
		run  func(s *op.Scope)
		want error
	}{
		{"struct vs tensor", func(s *op.Scope) {
			x, r := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{x, r}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value { return []graphst.Value{in[1], in[0]} })
		}, graphst.ErrBranch},
		{"different fields", func(s *op.Scope) {
			x, _ := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{x}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value {
					x := in[0].(*graphst.Struct)
					f, _ := x.Field("id")
					spec := &st.StructSpec{Shape: st.Shape{st.Unknown}, Fields: []st.FieldSpec{{Name: "id", Spec: counterSpec.Fields[0].Spec}}}
					y, err := graphst.NewStruct(spec, []tfbridge.Output{f.(graphst.Ragged).Values()})
					if err != nil {
						s.UpdateErr("test", err)
					}
					return []graphst.Value{y}
				})
		}, graphst.ErrBranch},
		{"different dtypes", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{r}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value {
					return []graphst.Value{graphst.NewRagged(s, op.Cast(s, in[0].(graphst.Ragged).Values(), tfbridge.Float))}
				})
		}, graphst.ErrBranch},
		{"different counts", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{r}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value { return append(in, in[0]) })
		}, graphst.ErrBranch},
		{"int predicate", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, int32(1)), []graphst.Value{r}, same, same)
		}, graphst.ErrBranch},
		{"vector predicate", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, []bool{true}), []graphst.Value{r}, same, same)
		}, graphst.ErrBranch},
		{"nil branch", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{r}, same, nil)
		}, graphst.ErrBranch},
		{"an outer value in a branch", func(s *op.Scope) {
			_, r := structs(s)
			outer := op.Constant(s, int64(3))
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{r}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value {
					return []graphst.Value{graphst.NewRagged(s, op.AddV2(s, in[0].(graphst.Ragged).Values(), outer))}
				})
		}, tfbridge.ErrGraph},
		{"an outer value as a result", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{r}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value { return []graphst.Value{r} })
		}, graphst.ErrBranch},
		{"a branch's own error", func(s *op.Scope) {
			_, r := structs(s)
			graphst.Cond(s, op.Constant(s, true), []graphst.Value{r}, same,
				func(s *op.Scope, in []graphst.Value) []graphst.Value {
					return []graphst.Value{graphst.NewRagged(s, op.AddV2(s, in[0].(graphst.Ragged).Values(), op.Constant(s, "a string")))}
				})
		}, tfbridge.ErrInvalidArgument},
		{"body returns a tensor for a struct", func(s *op.Scope) {
			x, r := structs(s)
			graphst.While(s, []graphst.Value{x, r},
				func(s *op.Scope, v []graphst.Value) tfbridge.Output { return op.Constant(s, false) },
				func(s *op.Scope, v []graphst.Value) []graphst.Value { return []graphst.Value{v[1], v[0]} })
		}, graphst.ErrBranch},
		{"body returns too few values", func(s *op.Scope) {
			x, r := structs(s)
			graphst.While(s, []graphst.Value{x, r},
				func(s *op.Scope, v []graphst.Value) tfbridge.Output { return op.Constant(s, false) },
				func(s *op.Scope, v []graphst.Value) []graphst.Value { return v[:1] })
		}, graphst.ErrBranch},
		{"condition not bool", func(s *op.Scope) {
			_, r := structs(s)
			graphst.While(s, []graphst.Value{r},
				func(s *op.Scope, v []graphst.Value) tfbridge.Output { return op.Constant(s, int64(0)) }, same)
		}, graphst.ErrBranch},
		{"invariant of the wrong kind", func(s *op.Scope) {
			x, _ := structs(s)
			graphst.While(s, []graphst.Value{x},
				func(s *op.Scope, v []graphst.Value) tfbridge.Output { return op.Constant(s, false) }, same,
				graphst.WhileOptions{ShapeInvariants: []st.Spec{&st.TensorSpec{DType: st.Int64, Shape: st.Shape{st.Unknown}}}})
		}, graphst.ErrBranch},
		{"an initial value outside its invariant", func(s *op.Scope) {
			v := graphst.NewRagged(s, op.Constant(s, []int64{1, 2}))
			graphst.While(s, []graphst.Value{v},
				func(s *op.Scope, v []graphst.Value) tfbridge.Output { return op.Constant(s, false) }, same,
				graphst.WhileOptions{ShapeInvariants: []st.Spec{&st.TensorSpec{DType: st.Int64, Shape: st.Shape{3}}}})
		}, graphst.ErrBranch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := op.NewScope()
			c.run(s)
			err := s.Err()
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if o := op.Constant(s, int64(1)); o.Op != nil {
				t.Errorf("the scope added an operation after its error")
			}
		})
	}
}

// flowScript runs, in Python TensorFlow, the computation of growLoop
// preceded by a Cond: on a tf.experimental.StructuredTensor {id, seen},
// if sum(id) > k double the ids, else keep the struct; then n times
// append i (even) or -i (odd) to every row of seen, with tf.cond and
// tf.while_loop inside a tf.function.
const flowScript = `
import json, sys
import tensorflow as tf
out = []
@tf.function
def f(ids, seen, k, n):
    x = tf.experimental.StructuredTensor.from_fields({"id": ids, "seen": seen}, shape=[None])
    x = tf.cond(tf.reduce_sum(ids) > k, lambda: x.with_updates({"id": x.field_value("id") * 2}), lambda: x)
    def body(i, x):
        v = tf.cond(i % 2 == 0, lambda: i, lambda: -i)
        s = x.field_value("seen")
        s = tf.concat([s, tf.expand_dims(tf.fill([x.nrows()], v), 1)], axis=1)
        return i + 1, x.with_updates({"seen": s})
    _, x = tf.while_loop(lambda i, x: i < n, body, [tf.constant(0, tf.int64), x])
    return x.field_value("id"), x.field_value("seen")
for c in json.load(open(sys.argv[1])):
    seen = tf.RaggedTensor.from_row_splits(tf.constant(c["values"], tf.int64), tf.constant(c["splits"], tf.int64))
    i, s = f(tf.constant(c["ids"], tf.int64), seen, tf.constant(c["k"], tf.int64), tf.constant(c["n"], tf.int64))
    out.append({"id": i.numpy().tolist(), "seen": s.to_list()})
json.dump(out, sys.stdout)
`

// TestControlFlowAgainstTensorFlow runs the same Cond and While on
// StructTensors in Go's graph and, on tf.experimental.StructuredTensor,
// in Python TensorFlow's tf.cond and tf.while_loop, on random values.
func TestControlFlowAgainstTensorFlow(t *testing.T) {
	type pyCase struct {
		IDs    []int64 `json:"ids"`
		Values []int64 `json:"values"`
		Splits []int64 `json:"splits"`
		K      int64   `json:"k"`
		N      int64   `json:"n"`
	}
	rng := rand.New(rand.NewPCG(16, 2))
	var cases []pyCase
	var structs []*st.StructTensor
	for range 30 {
		ids := make([]int64, rng.IntN(5))
		seen := make([][]int64, len(ids))
		for r := range ids {
			ids[r] = rng.Int64N(19) - 9
			seen[r] = make([]int64, rng.IntN(4))
			for j := range seen[r] {
				seen[r][j] = rng.Int64N(19) - 9
			}
		}
		x := counterStruct(ids, seen)
		sv := must(x.FieldValue("seen")).(*st.Ragged)
		cases = append(cases, pyCase{IDs: ids, Values: sv.Values().Int64s(), Splits: sv.Partitions()[0].RowSplits(),
			K: rng.Int64N(21) - 10, N: rng.Int64N(4)})
		structs = append(structs, x)
	}
	in := must(json.Marshal(cases))
	path := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv", flowScript, path)
	var want []map[string]any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("python output: %v\n%s", err, out)
	}
	if len(want) != len(cases) {
		t.Fatalf("python returned %d results for %d cases", len(want), len(cases))
	}

	s := op.NewScope()
	ph := must(graphst.Placeholders(s.Graph(), counterSpec, "x"))
	k := op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf()))
	n := op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf()))
	pred := op.Greater(s, op.Sum(s, idOf(s, ph), op.Constant(s, int32(0))), k)
	doubled := graphst.Cond(s, pred, []graphst.Value{ph},
		func(s *op.Scope, in []graphst.Value) []graphst.Value {
			x := in[0].(*graphst.Struct)
			seen, _ := x.Field("seen")
			sr := seen.(graphst.Ragged)
			y, err := graphst.NewStruct(counterSpec, []tfbridge.Output{op.Mul(s, idOf(s, x), op.Constant(s, int64(2))), op.Identity(s, sr.RowSplits()[0]), op.Identity(s, sr.Values())})
			if err != nil {
				s.UpdateErr("test", err)
			}
			return []graphst.Value{y}
		},
		func(s *op.Scope, in []graphst.Value) []graphst.Value { return in })
	var res *graphst.Struct
	if doubled != nil {
		res = growLoop(s, doubled[0].(*graphst.Struct), n)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	for i, c := range cases {
		feeds := must(graphst.Feed(ph, structs[i]))
		feeds[k] = must(tfbridge.NewTensor(must(st.NewScalar(c.K))))
		feeds[n] = must(tfbridge.NewTensor(must(st.NewScalar(c.N))))
		got := must(graphst.Run(context.Background(), sess, feeds, res)).(*st.StructTensor)
		ids := must(got.FieldValue("id")).(*st.Tensor).Int64s()
		seen := must(got.FieldValue("seen"))
		gotJSON := fmt.Sprint(map[string]any{"id": ids, "seen": st.ToValue(seen)})
		wantIDs := []int64{}
		for _, v := range want[i]["id"].([]any) {
			wantIDs = append(wantIDs, int64(v.(float64)))
		}
		wantSeen := []any{}
		for _, row := range want[i]["seen"].([]any) {
			r := []any{}
			for _, v := range row.([]any) {
				r = append(r, int64(v.(float64)))
			}
			wantSeen = append(wantSeen, r)
		}
		if wantJSON := fmt.Sprint(map[string]any{"id": wantIDs, "seen": wantSeen}); gotJSON != wantJSON {
			t.Errorf("case %d (%+v): Go graph %s, TensorFlow %s", i, c, gotJSON, wantJSON)
		}
	}
}
