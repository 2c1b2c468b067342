package decode

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

func contiguous(records [][]byte) ([]byte, []int64) {
	var data []byte
	offsets := []int64{0}
	for _, r := range records {
		data = append(data, r...)
		offsets = append(offsets, int64(len(data)))
	}
	return data, offsets
}

// compiledMessage returns a plan of message, every field projected, and
// its descriptor.
func compiledMessage(t testing.TB, message string) (*Plan, protoreflect.MessageDescriptor) {
	t.Helper()
	d := testDescriptors(t)
	md, err := d.Message(message)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(d, message)
	if err != nil {
		t.Fatal(err)
	}
	return plan, md
}

// checkLending decodes records with plan in every way that lends the
// engine Go buffers (Decode and DecodeContiguous, serial and on several
// threads, each sized from the previous decode) and compares each output
// with the dynamicpb reference.
func checkLending(t *testing.T, plan *Plan, message, what string, records [][]byte) {
	t.Helper()
	d := testDescriptors(t)
	md, err := d.Message(message)
	if err != nil {
		t.Fatal(err)
	}
	refs := newRefChecks(md)
	data, offsets := contiguous(records)
	for _, threads := range []int{1, 2, 3} {
		for _, way := range []string{"Decode", "DecodeContiguous"} {
			var st *structtensor.StructTensor
			if way == "Decode" {
				st, err = plan.Decode(records, DecodeOptions{Threads: threads})
			} else {
				st, err = plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
			}
			name := fmt.Sprintf("%s %s, %s on %d threads", message, what, way, threads)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			refs.check(t, name, records, st)
		}
	}
}

// TestDecodeLendsBuffers covers the decodes in which the engine writes
// into Go buffers sized from a sample (a plan's first batch) or from the
// previous batch, on one thread or several (each writing its share, then
// closed up): the output must equal the reference's whether the buffers
// fit, are too small (the outputs move to engine memory and are copied
// out) or too large.
func TestDecodeLendsBuffers(t *testing.T) {
	// The lent buffers are not cleared: make them hold garbage, so an
	// output element the engine did not write cannot pass for a zero.
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	t.Run("one block", testDecodeLendsBuffers)
	// Outputs over the limit are lent in several blocks.
	testhook.LendBlockBytes.Store(16 << 10)
	defer testhook.LendBlockBytes.Store(0)
	t.Run("several blocks", testDecodeLendsBuffers)
}

func testDecodeLendsBuffers(t *testing.T) {
	d := testDescriptors(t)
	for _, ds := range benchDatasets(t, 256) {
		plan, err := Compile(d, ds.message)
		if err != nil {
			t.Fatal(err)
		}
		n := len(ds.records)
		checkLending(t, plan, ds.message, "first batch (sampled)", ds.records)
		checkLending(t, plan, ds.message, "smaller batch", ds.records[n/2:])
		// Output per input byte far above the last batch's.
		checkLending(t, plan, ds.message, "denser batch", append(append([][]byte(nil), ds.records...), ds.records...))
		// The first bad record is reported whatever the path.
		bad := append([][]byte(nil), ds.records...)
		bad[n/2] = []byte{0x80}
		bad[n*3/4] = []byte{0x80}
		data, offsets := contiguous(bad)
		var first *RecordError
		for _, threads := range []int{1, 2, 4} {
			_, e1 := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
			_, e2 := plan.Decode(bad, DecodeOptions{Threads: threads})
			var r1, r2 *RecordError
			if !errors.As(e1, &r1) || !errors.As(e2, &r2) || *r1 != *r2 || r1.Record != int64(n/2) {
				t.Fatalf("%s on %d threads: errors %v and %v, want record %d", ds.name, threads, e1, e2, n/2)
			}
			if first == nil {
				first = r1
			} else if *first != *r1 {
				t.Errorf("%s: errors differ with the thread count: %v, %v", ds.name, first, r1)
			}
		}
	}
	// Batches whose predecessor holds one big string and few values, and
	// the reverse: every buffer but the string's is too small, then far
	// too large.
	const recipe = "structtensor.testdata.recipe.Recipe"
	plan, err := Compile(d, recipe)
	if err != nil {
		t.Fatal(err)
	}
	b := &benchBuilder{t: t, d: d}
	var sparse [][]byte
	for range 8 {
		m := b.msg(recipe)
		set(m, "title", strings.Repeat("x", 40<<10))
		rec, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		sparse = append(sparse, rec)
	}
	dense := benchDatasets(t, 256)[1].records
	checkLending(t, plan, recipe, "sparse batch", sparse)
	checkLending(t, plan, recipe, "dense after sparse", dense)
	checkLending(t, plan, recipe, "sparse after dense", sparse)
	checkLending(t, plan, recipe, "mixed", append(append([][]byte(nil), sparse...), dense...))
}

