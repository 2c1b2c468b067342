package op_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	nodepb "github.com/wamuir/graft/tensorflow/core/framework/node_def_go_proto"
	"google.golang.org/protobuf/proto"
)

// The wrappers only build graphs: once built, a graph runs in TensorFlow
// and Go does per run what Session.Run does with feeds and fetches, the
// same whoever built the graph. The test below checks that the wrappers
// and raw OpSpecs build the same graph; the benchmarks run both side by
// side.

// chainDepth is the number of Mul-Sub-Relu layers of the benchmark
// graph: enough operations that a per-operation cost would show.
const chainDepth = 10

// buildWithWrappers builds y = Sum(layer^chainDepth(x), axis 1), each
// layer Relu(x*1.5 - 10), with the generated wrappers.
func buildWithWrappers(t testing.TB) (*tfbridge.Graph, tfbridge.Output, tfbridge.Output) {
	s := op.NewScope()
	in := op.Placeholder(s, tfbridge.Float)
	y := in
	for range chainDepth {
		y = op.Relu(s, op.Sub(s, op.Mul(s, y, op.Constant(s, float32(1.5))), op.Constant(s, float32(10))))
	}
	y = op.Sum(s, y, op.Constant(s, int32(1)))
	g, err := s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return g, in, y
}

// buildWithOpSpecs builds the same graph with tfbridge.Graph.AddOperation.
func buildWithOpSpecs(t testing.TB) (*tfbridge.Graph, tfbridge.Output, tfbridge.Output) {
	g := tfbridge.NewGraph()
	add := func(spec tfbridge.OpSpec) tfbridge.Output {
		o, err := g.AddOperation(spec)
		if err != nil {
			t.Fatal(err)
		}
		return o.Output(0)
	}
	c := func(v any) tfbridge.Output {
		sc, err := structtensor.NewScalar(v)
		if err != nil {
			t.Fatal(err)
		}
		d, err := tfbridge.DTypeOf(sc.DType())
		if err != nil {
			t.Fatal(err)
		}
		return add(tfbridge.OpSpec{Type: "Const", Attrs: map[string]any{"value": sc, "dtype": d}})
	}
	in := add(tfbridge.OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": tfbridge.Float}})
	y := in
	for range chainDepth {
		mul := add(tfbridge.OpSpec{Type: "Mul", Input: []tfbridge.Input{y, c(float32(1.5))}})
		sub := add(tfbridge.OpSpec{Type: "Sub", Input: []tfbridge.Input{mul, c(float32(10))}})
		y = add(tfbridge.OpSpec{Type: "Relu", Input: []tfbridge.Input{sub}})
	}
	y = add(tfbridge.OpSpec{Type: "Sum", Input: []tfbridge.Input{y, c(int32(1))}})
	return g, in, y
}

// canonicalNodes returns g's nodes with every name replaced by the
// node's position, so that graphs differing only in names compare equal.
func canonicalNodes(t *testing.T, g *tfbridge.Graph) []*nodepb.NodeDef {
	t.Helper()
	b, err := g.ToGraphDef()
	if err != nil {
		t.Fatal(err)
	}
	gd := &graphpb.GraphDef{}
	if err := proto.Unmarshal(b, gd); err != nil {
		t.Fatal(err)
	}
	pos := map[string]string{}
	for i, n := range gd.Node {
		pos[n.Name] = fmt.Sprint(i)
	}
	for _, n := range gd.Node {
		n.Name = pos[n.Name]
		for j, in := range n.Input {
			n.Input[j] = pos[in]
		}
	}
	return gd.Node
}

// TestWrappersBuildTheRawGraph: the wrappers and raw OpSpecs build the
// same nodes (types, inputs, attributes), so the benchmarks compare runs
// of one graph.
func TestWrappersBuildTheRawGraph(t *testing.T) {
	gw, _, _ := buildWithWrappers(t)
	gr, _, _ := buildWithOpSpecs(t)
	w, r := canonicalNodes(t, gw), canonicalNodes(t, gr)
	if len(w) != len(r) {
		t.Fatalf("wrappers: %d nodes, OpSpecs: %d", len(w), len(r))
	}
	for i := range w {
		if !proto.Equal(w[i], r[i]) {
			t.Errorf("node %d: wrappers %v, OpSpecs %v", i, w[i], r[i])
		}
	}
}

// benchInput is a [rows, 64] float tensor.
func benchInput(b *testing.B, rows int) *tfbridge.Tensor {
	vals := make([]float32, rows*64)
	for i := range vals {
		vals[i] = float32(i % 97)
	}
	return tensor(b, structtensor.Shape{rows, 64}, vals)
}

// BenchmarkRun runs the graph built with raw OpSpecs and with the
// wrappers, one after the other, on a small and a large input.
//
//	go test -run '^$' -bench 'Run$' ./tfbridge/op/
func BenchmarkRun(b *testing.B) {
	builders := []struct {
		name  string
		build func(testing.TB) (*tfbridge.Graph, tfbridge.Output, tfbridge.Output)
	}{{"raw", buildWithOpSpecs}, {"wrappers", buildWithWrappers}}
	for _, rows := range []int{1, 1024} {
		x := benchInput(b, rows)
		for _, bl := range builders {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, bl.name), func(b *testing.B) {
				g, in, y := bl.build(b)
				sess, err := tfbridge.NewSession(g)
				if err != nil {
					b.Fatal(err)
				}
				defer sess.Close()
				b.SetBytes(int64(4 * 64 * rows))
				for b.Loop() {
					out, err := sess.Run(map[tfbridge.Output]*tfbridge.Tensor{in: x}, []tfbridge.Output{y}, nil)
					if err != nil {
						b.Fatal(err)
					}
					out[0].Close()
				}
			})
		}
	}
}

