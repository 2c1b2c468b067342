package decode

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestDecodeHandsOverRecordSplits decodes batches on 2, 3 and 8 threads
// into lent buffers with the records' own row splits handed over (the
// thread done with a chunk gives the next chunk's thread its totals;
// that one writes the rest of its splits final, and the first rebases
// those written before) and compares every output with the one-thread
// decode and the reference. The records cover what the walk reads back
// from the splits after the hand-over: singular fields and messages that
// occur twice in a record (two messages concatenated: the second
// replaces or merges), oneof members that replace each other, maps,
// packed and unpacked repeated fields, groups, empty records, and a batch
// whose first record is most of it. On two threads, a hand-over taken in
// the middle of the second chunk leaves the close-up none of the
// records' own splits to rebase. The later chunks defer their splits
// until the hand-over (the default), and the same decodes run with them
// written as the walk goes; in the skewed batch the second chunk ends
// before the first, so that the splits it deferred wait for the first's
// end (adopted) and the close-up rebases none of them.
//
// No chunk is split here (a tail that ends before its hand-over, not
// deferring, leaves its splits to the close-up): TestDecodeSplitsChunks
// runs the hand-over with splits.
func TestDecodeHandsOverRecordSplits(t *testing.T) {
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	testhook.Steal(-1)
	defer testhook.Steal(0)
	defer testhook.Handover(0, 0)
	defer testhook.DeferSplits(0)
	d := testDescriptors(t)
	for _, message := range threadedMessages {
		md, err := d.Message(message)
		if err != nil {
			t.Fatal(err)
		}
		records, skewed := threadedBatches(t, md, rand.New(rand.NewPCG(7, 8)))
		data, offsets := contiguous(records)
		refs := newRefChecks(md)
		threadCounts := []int{2, 3, 8}
		if testing.Short() {
			threadCounts = threadCounts[:2]
		}
		for _, threads := range threadCounts {
			plan, err := Compile(d, message)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
			if err != nil {
				t.Fatalf("%s on 1 thread: %v", message, err)
			}
			refs.check(t, message+" on 1 thread", records, want)
			// decode decodes the batch with the hand-over in mode, and
			// returns the hand-overs taken, the bytes of splits their
			// askers rebased (or wrote, deferred) and those the close-up
			// rebased.
			deferring := true
			decode := func(mode int) (taken, handedBytes, closeUpBytes int64) {
				t.Helper()
				testhook.Handover(mode, 4)
				testhook.DeferSplits(deferMode(deferring))
				t0, h0 := native.Handovers()
				c0 := native.CloseUpRebasedSplits()
				got, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
				t1, h1 := native.Handovers()
				closeUpBytes = native.CloseUpRebasedSplits() - c0
				testhook.Handover(0, 0)
				name := fmt.Sprintf("%s on %d threads (hand-over mode %d, deferring %v)", message, threads, mode, deferring)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !structtensor.Equal(got, want) {
					t.Fatalf("%s: differs from the decode on one thread", name)
				}
				return t1 - t0, h1 - h0, closeUpBytes
			}
			decode(-1) // sizes the next decodes' buffers
			if _, _, closeUp := decode(-1); closeUp == 0 {
				t.Errorf("%s on %d threads: no hand-over, yet the close-up rebased none of the records' own row splits: the test does not exercise it", message, threads)
			}
			// Deferring, the splits are written with AVX-512 where the CPU
			// has it and plain stores elsewhere (tier 1 and below).
			for _, cfg := range []struct {
				defers bool
				tier   int
			}{{true, -1}, {true, 1}, {false, -1}} {
				deferring = cfg.defers
				testhook.ForcePackedTier(cfg.tier, false)
				// Mode 2 waits for the second chunk to be under way before
				// the first asks; the threads' timing may still defeat it
				// (under the load of a CI run, more often), so up to 20
				// batches.
				mid := false
				for try := 0; try < 20 && !mid; try++ {
					taken, handed, closeUp := decode(2)
					if threads == 2 && taken == 1 && handed > 0 {
						mid = true
						if closeUp != 0 {
							t.Errorf("%s on 2 threads (deferring %v): the second chunk took the hand-over, yet the close-up rebased %d bytes of the records' own row splits", message, deferring, closeUp)
						}
					}
					mid = mid || threads > 2 && try >= 1
				}
				testhook.ForcePackedTier(-1, false)
				if !mid && runtime.NumCPU() > 1 {
					t.Errorf("%s on %d threads (deferring %v, tier %d): no hand-over taken in the middle of a chunk in 20 batches", message, threads, deferring, cfg.tier)
				}
			}
			// A batch whose first record is most of it: the second chunk
			// ends first, so it never takes the hand-over; deferring, its
			// splits wait for the first chunk's end (adopted).
			sdata, soffsets := contiguous(skewed)
			swant, err := plan.DecodeContiguous(sdata, soffsets, DecodeOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			// Each decode below equals this one, which equals the
			// reference.
			refs.check(t, message+", a skewed batch on 1 thread", skewed, swant)
			// Up to skewedTries batches: under the load of a CI run (the
			// race detector, cgocheck2, packages tested side by side) the
			// other thread may not be running when the adoption is written.
			const skewedTries = 40
			adopted, helped := false, false
			for _, deferring := range []bool{true, false} {
				for try := 0; try < skewedTries; try++ {
					testhook.Handover(2, 4)
					testhook.DeferSplits(deferMode(deferring))
					a0, r0, p0 := native.DeferredAdoptions(), native.CloseUpRebasedSplits(), native.DeferredPartsHelped()
					sgot, err := plan.DecodeContiguous(sdata, soffsets, DecodeOptions{Threads: threads})
					if native.DeferredAdoptions() > a0 {
						adopted = true
						// The second chunk's thread, done, waits for the
						// adoption and helps write them (mode 2 waits for
						// it).
						helped = helped || native.DeferredPartsHelped() > p0
						// Written based once the first chunk ended: nothing
						// left for the close-up to rebase.
						if r := native.CloseUpRebasedSplits() - r0; r != 0 {
							t.Errorf("%s, a skewed batch on %d threads: the second chunk's deferred splits were adopted, yet the close-up rebased %d bytes of the records' own row splits", message, threads, r)
						}
					}
					testhook.Handover(0, 0)
					testhook.DeferSplits(0)
					if err != nil {
						t.Fatal(err)
					}
					if !structtensor.Equal(sgot, swant) {
						t.Errorf("%s, a skewed batch on %d threads (deferring %v): differs from the decode on one thread", message, threads, deferring)
					}
					if !deferring || adopted && helped || threads != 2 {
						break
					}
				}
			}
			if threads == 2 && !adopted && runtime.NumCPU() > 1 {
				t.Errorf("%s, a skewed batch on 2 threads: the second chunk never ended its walk with its splits deferred in %d batches", message, skewedTries)
			}
			// Only where the batch ran on both threads: under load, one
			// thread may decode both chunks before the other starts.
			if threads == 2 && adopted && !helped && runtime.NumCPU() > 1 {
				t.Errorf("%s, a skewed batch on 2 threads: the second chunk's splits were adopted, yet in %d batches no other thread helped write them", message, skewedTries)
			}
		}
	}
}

// TestHandsOverWhenItPays checks the default: wide sparse records (their
// output is nearly all row splits of their own fields) give the first
// chunk fewer bytes, and the second chunk takes the hand-over, so that
// the close-up rebases none of the records' own splits (no chunk split,
// as above).
func TestHandsOverWhenItPays(t *testing.T) {
	testhook.Handover(0, 0)
	testhook.Steal(-1)
	defer testhook.Steal(0)
	d := testDescriptors(t)
	md, err := d.Message("structtensor.testdata.wide.WideSparse")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	records := recordsOf(t, md, rng, 2<<20)
	plan, err := Compile(d, "structtensor.testdata.wide.WideSparse")
	if err != nil {
		t.Fatal(err)
	}
	data, offsets := contiguous(records)
	if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 2}); err != nil { // sizes the next
		t.Fatal(err)
	}
	for try := 0; try < 20; try++ {
		t0, _ := native.Handovers()
		c0 := native.CloseUpRebasedSplits()
		if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 2}); err != nil {
			t.Fatal(err)
		}
		t1, _ := native.Handovers()
		if t1 > t0 && native.CloseUpRebasedSplits() == c0 {
			return
		}
	}
	if runtime.NumCPU() > 1 {
		t.Errorf("wide sparse records on 2 threads: no hand-over in 20 batches")
	}
}