// TestDecodeLendsOnManyThreads decodes, on many threads, a batch whose
// values crowd into its first records (dense recipes, then a few records
// of one long title each): the shares of the lent buffers that go by
// input bytes are far too small for the first threads' outputs and far
// too large for the others'. Sized from the same batch decoded before,
// every output fits its buffer as a whole, so every output must still be
// handed out in place, the outgrown shares copied back in by the engine
// (no output copied out), and equal the reference's.
func TestDecodeLendsOnManyThreads(t *testing.T) {
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	d := testDescriptors(t)
	const recipe = "structtensor.testdata.recipe.Recipe"
	md, err := d.Message(recipe)
	if err != nil {
		t.Fatal(err)
	}
	b := &benchBuilder{t: t, d: d}
	records := append([][]byte(nil), benchDatasets(t, 256)[1].records...)
	for range 8 {
		m := b.msg(recipe)
		set(m, "title", strings.Repeat("x", 40<<10))
		rec, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, rec)
	}
	want := refRecords(t, md, records)
	data, offsets := contiguous(records)
	for _, threads := range []int{2, 3, 8, 16} {
		for _, way := range []string{"Decode", "DecodeContiguous"} {
			plan, err := Compile(d, recipe)
			if err != nil {
				t.Fatal(err)
			}
			decodeBatch := func() *structtensor.StructTensor {
				t.Helper()
				var st *structtensor.StructTensor
				if way == "Decode" {
					st, err = plan.Decode(records, DecodeOptions{Threads: threads})
				} else {
					st, err = plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
				}
				if err != nil {
					t.Fatalf("%s on %d threads: %v", way, threads, err)
				}
				return st
			}
			decodeBatch() // sizes the next decode's buffers
			outgrown, inPlace, copied := native.LentOutgrown(), testhook.LentInPlace.Load(), testhook.LentCopied.Load()
			st := decodeBatch()
			name := fmt.Sprintf("%s on %d threads", way, threads)
			if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
				t.Errorf("%s: differs from the reference: %s", name, why)
			}
			if native.LentOutgrown() == outgrown {
				t.Errorf("%s: no thread outgrew its share of a lent buffer: the test does not exercise closing up outgrown shares", name)
			}
			if n := testhook.LentCopied.Load() - copied; n != 0 {
				t.Errorf("%s: %d outputs copied out, want none (every output fits its lent buffer)", name, n)
			}
			if testhook.LentInPlace.Load() == inPlace {
				t.Errorf("%s: no output handed out in place", name)
			}
		}
	}
}

