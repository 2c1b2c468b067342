package decode

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Batches too small to lend the engine Go buffers (under
// ST_LEND_MIN_BYTES of records) have their outputs copied out of engine
// memory: all in one call into one block, or each on its own past
// copyAllBytes. TestSmallBatchesCopiedAtOnce decodes batches of one to a
// few hundred records of wide, nested and scalar schemas both ways and
// holds both to the reference; that the one-call way was taken, into a
// pooled block where it is large; that a result copied into a pooled
// block recycles it; and that a kept output outlives its result, the
// engine memory it was copied from reused by later decodes.
func TestSmallBatchesCopiedAtOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pooledBefore := testhook.CopiedIntoPooled.Load()
	for _, message := range threadedMessages {
		plan, md := compiledMessage(t, message)
		records := mergedRecords(t, md, rng, 300)
		for _, n := range []int{0, 1, 2, 16, 300} {
			batch := records[:n]
			want := refRecords(t, md, batch)
			data, offsets := contiguous(batch)
			for _, way := range []struct {
				name  string
				limit int64
			}{{"at once", 0}, {"one by one", -1}} {
				testhook.CopyAllBytes.Store(way.limit)
				before := testhook.CopiedAtOnce.Load()
				st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
				testhook.CopyAllBytes.Store(0)
				name := fmt.Sprintf("%s, %d records, copied %s", message, n, way.name)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
					t.Errorf("%s: differs from the reference: %s", name, why)
				}
				if len(data) >= 64<<10 {
					continue // lent: nothing or little to copy
				}
				if atOnce := testhook.CopiedAtOnce.Load() - before; atOnce != map[bool]int64{true: 1, false: 0}[way.limit == 0] {
					t.Errorf("%s: %d results copied out in one call", name, atOnce)
				}
			}
		}
	}
	if testhook.CopiedIntoPooled.Load() == pooledBefore {
		t.Error("no result was copied into a pooled block: the test's batches miss that path")
	}

	// Wide sparse records: 400 of them have outputs past the pool's
	// least block, under the least batch lent.
	plan, md := compiledMessage(t, "structtensor.testdata.wide.WideSparse")
	a := wideSparseRecords(t, md, rng, 400)
	b := wideSparseRecords(t, md, rng, 400)
	wantA, wantB := refRecords(t, md, a), refRecords(t, md, b)
	dataA, offA := contiguous(a)
	dataB, offB := contiguous(b)
	if len(dataA) >= 64<<10 || len(dataB) >= 64<<10 {
		t.Fatalf("batches of %d and %d bytes: lent, not copied out", len(dataA), len(dataB))
	}
	withoutReturns(t)
	pooled := testhook.CopiedIntoPooled.Load()
	stA, err := plan.DecodeContiguous(dataA, offA, DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if testhook.CopiedIntoPooled.Load() == pooled {
		t.Fatal("wide sparse records: not copied into a pooled block")
	}
	if ok, why := sameValue(wantA, structtensor.ToValue(stA)); !ok {
		t.Errorf("copied into a pooled block: differs from the reference: %s", why)
	}
	blocksA := plan.recent.blocksOf(stA)
	if len(blocksA) != 1 {
		t.Fatalf("the copied result's blocks: %x, want the one it was copied into", blocksA)
	}
	plan.Recycle(stA)
	stB, err := plan.DecodeContiguous(dataB, offB, DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := sameValue(wantB, structtensor.ToValue(stB)); !ok {
		t.Errorf("copied into a recycled block: differs from the reference: %s", why)
	}
	if blocksB := plan.recent.blocksOf(stB); !slices.Equal(blocksA, blocksB) {
		t.Errorf("copied into block %x, not into the recycled %x", blocksB, blocksA)
	}
	// stB is kept, not recycled: the engine's buffers it was copied from
	// go back to the plan and hold the next batches' outputs.
	for range 20 {
		if _, err := plan.DecodeContiguous(dataA, offA, DecodeOptions{Threads: 1}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	if ok, why := sameValue(wantB, structtensor.ToValue(stB)); !ok {
		t.Errorf("a kept output, after 20 more decodes: differs from the reference: %s", why)
	}
}
