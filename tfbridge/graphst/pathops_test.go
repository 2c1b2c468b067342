package graphst_test

import (
	"encoding/json"
	"errors"
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

// drawDocs draws records with nesting for the path ops: per record an id,
// a list of docs {n, m int32; tokens ragged int64; pair float32 [2];
// sents: list of {len int64; words ragged string}}, a meta struct with one
// element per record {k int64; tags ragged string}, and a grid struct with
// two ragged dimensions {v int64}.
func drawDocs(t *rapid.T) *st.StructTensor {
	n := rapid.IntRange(0, 4).Draw(t, "n")
	i64 := func(label string, k int) *st.Tensor {
		return must(st.NewTensor(st.Shape{k}, rapid.SliceOfN(rapid.Int64Range(-20, 20), k, k).Draw(t, label)))
	}
	i32 := func(label string, k int) *st.Tensor {
		return must(st.NewTensor(st.Shape{k}, rapid.SliceOfN(rapid.Int32Range(-20, 20), k, k).Draw(t, label)))
	}
	strs := func(k int) *st.Tensor {
		return must(st.NewTensor(st.Shape{k}, rapid.SliceOfN(rapid.SampledFrom([]string{"a", "bc", ""}), k, k).Draw(t, "words")))
	}
	dl := lengths(t, "docs", n)
	m := sum(dl)
	sl := lengths(t, "sents", m)
	m2 := sum(sl)
	sents := must(st.NewPartitionedStruct(m, []*st.RowPartition{must(st.NewRowLengths(sl))},
		st.Field{Name: "len", Value: i64("len", m2)},
		st.Field{Name: "words", Value: drawRagged(t, "words", m2, 1, strs)}))
	pair := rapid.SliceOfN(rapid.Float32Range(-2, 2), 2*m, 2*m).Draw(t, "pair")
	docs := must(st.NewPartitionedStruct(n, []*st.RowPartition{must(st.NewRowLengths(dl))},
		st.Field{Name: "n", Value: i32("n", m)},
		st.Field{Name: "m", Value: i32("m", m)},
		st.Field{Name: "tokens", Value: drawRagged(t, "tokens", m, 1, func(k int) *st.Tensor { return i64("tok", k) })},
		st.Field{Name: "pair", Value: must(st.NewTensor(st.Shape{m, 2}, pair))},
		st.Field{Name: "sents", Value: sents}))
	meta := must(st.NewStruct(n,
		st.Field{Name: "k", Value: i64("k", n)},
		st.Field{Name: "tags", Value: drawRagged(t, "tags", n, 1, strs)}))
	g1 := lengths(t, "grid1", n)
	g2 := lengths(t, "grid2", sum(g1))
	grid := must(st.NewPartitionedStruct(n, []*st.RowPartition{must(st.NewRowLengths(g1)), must(st.NewRowLengths(g2))},
		st.Field{Name: "v", Value: i64("v", sum(g2))}))
	return must(st.NewStruct(n,
		st.Field{Name: "id", Value: i64("id", n)},
		st.Field{Name: "docs", Value: docs},
		st.Field{Name: "meta", Value: meta},
		st.Field{Name: "grid", Value: grid}))
}

// checkTwin builds graph from placeholders for x, runs it and compares the
// result with want (the value-plane twin's).
func checkTwin(t *rapid.T, x *st.StructTensor, want *st.StructTensor, graph func(s *op.Scope, ph *graphst.Struct) *graphst.Struct) {
	s := op.NewScope()
	feeds := map[tfbridge.Output]*tfbridge.Tensor{}
	ph := feedStruct(t, s, x, "x", feeds)
	got := runStruct(t, s, feeds, graph(s, ph))
	if !st.Equal(got, want) {
		t.Fatalf("graph %v\nops   %v", st.ToValue(got), st.ToValue(want))
	}
}

func TestPromoteMatchesOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawDocs(t)
		src := rapid.SampledFrom([]string{"docs.n", "docs.tokens", "docs.pair", "docs.sents.words", "docs.sents.len", "meta.tags", "meta.k", "grid.v"}).Draw(t, "src")
		want := must(ops.Promote(x, src, "promoted"))
		checkTwin(t, x, want, func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Promote(s, ph, src, "promoted")
		})
	})
}

func TestBroadcastMatchesOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawDocs(t)
		c := rapid.SampledFrom([][2]string{
			{"id", "docs"}, {"id", "meta"}, {"id", "grid"}, {"docs.n", "sents"},
			{"docs.tokens", "sents"}, {"docs.pair", "docs.sents"},
		}).Draw(t, "case")
		want := must(ops.Broadcast(x, c[0], c[1], "b"))
		checkTwin(t, x, want, func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Broadcast(s, ph, c[0], c[1], "b")
		})
	})
}

func TestMapValuesMatchesOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawDocs(t)
		switch rapid.IntRange(0, 2).Draw(t, "case") {
		case 0: // int64 -> int64 over a ragged leaf
			want := must(ops.MapValues(x, "docs.tokens", "docs.twice", func(v int64) int64 { return 2*v + 1 }))
			checkTwin(t, x, want, func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
				return graphst.MapValues(s, ph, "docs.tokens", "twice", func(s *op.Scope, v tfbridge.Output) tfbridge.Output {
					return op.AddV2(s, op.Mul(s, v, op.Constant(s, int64(2))), op.Constant(s, int64(1)))
				})
			})
		case 1: // int32 -> bool at the root level's nested struct
			want := must(ops.MapValues(x, "docs.sents.len", "docs.sents.pos", func(v int64) bool { return v > 0 }))
			checkTwin(t, x, want, func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
				return graphst.MapValues(s, ph, "docs.sents.len", "pos", func(s *op.Scope, v tfbridge.Output) tfbridge.Output {
					return op.Greater(s, v, op.Constant(s, int64(0)))
				})
			})
		default: // Map over two sources
			want := must(ops.Map(x, "docs.nm", st.Int32, func(a []any) (any, error) { return a[0].(int32) - a[1].(int32), nil }, "docs.n", "docs.m"))
			checkTwin(t, x, want, func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
				return graphst.Map(s, ph, "nm", func(s *op.Scope, v []tfbridge.Output) tfbridge.Output {
					return op.Sub(s, v[0], v[1])
				}, "docs.n", "docs.m")
			})
		}
	})
}

func TestPathOpsErrors(t *testing.T) {
	x := must(st.FromValue([]any{map[string]any{
		"id":   int64(1),
		"docs": []any{map[string]any{"n": int32(1), "sents": []any{map[string]any{"len": int64(2)}}}},
		"meta": map[string]any{"k": int64(3)},
	}})).(*st.StructTensor)
	for _, tc := range []struct {
		name  string
		build func(s *op.Scope, ph *graphst.Struct) *graphst.Struct
		want  error
	}{
		{"promote without grandparent", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct { return graphst.Promote(s, ph, "id", "p") }, graphst.ErrSpec},
		{"promote of no field", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Promote(s, ph, "docs.nope", "p")
		}, st.ErrNoField},
		{"promote of a struct", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Promote(s, ph, "docs.sents", "p")
		}, graphst.ErrSpec},
		{"promote onto an existing name", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Promote(s, ph, "docs.n", "id")
		}, graphst.ErrSpec},
		{"broadcast onto a leaf", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Broadcast(s, ph, "id", "id", "b")
		}, graphst.ErrSpec},
		{"map of non-siblings", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Map(s, ph, "z", func(s *op.Scope, v []tfbridge.Output) tfbridge.Output { return v[0] }, "id", "docs.n")
		}, graphst.ErrSpec},
		{"map without a function", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.MapValues(s, ph, "id", "z", nil)
		}, graphst.ErrSpec},
		{"a nested struct", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			docs, _ := ph.Field("docs")
			return graphst.Promote(s, docs.(*graphst.Struct), "sents.len", "p")
		}, graphst.ErrSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := op.NewScope()
			ph := must(graphst.Placeholders(s.Graph(), x.Spec().(*st.StructSpec), "x"))
			if got := tc.build(s, ph); got != nil || !errors.Is(s.Err(), tc.want) {
				t.Fatalf("got %v, error %v, want %v", got, s.Err(), tc.want)
			}
		})
	}
}

