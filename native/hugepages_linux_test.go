package native

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// vmaOf returns the VmFlags and AnonHugePages lines of the mapping of this
// process that holds addr (/proc/self/smaps).
func vmaOf(t *testing.T, addr uintptr) (flags, anonHuge string) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps to check the advice in: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && strings.Contains(strings.Fields(line)[0], "-") {
			if in {
				break
			}
			in = lo <= addr && addr < hi
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			flags = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			anonHuge = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if flags == "" {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return flags, anonHuge
}

// TestBlocksStartOnHugePages checks that a fresh block of a huge page or
// more starts on a huge page of its allocation and has its huge pages
// advised (the kernel's "hg" flag on its mapping), the last one whole;
// that a smaller block is its allocation, unadvised; and that a placed
// block goes through the pool and comes back at its own address.
func TestBlocksStartOnHugePages(t *testing.T) {
	huge := int(hugePageBytes())
	if huge == 0 {
		t.Skip("this system has no transparent huge pages")
	}
	if huge > maxPlacedHugePage {
		if got := hugeSlack(4 * huge); got != 0 {
			t.Errorf("huge pages of %d bytes: a block of four gets %d bytes of slack, want none", huge, got)
		}
		t.Skipf("huge pages of %d bytes: blocks are not placed on them", huge)
	}
	// A probe: a system whose madvise refuses the advice (a sandbox's
	// filter) leaves blocks as they are, which is no failure of ours.
	probe := make([]byte, 3*huge)
	start := roundUpTo(int(uintptr(unsafe.Pointer(&probe[0]))), huge) - int(uintptr(unsafe.Pointer(&probe[0])))
	if err := syscall.Madvise(probe[start:start+huge], syscall.MADV_HUGEPAGE); err != nil {
		t.Skipf("madvise(MADV_HUGEPAGE) refused here: %v", err)
	}
	if got := hugeSlack(hugeBlockMinPages*huge - 1); got != 0 {
		t.Errorf("a block under %d huge pages gets %d bytes of slack", hugeBlockMinPages, got)
	}
	// An odd size, so the block does not end on a huge page.
	size := 2*huge + 12345
	alloc := makeUncleared[byte](size + hugeSlack(size))
	off := placeBlock(alloc, size)
	b := alloc[off : off+size : off+size]
	base, first := uintptr(unsafe.Pointer(&alloc[0])), uintptr(unsafe.Pointer(&b[0]))
	last := first + uintptr(roundUpTo(size, huge)) - 1
	if len(b) != size || cap(b) != size || first%uintptr(huge) != 0 || first < base || last >= base+uintptr(len(alloc)) {
		t.Fatalf("block of %d bytes (cap %d) at %#x, its huge pages to %#x, in an allocation of %d bytes at %#x",
			len(b), cap(b), first, last, len(alloc), base)
	}
	for _, addr := range []uintptr{first, first + uintptr(huge), last} {
		flags, _ := vmaOf(t, addr)
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("the block's huge page at %#x is not advised: VmFlags %q", addr, flags)
		}
	}
	for i := range b {
		b[i] = byte(i)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d of the advised block reads %d, want %d", i, b[i], byte(i))
		}
	}
	_, anon := vmaOf(t, first)
	t.Logf("huge pages %d bytes; the block's mapping holds AnonHugePages %s", huge, anon)
	runtime.KeepAlive(alloc)

	// Through the pool: lent, recycled by hand, lent again.
	blockPool.drop()
	lent := takeBlocks(size)[0]
	at := uintptr(unsafe.Pointer(&lent[0]))
	if at%uintptr(huge) != 0 {
		t.Errorf("a lent block of %d bytes starts at %#x, off its huge page", len(lent), at)
	}
	recycleBlocks([][]byte{lent})
	if again := takeBlocks(size)[0]; uintptr(unsafe.Pointer(&again[0])) != at || len(again) != len(lent) {
		t.Errorf("the recycled block at %#x came back as %d bytes at %#x", at, len(again), uintptr(unsafe.Pointer(&again[0])))
	} else {
		recycleBlocks([][]byte{again})
	}
	// A block lent without a finalizer (beyond the pool's bound) and
	// recycled: the pool does not know its allocation, so it is left to
	// the collector; a small block is its allocation, and goes back.
	blockPool.drop()
	blockPool.recycle(&b[0], len(b))
	if n := pooled(size); n != 0 {
		t.Errorf("an unarmed placed block was pooled (%d pooled)", n)
	}
	small := makeUncleared[byte](huge / 2)
	blockPool.recycle(&small[0], len(small))
	if n := pooled(len(small)); n != 1 {
		t.Errorf("an unarmed small block recycled: %d pooled, want 1", n)
	}
	blockPool.drop()
}
