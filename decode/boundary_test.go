package decode

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestContiguousBogusOffsets gives DecodeContiguous batches large enough
// to lend the engine Go buffers, with offsets that claim far more than
// the data or run backwards: each is ErrInput naming the record, before
// anything is sized from the offsets (no panic, no huge allocation).
func TestContiguousBogusOffsets(t *testing.T) {
	d := testDescriptors(t)
	ds := benchDatasets(t, 256)[0]
	plan, err := Compile(d, ds.message)
	if err != nil {
		t.Fatal(err)
	}
	data, offsets := contiguous(ds.records)
	if len(data) < 64<<10 {
		t.Fatalf("the batch has %d bytes, too few to lend buffers", len(data))
	}
	// A good batch first, so that the next ones are sized from it.
	if _, err := plan.DecodeContiguous(data, offsets); err != nil {
		t.Fatal(err)
	}
	n := len(offsets) - 1
	for _, c := range []struct {
		name   string
		edit   func(o []int64)
		record int64
	}{
		{"last offset 2^40", func(o []int64) { o[n] = 1 << 40 }, int64(n - 1)},
		{"last offset MaxInt64", func(o []int64) { o[n] = math.MaxInt64 }, int64(n - 1)},
		{"first offset MinInt64", func(o []int64) { o[0] = math.MinInt64 }, 0},
		{"first offset -1", func(o []int64) { o[0] = -1 }, 0},
		{"backwards in the middle", func(o []int64) { o[n/2] = o[n/2-1] - 1 }, int64(n/2 - 1)},
		{"past the data in the middle", func(o []int64) { o[n/2] = int64(len(data)) + 1 }, int64(n/2 - 1)},
		{"first offset past the end", func(o []int64) { o[0] = int64(len(data)) + 1 }, 0},
	} {
		bad := append([]int64(nil), offsets...)
		c.edit(bad)
		for _, threads := range []int{1, 3} {
			_, err := plan.DecodeContiguous(data, bad, DecodeOptions{Threads: threads})
			if !errors.Is(err, ErrInput) {
				t.Fatalf("%s (%d threads): err = %v, want ErrInput", c.name, threads, err)
			}
		}
	}
}

// TestLentBufferNotPinnedBySmallResult decodes a dense batch (the next
// decode lends buffers sized from it), then a batch of as many bytes
// whose outputs are far smaller: the result must not keep the large lent
// buffers alive behind its small columns.
func TestLentBufferNotPinnedBySmallResult(t *testing.T) {
	d := testDescriptors(t)
	ds := benchDatasets(t, 1024)[1]
	plan, err := Compile(d, ds.message)
	if err != nil {
		t.Fatal(err)
	}
	data, offsets := contiguous(ds.records)
	if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1}); err != nil {
		t.Fatal(err)
	}
	// As many bytes, in four records of unknown fields only (field 999,
	// which no schema uses): every output but the row count is empty.
	var rec []byte
	rec = binary.AppendUvarint(rec, 999<<3|2)
	rec = binary.AppendUvarint(rec, uint64(len(data)/4-8))
	rec = append(rec, make([]byte, len(data)/4-8)...)
	sparse := [][]byte{rec, rec, rec, rec}
	for _, threads := range []int{1, 2} {
		// The buffers lent to the dense batch's successor are about as
		// large as the dense batch's output.
		if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1}); err != nil {
			t.Fatal(err)
		}
		st, err := plan.Decode(sparse, DecodeOptions{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		held := heapAfterGC()
		runtime.KeepAlive(st)
		st = nil
		retained := held - heapAfterGC()
		if retained > int64(len(data)/8) {
			t.Errorf("%d threads: a result of 4 rows and no values keeps %d bytes alive", threads, retained)
		}
	}
}

// heapAfterGC returns the live heap once the blocks that came back to the
// pool of lent blocks are dropped from it: collections (with time for the
// finalizers that return blocks), the pool emptied, and collections that
// free what it held. What it returns is what something still refers to.
func heapAfterGC() int64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	testhook.DropPooledBlocks()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// contiguousOffsets turns fuzz bytes into offsets: signed varints, each
// a delta from the previous offset (mostly small and forward, sometimes
// backwards or huge).
func contiguousOffsets(b []byte) []int64 {
	offsets := []int64{0}
	for len(b) > 0 && len(offsets) < 1<<12 {
		v, n := binary.Varint(b)
		if n <= 0 {
			break
		}
		b = b[n:]
		offsets = append(offsets, offsets[len(offsets)-1]+v)
	}
	return offsets
}

