package cops_test

import (
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// BenchmarkDecodeOp compares, on the same recipe records, the Go path
// (plan.Decode), the op in a session with the outputs left as TensorFlow
// tensors (Session.Run), and the op with the outputs rebuilt as a
// StructTensor (graphst.Run), all on one engine thread.
func BenchmarkDecodeOp(b *testing.B) {
	md, plan := messagePlan(b, "structtensor.testdata.recipe.Recipe")
	records, err := copstest.Records(md, 20000, 1, copstest.Options{MaxRepeated: 5})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, r := range records {
		size += int64(len(r))
	}
	sess, in, sym := decodeGraph(b, plan, cops.Options{Threads: 1})
	feeds := map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(b, records)}
	b.Run("go", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			if _, err := plan.Decode(records, decode.DecodeOptions{Threads: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op-tensors", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			out, err := sess.Run(feeds, sym.Components(), nil)
			if err != nil {
				b.Fatal(err)
			}
			for _, t := range out {
				t.Close()
			}
		}
	})
	b.Run("op-struct", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			if _, err := graphst.Run(b.Context(), sess, feeds, sym); err != nil {
				b.Fatal(err)
			}
		}
	})
}
