package decode

import (
	"runtime"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// usualExamplePath makes the test's feature decodes take the usual path
// (a chunk per thread, copied out after): no batch is then large enough
// to go straight into a block.
func usualExamplePath(t *testing.T) {
	testhook.ExampleStretchBytes(1 << 40)
	t.Cleanup(func() { testhook.ExampleStretchBytes(0) })
}

// usualExampleDecode decodes batch on two threads the usual way (a chunk
// each, copied out after), as no batch is large enough to go straight
// into a block, and puts back the stretch of stretchBytes.
func usualExampleDecode(plan *ExamplePlan, batch [][]byte, stretchBytes int64) (*structtensor.StructTensor, error) {
	testhook.ExampleStretchBytes(1 << 40)
	defer testhook.ExampleStretchBytes(stretchBytes)
	return plan.Decode(batch, DecodeOptions{Threads: 2})
}

// TestExampleDecodesIntoItsGuess checks the feature decode straight into
// a block laid out from the plan's last batch, in stretches of records
// copied there as they are decoded (native's
// st_example_decode_contiguous_into), with stretches of a few hundred
// bytes so that every batch here has dozens: batches of random specs and
// records (Example and SequenceExample) decode on one and on two threads
// to what the usual decode gives, errors included, whether the guess
// held (the block) or was too small (the batch decoded again the usual
// way); the lent block is poisoned first, so an element the stretches
// failed to write shows. Both ways must have been taken. The strings'
// UTF-8 marks (set by the threads, stretch by stretch or chunk by chunk)
// are those Go's check gives.
func TestExampleDecodesIntoItsGuess(t *testing.T) {
	const stretch = 300
	testhook.ExampleStretchBytes(stretch)
	defer testhook.ExampleStretchBytes(0)
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	into, fallbacks := testhook.ExampleInto.Load(), testhook.ExampleIntoFallbacks.Load()
	for _, sequence := range []bool{false, true} {
		for _, c := range genExampleCases(17, 16, sequence) {
			plan, err := compileExample(c.Spec, sequence)
			if err != nil {
				t.Fatal(err)
			}
			// Three batches: the records over and over; the longest
			// records only, whose outputs per byte and per record differ
			// from the first's; the first again. Each is guessed from the
			// one before.
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
				one, errOne := plan.Decode(batch, DecodeOptions{Threads: 1})
				two, errTwo := plan.Decode(batch, DecodeOptions{Threads: 2})
				want, wantErr := usualExampleDecode(plan, batch, stretch)
				if wantErr == nil {
					checkUTF8Marks(t, want, "")
				}
				for threads, got := range map[int]struct {
					st  *structtensor.StructTensor
					err error
				}{1: {one, errOne}, 2: {two, errTwo}} {
					if (got.err == nil) != (wantErr == nil) || (got.err != nil && got.err.Error() != wantErr.Error()) {
						t.Fatalf("sequence %v, batch %d, %d threads: error %v, the usual decode's %v", sequence, i, threads, got.err, wantErr)
					}
					if got.err == nil && !structtensor.Equal(got.st, want) {
						t.Fatalf("sequence %v, batch %d, %d threads: the decode into the block differs from the usual one", sequence, i, threads)
					}
				}
				// The usual decode set the guess for the next batch;
				// decode again so that it is guessed from a decode into
				// the block.
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
	const stretch = 300
	testhook.ExampleStretchBytes(stretch)
	defer testhook.ExampleStretchBytes(0)
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
	_, want := usualExampleDecode(plan, bad, stretch)
	for _, threads := range []int{1, 2} {
		_, err = plan.Decode(bad, DecodeOptions{Threads: threads})
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Fatalf("%d threads: error %v, the usual decode's %v", threads, err, want)
		}
	}
	got, err := plan.Decode(recs, DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if testhook.ExampleInto.Load() == into {
		t.Fatal("no decode went into its guessed block")
	}
	if want, _ := usualExampleDecode(plan, recs, stretch); !structtensor.Equal(got, want) {
		t.Fatal("the batch after the bad one decodes wrong")
	}
}

// TestExampleIntoOutputOutlivesItsInput checks that the output of a
// decode into a block holds no reference to the records (string
// features included) or to the engine's chunks: it stays the same once
// the records' buffer is overwritten, a collection has run and more
// batches have been decoded into blocks (the chunks reused).
func TestExampleIntoOutputOutlivesItsInput(t *testing.T) {
	const stretch = 300
	testhook.ExampleStretchBytes(stretch)
	defer testhook.ExampleStretchBytes(0)
	strings, into := 0, testhook.ExampleInto.Load()
	for _, c := range genExampleCases(31, 12, false) {
		plan, err := CompileExample(c.Spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.Spec.Features {
			if f.DType == structtensor.String {
				strings++
			}
		}
		var recs [][]byte
		for len(recs) < 2000 {
			recs = append(recs, c.records...)
		}
		data, offsets := contiguous(recs)
		want, wantErr := usualExampleDecode(plan, recs, stretch)
		if wantErr != nil {
			continue
		}
		for _, threads := range []int{1, 2} {
			got, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			for i := range data {
				data[i] = 0xff
			}
			runtime.GC()
			for range 3 {
				plan.Decode(recs, DecodeOptions{Threads: threads}) // the chunks reused
			}
			if !structtensor.Equal(got, want) {
				t.Fatalf("%d threads: the output changed with its input's buffer", threads)
			}
			data, offsets = contiguous(recs)
		}
	}
	if strings == 0 || testhook.ExampleInto.Load() == into {
		t.Fatal("no string feature or no decode into a block: the test does not exercise what it should")
	}
}