// FuzzDecodeContiguous decodes data with arbitrary offsets, the data
// repeated to a batch large enough to lend Go buffers, on one thread and
// on several: invalid offsets are ErrInput, valid ones decode exactly as
// Decode of the records they delimit.
func FuzzDecodeContiguous(f *testing.F) {
	seeds := fuzzSeeds(f)
	for i, s := range seeds {
		var offs []byte
		offs = binary.AppendVarint(offs, int64(len(s)))
		offs = binary.AppendVarint(offs, int64(i%3)-1)
		f.Add(s, offs, uint16(i*37))
	}
	f.Add([]byte{8, 1}, binary.AppendVarint(nil, math.MaxInt64), uint16(2000))
	plans := fuzzPlans(f)
	f.Fuzz(func(t *testing.T, record, offs []byte, repeat uint16) {
		offsets := contiguousOffsets(offs)
		data := record
		if repeat > 0 && len(record) > 0 {
			// Repeat the record (and its offsets) to reach the size from
			// which buffers are lent.
			k := min(int(repeat), (80<<10)/len(record)+1, (1<<16)/len(offsets)+1)
			span := offsets[len(offsets)-1]
			if span == int64(len(record)) {
				base := append([]int64(nil), offsets...)
				for i := 1; i < k; i++ {
					for _, o := range base[1:] {
						offsets = append(offsets, o+int64(i)*span)
					}
				}
			}
			data = make([]byte, 0, k*len(record))
			for range k {
				data = append(data, record...)
			}
		}
		valid := offsets[0] >= 0
		for i := 1; i < len(offsets); i++ {
			valid = valid && offsets[i] >= offsets[i-1] && offsets[i] <= int64(len(data))
		}
		var records [][]byte
		if valid {
			for i := 1; i < len(offsets); i++ {
				records = append(records, data[offsets[i-1]:offsets[i]])
			}
		}
		for _, p := range plans {
			for _, threads := range []int{1, 3} {
				st, err := p.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
				if !valid {
					if !errors.Is(err, ErrInput) {
						t.Fatalf("%s: offsets %v over %d bytes: err = %v, want ErrInput", p.Message(), offsets, len(data), err)
					}
					continue
				}
				want, werr := p.Decode(records, DecodeOptions{Threads: 1})
				if (err == nil) != (werr == nil) {
					t.Fatalf("%s (%d threads): DecodeContiguous: %v, Decode: %v", p.Message(), threads, err, werr)
				}
				if err != nil {
					var r1, r2 *RecordError
					if errors.As(err, &r1) != errors.As(werr, &r2) || (r1 != nil && *r1 != *r2) {
						t.Fatalf("%s (%d threads): errors differ: %v, %v", p.Message(), threads, err, werr)
					}
					continue
				}
				if !structtensor.Equal(st, want) {
					t.Fatalf("%s (%d threads): DecodeContiguous differs from Decode", p.Message(), threads)
				}
			}
		}
	})
}

// TestPlanPoolBytes checks the bound on the C memory a plan keeps between
// decodes, and that Close frees it.
func TestPlanPoolBytes(t *testing.T) {
	d := testDescriptors(t)
	ds := benchDatasets(t, 256)[1]
	plan, err := Compile(d, ds.message)
	if err != nil {
		t.Fatal(err)
	}
	// Small batches lend nothing, so their buffers go back to the pool.
	for i := 0; i+8 <= len(ds.records); i += 8 {
		if _, err := plan.Decode(ds.records[i:i+8], DecodeOptions{Threads: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := plan.native.PoolBytes(); n <= 0 || n > native.PoolBytesLimit {
		t.Fatalf("pool holds %d bytes, want (0, %d]", n, native.PoolBytesLimit)
	}
	plan.Close()
	if n := plan.native.PoolBytes(); n != 0 {
		t.Fatalf("after Close the pool holds %d bytes", n)
	}
}