// TestMapPartitionsDiffer: sources with the same number of values but
// other row partitions are an error of the run, as ops.Map's ErrShape.
func TestMapPartitionsDiffer(t *testing.T) {
	a := must(st.NewRaggedFromSplits(must(st.NewTensor(st.Shape{3}, []int64{1, 2, 3})), []int64{0, 1, 3}))
	b := must(st.NewRaggedFromSplits(must(st.NewTensor(st.Shape{3}, []int64{4, 5, 6})), []int64{0, 2, 3}))
	x := must(st.NewStruct(2, st.Field{Name: "a", Value: a}, st.Field{Name: "b", Value: b}))
	add := func(s *op.Scope, v []tfbridge.Output) tfbridge.Output { return op.AddV2(s, v[0], v[1]) }
	if _, err := ops.Map(x, "c", st.Int64, func(v []any) (any, error) { return v[0].(int64) + v[1].(int64), nil }, "a", "b"); !errors.Is(err, ops.ErrShape) {
		t.Fatalf("ops.Map: %v", err)
	}
	s := op.NewScope()
	feeds := map[tfbridge.Output]*tfbridge.Tensor{}
	ph := feedStruct(t, s, x, "x", feeds)
	bad := graphst.Map(s, ph, "c", add, "a", "b")
	same := graphst.Map(s, ph, "c", add, "a", "a")
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	if _, err := graphst.Run(t.Context(), sess, feeds, bad); !errors.Is(err, tfbridge.ErrInvalidArgument) {
		t.Errorf("differing partitions: %v", err)
	}
	got := must(graphst.Run(t.Context(), sess, feeds, same)).(*st.StructTensor)
	c, _ := got.FieldValue("c")
	if want := must(st.NewRaggedFromSplits(must(st.NewTensor(st.Shape{3}, []int64{2, 4, 6})), []int64{0, 1, 3})); !st.Equal(c, want) {
		t.Errorf("a + a = %v, want %v", c, want)
	}
}

const promoteScript = `
import json, sys
import tensorflow as tf
from tensorflow.python.ops.structured.structured_tensor import StructuredTensor
c = json.load(open(sys.argv[1]))
x = StructuredTensor.from_pyval(c["records"])
out = [x.promote(tuple(src.split(".")), "promoted").to_pyval() for src in c["sources"]]
json.dump(out, sys.stdout, default=lambda b: b.decode())
`

// TestPromoteAgainstTensorFlow compares Promote with TensorFlow's
// StructuredTensor.promote on random records (every list non-empty in the
// first record, so that from_pyval infers the same types).
func TestPromoteAgainstTensorFlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	list := func(first bool, f func() any) []any {
		n := rng.IntN(3)
		if first {
			n++
		}
		l := make([]any, n)
		for i := range l {
			l[i] = f()
		}
		return l
	}
	var records []any
	for r := range 12 {
		first := r == 0
		i64 := func() any { return int64(rng.IntN(40) - 20) }
		word := func() any { return []string{"a", "bc", ""}[rng.IntN(3)] }
		records = append(records, map[string]any{
			"id": i64(),
			"docs": list(first, func() any {
				return map[string]any{
					"n":      int64(rng.IntN(9)),
					"tokens": list(first, i64),
					"pair":   []any{float64(rng.IntN(16)) / 8, float64(rng.IntN(16)) / 8},
					"sents": list(first, func() any {
						return map[string]any{"len": i64(), "words": list(first, word)}
					}),
				}
			}),
			"meta": map[string]any{"k": i64(), "tags": list(first, word)},
			"grid": list(first, func() any { return list(first, func() any { return map[string]any{"v": i64()} }) }),
		})
	}
	sources := []string{"docs.n", "docs.tokens", "docs.pair", "docs.sents.words", "docs.sents.len", "meta.tags", "meta.k", "grid.v"}
	in, err := json.Marshal(map[string]any{"records": records, "sources": sources})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "promote.json")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	var want []any
	if out := testenv.RunPython(t, ".venv", promoteScript, path); json.Unmarshal(out, &want) != nil {
		t.Fatalf("python output: %s", out)
	}
	x := must(st.FromValue(records)).(*st.StructTensor)
	s := op.NewScope()
	feeds := map[tfbridge.Output]*tfbridge.Tensor{}
	ph := feedStruct(t, s, x, "x", feeds)
	promoted := make([]*graphst.Struct, len(sources))
	for i, src := range sources {
		promoted[i] = graphst.Promote(s, ph, src, "promoted")
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	for i, p := range promoted {
		got := must(graphst.Run(t.Context(), sess, feeds, p))
		b, err := json.Marshal(st.ToValue(got))
		if err != nil {
			t.Fatal(err)
		}
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("promote %s:\ngraph      %s\nTensorFlow %v", sources[i], b, want[i])
		}
	}
}