// TestDecodeLendsFixedCountsWithoutMoving decodes batches of flat records
// (every column 100 values a record) on several threads into lent
// buffers: each thread's share of a value column then starts where the
// shares before it end (sized by the last batch's values per record), so
// the close-up moves no values. Batches whose records break the pattern
// (fewer values early on: a gap; more: an outgrown share) still decode
// to the reference, the first by moving values.
func TestDecodeLendsFixedCountsWithoutMoving(t *testing.T) {
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	d := testDescriptors(t)
	const flat = "structtensor.testdata.flat.Flat"
	md, err := d.Message(flat)
	if err != nil {
		t.Fatal(err)
	}
	records := benchDatasets(t, 256)[0].records
	// variant re-encodes records with the first half's f7 shortened to
	// (or, with grow, lengthened by) a few values.
	variant := func(grow bool) [][]byte {
		out := slices.Clone(records)
		for i := range len(out) / 2 {
			m := dynamicpb.NewMessage(md)
			if err := proto.Unmarshal(out[i], m); err != nil {
				t.Fatal(err)
			}
			l := m.Mutable(md.Fields().ByName("f7")).List()
			if grow {
				for range 5 {
					l.Append(protoreflect.ValueOfInt64(int64(i)))
				}
			} else {
				l.Truncate(l.Len() - 5)
			}
			rec, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = rec
		}
		return out
	}
	refs := newRefChecks(md)
	for _, threads := range []int{2, 3, 8} {
		plan, err := Compile(d, flat)
		if err != nil {
			t.Fatal(err)
		}
		decode := func(what string, records [][]byte) (moved int64) {
			t.Helper()
			return decodeCounting(t, plan, refs, what, records, threads, native.CloseUpMovedValues)
		}
		decode("first batch", records) // sizes the next decode's buffers
		if moved := decode("same counts", records); moved != 0 {
			t.Errorf("same counts on %d threads: the close-up moved %d bytes of values, want none", threads, moved)
		}
		if moved := decode("fewer values early", variant(false)); moved == 0 {
			t.Errorf("fewer values early on %d threads: no values moved, yet the shares cannot meet", threads)
		}
		decode("same counts again", records)
		decode("more values early", variant(true))
	}
}

// TestRecycle decodes a batch into the memory of a recycled output (still
// holding that output's values, not cleared): the result must equal the
// reference's, and the decode must allocate far less than its output.
func TestRecycle(t *testing.T) {
	t.Run("one block", testRecycle)
	// Outputs over the limit are lent in several blocks, recycled as a set.
	testhook.LendBlockBytes.Store(16 << 10)
	defer testhook.LendBlockBytes.Store(0)
	t.Run("several blocks", testRecycle)
}

// twoBatches are two different batches of the same size for a dataset's
// plan, its records (a) and the same reversed (b), with b's reference.
type twoBatches struct {
	plan         *Plan
	wantB        []any
	dataA, dataB []byte
	offA, offB   []int64
}

func newTwoBatches(t *testing.T, ds benchDataset) *twoBatches {
	t.Helper()
	d := testDescriptors(t)
	md, err := d.Message(ds.message)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(d, ds.message)
	if err != nil {
		t.Fatal(err)
	}
	a := ds.records
	b := make([][]byte, len(a))
	for i, r := range a {
		b[len(a)-1-i] = r
	}
	tb := &twoBatches{plan: plan, wantB: refRecords(t, md, b)}
	tb.dataA, tb.offA = contiguous(a)
	tb.dataB, tb.offB = contiguous(b)
	return tb
}

