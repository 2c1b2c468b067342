package cops_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// lendSizes is one entry of the engine's log of lend sizes
// (st_test_lend_log): the batch, whether to lend, and the room per output.
type lendSizes struct {
	InBytes, Records int64
	Lend             bool
	Columns, Offsets []int64 // per column: bytes; string offsets
	Partitions       []int64 // per partition: row splits
}

func parseLendLog(t *testing.T, log []int64) []lendSizes {
	t.Helper()
	var out []lendSizes
	for len(log) > 0 {
		if len(log) < 5 {
			t.Fatalf("lend log: %d entries left, want a header of 5", len(log))
		}
		nc, np := int(log[3]), int(log[4])
		if len(log) < 5+2*nc+np {
			t.Fatalf("lend log: %d entries left for %d columns and %d partitions", len(log), nc, np)
		}
		out = append(out, lendSizes{InBytes: log[0], Records: log[1], Lend: log[2] == 1,
			Columns: log[5 : 5+nc], Offsets: log[5+nc : 5+2*nc], Partitions: log[5+2*nc : 5+2*nc+np]})
		log = log[5+2*nc+np:]
	}
	return out
}

// TestDecodeOpSizesLikeGoPath decodes one sequence of batches on the Go
// path (Plan.Decode and Plan.DecodeContiguous, each with a fresh plan) and
// through the op (a fresh kernel), and checks that all three lent the
// same room to every output of every batch: the sizing policy is the
// engine's one (st_plan_lend_sizes), fed the same history. The sequence
// has a first large batch (sized from a sample of itself), a small one
// (nothing lent, history untouched), and larger and smaller ones sized
// from the last large one.
func TestDecodeOpSizesLikeGoPath(t *testing.T) {
	for _, name := range []string{"structtensor.testdata.recipe.Recipe", "structtensor.testdata.example.ExampleListWithContext"} {
		t.Run(name, func(t *testing.T) {
			md, _ := messagePlan(t, name)
			opts := copstest.Options{MaxRepeated: 6}
			batches := [][][]byte{
				recordsOf(t, md, 100, 1, opts, 2*lendable),
				recordsOf(t, md, 20, 2, opts, 0),
				recordsOf(t, md, 100, 3, opts, 4*lendable),
				recordsOf(t, md, 100, 4, opts, lendable),
			}
			fresh := func() *decode.Plan {
				_, plan := messagePlan(t, name)
				return plan
			}
			goPath := func(decodeBatch func(*decode.Plan, [][]byte) error) []lendSizes {
				plan := fresh()
				cops.LendLog(true)
				defer cops.LendLog(false)
				for i, b := range batches {
					if err := decodeBatch(plan, b); err != nil {
						t.Fatalf("batch %d: %v", i, err)
					}
				}
				return parseLendLog(t, cops.LendLogEntries())
			}
			decodeSizes := goPath(func(p *decode.Plan, records [][]byte) error {
				_, err := p.Decode(records)
				return err
			})
			contiguousSizes := goPath(func(p *decode.Plan, records [][]byte) error {
				var data []byte
				offsets := []int64{0}
				for _, r := range records {
					data = append(data, r...)
					offsets = append(offsets, int64(len(data)))
				}
				_, err := p.DecodeContiguous(data, offsets)
				return err
			})

			sess, in, sym := decodeGraph(t, fresh())
			cops.LendLog(true)
			for i, b := range batches {
				fetched, err := sess.Run(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, b)}, sym.Components(), nil)
				if err != nil {
					cops.LendLog(false)
					t.Fatalf("batch %d: %v", i, err)
				}
				for _, f := range fetched {
					f.Close()
				}
			}
			opSizes := parseLendLog(t, cops.LendLogEntries())
			cops.LendLog(false)

			if len(decodeSizes) != len(batches) {
				t.Fatalf("the Go path asked for sizes %d times for %d batches", len(decodeSizes), len(batches))
			}
			for i, s := range decodeSizes {
				if want := i != 1; s.Lend != want {
					t.Errorf("batch %d (%d bytes): lend = %v, want %v", i, s.InBytes, s.Lend, want)
				}
			}
			if fmt.Sprint(decodeSizes[0].Partitions) == fmt.Sprint(decodeSizes[2].Partitions) {
				t.Error("batches 0 and 2 (twice the bytes) got the same sizes: the sizes do not follow the batch")
			}
			sameSizes(t, "Plan.Decode", decodeSizes, "Plan.DecodeContiguous", contiguousSizes)
			sameSizes(t, "the Go path", decodeSizes, "the op", opSizes)
		})
	}
}

// sameSizes reports the first batch whose sizes differ between two paths.
func sameSizes(t *testing.T, nameA string, a []lendSizes, nameB string, b []lendSizes) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s asked for sizes %d times, %s %d times", nameA, len(a), nameB, len(b))
		return
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Errorf("batch %d: %s lent\n%+v\n%s lent\n%+v", i, nameA, a[i], nameB, b[i])
			return
		}
	}
}