// wideSparseBatch returns a plan of WideSparse records and over a
// megabyte of them, for the tests of bad records on several threads.
func wideSparseBatch(t *testing.T, rng *rand.Rand) (*Plan, [][]byte) {
	t.Helper()
	plan, md := compiledMessage(t, "structtensor.testdata.wide.WideSparse")
	return plan, recordsOf(t, md, rng, 1<<20)
}

// badWideSparseRecords are records that fail a WideSparse decode.
var badWideSparseRecords = []struct {
	name   string
	record []byte
}{
	{"truncated", []byte{0x08}},
	{"length past the end", []byte{0xa2, 0x06, 0x7f, 'x'}},
}

// threadedMessages are the messages the tests of decodes on several
// threads into lent buffers decode: wide, sparse, nested, of every scalar.
var threadedMessages = []string{
	"structtensor.testdata.wide.WideSparse",
	"structtensor.testdata.wide.WideRepeated",
	"structtensor.testdata.proto3.Proto3Msg",
	"structtensor.testdata.recipe.Recipe",
	"structtensor.testdata.wide.SparseNested",
	"structtensor.testdata.scalars.AllScalars",
}

// threadedBatches returns two batches of md for those tests: records of
// over a megabyte (the second chunk's thread is at work when the first, a
// sixth of the bytes, is done), and a skewed batch whose first record is
// most of it (half a megabyte of messages concatenated: one record, their
// merge, without maps, whose keys the reference would merge) and then the
// last tenth of the records.
func threadedBatches(t *testing.T, md protoreflect.MessageDescriptor, rng *rand.Rand) (records, skewed [][]byte) {
	t.Helper()
	records = recordsOf(t, md, rng, 1<<20)
	var big []byte
	for len(big) < 1<<19 {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(randomMessage(md, rng, 2, false))
		if err != nil {
			t.Fatal(err)
		}
		big = append(big, b...)
	}
	return records, append([][]byte{big}, records[len(records)*9/10:]...)
}

