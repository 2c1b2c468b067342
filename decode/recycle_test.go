package decode

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestRecycleReusesValues decodes batches of wide, nested and scalar
// schemas, of one record to a lent few hundred kilobytes, each into the
// room of the values of the output recycled before it: every output must
// equal the reference, be built in that room (the same root struct, and
// testhook.SlabsReused counting it), and an output kept, not recycled,
// must keep its values however many decodes follow. A decode that fails
// gives its room back for the next.
func TestRecycleReusesValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, message := range threadedMessages {
		plan, md := compiledMessage(t, message)
		records := mergedRecords(t, md, rng, 600)
		type batch struct {
			want    []any
			data    []byte
			offsets []int64
		}
		// One to a few hundred records; and records repeated past 64 KiB,
		// lent (ST_LEND_MIN_BYTES).
		lent, size := records[18:], 0
		for _, r := range lent {
			size += len(r)
		}
		for size < 80<<10 {
			lent = append(lent, records...)
			for _, r := range records {
				size += len(r)
			}
		}
		var batches []batch
		for _, recs := range [][][]byte{records[:1], records[1:17], records[17:18], lent, records[300:301], nil} {
			data, offsets := contiguous(recs)
			batches = append(batches, batch{refRecords(t, md, recs), data, offsets})
		}
		decode := func(name string, b batch, threads int) *structtensor.StructTensor {
			t.Helper()
			st, err := plan.DecodeContiguous(b.data, b.offsets, DecodeOptions{Threads: threads})
			if err != nil {
				t.Fatalf("%s: %s: %v", message, name, err)
			}
			if ok, why := sameValue(b.want, structtensor.ToValue(st)); !ok {
				t.Errorf("%s: %s: differs from the reference: %s", message, name, why)
			}
			return st
		}
		prev := decode("first batch", batches[0], 1)
		for round, threads := range []int{1, 2, 1} {
			for i := range batches {
				b := batches[(i+1+round)%len(batches)]
				name := fmt.Sprintf("round %d, batch %d of %d records, %d threads", round, i, len(b.offsets)-1, threads)
				plan.Recycle(prev)
				reused := testhook.SlabsReused.Load()
				st := decode(name, b, threads)
				if testhook.SlabsReused.Load() != reused+1 {
					t.Errorf("%s: %s: not built in the recycled output's room", message, name)
				}
				if st != prev {
					t.Errorf("%s: %s: root struct at %p, not the recycled one's %p", message, name, st, prev)
				}
				prev = st
			}
		}

		// Kept, not recycled: later decodes take rooms of their own.
		kept := prev
		keptWant := batches[(len(batches)+2)%len(batches)].want
		reused := testhook.SlabsReused.Load()
		for i := range 20 {
			b := batches[i%len(batches)]
			st := decode(fmt.Sprintf("after the kept output, batch %d", i), b, 1)
			if st == kept {
				t.Fatalf("%s: a decode built its output in the room of one kept, not recycled", message)
			}
			plan.Recycle(st)
		}
		if got := testhook.SlabsReused.Load() - reused; got != 19 {
			t.Errorf("%s: 20 decodes each recycling the one before: %d built in a recycled room, want 19", message, got)
		}
		runtime.GC()
		if ok, why := sameValue(keptWant, structtensor.ToValue(kept)); !ok {
			t.Errorf("%s: the kept output, after 20 more decodes: %s", message, why)
		}

		// A failed decode's room serves the next.
		st := decode("before a failed decode", batches[1], 1)
		plan.Recycle(st)
		bad := append([]byte(nil), batches[1].data...)
		bad = append(bad, 0xff, 0xff, 0xff)
		badOffsets := append(append([]int64(nil), batches[1].offsets...), int64(len(bad)))
		if _, err := plan.DecodeContiguous(bad, badOffsets, DecodeOptions{Threads: 1}); err == nil {
			t.Fatalf("%s: a record of three 0xff bytes decoded without an error", message)
		}
		reused = testhook.SlabsReused.Load()
		decode("after a failed decode", batches[2], 1)
		if testhook.SlabsReused.Load() != reused+1 {
			t.Errorf("%s: the decode after a failed one did not take the room the failed one was given", message)
		}
	}
}

