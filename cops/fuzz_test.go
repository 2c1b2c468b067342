package cops_test

import (
	"errors"
	"testing"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// FuzzDecodeOp feeds arbitrary bytes, as a batch of records, through the
// op in a TensorFlow session and through plan.Decode: both must accept the
// same batches with equal StructTensors, and reject the same batches, the
// op with InvalidArgument (never a crash of the process).
func FuzzDecodeOp(f *testing.F) {
	md, plan := messagePlan(f, "structtensor.testdata.recipe.Recipe")
	seeds, err := copstest.Records(md, 8, 11, copstest.Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add(s, []byte{})
	}
	f.Add([]byte{0x12, 0x05, 0x0a, 0x01}, []byte{0x22, 0x02, 0x1a, 0x00})
	f.Add([]byte{0xff, 0xff, 0xff}, []byte{0x0a})
	sess, in, sym := decodeGraph(f, plan)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		records := [][]byte{a, b}
		want, wantErr := plan.Decode(records)
		got, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
		switch {
		case wantErr != nil && err == nil:
			t.Fatalf("plan.Decode failed (%v), the op did not", wantErr)
		case wantErr == nil && err != nil:
			t.Fatalf("the op failed (%v), plan.Decode did not", err)
		case err != nil:
			if !errors.Is(err, tfbridge.ErrInvalidArgument) {
				t.Fatalf("op error is not InvalidArgument: %v", err)
			}
		case !structtensor.Equal(got, want):
			t.Fatalf("op %v\nplan.Decode %v", got, want)
		}
	})
}
