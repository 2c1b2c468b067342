package decode

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestDecodeSplitsChunks decodes batches on 2, 3 and 8 threads into lent
// buffers with the threads done with their chunk splitting the chunks
// still walking (the one split keeps the first half of its records left
// and gives the rest, with the rest of its stretch of each buffer, to the
// thread that asked), and compares every output with the one-thread
// decode, itself compared with the reference. The first or the last chunk's walk is slowed
// down until the batch's first split, so that one of it happens; the
// splits run with the hand-over of the records' own row splits on and
// off, deferred and not, so that a tail takes it, writes its splits
// itself, or has them rebased by the close-up. A batch whose first record
// is most of it splits the last chunk only (the first is one record).
func TestDecodeSplitsChunks(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the engine starts no helper thread, so no chunk is split")
	}
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	defer testhook.Steal(0)
	defer testhook.Handover(0, 0)
	defer testhook.DeferSplits(0)
	d := testDescriptors(t)
	for _, message := range threadedMessages {
		md, err := d.Message(message)
		if err != nil {
			t.Fatal(err)
		}
		records, skewed := threadedBatches(t, md, rand.New(rand.NewPCG(17, 18)))
		refs := newRefChecks(md)
		threadCounts := []int{2, 3, 8}
		if testing.Short() {
			threadCounts = threadCounts[:2]
		}
		for _, batch := range []struct {
			name       string
			records    [][]byte
			firstSplit bool // the first chunk has records to split
		}{{"records", records, true}, {"a skewed batch", skewed, false}} {
			data, offsets := contiguous(batch.records)
			for _, threads := range threadCounts {
				plan, err := Compile(d, message)
				if err != nil {
					t.Fatal(err)
				}
				want, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
				if err != nil {
					t.Fatalf("%s, %s on 1 thread: %v", message, batch.name, err)
				}
				refs.check(t, fmt.Sprintf("%s, %s on 1 thread", message, batch.name), batch.records, want)
				testhook.Steal(-1)
				if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads}); err != nil { // sizes the next
					t.Fatal(err)
				}
				for _, cfg := range []struct {
					steal, handover int
					deferring       bool
				}{{2, 0, true}, {3, 0, true}, {2, 1, true}, {3, 1, false}, {2, -1, false}, {3, -1, false}, {1, 0, true}} {
					name := fmt.Sprintf("%s, %s on %d threads (split mode %d, hand-over mode %d, deferring %v)",
						message, batch.name, threads, cfg.steal, cfg.handover, cfg.deferring)
					split := false
					// The threads' timing may defeat the split (a chunk
					// ends before another thread asks): up to 10 batches.
					for try := 0; try < 10 && !split; try++ {
						testhook.Steal(cfg.steal)
						testhook.Handover(cfg.handover, 4)
						testhook.DeferSplits(deferMode(cfg.deferring))
						s0 := native.Splits()
						got, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
						split = native.Splits() > s0
						testhook.Steal(0)
						testhook.Handover(0, 0)
						testhook.DeferSplits(0)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if !structtensor.Equal(got, want) {
							t.Fatalf("%s: differs from the decode on one thread (split: %v)", name, split)
						}
					}
					if !split && (cfg.steal == 3 || cfg.steal == 2 && batch.firstSplit) {
						t.Errorf("%s: no chunk split in 10 batches", name)
					}
				}
			}
		}
	}
}

// TestSplitStopsAtABadRecord decodes wide sparse batches with one bad
// record (truncated, or a length past its end) early, in the middle and
// late, on 2 and 3 threads with every chunk split when another thread is
// free: each reports the record the one-thread decode reports (the first
// bad record in batch order, whichever chunk, split or tail, reached it),
// and none waits for an answer that never comes.
func TestSplitStopsAtABadRecord(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: no chunk is split")
	}
	defer testhook.Steal(0)
	plan, good := wideSparseBatch(t, rand.New(rand.NewPCG(19, 20)))
	data, offsets := contiguous(good)
	if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 2}); err != nil { // sizes the next
		t.Fatal(err)
	}
	for _, bad := range badWideSparseRecords {
		for _, at := range [][]int{{len(good) / 20}, {len(good) * 4 / 10}, {len(good) * 7 / 10}, {len(good) - 3}, {len(good) * 3 / 10, len(good) * 8 / 10}} {
			records := slices.Clone(good)
			for _, i := range at {
				records[i] = bad.record
			}
			data, offsets := contiguous(records)
			_, want := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
			var wantErr *RecordError
			if !errors.As(want, &wantErr) || wantErr.Record != int64(at[0]) {
				t.Fatalf("%s at records %v on 1 thread: got %v, want a RecordError at record %d", bad.name, at, want, at[0])
			}
			for _, threads := range []int{2, 3} {
				for _, mode := range []int{1, 2, 3} {
					testhook.Steal(mode)
					_, got := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
					testhook.Steal(0)
					var gotErr *RecordError
					if !errors.As(got, &gotErr) || gotErr.Record != wantErr.Record || gotErr.Error() != wantErr.Error() {
						t.Errorf("%s at records %v on %d threads (split mode %d): got %v, want %v", bad.name, at, threads, mode, got, want)
					}
				}
			}
		}
	}
}