// decodeA decodes batch a twice on threads and returns the second output,
// decoded into buffers sized from the first.
func (tb *twoBatches) decodeA(t *testing.T, threads int) *structtensor.StructTensor {
	t.Helper()
	var st *structtensor.StructTensor
	for range 2 {
		var err error
		if st, err = tb.plan.DecodeContiguous(tb.dataA, tb.offA, DecodeOptions{Threads: threads}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// withoutReturns stops the garbage collector for the rest of the test,
// after one collection and time for the finalizers it queued, and empties
// the pool of lent blocks: from then on blocks come back to the pool only
// by Recycle, so what a decode takes from it is known.
func withoutReturns(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	testhook.DropPooledBlocks()
}

func testRecycle(t *testing.T) {
	withoutReturns(t)
	several := testhook.LendBlockBytes.Load() > 0
	for _, ds := range benchDatasets(t, 256) {
		tb := newTwoBatches(t, ds)
		plan, want, dataB, offB := tb.plan, tb.wantB, tb.dataB, tb.offB
		for _, threads := range []int{1, 2} {
			name := fmt.Sprintf("%s on %d threads", ds.name, threads)
			stA := tb.decodeA(t, threads)
			blocksA := plan.recent.blocksOf(stA)
			if several != (len(blocksA) > 1) {
				t.Errorf("%s: output lent in %d blocks with the block limit at %d bytes", name, len(blocksA), testhook.LendBlockBytes.Load())
			}
			plan.Recycle(stA)
			plan.Recycle(stA) // a second time: ignored
			stB, err := plan.DecodeContiguous(dataB, offB, DecodeOptions{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			if ok, why := sameValue(want, structtensor.ToValue(stB)); !ok {
				t.Errorf("%s: decoded into recycled memory, differs from the reference: %s", name, why)
			}
			if blocksB := plan.recent.blocksOf(stB); !slices.Equal(blocksA, blocksB) {
				t.Errorf("%s: decoded into blocks %x, not into the recycled %x", name, blocksB, blocksA)
			}
			plan.Recycle(&structtensor.StructTensor{}) // not the plan's: ignored
		}
	}
}

// blocksOf returns the addresses of the blocks st was decoded into, as a
// plan remembers them for Recycle, sorted (none: not among its recent
// outputs).
func (r *recentOutputs) blocksOf(st *structtensor.StructTensor) []uintptr {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.ring {
		if len(e.sizes) > 0 && e.st.Value() == st {
			var addrs []uintptr
			for _, b := range e.blocks {
				addrs = append(addrs, uintptr(unsafe.Pointer(b.Value())))
			}
			slices.Sort(addrs)
			return addrs
		}
	}
	return nil
}

// TestLentMemoryComesBack decodes batch after batch without Recycle,
// dropping each output, while one field of an early output is kept: the
// dropped outputs' memory must be lent again (it comes back by itself
// once unreachable), every output must equal the reference, and the kept
// field, whose memory must not be lent again while it lives, must keep
// its values.
func TestLentMemoryComesBack(t *testing.T) {
	testhook.DropPooledBlocks() // room under the pool's bound, whatever ran before
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	for _, ds := range benchDatasets(t, 256) {
		tb := newTwoBatches(t, ds)
		plan, wantB, dataB, offB := tb.plan, tb.wantB, tb.dataB, tb.offB
		for _, threads := range []int{1, 2} {
			name := fmt.Sprintf("%s on %d threads", ds.name, threads)
			stA := tb.decodeA(t, threads)
			kept := stA.Fields()[0].Value
			keptWant := structtensor.ToValue(kept)
			stA = nil
			reused := testhook.LentFromPool.Load()
			// At least 4 rounds; more (up to 20) until a block came back:
			// finalizers run when their goroutine gets a CPU.
			for i := 0; i < 4 || i < 20 && testhook.LentFromPool.Load() == reused; i++ {
				runtime.GC()
				time.Sleep(time.Millisecond) // for the finalizers
				st, err := plan.DecodeContiguous(dataB, offB, DecodeOptions{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				if ok, why := sameValue(wantB, structtensor.ToValue(st)); !ok {
					t.Fatalf("%s: differs from the reference: %s", name, why)
				}
			}
			if testhook.LentFromPool.Load() == reused {
				t.Errorf("%s: no dropped output's memory was lent again", name)
			}
			if ok, why := sameValue(keptWant, structtensor.ToValue(kept)); !ok {
				t.Errorf("%s: a kept field of an earlier output changed: %s", name, why)
			}
		}
	}
}

// decodeCounting decodes records (what names them) with plan on threads
// threads, checks the output against the reference (refs), and returns how
// much counter (one of package native's close-up counters) grew.
func decodeCounting(t *testing.T, plan *Plan, refs *refChecks, what string, records [][]byte, threads int, counter func() int64) int64 {
	t.Helper()
	before := counter()
	data, offsets := contiguous(records)
	st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
	if err != nil {
		t.Fatalf("%s on %d threads: %v", what, threads, err)
	}
	refs.check(t, fmt.Sprintf("%s on %d threads", what, threads), records, st)
	return counter() - before
}

// refChecks compares decodes of md's records with the reference, each
// batch of records (the same slice) once: a later decode of it is
// compared with the first, which stays alive (so none of its buffers is
// lent again). The comparison with the reference is the slow one, far
// slower under the race detector.
type refChecks struct {
	md    protoreflect.MessageDescriptor
	first map[refBatch]*structtensor.StructTensor
}

// refBatch names a batch of records by its slice.
type refBatch struct {
	first *[]byte
	n     int
}

func newRefChecks(md protoreflect.MessageDescriptor) *refChecks {
	return &refChecks{md: md, first: map[refBatch]*structtensor.StructTensor{}}
}

func (c *refChecks) check(t *testing.T, name string, records [][]byte, st *structtensor.StructTensor) {
	t.Helper()
	if len(records) == 0 {
		t.Fatalf("%s: no records", name)
	}
	k := refBatch{&records[0], len(records)}
	if first, ok := c.first[k]; ok {
		if !structtensor.Equal(st, first) {
			t.Errorf("%s: differs from the first decode of the batch (which equals the reference)", name)
		}
		return
	}
	if ok, why := sameValue(refRecords(t, c.md, records), structtensor.ToValue(st)); !ok {
		t.Errorf("%s: differs from the reference: %s", name, why)
		return
	}
	c.first[k] = st
}

// TestDecodeLendsRecordSplitsInPlace decodes wide sparse records (their
// output is nearly all the row splits of the records' own fields) on
// several threads into lent buffers: each thread writes the splits of its
// records where they belong, so the close-up rebases them in place and
// moves none, whatever the records hold. A batch whose first record is
// so large that a thread gets no records places them by input bytes, as
// the splits of nested fields are: moved, and still right.
func TestDecodeLendsRecordSplitsInPlace(t *testing.T) {
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	d := testDescriptors(t)
	const wide = "structtensor.testdata.wide.WideSparse"
	md, err := d.Message(wide)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	batch := func(n int) [][]byte { return wideSparseRecords(t, md, rng, n) }
	first := batch(2000)
	// skewed: a first record (a string of 100 kB) of most of the batch.
	big := dynamicpb.NewMessage(md)
	big.Set(md.Fields().ByName("f3"), protoreflect.ValueOfString(strings.Repeat("y", 100<<10)))
	bigRecord, err := proto.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	skewed := append([][]byte{bigRecord}, batch(60)...)
	refs := newRefChecks(md)
	for _, threads := range []int{2, 3, 8} {
		plan, err := Compile(d, wide)
		if err != nil {
			t.Fatal(err)
		}
		decode := func(what string, records [][]byte) (moved int64) {
			t.Helper()
			return decodeCounting(t, plan, refs, what, records, threads, native.CloseUpMovedSplits)
		}
		decode("first batch", first) // sizes the next decode's buffers
		for _, n := range []int{2000, 1500, 2600} {
			what := fmt.Sprintf("%d other records", n)
			if moved := decode(what, batch(n)); moved != 0 {
				t.Errorf("%s on %d threads: the close-up moved %d bytes of row splits, want none", what, threads, moved)
			}
		}
		if threads == 3 {
			if moved := decode("a skewed batch", skewed); moved == 0 {
				t.Errorf("a skewed batch on %d threads: no row splits moved, yet a thread had no records", threads)
			}
		}
	}
}

// TestDecodeLendsNestedSplitsInPlace decodes tf.Examples (the same
// features in every record, each a list of one kind and a fixed number of
// values) on several threads into lent buffers: the row splits of the
// nested list fields (the feature map, each feature's list, its values)
// then have as many splits and elements a record as in the batch before,
// so each thread writes its records' splits where they belong, counting
// from where they begin, and the close-up moves none. Batches that break
// the pattern (a feature fewer or more early on; the first half of the
// records without features, so that a thread decodes no element of a
// nested list: the first half's records then carry as many bytes in a
// field the plan skips) still decode right.
func TestDecodeLendsNestedSplitsInPlace(t *testing.T) {
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	d := testDescriptors(t)
	ds := benchDatasets(t, 512)[2]
	md, err := d.Message(ds.message)
	if err != nil {
		t.Fatal(err)
	}
	// variant re-encodes the first half of the records through edit.
	variant := func(edit func(features protoreflect.Map)) [][]byte {
		out := slices.Clone(ds.records)
		for i := range len(out) / 2 {
			m := dynamicpb.NewMessage(md)
			if err := proto.Unmarshal(out[i], m); err != nil {
				t.Fatal(err)
			}
			fs := m.Mutable(md.Fields().ByName("features")).Message()
			edit(fs.Mutable(fs.Descriptor().Fields().ByName("feature")).Map())
			if fs.Get(fs.Descriptor().Fields().ByName("feature")).Map().Len() == 0 {
				// As many bytes, in a field the plan skips: the
				// threads' shares of the batch stay as they were.
				m.Clear(md.Fields().ByName("features"))
				m.SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), make([]byte, len(out[i]))))
			}
			rec, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = rec
		}
		return out
	}
	key := func(name string) protoreflect.MapKey { return protoreflect.ValueOfString(name).MapKey() }
	fewer := variant(func(fm protoreflect.Map) { fm.Clear(key("feature_07")) })
	more := variant(func(fm protoreflect.Map) { fm.Set(key("feature_99"), fm.Get(key("feature_00"))) })
	none := variant(func(fm protoreflect.Map) {
		fm.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			fm.Clear(k)
			return true
		})
	})
	refs := newRefChecks(md)
	for _, threads := range []int{2, 3, 8} {
		plan, err := Compile(d, ds.message)
		if err != nil {
			t.Fatal(err)
		}
		decode := func(what string, records [][]byte) (moved int64) {
			t.Helper()
			return decodeCounting(t, plan, refs, what, records, threads, native.CloseUpMovedSplits)
		}
		decode("first batch", ds.records) // sizes the next decode's buffers
		if moved := decode("same counts", ds.records); moved != 0 {
			t.Errorf("same counts on %d threads: the close-up moved %d bytes of row splits, want none", threads, moved)
		}
		if moved := decode("a feature fewer early", fewer); moved == 0 {
			t.Errorf("a feature fewer early on %d threads: no row splits moved, yet the shares cannot meet", threads)
		}
		decode("same counts again", ds.records)
		decode("a feature more early", more)
		decode("same counts again", ds.records)
		decode("no features early", none)
	}
}

// wideSparseRecords returns n records of md (WideSparse) with 5 to 15 of
// its fields set at random.
func wideSparseRecords(t *testing.T, md protoreflect.MessageDescriptor, rng *rand.Rand, n int) [][]byte {
	t.Helper()
	out := make([][]byte, n)
	for i := range out {
		m := dynamicpb.NewMessage(md)
		for range 5 + rng.IntN(11) {
			f := md.Fields().Get(rng.IntN(md.Fields().Len()))
			var v protoreflect.Value
			switch f.Kind() {
			case protoreflect.Int64Kind:
				v = protoreflect.ValueOfInt64(rng.Int64N(1 << 40))
			case protoreflect.DoubleKind:
				v = protoreflect.ValueOfFloat64(rng.Float64())
			case protoreflect.StringKind:
				v = protoreflect.ValueOfString(strings.Repeat("x", rng.IntN(12)))
			case protoreflect.BoolKind:
				v = protoreflect.ValueOfBool(rng.IntN(2) == 0)
			default:
				t.Fatalf("field %s: unexpected kind %v", f.Name(), f.Kind())
			}
			m.Set(f, v)
		}
		rec, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = rec
	}
	return out
}

// TestLendSizesFitLikeBatches decodes a run of batches of the same kind
// of sparse records on one thread, each sized from the one before: a
// column's count strays from the last batch's by about its square root,
// so the room lent holds it, and almost no output outgrows its buffer
// (each that does costs a copy). The records are drawn from a fixed
// seed: the count is the same on every run.
func TestLendSizesFitLikeBatches(t *testing.T) {
	plan, md := compiledMessage(t, "structtensor.testdata.wide.WideSparse")
	rng := rand.New(rand.NewPCG(5, 6))
	const batches = 10
	var outgrown int64
	for i := range batches {
		records := wideSparseRecords(t, md, rng, 3000)
		data, offsets := contiguous(records)
		before := native.LentOutgrown()
		st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the first is sized from a sample of itself
			outgrown += native.LentOutgrown() - before
		}
		if i == batches-1 {
			if ok, why := sameValue(refRecords(t, md, records), structtensor.ToValue(st)); !ok {
				t.Errorf("differs from the reference: %s", why)
			}
		}
	}
	// Of about 650 outputs a batch (200 columns, their 200 row splits,
	// the string columns' offsets), at most 2 outgrow (with room for a
	// square root more on several threads only, 38 did).
	if limit := int64(2 * (batches - 1)); outgrown > limit {
		t.Errorf("%d lent buffers outgrown in %d batches, want at most %d", outgrown, batches-1, limit)
	}
}
