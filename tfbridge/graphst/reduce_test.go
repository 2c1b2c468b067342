package graphst_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	"pgregory.net/rapid"
)

var reductions = []ops.Reduction{ops.ReduceSum, ops.ReduceMean, ops.ReduceMin, ops.ReduceMax, ops.ReduceCount, ops.ReduceAny, ops.ReduceAll}

// applies says whether ops.ReduceRows defines red for dtype.
func applies(red ops.Reduction, dt st.DType) bool {
	switch red {
	case ops.ReduceCount:
		return true
	case ops.ReduceAny, ops.ReduceAll:
		return dt == st.Bool
	case ops.ReduceMean:
		return dt == st.Float32 || dt == st.Float64
	}
	return dt != st.Bool && dt != st.String
}

func drawValues(t *rapid.T, dt st.DType, shape st.Shape) *st.Tensor {
	n := shape.NumElements()
	var data any
	switch dt {
	case st.Int32:
		data = rapid.SliceOfN(rapid.Int32Range(-99, 99), n, n).Draw(t, "v")
	case st.Int64:
		data = rapid.SliceOfN(rapid.Int64Range(-99, 99), n, n).Draw(t, "v")
	case st.Float32:
		v := rapid.SliceOfN(rapid.Float32Range(-4, 4), n, n).Draw(t, "v")
		for i, x := range v {
			if math.Abs(float64(x)) < 0x1p-126 {
				v[i] = 0 // TensorFlow's CPU kernels flush subnormals to zero; package ops keeps them.
			}
		}
		data = v
	case st.Float64:
		v := rapid.SliceOfN(rapid.Float64Range(-4, 4), n, n).Draw(t, "v")
		for i, x := range v {
			if math.Abs(x) < 0x1p-1022 {
				v[i] = 0 // as above
			}
		}
		data = v
	default:
		data = rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, "v")
	}
	return must(st.NewTensor(shape, data))
}

// feedRagged adds placeholders for a ragged value of ragged rank depth and
// returns them as a graphst.Ragged with their feeds.
func feedRagged(t rapid.TB, s *op.Scope, x *st.Ragged, feeds map[tfbridge.Output]*tfbridge.Tensor) graphst.Ragged {
	var splits []tfbridge.Output
	for _, p := range x.Partitions() {
		ph := op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1)))
		feeds[ph] = must(tfbridge.NewTensor(must(st.NewTensor(st.Shape{p.NumRows() + 1}, p.RowSplits()))))
		splits = append(splits, ph)
	}
	dt := must(tfbridge.DTypeOf(x.DType()))
	shape := append([]int64{-1}, int64s(x.Values().Shape()[1:])...)
	values := op.Placeholder(s, dt, op.PlaceholderShape(op.ShapeOf(shape...)))
	feeds[values] = must(tfbridge.NewTensor(x.Values()))
	return graphst.NewRagged(s, values, splits...)
}

func int64s(dims []int) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = int64(d)
	}
	return out
}

func TestReduceRowsMatchesOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dt := rapid.SampledFrom([]st.DType{st.Int32, st.Int64, st.Float32, st.Float64, st.Bool}).Draw(t, "dtype")
		depth := rapid.IntRange(1, 2).Draw(t, "depth")
		n := rapid.IntRange(0, 5).Draw(t, "n")
		inner := st.Shape{}
		if rapid.Bool().Draw(t, "inner") {
			inner = st.Shape{rapid.IntRange(1, 2).Draw(t, "innerDim")}
		}
		x := drawRagged(t, "x", n, depth, func(m int) *st.Tensor { return drawValues(t, dt, append(st.Shape{m}, inner...)) })
		s := op.NewScope()
		feeds := map[tfbridge.Output]*tfbridge.Tensor{}
		r := feedRagged(t, s, x, feeds)
		var fetch []graphst.Ragged
		var want []st.Value
		for _, red := range reductions {
			if !applies(red, dt) {
				continue
			}
			want = append(want, must(ops.ReduceRows(x, red)))
			fetch = append(fetch, graphst.ReduceRows(s.SubScope(red.String()), r, red))
		}
		ids := graphst.RowIDs(s, r)
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		sess := must(tfbridge.NewSession(s.Graph()))
		defer sess.Close()
		for i, f := range fetch {
			got := must(graphst.Run(context.Background(), sess, feeds, f))
			if !st.Equal(got, want[i]) {
				t.Fatalf("reduction %d: graph %v, ops %v", i, got, want[i])
			}
		}
		gotIDs := must(must(sess.Run(feeds, []tfbridge.Output{ids}, nil))[0].Value())
		parts := x.Partitions()
		splits := parts[len(parts)-1].RowSplits()
		for row := 0; row+1 < len(splits); row++ {
			for j := splits[row]; j < splits[row+1]; j++ {
				if gotIDs.Int64s()[j] != int64(row) {
					t.Fatalf("row ids %v for splits %v", gotIDs.Int64s(), splits)
				}
			}
		}
	})
}

func TestReduceRowsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dt    tfbridge.DType
		red   ops.Reduction
		dense bool
	}{
		{"mean of ints", tfbridge.Int64, ops.ReduceMean, false},
		{"any of floats", tfbridge.Float, ops.ReduceAny, false},
		{"sum of strings", tfbridge.String, ops.ReduceSum, false},
		{"dense", tfbridge.Float, ops.ReduceSum, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := op.NewScope()
			var splits []tfbridge.Output
			if !tc.dense {
				splits = []tfbridge.Output{op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1)))}
			}
			r := graphst.NewRagged(s, op.Placeholder(s, tc.dt, op.PlaceholderShape(op.ShapeOf(-1))), splits...)
			graphst.ReduceRows(s, r, tc.red)
			want := graphst.ErrSpec
			if tc.dense {
				want = graphst.ErrRank
			}
			if err := s.Err(); !errors.Is(err, want) {
				t.Fatalf("error %v, want %v", err, want)
			}
		})
	}
	if _, err := ops.ReduceRows(must(st.NewTensor(st.Shape{1}, []int64{1})), ops.ReduceSum); !errors.Is(err, ops.ErrArgument) {
		t.Errorf("ops.ReduceRows of a Tensor: %v", err)
	}
}

// tfCase is one ragged value and what to compute from it in Python.
type tfCase struct {
	Splits  [][]int64 `json:"splits"`
	Values  any       `json:"values"`
	Inner   []int     `json:"inner"`
	DType   string    `json:"dtype"`
	Default any       `json:"default"`
	Shape   []int64   `json:"shape"`
}

const tfScript = `
import json, sys
import numpy as np
import tensorflow as tf
nan = lambda l: [None if isinstance(v, float) and v != v else v for v in l]
out = []
for c in json.load(open(sys.argv[1])):
    vals = np.array(c["values"], dtype=c["dtype"]).reshape([-1] + c["inner"])
    rt = tf.RaggedTensor.from_nested_row_splits(vals, [np.array(s, dtype=np.int64) for s in c["splits"]])
    ax = rt.ragged_rank
    res = {}
    def put(name, x):
        if isinstance(x, tf.RaggedTensor):
            res[name] = {"splits": [s.numpy().tolist() for s in x.nested_row_splits], "values": nan(x.flat_values.numpy().reshape([-1]).tolist())}
        else:
            res[name] = {"splits": [], "values": nan(x.numpy().reshape([-1]).tolist())}
    if c["dtype"] == "bool":
        put("any", tf.reduce_any(rt, axis=ax)); put("all", tf.reduce_all(rt, axis=ax))
    else:
        put("sum", tf.reduce_sum(rt, axis=ax)); put("min", tf.reduce_min(rt, axis=ax)); put("max", tf.reduce_max(rt, axis=ax))
        if c["dtype"].startswith("float"):
            put("mean", tf.reduce_mean(rt, axis=ax))
    lengths = rt.row_lengths(axis=ax)
    put("count", lengths)
    res["rowids"] = rt.nested_value_rowids()[-1].numpy().tolist()
    shape = [None if d < 0 else d for d in c["shape"]] if c["shape"] else None
    put("dense", rt.to_tensor(default_value=np.array(c["default"], dtype=c["dtype"]), shape=shape))
    out.append(res)
json.dump(out, sys.stdout)
`

