package native

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"

	"github.com/structtensor/structtensor-go/internal/testhook"
)

func TestBlockClass(t *testing.T) {
	prevSize, prevClass := 0, -1
	for n := 1; n < 1<<22; n += 1 + n/37 {
		class, size := blockClass(n)
		if size < n || size < 64 || (n > 64 && 4*size > 5*n+4) {
			t.Fatalf("blockClass(%d) = size %d: want at least n, at most a quarter more", n, size)
		}
		if c2, s2 := blockClass(size); c2 != class || s2 != size || classSize(class) != size {
			t.Fatalf("blockClass(%d) = %d, %d; of its size %d, %d", n, class, size, c2, s2)
		}
		if size < prevSize || (size == prevSize) != (class == prevClass) || class >= len(blockPool.classes) {
			t.Fatalf("blockClass(%d) = %d, %d after %d, %d: classes must grow with sizes", n, class, size, prevClass, prevSize)
		}
		prevSize, prevClass = size, class
	}
	if class, _ := blockClass(1 << 62); class >= len(blockPool.classes) {
		t.Fatalf("class %d of 2^62 bytes out of range", class)
	}
}

// pooled counts the free blocks of the size class of blocks of size
// bytes in the pool.
func pooled(size int) int {
	class, _ := blockClass(size)
	blockPool.mu.Lock()
	defer blockPool.mu.Unlock()
	return len(blockPool.classes[class])
}