// recordsOf returns records of md (mergedRecords) of at least size bytes.
func recordsOf(t *testing.T, md protoreflect.MessageDescriptor, rng *rand.Rand, size int) [][]byte {
	var records [][]byte
	for n := 0; n < size; {
		more := mergedRecords(t, md, rng, 500)
		for _, r := range more {
			n += len(r)
		}
		records = append(records, more...)
	}
	return records
}

// mergedRecords returns n records of md: one in eight empty (unless md
// has required fields), one in four two random messages concatenated
// (their merge: singular fields and oneof members occur twice; maps only
// in the first, whose keys the reference would merge), the rest one
// random message.
func mergedRecords(t testing.TB, md protoreflect.MessageDescriptor, rng *rand.Rand, n int) [][]byte {
	t.Helper()
	required := false
	for i := range md.Fields().Len() {
		required = required || md.Fields().Get(i).Cardinality() == protoreflect.Required
	}
	out := make([][]byte, n)
	for i := range out {
		k := 1
		switch rng.IntN(8) {
		case 0:
			if !required {
				k = 0
			}
		case 1, 2:
			k = 2
		}
		var rec []byte
		for j := range k {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(randomMessage(md, rng, 2, j == 0))
			if err != nil {
				t.Fatal(err)
			}
			rec = append(rec, b...)
		}
		out[i] = rec
	}
	return out
}

