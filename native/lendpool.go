package native

import (
	"math/bits"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/structtensor/structtensor-go/internal/testhook"
)

// Lent blocks go back to a pool by themselves.
//
// The Go path decodes each batch into blocks of Go memory lent to the
// engine (lend, ExamplePlan.copyResult), and the outputs handed to the
// caller are slices of those blocks. Fresh blocks for every batch are
// slow: the runtime returns the pages of collected blocks to the
// operating system and the next batch faults them in again, zeroed (on
// flat numeric records in 32 MB batches that was a third of the decode).
// Plan.Recycle avoids it for a caller that knows when it is done with an
// output; most callers do not call it, and a block may outlive the
// StructTensor anyway (a column kept, an Arrow array exported without a
// copy, a tensor lent to TensorFlow).
//
// So a block comes back by itself when nothing refers to it any more: a
// finalizer is armed on its allocation while it is lent out (on the
// allocation's first byte, as the runtime requires: a block of a huge
// page or more starts further in, hugepages_linux.go, and the pool keeps
// where). Any slice into the block keeps the whole allocation reachable,
// so the finalizer runs only once no output, sub-slice, Arrow buffer or
// pinned TensorFlow tensor refers to any byte of it; it then puts the
// block (resurrected) into the pool, and the next decode that needs a
// block of its size class takes it instead of allocating. A pooled block
// has no finalizer (Recycle, putting a block back by hand, clears it), so
// a block the pool lets go of is collected as any garbage.
//
// The pool is bounded, in what it holds and in what may come back to it:
// the bytes pooled plus the bytes lent out with a finalizer armed stay
// under twice the largest of the last few decodes (at least 128 MiB, for
// small ones); a block taken beyond that is lent without a finalizer and
// collected as before. Without the bound, many small batches decoded
// between two collections all came back at the next one, the collector
// counted them live from then on and set its goal by them, and the heap
// grew to a whole pass's output; and a resurrected block that the pool
// then refused stayed in memory a collection longer than plain garbage.
// The pool also lets go of a block that two garbage collections found
// idle in it (a sentinel object's finalizer counts the collections while
// the pool holds anything): a program that stops decoding gets the
// memory back, as from a sync.Pool. sync.Pool itself does not do here: a
// block comes back on the finalizer goroutine, and what one goroutine
// puts into a sync.Pool goes to its processor's private slot, which
// another processor's Get never sees.
//
// An armed block comes back only after a garbage collection, and the
// collector runs once allocations have grown the heap to its goal. A
// program decoding batch after batch with a small live heap so took
// pooled blocks for a few batches, then fresh ones until they had grown
// the heap enough, while the armed blocks lay idle as garbage: wide
// repeated records in 1 MB batches took 92 of 224 blocks fresh, each page
// faulted in afresh and zeroed (118K page faults in a second of
// decoding). So a decode that finds the pool empty and the armed blocks
// at the bound (starved) runs a collection itself and takes a block that
// came back (collectForBlocks), where that is cheap beside what it saves:
// the collector's work is the memory it scans (the heap's pointerful
// objects, stacks and globals; lent blocks hold no pointers), a fresh
// block's cost the faults of its pages, so a collection runs only when
// the scannable memory is under an eighth of the bytes armed; one at a
// time; never when the program turned the collector off (GOGC=off); and
// after one that brought nothing back (the outputs still in use), only
// once as many decodes again have passed (doubling, up to 1024).
//
// Blocks come in size classes of four per power of two (a block is at
// most a quarter larger than asked for); all blocks of a class have the
// class's size, so any pooled block of the class fits.

// minPoolBytes is the pool's bound however small the decodes: many small
// batches decoded between two collections come back together.
const minPoolBytes = 128 << 20

// blockPool is the process's pool of free lent blocks.
var blockPool freeBlocks

type freeBlocks struct {
	mu sync.Mutex
	// classes holds the free blocks of each size class, the most
	// recently put last.
	classes [4 * 64][]freeBlock
	// bytes is the size of the blocks in classes.
	bytes int
	// armed are the blocks lent out with a finalizer armed, by address
	// (an address, not a pointer, which would keep the block alive; an
	// armed block cannot be collected, so its address stays its own),
	// each with its offset in its allocation (placeBlock); armedBytes
	// their size.
	armed      map[uintptr]uintptr
	armedBytes int
	// decodes are the bytes the last few decodes took (noteDecode).
	decodes    [4]int
	nextDecode int
	// decodesNoted counts the decodes noted; returned, the blocks that
	// came back by their finalizers.
	decodesNoted, returned uint64
	// The last collection run for a starved pool (collectForBlocks): the
	// decodes noted and the blocks returned before it, and how many
	// decodes must pass before the next (starved); 0 before the first.
	forcedAt, forcedReturned, forceWait uint64
	// collections counts the garbage collections seen by the sentinel.
	collections uint64
	// counting tells whether a sentinel is armed.
	counting bool
}

