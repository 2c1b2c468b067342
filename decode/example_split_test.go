package decode

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// exampleSplitBatch returns the records of c that decode without error,
// repeated to about size bytes (none if none does), and the plan for c's
// spec.
func exampleSplitBatch(t *testing.T, c *exampleCase, size int) (*ExamplePlan, [][]byte) {
	t.Helper()
	compile := CompileExample
	if c.Sequence {
		compile = CompileSequenceExample
	}
	plan, err := compile(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var good [][]byte
	for _, r := range c.records {
		if _, err := plan.Decode([][]byte{r}); err == nil && len(r) > 0 {
			good = append(good, r)
		}
	}
	var recs [][]byte
	for n := 0; n < size && len(good) > 0; {
		for _, r := range good {
			recs = append(recs, r)
			n += len(r)
		}
	}
	return plan, recs
}

// TestExampleSplitsChunks decodes batches by feature spec (Example and
// SequenceExample specs of every kind) on 2, 3 and 8 threads with the
// threads done with their chunk splitting the chunks still walking (the
// one split keeps the first half of its records left and gives the rest
// to the thread that asked, in a chunk of outputs of its own), and
// compares every output with the one-thread decode. The first or the
// last chunk's walk is slowed down until the batch's first split, so
// that one of them happens; a batch whose first records are most of its
// bytes splits the last chunk only.
func TestExampleSplitsChunks(t *testing.T) {
	usualExamplePath(t) // what this tests
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the engine starts no helper thread, so no chunk is split")
	}
	defer testhook.Steal(0)
	threadCounts := []int{2, 3, 8}
	if testing.Short() {
		threadCounts = threadCounts[:2]
	}
	for _, sequence := range []bool{false, true} {
		cases := 0
		for k, c := range genExampleCases(23, 12, sequence) {
			plan, recs := exampleSplitBatch(t, c, 1<<20)
			if len(recs) == 0 || cases == 6 {
				continue
			}
			cases++
			// The skewed batch: its first record (the others merged, as
			// concatenated messages are) holds three quarters of its
			// bytes, so that the first chunk is that one record.
			var big []byte
			for _, r := range recs[len(recs)/4:] {
				big = append(big, r...)
			}
			skewed := append([][]byte{big}, recs[:len(recs)/4]...)
			for _, batch := range []struct {
				name       string
				records    [][]byte
				firstSplit bool // the first chunk has records to split
			}{{"records", recs, true}, {"a skewed batch", skewed, false}} {
				want, errWant := plan.Decode(batch.records, DecodeOptions{Threads: 1})
				for _, threads := range threadCounts {
					for _, mode := range []int{2, 3, 1} {
						name := fmt.Sprintf("sequence %v, case %d, %s on %d threads (split mode %d)", sequence, k, batch.name, threads, mode)
						split := false
						// The threads' timing may defeat the split (a chunk
						// ends before another thread asks): up to 10 batches.
						for try := 0; try < 10 && !split; try++ {
							testhook.Steal(mode)
							s0 := native.Splits()
							got, err := plan.Decode(batch.records, DecodeOptions{Threads: threads})
							split = native.Splits() > s0
							testhook.Steal(0)
							if (err == nil) != (errWant == nil) || (err != nil && err.Error() != errWant.Error()) {
								t.Fatalf("%s: error %v, on one thread %v", name, err, errWant)
							}
							if err == nil && !structtensor.Equal(got, want) {
								t.Fatalf("%s: differs from the decode on one thread (split: %v)", name, split)
							}
						}
						if !split && (mode == 3 || mode == 2 && batch.firstSplit) {
							t.Errorf("%s: no chunk split in 10 batches", name)
						}
					}
				}
			}
		}
		if cases < 3 {
			t.Fatalf("sequence %v: %d cases of records that decode", sequence, cases)
		}
	}
}

// TestExampleSplitStopsAtABadRecord decodes batches by feature spec with
// bad records (a length past the record's end, or past its message's) early,
// in the middle and late, on 2 and 3 threads with every chunk split when
// another thread is free: each reports the error the one-thread decode
// reports (the first bad record in batch order, whichever chunk, split
// or tail, reached it), and none waits for an answer that never comes.
func TestExampleSplitStopsAtABadRecord(t *testing.T) {
	usualExamplePath(t) // what this tests
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: no chunk is split")
	}
	defer testhook.Steal(0)
	var plan *ExamplePlan
	var good [][]byte
	for _, c := range genExampleCases(29, 12, false) {
		if plan, good = exampleSplitBatch(t, c, 1<<20); len(good) > 0 {
			break
		}
	}
	if len(good) == 0 {
		t.Fatal("no case of records that decode")
	}
	for _, bad := range []struct {
		name   string
		record []byte
	}{
		{"a length past the end", []byte{0x0a, 0x40, 0x0a, 0x02}},
		{"an entry past its message's end", []byte{0x0a, 0x02, 0x0a, 0x40}},
	} {
		for _, at := range [][]int{{len(good) / 20}, {len(good) * 4 / 10}, {len(good) * 7 / 10}, {len(good) - 3}, {len(good) * 3 / 10, len(good) * 8 / 10}} {
			records := slices.Clone(good)
			for _, i := range at {
				records[i] = bad.record
			}
			_, want := plan.Decode(records, DecodeOptions{Threads: 1})
			var wantErr *RecordError
			if !errors.As(want, &wantErr) || wantErr.Record != int64(at[0]) {
				t.Fatalf("%s at records %v on 1 thread: got %v, want a RecordError at record %d", bad.name, at, want, at[0])
			}
			for _, threads := range []int{2, 3} {
				for _, mode := range []int{1, 2, 3} {
					testhook.Steal(mode)
					_, got := plan.Decode(records, DecodeOptions{Threads: threads})
					testhook.Steal(0)
					var gotErr *RecordError
					if !errors.As(got, &gotErr) || gotErr.Error() != wantErr.Error() {
						t.Errorf("%s at records %v on %d threads (split mode %d): got %v, want %v", bad.name, at, threads, mode, got, want)
					}
				}
			}
		}
	}
}

// TestExampleSplitOutputOutlivesItsInput decodes batches by feature spec
// on two threads with every chunk split when another thread is free,
// then overwrites the records' buffer and collects garbage: the output,
// copied out of the chunks (tails included) into Go memory, still equals
// the decode of an untouched copy of the records.
func TestExampleSplitOutputOutlivesItsInput(t *testing.T) {
	usualExamplePath(t) // what this tests
	defer testhook.Steal(0)
	strings := 0
	for _, c := range genExampleCases(31, 12, false) {
		plan, recs := exampleSplitBatch(t, c, 1<<20)
		if len(recs) == 0 {
			continue
		}
		for _, f := range c.Spec.Features {
			if f.DType == structtensor.String {
				strings++
			}
		}
		data, offsets := contiguous(recs)
		want, err := plan.DecodeContiguous(slices.Clone(data), offsets, DecodeOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		testhook.Steal(1)
		got, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 2})
		testhook.Steal(0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range data {
			data[i] = 0xff
		}
		runtime.GC()
		if !structtensor.Equal(got, want) {
			t.Fatal("the output changed with its input's buffer")
		}
	}
	if strings == 0 {
		t.Fatal("no string feature: the test does not exercise copied bytes")
	}
}
