package native

import (
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/structtensor/structtensor-go/internal/testhook"
)

// Lent blocks go back to a pool by themselves.
//
// The Go path decodes each batch into blocks of Go memory lent to the
// engine (lend, ExamplePlan.copyResult), and the outputs handed to the
// caller are slices of those blocks. Fresh blocks for every batch are
// slow: the runtime returns the pages of collected blocks to the
// operating system and the next batch faults them in again, zeroed
// (on flat numeric records that costs a sixth to a third of the decode).
// Plan.Recycle avoids it for a caller that knows when it is done with an
// output; most callers do not call it, and a block may outlive the
// StructTensor anyway (a column kept, an Arrow array exported without a
// copy, a tensor lent to TensorFlow).
//
// So a block comes back by itself when nothing refers to it any more: a
// finalizer is armed on its first byte while it is lent out. Any slice
// into the block keeps the whole allocation reachable, so the finalizer
// runs only once no output, sub-slice, Arrow buffer or pinned TensorFlow
// tensor refers to any byte of it; it then puts the block (resurrected)
// into the pool, and the next decode that needs a block of its size
// class takes it instead of allocating. The finalizer is armed exactly
// while the block is out of the pool (set when a block is allocated or
// taken, consumed when it runs, cleared when Recycle puts the block back
// by hand), so a block the pool lets go of is collected as any garbage.
//
// The pool lets go of a block that two garbage collections found idle in
// it (a sentinel object's finalizer counts the collections while the
// pool holds anything): a program that stops decoding gets the memory
// back, as from a sync.Pool. sync.Pool itself does not do here: a block
// comes back on the finalizer goroutine, and what one goroutine puts
// into a sync.Pool goes first to its processor's private slot, which
// another processor's Get never sees.
//
// Blocks come in size classes of four per power of two (a block is at
// most a quarter larger than asked for); all blocks of a class have the
// class's size, so any pooled block of the class fits.

// blockPool is the process's pool of free lent blocks.
var blockPool freeBlocks

type freeBlocks struct {
	mu sync.Mutex
	// classes holds the free blocks of each size class, the most
	// recently put last; each is the first byte of a block of the class's
	// size.
	classes [4 * 64][]freeBlock
	// collections counts the garbage collections seen by the sentinel.
	collections uint64
	// counting tells whether a sentinel is armed.
	counting bool
}

type freeBlock struct {
	p *byte
	// since is the collection count when the block was put.
	since uint64
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

func (f *freeBlocks) put(class int, p *byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.classes[class] = append(f.classes[class], freeBlock{p, f.collections})
	if !f.counting {
		f.counting = true
		f.armSentinel()
	}
}

func (f *freeBlocks) get(class int) *byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	blocks := f.classes[class]
	if len(blocks) == 0 {
		return nil
	}
	p := blocks[len(blocks)-1].p
	blocks[len(blocks)-1] = freeBlock{}
	f.classes[class] = blocks[:len(blocks)-1]
	return p
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

// takeBlock returns a block of more than n bytes whose contents are
// undefined, from the pool when it has one of the size class, else new;
// either way with its finalizer armed. More than n: an empty stretch
// carved at offset n still points inside the block, never at whatever
// object follows it (checkptr refuses such pointers; the collector would
// keep that object alive by them).
func takeBlock(n int) []byte {
	class, size := blockClass(n + 1)
	var b []byte
	if p := blockPool.get(class); p != nil {
		b = unsafe.Slice(p, size)
		testhook.LentFromPool.Add(1)
		poison(b)
	} else {
		b = makeUncleared[byte](size)
	}
	runtime.SetFinalizer(unsafe.SliceData(b), func(p *byte) { putBlock(p, size) })
	return b
}

// putBlock puts the free block of size bytes at p into the pool.
func putBlock(p *byte, size int) {
	if class, want := blockClass(size); want == size {
		blockPool.put(class, p)
	}
}

// recycleBlocks hands back blocks takeBlock returned, by hand: the
// caller guarantees nothing uses them any more (Plan.Recycle). Their
// finalizers are cleared, since a pooled block has none.
func recycleBlocks(blocks [][]byte) {
	for _, b := range blocks {
		if len(b) == 0 {
			continue
		}
		if _, size := blockClass(len(b)); size != len(b) {
			continue // not a block of ours
		}
		p := unsafe.SliceData(b)
		runtime.SetFinalizer(p, nil)
		putBlock(p, len(b))
	}
}