// BenchmarkRunPaired alternates one run of each graph per iteration, so
// that both see the same machine load, and reports the median over
// iterations of the ratio of their times (wrappers/raw; 1 is no cost),
// robust to the load spikes of a shared machine, besides each one's
// median time per run.
//
//	go test -run '^$' -bench RunPaired -benchtime 20000x ./tfbridge/op/
func BenchmarkRunPaired(b *testing.B) {
	for _, rows := range []int{1, 1024} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			x := benchInput(b, rows)
			type runner struct {
				sess  *tfbridge.Session
				in, y tfbridge.Output
				times []float64
			}
			var rs []*runner
			for _, build := range []func(testing.TB) (*tfbridge.Graph, tfbridge.Output, tfbridge.Output){buildWithOpSpecs, buildWithWrappers} {
				g, in, y := build(b)
				sess, err := tfbridge.NewSession(g)
				if err != nil {
					b.Fatal(err)
				}
				defer sess.Close()
				rs = append(rs, &runner{sess: sess, in: in, y: y})
			}
			run := func(r *runner) {
				start := time.Now()
				out, err := r.sess.Run(map[tfbridge.Output]*tfbridge.Tensor{r.in: x}, []tfbridge.Output{r.y}, nil)
				r.times = append(r.times, float64(time.Since(start).Nanoseconds()))
				if err != nil {
					b.Fatal(err)
				}
				out[0].Close()
			}
			for _, r := range rs { // warm up: the first run of a session builds its executor
				run(r)
				r.times = r.times[:0]
			}
			var ratios []float64
			for b.Loop() {
				// Alternate which goes first, so neither always runs on a
				// warmer cache.
				if len(ratios)%2 == 0 {
					run(rs[0])
					run(rs[1])
				} else {
					run(rs[1])
					run(rs[0])
				}
				k := len(ratios)
				ratios = append(ratios, rs[1].times[k]/rs[0].times[k])
			}
			b.ReportMetric(median(rs[0].times), "raw-ns/run")
			b.ReportMetric(median(rs[1].times), "wrappers-ns/run")
			b.ReportMetric(median(ratios), "wrappers/raw")
		})
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