type freeBlock struct {
	// base is the allocation the block was placed in, at off.
	base *byte
	off  uintptr
	// since is the collection count when the block was put.
	since uint64
}

// block returns the block of size bytes.
func (b freeBlock) block(size int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(b.base), b.off)), size)
}

// starved tells whether a decode that needs a block of size bytes and
// found none in the pool should run a collection to get one back
// (collectForBlocks), and returns the bytes armed: the pool is empty,
// the armed blocks leave no room for another under the bound, and the
// last such collection brought blocks back or has been waited out.
func (f *freeBlocks) starved(size int) (armed int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bytes > 0 || f.armedBytes+allocBytes(size) <= f.limit() {
		return 0, false
	}
	if f.returned == f.forcedReturned && f.decodesNoted < f.forcedAt+f.forceWait {
		return 0, false // the last brought nothing back: wait
	}
	return f.armedBytes, true
}

// noteForced records that a collection is run for the pool, now: the
// decodes to wait before the next, if this one brings nothing back, are
// twice those before it if the last brought nothing back either.
func (f *freeBlocks) noteForced() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.forceWait > 0 && f.returned == f.forcedReturned {
		f.forceWait = min(2*f.forceWait, 1024)
	} else {
		f.forceWait = 1
	}
	f.forcedAt, f.forcedReturned = f.decodesNoted, f.returned
}

// limit is the bound on bytes pooled plus bytes armed.
func (f *freeBlocks) limit() int { return max(2*slices.Max(f.decodes[:]), minPoolBytes) }

// get takes a free block of the class, or returns the zero freeBlock.
func (f *freeBlocks) get(class int) freeBlock {
	f.mu.Lock()
	defer f.mu.Unlock()
	blocks := f.classes[class]
	if len(blocks) == 0 {
		return freeBlock{}
	}
	b := blocks[len(blocks)-1]
	blocks[len(blocks)-1] = freeBlock{}
	f.classes[class] = blocks[:len(blocks)-1]
	f.bytes -= allocBytes(classSize(class))
	return b
}

// arm arms the finalizer of the block of size bytes at off in the
// allocation at base, about to be lent out, if the bound leaves room for
// it to come back. The finalizer goes on the allocation (the runtime
// takes nothing else), which any slice of the block keeps reachable.
func (f *freeBlocks) arm(base *byte, off uintptr, size int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bytes+f.armedBytes+allocBytes(size) > f.limit() {
		return
	}
	if f.armed == nil {
		f.armed = map[uintptr]uintptr{}
	}
	f.armed[uintptr(unsafe.Pointer(base))+off] = off
	f.armedBytes += allocBytes(size)
	runtime.SetFinalizer(base, func(base *byte) { f.put(base, off, size) })
}

// recycle puts back the block p of size bytes that Recycle hands back,
// its finalizer disarmed. A block lent without one (beyond the bound)
// goes back only if it is its allocation's start: the pool has no record
// of where a block placed further in (placeBlock) was allocated, and the
// finalizer of its next lending needs that.
func (f *freeBlocks) recycle(p *byte, size int) {
	f.mu.Lock()
	off, armed := f.unarm(uintptr(unsafe.Pointer(p)), size)
	base := (*byte)(unsafe.Add(unsafe.Pointer(p), -int(off)))
	if armed {
		runtime.SetFinalizer(base, nil)
	}
	f.mu.Unlock()
	if armed || hugeSlack(size) == 0 {
		f.put(base, off, size)
	}
}

// unarm forgets the armed block at addr of size bytes (under mu) and
// returns its offset in its allocation, or false when it was not armed.
func (f *freeBlocks) unarm(addr uintptr, size int) (off uintptr, ok bool) {
	if off, ok = f.armed[addr]; ok {
		delete(f.armed, addr)
		f.armedBytes -= allocBytes(size)
	}
	return off, ok
}

// put adds the free block of size bytes at off in the allocation at base
// to the pool, unless the pool is full (the block is then left to the
// collector). A block still armed is one whose finalizer is running.
func (f *freeBlocks) put(base *byte, off uintptr, size int) {
	class, want := blockClass(size)
	if want != size {
		return // not a block of ours
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.unarm(uintptr(unsafe.Pointer(base))+off, size); ok {
		f.returned++
	}
	if f.bytes+f.armedBytes+allocBytes(size) > f.limit() {
		return
	}
	f.bytes += allocBytes(size)
	f.classes[class] = append(f.classes[class], freeBlock{base, off, f.collections})
	if !f.counting {
		f.counting = true
		f.armSentinel()
	}
}

func init() { testhook.DropPooledBlocks = blockPool.drop }

// drop empties the pool.
func (f *freeBlocks) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.classes {
		clear(f.classes[c])
		f.classes[c] = f.classes[c][:0]
	}
	f.bytes = 0
}

// noteDecode records that a decode took blocks of bytes in all.
func (f *freeBlocks) noteDecode(bytes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decodes[f.nextDecode] = bytes
	f.nextDecode = (f.nextDecode + 1) % len(f.decodes)
	f.decodesNoted++
}

