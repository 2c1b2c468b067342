package op_test

import (
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// BenchmarkRun runs the same computation built with the wrappers and with
// raw OpSpecs, side by side: the wrappers add nothing per run (the graph
// is the same; only feeds and fetches cross into Go).
//
//	go test -run '^$' -bench Run ./tfbridge/op/
func BenchmarkRun(b *testing.B) {
	const n = 1 << 16
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i % 97)
	}
	x := tensor(b, structtensor.Shape{n / 64, 64}, vals)
	build := map[string]func() (*tfbridge.Graph, tfbridge.Output, tfbridge.Output){
		"wrappers": func() (*tfbridge.Graph, tfbridge.Output, tfbridge.Output) {
			s := op.NewScope()
			in := op.Placeholder(s, tfbridge.Float)
			y := op.Sum(s, op.Mul(s, op.Relu(s, op.Sub(s, in, op.Constant(s, float32(10)))), in), op.Constant(s, int32(1)))
			g, err := s.Finalize()
			if err != nil {
				b.Fatal(err)
			}
			return g, in, y
		},
		"raw": func() (*tfbridge.Graph, tfbridge.Output, tfbridge.Output) {
			g := tfbridge.NewGraph()
			add := func(spec tfbridge.OpSpec) tfbridge.Output {
				o, err := g.AddOperation(spec)
				if err != nil {
					b.Fatal(err)
				}
				return o.Output(0)
			}
			c := func(v any) tfbridge.Output {
				sc, _ := structtensor.NewScalar(v)
				d, _ := tfbridge.DTypeOf(sc.DType())
				return add(tfbridge.OpSpec{Type: "Const", Attrs: map[string]any{"value": sc, "dtype": d}})
			}
			in := add(tfbridge.OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": tfbridge.Float}})
			sub := add(tfbridge.OpSpec{Type: "Sub", Input: []tfbridge.Input{in, c(float32(10))}})
			relu := add(tfbridge.OpSpec{Type: "Relu", Input: []tfbridge.Input{sub}})
			mul := add(tfbridge.OpSpec{Type: "Mul", Input: []tfbridge.Input{relu, in}})
			y := add(tfbridge.OpSpec{Type: "Sum", Input: []tfbridge.Input{mul, c(int32(1))}})
			return g, in, y
		},
	}
	for _, name := range []string{"raw", "wrappers"} {
		b.Run(name, func(b *testing.B) {
			g, in, y := build[name]()
			sess, err := tfbridge.NewSession(g)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			b.SetBytes(4 * n)
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