// TestAgainstTensorFlow compares the per-row ops and ToDense with Python
// TensorFlow's tf.reduce_* on RaggedTensors, row_lengths, value_rowids and
// to_tensor, on random ragged values.
func TestAgainstTensorFlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	dtypes := []st.DType{st.Int32, st.Int64, st.Float32, st.Float64, st.Bool}
	var cases []tfCase
	var values []*st.Ragged
	for i := range 40 {
		dt := dtypes[i%len(dtypes)]
		depth := 1 + rng.IntN(2)
		n := rng.IntN(5)
		var splits [][]int64
		var parts []*st.RowPartition
		for range depth {
			l := make([]int64, n)
			for j := range l {
				l[j] = int64(rng.IntN(4))
			}
			p := must(st.NewRowLengths(l))
			parts = append(parts, p)
			splits = append(splits, p.RowSplits())
			n = p.NumValues()
		}
		inner := []int{}
		shape := st.Shape{n}
		if rng.IntN(3) == 0 {
			inner = []int{2}
			shape = st.Shape{n, 2}
		}
		k := shape.NumElements()
		var data, def any
		switch dt {
		case st.Int32:
			d := make([]int32, k)
			for j := range d {
				d[j] = int32(rng.IntN(200) - 100)
			}
			data, def = d, int32(-7)
		case st.Int64:
			d := make([]int64, k)
			for j := range d {
				d[j] = int64(rng.IntN(200) - 100)
			}
			data, def = d, int64(-7)
		case st.Float32:
			d := make([]float32, k)
			for j := range d {
				d[j] = float32(rng.IntN(64)) / 8
			}
			data, def = d, float32(0.5)
		case st.Float64:
			d := make([]float64, k)
			for j := range d {
				d[j] = float64(rng.IntN(64)) / 8
			}
			data, def = d, 0.25
		case st.Bool:
			d := make([]bool, k)
			for j := range d {
				d[j] = rng.IntN(2) == 0
			}
			data, def = d, true
		}
		x := must(st.NewRagged(must(st.NewTensor(shape, data)), parts...))
		var dshape []int64
		if i%4 == 1 {
			// A fixed shape: truncates long rows, pads short ones.
			dshape = []int64{-1}
			for range depth {
				dshape = append(dshape, 2)
			}
			for _, d := range inner {
				dshape = append(dshape, int64(d))
			}
		}
		cases = append(cases, tfCase{Splits: splits, Values: data, Inner: inner, DType: dtypeName(dt), Default: def, Shape: dshape})
		values = append(values, x)
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv", tfScript, path)
	var rowIDs []map[string]any
	if err := json.Unmarshal(out, &rowIDs); err != nil {
		t.Fatalf("python output: %v\n%s", err, out)
	}
	for _, m := range rowIDs {
		l, _ := m["rowids"].([]any)
		ints := make([]int64, len(l))
		for j, v := range l {
			ints[j] = int64(v.(float64))
		}
		m["rowids"] = ints
	}
	type result struct {
		Splits [][]int64 `json:"splits"`
		Values []any     `json:"values"`
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("python output: %v\n%s", err, out)
	}
	results := make([]map[string]result, len(raw))
	for i, m := range raw {
		results[i] = map[string]result{}
		for k, v := range m {
			var r result
			if k != "rowids" {
				if err := json.Unmarshal(v, &r); err != nil {
					t.Fatal(err)
				}
			}
			results[i][k] = r
		}
	}
	for i, x := range values {
		c := cases[i]
		s := op.NewScope()
		feeds := map[tfbridge.Output]*tfbridge.Tensor{}
		r := feedRagged(t, s, x, feeds)
		fetch := map[string]graphst.Ragged{}
		for _, red := range reductions {
			if applies(red, x.DType()) {
				fetch[red.String()] = graphst.ReduceRows(s.SubScope(red.String()), r, red)
			}
		}
		def := op.Constant(s, must(st.NewScalar(c.Default)))
		fetch["dense"] = graphst.NewRagged(s, graphst.ToDense(s, r, def, c.Shape))
		ids := graphst.RowIDs(s, r)
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		sess := must(tfbridge.NewSession(s.Graph()))
		for name, f := range fetch {
			got := must(graphst.Run(t.Context(), sess, feeds, f))
			want, ok := results[i][name]
			if !ok {
				t.Fatalf("case %d: python gave no %s", i, name)
			}
			var gotSplits [][]int64
			var gotValues *st.Tensor
			switch g := got.(type) {
			case *st.Ragged:
				for _, p := range g.Partitions() {
					gotSplits = append(gotSplits, p.RowSplits())
				}
				gotValues = g.Values()
			case *st.Tensor:
				gotValues = g
			}
			if fmt.Sprint(gotSplits) != fmt.Sprint(want.Splits) && !(len(gotSplits) == 0 && len(want.Splits) == 0) {
				t.Errorf("case %d %s (%v): splits %v, TensorFlow %v", i, name, c.DType, gotSplits, want.Splits)
			}
			if !sameNumbers(gotValues, want.Values) {
				t.Errorf("case %d %s (%v, splits %v, values %v): %v, TensorFlow %v", i, name, c.DType, c.Splits, c.Values, gotValues, want.Values)
			}
		}
		gotIDs := must(must(sess.Run(feeds, []tfbridge.Output{ids}, nil))[0].Value())
		if fmt.Sprint(gotIDs.Int64s()) != fmt.Sprint(rowIDs[i]["rowids"]) {
			t.Errorf("case %d: row ids %v, TensorFlow %v", i, gotIDs.Int64s(), rowIDs[i]["rowids"])
		}
		sess.Close()
	}
}