// collecting is set while a collection for the pool runs: one at a time.
var collecting atomic.Bool

// collectSamples are what collectForBlocks reads of the runtime: the
// memory a collection scans, and GOGC.
var collectSamples = []metrics.Sample{
	{Name: "/gc/scan/heap:bytes"},
	{Name: "/gc/scan/stack:bytes"},
	{Name: "/gc/scan/globals:bytes"},
	{Name: "/gc/gogc:percent"},
}

// collectForBlocks runs a garbage collection so that the armed blocks
// (armed bytes of them) that nothing refers to come back into the pool,
// when that is cheap (see the package's notes on lent blocks), and tells
// whether it ran one. The finalizers that put the blocks back run after
// it, on the finalizer goroutine, which it lets run.
func collectForBlocks(armed int) bool {
	if !collecting.CompareAndSwap(false, true) {
		return false
	}
	defer collecting.Store(false)
	metrics.Read(collectSamples) // collecting guards collectSamples too
	var scan uint64
	for _, s := range collectSamples[:3] {
		if s.Value.Kind() != metrics.KindUint64 {
			return false
		}
		scan += s.Value.Uint64()
	}
	gogc := collectSamples[3].Value
	if gogc.Kind() != metrics.KindUint64 || int64(gogc.Uint64()) < 0 || scan > uint64(armed)/8 {
		return false
	}
	blockPool.noteForced()
	runtime.GC()
	runtime.Gosched()
	testhook.CollectionsForBlocks.Add(1)
	return true
}

// gcSentinel is an object made unreachable at once, its finalizer armed:
// the finalizer runs after the next garbage collection. It holds a
// pointer so that the runtime's tiny allocator, whose objects' finalizers
// may wait on their neighbours, does not place it.
type gcSentinel struct{ _ *byte }

func (f *freeBlocks) armSentinel() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { f.collected() })
}

// collected runs once per garbage collection while the pool holds
// blocks: it lets go of those idle through two collections.
func (f *freeBlocks) collected() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collections++
	left := 0
	for c, blocks := range f.classes {
		kept := blocks[:0]
		for _, b := range blocks {
			if f.collections-b.since < 2 {
				kept = append(kept, b)
			} else {
				f.bytes -= allocBytes(classSize(c))
			}
		}
		clear(blocks[len(kept):])
		f.classes[c] = kept
		left += len(kept)
	}
	if f.counting = left > 0; f.counting {
		f.armSentinel()
	}
}

// blockClass returns the size class of a request of n bytes and the
// length of that class's blocks: n (at least 64) rounded up to the next
// of four steps per power of two.
func blockClass(n int) (class, size int) {
	// At least 64: past the runtime's tiny allocator, which shares blocks.
	n = max(n, 64)
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e, e >= 6
	step := 1 << (e - 3)
	q := (n + step - 1) >> (e - 3) // 5..8
	return 4*e + q - 5, q << (e - 3)
}

// classSize is the length of the blocks of a size class, as blockClass
// gives it.
func classSize(class int) int { return (class&3 + 5) << (class>>2 - 3) }

// takeBlocks returns the blocks of one decode, one of more than n bytes
// for each n in need (see takeBlock), and records their total for the
// pool's bound.
func takeBlocks(need ...int) [][]byte {
	total := 0
	for _, n := range need {
		_, size := blockClass(n + 1)
		total += allocBytes(size)
	}
	blockPool.noteDecode(total)
	blocks := make([][]byte, len(need))
	for i, n := range need {
		blocks[i] = takeBlock(n)
	}
	return blocks
}

// takeBlock returns a block of more than n bytes whose contents are
// undefined, from the pool when it has one of the size class, else new,
// with its finalizer armed if the pool's bound allows. More than n: an
// empty stretch carved at offset n still points inside the block, never
// at whatever object follows it (checkptr refuses such pointers; the
// collector would keep that object alive by them).
func takeBlock(n int) []byte {
	class, size := blockClass(n + 1)
	fb := blockPool.get(class)
	if fb.base == nil {
		if armed, ok := blockPool.starved(size); ok && collectForBlocks(armed) {
			fb = blockPool.get(class)
		}
	}
	if fb.base != nil {
		testhook.LentFromPool.Add(1)
	} else {
		alloc := makeUncleared[byte](size + hugeSlack(size))
		fb = freeBlock{base: unsafe.SliceData(alloc), off: uintptr(placeBlock(alloc, size))}
	}
	b := fb.block(size)
	poison(b)
	blockPool.arm(fb.base, fb.off, size)
	return b
}

// recycleBlocks hands back blocks takeBlock returned, by hand: the
// caller guarantees nothing uses them any more (Plan.Recycle).
func recycleBlocks(blocks [][]byte) {
	for _, b := range blocks {
		if len(b) > 0 {
			blockPool.recycle(unsafe.SliceData(b), len(b))
		}
	}
}
