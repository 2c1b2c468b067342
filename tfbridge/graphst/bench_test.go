package graphst_test

import (
	"math/rand/v2"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// BenchmarkReduceRows sums the rows of one ragged float32 value (1M values
// in 125k rows of 0..15) with package ops and with the graph, side by side;
// the graph's time includes feeding the splits and values (lent, not
// copied), the session run and fetching the sums. The target is a graph
// at >= 50% of the ops throughput in the same run.
//
//	go test -run '^$' -bench ReduceRows ./tfbridge/graphst/
func BenchmarkReduceRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows = 1 << 17
	lengths := make([]int64, rows)
	n := 0
	for i := range lengths {
		lengths[i] = int64(rng.IntN(16))
		n += int(lengths[i])
	}
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = rng.Float32()
	}
	x := must(st.NewRagged(must(st.NewTensor(st.Shape{n}, vals)), must(st.NewRowLengths(lengths))))
	for _, red := range []ops.Reduction{ops.ReduceSum, ops.ReduceMax} {
		b.Run(red.String()+"/ops", func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				if _, err := ops.ReduceRows(x, red); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(red.String()+"/graph", func(b *testing.B) {
			s := op.NewScope()
			feeds := map[tfbridge.Output]*tfbridge.Tensor{}
			r := feedRagged(b, s, x, feeds)
			out := graphst.ReduceRows(s, r, red)
			if err := s.Err(); err != nil {
				b.Fatal(err)
			}
			sess := must(tfbridge.NewSession(s.Graph()))
			defer sess.Close()
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				res, err := sess.Run(feeds, []tfbridge.Output{out.Values()}, nil)
				if err != nil {
					b.Fatal(err)
				}
				v, err := res[0].Value()
				if err != nil || v.Len() != rows {
					b.Fatal(err)
				}
				res[0].Close()
			}
		})
	}
}