// TestRecycleConcurrently decodes and recycles on one plan from several
// goroutines at once, each checking its every output against the
// reference before recycling it: a room is never handed to two builds.
func TestRecycleConcurrently(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	plan, md := compiledMessage(t, "structtensor.testdata.wide.SparseNested")
	records := mergedRecords(t, md, rng, 64)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				lo := (g*7 + i) % 60
				recs := records[lo : lo+1+i%4]
				want := refRecords(t, md, recs)
				data, offsets := contiguous(recs)
				st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
				if err != nil {
					t.Error(err)
					return
				}
				runtime.Gosched() // let the others recycle and build meanwhile
				if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
					t.Errorf("goroutine %d, decode %d: differs from the reference: %s", g, i, why)
					return
				}
				plan.Recycle(st)
			}
		}()
	}
	wg.Wait()
}

// contiguousDecoder is what BenchmarkRecycle calls of a Plan or an
// ExamplePlan.
type contiguousDecoder interface {
	DecodeContiguous(data []byte, offsets []int64, opts ...DecodeOptions) (*structtensor.StructTensor, error)
	Recycle(st *structtensor.StructTensor)
}

// BenchmarkRecycle decodes small batches (one record, sixteen) of wide,
// nested and tf.Example records, and tf.Examples by feature spec, into
// fresh memory (fresh) and into the memory of the output before,
// recycled (recycled): the fixed costs of a batch, which a server
// decoding a request's records pays for each, are mostly the values
// built for every leaf of the schema.
//
//	go test ./decode -run '^$' -bench Recycle -benchmem
func BenchmarkRecycle(b *testing.B) {
	spec, specData, specOffsets := benchExamples(16)
	specPlan, err := CompileExample(spec)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 16} {
		benchmarkRecycle(b, fmt.Sprintf("ExampleSpec/records=%d", n), specPlan, specData[:specOffsets[n]], specOffsets[:n+1])
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, message := range []string{
		"structtensor.testdata.example.Example",
		"structtensor.testdata.recipe.Recipe",
		"structtensor.testdata.wide.WideSparse",
		"structtensor.testdata.wide.SparseNested",
	} {
		plan, md := compiledMessage(b, message)
		records := mergedRecords(b, md, rng, 16)
		for _, n := range []int{1, 16} {
			data, offsets := contiguous(records[:n])
			benchmarkRecycle(b, fmt.Sprintf("%s/records=%d", message[strings.LastIndex(message, ".")+1:], n), plan, data, offsets)
		}
	}
}

// benchmarkRecycle runs BenchmarkRecycle's two ways on one batch.
func benchmarkRecycle(b *testing.B, name string, plan contiguousDecoder, data []byte, offsets []int64) {
	b.Run(name+"/fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/recycled", func(b *testing.B) {
		b.ReportAllocs()
		var last *structtensor.StructTensor
		for b.Loop() {
			plan.Recycle(last)
			st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			last = st
		}
	})
}

// TestExampleRecycleReusesValues decodes tf.Examples and
// SequenceExamples by feature spec (fixed-length, shaped, variable-length
// and sequence features of every dtype), batches of different sizes one
// after another, each into the room of the output recycled before it:
// each must equal a decode by a plan of the same spec that recycles
// nothing (held to TensorFlow's parsing by the semantics tests), and be
// built in the recycled room.
func TestExampleRecycleReusesValues(t *testing.T) {
	for _, tc := range exampleSets {
		spec, data, offsets := tc.gen(300)
		plan, err := compileExample(spec, tc.name == "sequence")
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := compileExample(spec, tc.name == "sequence")
		if err != nil {
			t.Fatal(err)
		}
		var prev *structtensor.StructTensor
		for i, span := range [][2]int{{0, 1}, {1, 17}, {17, 17}, {17, 300}, {5, 6}, {100, 164}} {
			batch := offsets[span[0] : span[1]+1]
			want, err := fresh.DecodeContiguous(data, batch)
			if err != nil {
				t.Fatal(err)
			}
			plan.Recycle(prev)
			reused := testhook.SlabsReused.Load()
			st, err := plan.DecodeContiguous(data, batch, DecodeOptions{Threads: 1 + i%2})
			if err != nil {
				t.Fatal(err)
			}
			if !structtensor.Equal(want, st) {
				t.Errorf("%s, records %d to %d: differs from the decode of a plan that recycles nothing", tc.name, span[0], span[1])
			}
			if prev != nil && (testhook.SlabsReused.Load() != reused+1 || st != prev) {
				t.Errorf("%s, records %d to %d: not built in the recycled output's room", tc.name, span[0], span[1])
			}
			prev = st
		}
	}
}