// randomMessage returns a message of md with a random fifth of its fields
// set (each oneof member on its own: the last set wins), lists and maps
// (if maps) of 0 to 3 elements, messages nested up to depth.
func randomMessage(md protoreflect.MessageDescriptor, rng *rand.Rand, depth int, maps bool) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		required := fd.Cardinality() == protoreflect.Required
		if !required && rng.IntN(5) != 0 {
			continue
		}
		if fd.Message() != nil && depth <= 0 && !required && !fd.IsMap() || fd.IsMap() && !maps {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range rng.IntN(4) {
				mp.Set(randomScalar(fd.MapKey(), rng).MapKey(), randomValue(fd.MapValue(), rng, depth, maps))
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range rng.IntN(4) {
				if fd.Message() != nil {
					l.Append(protoreflect.ValueOfMessage(randomMessage(fd.Message(), rng, depth-1, maps)))
				} else {
					l.Append(randomScalar(fd, rng))
				}
			}
		default:
			m.Set(fd, randomValue(fd, rng, depth, maps))
		}
	}
	return m
}

func randomValue(fd protoreflect.FieldDescriptor, rng *rand.Rand, depth int, maps bool) protoreflect.Value {
	if fd.Message() != nil {
		return protoreflect.ValueOfMessage(randomMessage(fd.Message(), rng, depth-1, maps))
	}
	return randomScalar(fd, rng)
}

func randomScalar(fd protoreflect.FieldDescriptor, rng *rand.Rand) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(rng.IntN(2) == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(rng.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(rng.Uint32()) >> rng.IntN(32))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(rng.Uint64()) >> rng.IntN(64))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(rng.Uint32() >> rng.IntN(32))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(rng.Uint64() >> rng.IntN(64))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(rng.NormFloat64()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(math.Round(rng.NormFloat64()*1e6) / 1e3)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(strings.Repeat("s", rng.IntN(9)))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(strings.Repeat("b", rng.IntN(9))))
	}
	panic(fmt.Sprintf("field %s: kind %v", fd.FullName(), fd.Kind()))
}

// TestHandOverStopsAtABadRecord decodes wide sparse batches with one bad
// record (truncated, or a length past its end) in the first chunk, early
// in the second (before a hand-over could be taken) and late in it
// (after one was, in the based walk), on 2 and 3 threads with the
// hand-over forced: each reports the record the one-thread decode
// reports, and none waits for an answer that never comes.
func TestHandOverStopsAtABadRecord(t *testing.T) {
	defer testhook.Handover(0, 0)
	plan, good := wideSparseBatch(t, rand.New(rand.NewPCG(11, 12)))
	for _, bad := range badWideSparseRecords {
		for _, at := range []int{len(good) / 20, len(good) * 6 / 10, len(good) - 3} {
			records := slices.Clone(good)
			records[at] = bad.record
			data, offsets := contiguous(records)
			_, want := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
			var wantErr *RecordError
			if !errors.As(want, &wantErr) || wantErr.Record != int64(at) {
				t.Fatalf("%s at record %d on 1 thread: got %v, want a RecordError at that record", bad.name, at, want)
			}
			for _, threads := range []int{2, 3} {
				// Late in the second chunk on 2 threads the bad record must
				// be reached in the based walk, after a hand-over: whether
				// the first thread is done in time is up to the scheduler
				// (under the load of a CI run it was not, once), so the
				// decode is repeated, up to 60 times, until one was taken;
				// every decode must report the record.
				tries := 1
				if threads == 2 && at == len(good)-3 && runtime.NumCPU() > 1 {
					tries = 60
				}
				taken := false
				for try := 0; try < tries && !taken; try++ {
					testhook.Handover(2, 4)
					taken0, _ := native.Handovers()
					_, got := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
					taken1, _ := native.Handovers()
					testhook.Handover(0, 0)
					taken = taken1 > taken0
					var gotErr *RecordError
					if !errors.As(got, &gotErr) || gotErr.Record != wantErr.Record || gotErr.Error() != wantErr.Error() {
						t.Errorf("%s at record %d on %d threads: got %v, want %v", bad.name, at, threads, got, want)
					}
				}
				if tries > 1 && !taken {
					t.Errorf("%s at record %d on 2 threads: no hand-over taken before it in %d decodes", bad.name, at, tries)
				}
			}
		}
	}
}

// deferMode is testhook.DeferSplits's mode for a test that defers the
// records' own splits wherever they may be (on) or never.
func deferMode(on bool) int {
	if on {
		return 1
	}
	return -1
}
