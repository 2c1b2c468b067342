package native

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Lent blocks of several huge pages ask for transparent huge pages.
//
// A decode writes each of its outputs as a stream of its own, a hundred
// and more at once on wide records, spread over tens of megabytes of a
// block: with 4 KiB pages nearly every store lands on a page whose
// translation the first-level TLB no longer holds. Backed by 2 MiB pages
// the same block needs a few dozen translations. Measured on flat
// records (100 numeric columns), Intel Xeon model 207: 32 MB batches
// 1610-1697 -> 1917-2010 MB per CPU-second, 8 MB batches 1541 -> 1759;
// records of a few long columns (tf.Example) gain a few percent; 1 MB
// batches, whose blocks hold one huge page at most, nothing.
//
// So a fresh block of hugeAdviseMinPages huge pages or more is advised
// (madvise MADV_HUGEPAGE) over the huge pages wholly inside it, before
// its first write: the kernel then backs them with huge pages as they
// are faulted in, where the system allows it (transparent_hugepage set
// to "always" or "madvise"; "never" ignores the advice). Only blocks this
// package allocates are advised, so the advice never reaches memory that
// is not ours: the stretch advised lies inside the block, and memory the
// collector later reuses for other objects only keeps a flag that lets
// the kernel use huge pages there, which changes no byte. A block that
// comes back to the pool keeps its pages. The advice splits the runtime's
// mapping of the heap where an advised stretch begins and ends (the
// kernel merges advised neighbours): with blocks of 8 MiB and more, at
// most about 256 mappings more per GiB of heap, far under the kernel's
// default limit of 65530 per process. Memory the runtime had faulted
// in before (a block carved from a collected one) keeps its small pages
// until the kernel's background collapse gets to it; the advice is not
// worth a synchronous collapse, a copy of each page. A program that
// wants no huge pages turns them off for itself (prctl
// PR_SET_THP_DISABLE, inherited across fork and exec), which the kernel
// honours over the advice: TestLargeBlocksAdviseHugePages run so finds
// the flag set and no huge page behind it.

// hugeAdviseMinPages is the fewest huge pages a block must span for its
// advice: smaller blocks (batches of about 1 MB) measured no gain.
const hugeAdviseMinPages = 4

// hugePageBytes is the size of the system's transparent huge pages, or 0
// when it has none (no such file, or the setting is "never").
var hugePageBytes = sync.OnceValue(func() uintptr {
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(enabled), "[never]") {
		return 0
	}
	size, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(size)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 0
	}
	return uintptr(n)
})

// adviseHugePages advises the huge pages wholly inside b, a fresh block,
// when it spans hugeAdviseMinPages of them or more. It returns the
// stretch advised (empty when none was).
func adviseHugePages(b []byte) []byte {
	huge := hugePageBytes()
	if huge == 0 || uintptr(len(b)) < hugeAdviseMinPages*huge {
		return nil
	}
	stretch := hugePagesInside(b, huge)
	if syscall.Madvise(stretch, syscall.MADV_HUGEPAGE) != nil {
		return nil // an old kernel without it: the block works as it is
	}
	return stretch
}

// hugePagesInside returns the stretch of b made of the huge pages (of
// huge bytes, a power of two) wholly inside it; empty if there is none.
func hugePagesInside(b []byte, huge uintptr) []byte {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (base + huge - 1) &^ (huge - 1)
	end := (base + uintptr(len(b))) &^ (huge - 1)
	if end <= start {
		return b[:0]
	}
	return b[start-base : end-base]
}