func dtypeName(d st.DType) string {
	switch d {
	case st.Int32:
		return "int32"
	case st.Int64:
		return "int64"
	case st.Float32:
		return "float32"
	case st.Float64:
		return "float64"
	}
	return "bool"
}

// sameNumbers compares a tensor's elements with JSON numbers or bools;
// floats must agree to float32 precision (NaN equals NaN).
func sameNumbers(t *st.Tensor, want []any) bool {
	if t.Len() != len(want) {
		return false
	}
	for i := range want {
		var got float64
		switch d := t.Data().(type) {
		case []bool:
			if b, ok := want[i].(bool); !ok || b != d[i] {
				return false
			}
			continue
		case []int32:
			got = float64(d[i])
		case []int64:
			got = float64(d[i])
		case []float32:
			got = float64(d[i])
		case []float64:
			got = d[i]
		}
		w, ok := want[i].(float64)
		if !ok {
			if want[i] == nil && math.IsNaN(got) { // the script writes NaN as null
				continue
			}
			return false
		}
		if math.IsNaN(got) && math.IsNaN(w) {
			continue
		}
		if math.Abs(got-w) > 1e-6*math.Max(1, math.Abs(w)) {
			return false
		}
	}
	return true
}

// TestReduceRowsBadSplits feeds row splits that do not fit the values to
// the reduction kernel: an InvalidArgument error of the run, never a read
// out of bounds.
func TestReduceRowsBadSplits(t *testing.T) {
	s := op.NewScope()
	splits := op.Placeholder(s, tfbridge.Int64, op.PlaceholderShape(op.ShapeOf(-1)))
	values := op.Placeholder(s, tfbridge.Float, op.PlaceholderShape(op.ShapeOf(-1)))
	sum := graphst.ReduceRows(s, graphst.NewRagged(s, values, splits), ops.ReduceSum)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	vals := must(tfbridge.NewTensor(must(st.NewTensor(st.Shape{3}, []float32{1, 2, 3}))))
	for _, bad := range [][]int64{{1, 3}, {0, 2, 1, 3}, {0, 2}, {0, 4}, {}} {
		feeds := map[tfbridge.Output]*tfbridge.Tensor{splits: must(tfbridge.NewTensor(must(st.NewTensor(st.Shape{len(bad)}, bad)))), values: vals}
		if _, err := sess.Run(feeds, []tfbridge.Output{sum.Values()}, nil); !errors.Is(err, tfbridge.ErrInvalidArgument) {
			t.Errorf("splits %v: %v", bad, err)
		}
	}
}
