package decode

import (
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestExampleDecodesIntoItsGuess checks the one-thread feature decode
// straight into a block laid out from the plan's last batch, in
// stretches of records copied there as they are decoded (native's
// st_example_decode_contiguous_into), with stretches of a few hundred
// bytes so that every batch here has dozens: batches of random specs and
// records (Example and SequenceExample) decode to what the usual decode
// on two threads gives, errors included, whether the guess held (the
// block) or was too small (the batch decoded again the usual way); the
// lent block is poisoned first, so an element the stretches failed to
// write shows. Both ways must have been taken.
func TestExampleDecodesIntoItsGuess(t *testing.T) {
	defer testhook.ExampleStretchBytes(testhook.ExampleStretchBytes(300))
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	into, fallbacks := testhook.ExampleInto.Load(), testhook.ExampleIntoFallbacks.Load()
	for _, sequence := range []bool{false, true} {
		for _, c := range genExampleCases(17, 16, sequence) {
			compile := CompileExample
			if sequence {
				compile = CompileSequenceExample
			}
			plan, err := compile(c.Spec)
			if err != nil {
				t.Fatal(err)
			}
			// Three batches: the records over and over; the longest
			// records only, whose outputs per byte and per record differ
			// from the first's; the first again. Each after the one
			// before, so each is guessed from another.
			var all, longest [][]byte
			long := 0
			for _, r := range c.records {
				long = max(long, len(r))
			}
			for size := 0; size < 64<<10; {
				for _, r := range c.records {
					all = append(all, r)
					size += len(r) + 16
					if len(r) == long {
						longest = append(longest, r, r)
					}
				}
			}
			for i, batch := range [][][]byte{all, longest, all} {
				got, err := plan.Decode(batch, DecodeOptions{Threads: 1})
				want, wantErr := plan.Decode(batch, DecodeOptions{Threads: 2})
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Fatalf("sequence %v, batch %d: error %v, the usual decode's %v", sequence, i, err, wantErr)
				}
				if err == nil && !structtensor.Equal(got, want) {
					t.Fatalf("sequence %v, batch %d: the decode into the block differs from the usual one", sequence, i)
				}
				// The usual decode sets the guess for the next batch;
				// decode on one thread again so that the next one is
				// guessed from this one's own decode into the block.
				if _, err := plan.Decode(batch, DecodeOptions{Threads: 1}); (err == nil) != (wantErr == nil) {
					t.Fatalf("sequence %v, batch %d: error %v the second time", sequence, i, err)
				}
			}
		}
	}
	if testhook.ExampleInto.Load() == into {
		t.Error("no decode went into its guessed block")
	}
	if testhook.ExampleIntoFallbacks.Load() == fallbacks {
		t.Error("no guess was too small")
	}
}

// TestExampleIntoStopsAtABadRecord checks that a bad record far into a
// batch decoded into a block is reported as the usual decode reports it
// (its index in the batch), and that the next batch decodes whole.
func TestExampleIntoStopsAtABadRecord(t *testing.T) {
	defer testhook.ExampleStretchBytes(testhook.ExampleStretchBytes(300))
	c := genExampleCases(5, 1, false)[0]
	plan, err := CompileExample(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for len(recs) < 4000 {
		recs = append(recs, c.records...)
	}
	if _, err := plan.Decode(recs, DecodeOptions{Threads: 1}); err != nil {
		t.Skipf("the generated records do not decode: %v", err)
	}
	bad := append([][]byte(nil), recs...)
	bad[3001] = []byte{0x0a, 0x05, 0x0a} // features: a length past the record
	into := testhook.ExampleInto.Load()
	_, err = plan.Decode(bad, DecodeOptions{Threads: 1})
	_, want := plan.Decode(bad, DecodeOptions{Threads: 2})
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("error %v, the usual decode's %v", err, want)
	}
	got, err := plan.Decode(recs, DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if testhook.ExampleInto.Load() == into {
		t.Fatal("no decode went into its guessed block")
	}
	if want, _ := plan.Decode(recs, DecodeOptions{Threads: 2}); !structtensor.Equal(got, want) {
		t.Fatal("the batch after the bad one decodes wrong")
	}
}
