package decode

import (
	"math/rand/v2"

	"google.golang.org/protobuf/proto"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
)

// The tests of this package decode small batches on several threads so
// as to exercise several chunks (splits, hand-overs, the close-up); a
// decode into lent buffers gives a thread a walk of at least 100 us at
// the plan's measured rate (native's min_thread_seconds), which would
// leave most of them one chunk.
func init() { testhook.MinThreadSeconds(0) }

// TestShortWalksStayOnOneThread checks that floor: once a plan has
// measured its rate, a batch whose walk would be shorter than two
// threads' floor decodes into lent buffers in one chunk however many
// threads it is given (no second chunk's row splits for the close-up to
// rebase), and a batch of many times the floor in two. The floor is set
// to 5 ms here, far from both batches' walks whatever the test machine's
// speed (its rate, page faults included, was 110-400 MB a second). Neither
// hand-overs nor deferred splits, so that a second chunk's splits are
// always rebased by the close-up, which counts them.
func TestShortWalksStayOnOneThread(t *testing.T) {
	testhook.MinThreadSeconds(0.005)
	defer testhook.MinThreadSeconds(0)
	testhook.Handover(-1, 0)
	defer testhook.Handover(0, 0)
	testhook.DeferSplits(-1)
	defer testhook.DeferSplits(0)
	b := &benchBuilder{t: t, d: testDescriptors(t), rng: rand.New(rand.NewPCG(5, 6))}
	plan, err := Compile(b.d, "structtensor.testdata.flat.Flat")
	if err != nil {
		t.Fatal(err)
	}
	// Flat records: 100 packed fields of 100 varints, about 30 KB each;
	// eight made, repeated (making one through dynamicpb is slow, very
	// slow under the race detector, and the split depends on sizes only).
	var made [][]byte
	for range 8 {
		r, err := proto.Marshal(b.flat())
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, r)
	}
	records := func(n int) (recs [][]byte, size int) {
		for i := range n {
			recs = append(recs, made[i%len(made)])
			size += len(made[i%len(made)])
		}
		return recs, size
	}
	secondChunk := func(recs [][]byte) bool {
		t.Helper()
		before := native.CloseUpRebasedSplits() + native.CloseUpMovedSplits()
		st, err := plan.Decode(recs, DecodeOptions{Threads: 2})
		if err != nil || st.NumRows() != len(recs) {
			t.Fatalf("decode: %v", err)
		}
		return native.CloseUpRebasedSplits()+native.CloseUpMovedSplits() != before
	}
	large, largeBytes := records(400)
	for range 3 { // the plan measures its rate
		secondChunk(large)
	}
	// At least 64 KiB, the least batch decoded into lent buffers.
	small, smallBytes := records(3)
	if secondChunk(small) {
		t.Errorf("%d bytes of records on two threads: a second chunk", smallBytes)
	}
	if !secondChunk(large) {
		t.Errorf("%d bytes of records on two threads: one chunk", largeBytes)
	}
}