// collectUntil runs garbage collections (and lets the finalizers run)
// until cond holds, at most 20 times.
func collectUntil(cond func() bool) bool {
	for range 20 {
		if cond() {
			return true
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return cond()
}

// TestBlocksComeBackAndGo drops a block: a collection brings it back into
// the pool, the next take of its class gets it, and once idle in the pool
// through two collections it is let go.
func TestBlocksComeBackAndGo(t *testing.T) {
	const size = 3 << 20 // a class of its own in this test binary
	blockPool.drop()     // room under the bound, whatever ran before
	before := pooled(size)
	b := takeBlocks(size - 1)[0]
	first := uintptr(unsafe.Pointer(&b[0])) // not a pointer: it must not keep the block
	b = nil
	if !collectUntil(func() bool { return pooled(size) > before }) {
		t.Fatal("an unreachable block did not come back into the pool")
	}
	again := takeBlocks(size - 1)[0]
	if uintptr(unsafe.Pointer(&again[0])) != first {
		t.Error("the block that came back was not lent again")
	}
	recycleBlocks([][]byte{again}) // back by hand: its finalizer cleared
	again = nil
	if !collectUntil(func() bool { return pooled(size) == before }) {
		t.Fatalf("%d blocks idle in the pool through 20 collections", pooled(size)-before)
	}
}

// TestBlockKeptWhileReferenced keeps only a slice of the middle of a block:
// the block must not come back while the slice lives.
func TestBlockKeptWhileReferenced(t *testing.T) {
	const size = 5 << 20
	blockPool.drop()
	before := pooled(size)
	b := takeBlocks(size - 1)[0]
	mid := b[size/2 : size/2+8]
	b = nil
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := pooled(size); n != before {
		t.Fatalf("a block came back into the pool while a slice of it lived (%d pooled, %d before)", n, before)
	}
	runtime.KeepAlive(mid)
	mid = nil
	if !collectUntil(func() bool { return pooled(size) > before }) {
		t.Fatal("the block did not come back once the slice was gone")
	}
}

// TestPoolBounded lends more than the pool's bound in blocks no decode
// of this size asked for before: only those within the bound come back,
// the others are left to the collector, and the pool never holds more
// than its bound.
func TestPoolBounded(t *testing.T) {
	const size = 40 << 20 // 40 MiB: three fit the 128 MiB bound, not four
	t.Cleanup(blockPool.drop)
	for range 5 {
		blockPool.noteDecode(0) // forget larger decodes of other tests
	}
	if !collectUntil(func() bool {
		blockPool.mu.Lock()
		defer blockPool.mu.Unlock()
		return blockPool.bytes == 0 && blockPool.armedBytes == 0
	}) {
		t.Fatal("the pool did not empty")
	}
	var blocks [][]byte
	for range 5 {
		blocks = append(blocks, takeBlocks(size - 1)[0])
	}
	blockPool.mu.Lock()
	armed := blockPool.armedBytes
	blockPool.mu.Unlock()
	if limit := minPoolBytes; armed > limit || armed < limit-size {
		t.Errorf("%d bytes lent with finalizers armed, want at most the bound %d and within a block of it", armed, limit)
	}
	blocks = nil
	if !collectUntil(func() bool { return pooled(size) == minPoolBytes/size }) {
		t.Fatalf("%d blocks came back, want the %d armed", pooled(size), minPoolBytes/size)
	}
	blockPool.mu.Lock()
	defer blockPool.mu.Unlock()
	if blockPool.bytes > minPoolBytes || blockPool.armedBytes != 0 {
		t.Errorf("pool holds %d bytes (bound %d), %d armed", blockPool.bytes, minPoolBytes, blockPool.armedBytes)
	}
}

// resetPool empties the pool, forgets the decodes before and waits until
// no block is lent out armed, so that the bound is minPoolBytes and the
// next takes start from nothing.
func resetPool(t *testing.T) {
	t.Helper()
	for range 5 {
		blockPool.noteDecode(0)
	}
	if !collectUntil(func() bool {
		blockPool.drop()
		blockPool.mu.Lock()
		defer blockPool.mu.Unlock()
		return blockPool.armedBytes == 0
	}) {
		t.Fatal("blocks lent by other tests stayed armed")
	}
	blockPool.mu.Lock()
	blockPool.forceWait = 0
	blockPool.mu.Unlock()
}

// takeAndDrop takes a block of size bytes n times, writing to it and
// dropping it each time as a decode's caller done with the output would,
// and returns how many were fresh (not from the pool) and how many
// collections the pool ran for them.
func takeAndDrop(size, n int) (fresh, collections int64) {
	p0, c0 := testhook.LentFromPool.Load(), testhook.CollectionsForBlocks.Load()
	for range n {
		b := takeBlocks(size - 1)[0]
		b[0], b[len(b)-1] = 1, 2
	}
	return int64(n) - (testhook.LentFromPool.Load() - p0), testhook.CollectionsForBlocks.Load() - c0
}

// TestStarvedPoolCollects takes blocks of 24 MiB one after another, each
// dropped at once, with this test binary's small heap: once the armed
// blocks fill the bound the pool runs collections to get them back, so
// that after the first few nearly every block comes from the pool (before
// it did, the pool lent about half the blocks fresh: the collector ran
// only once fresh blocks had grown the heap).
func TestStarvedPoolCollects(t *testing.T) {
	const size = 24 << 20 // five fill the 128 MiB bound
	resetPool(t)
	t.Cleanup(blockPool.drop)
	fresh, collections := takeAndDrop(size, 60)
	if collections == 0 {
		t.Fatal("the pool, starved, ran no collection")
	}
	// The first five are fresh, and a collection's finalizers may come
	// late for a block or more on a busy machine; without the
	// collections, 33 of 60 were fresh.
	if fresh > 20 {
		t.Errorf("%d of 60 blocks fresh (%d collections run for the pool), want at most 20", fresh, collections)
	}
}

// TestStarvedPoolBacksOff keeps every block: the collections bring
// nothing back, and the pool runs fewer and fewer of them.
func TestStarvedPoolBacksOff(t *testing.T) {
	const size = 24 << 20
	resetPool(t)
	t.Cleanup(blockPool.drop)
	var kept [][]byte // 960 MiB of address space, never touched
	c0 := testhook.CollectionsForBlocks.Load()
	for range 40 {
		kept = append(kept, takeBlocks(size - 1)[0])
	}
	// After the bound fills (5 blocks), collections at the 6th, 7th, 9th,
	// 13th, 21st and 37th block: 6.
	if n := testhook.CollectionsForBlocks.Load() - c0; n == 0 || n > 7 {
		t.Errorf("%d collections for 40 blocks all kept, want 1 to 7", n)
	}
	runtime.KeepAlive(kept)
}

// TestStarvedPoolLeavesCostlyCollections: with more pointerful memory
// live than an eighth of the blocks armed, or with the collector off, a
// starved pool runs no collection.
func TestStarvedPoolLeavesCostlyCollections(t *testing.T) {
	const size = 24 << 20
	t.Run("scannable heap", func(t *testing.T) {
		resetPool(t)
		t.Cleanup(blockPool.drop)
		live := make([]*int, 4<<20) // 32 MiB of pointers: more than 128 MiB / 8
		for i := range live {
			live[i] = new(int)
		}
		runtime.GC() // the scannable heap as of a collection
		if _, collections := takeAndDrop(size, 20); collections != 0 {
			t.Errorf("%d collections run with 32 MiB of pointers live", collections)
		}
		runtime.KeepAlive(live)
	})
	t.Run("GOGC=off", func(t *testing.T) {
		resetPool(t)
		t.Cleanup(blockPool.drop)
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		if _, collections := takeAndDrop(size, 20); collections != 0 {
			t.Errorf("%d collections run with the collector off", collections)
		}
	})
}

// With the hook on, poison fills every byte of a block, whatever its
// length, and none past it; with it off, it writes nothing.
func TestPoisonFillsEveryByte(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 64, 65, 1000, 4096, 4097} {
		b := make([]byte, n+1)
		b[n] = 0x11 // past the block: must stay
		poison(b[:n])
		for i := range n {
			if b[i] != 0 {
				t.Fatalf("hook off, %d bytes: byte %d is %#x", n, i, b[i])
			}
		}
		testhook.PoisonLentBuffers.Store(true)
		poison(b[:n])
		testhook.PoisonLentBuffers.Store(false)
		for i := range n {
			if b[i] != 0xA5 {
				t.Fatalf("%d bytes: byte %d is %#x, want 0xa5", n, i, b[i])
			}
		}
		if b[n] != 0x11 {
			t.Fatalf("%d bytes: the byte after the block changed to %#x", n, b[n])
		}
	}
}
