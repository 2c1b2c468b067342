package native

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Lent blocks of a huge page or more start on one and ask for huge pages.
//
// A decode writes each of its outputs as a stream of its own, a hundred
// and more at once on wide records, spread over the block: with 4 KiB
// pages nearly every store lands on a page whose translation the
// first-level TLB no longer holds. Backed by 2 MiB pages the same block
// needs a few translations. Measured on flat records (100 numeric
// columns), Intel Xeon model 207: 32 MB batches 1610-1697 -> 1917-2010
// MB per CPU-second, 8 MB batches 1541 -> 1759; records of a few long
// columns (tf.Example) gain a few percent.
//
// Batches of about 1 MB gained nothing from advising the huge pages
// wholly inside their blocks (2-3 MiB, at the heap's 8 KiB alignment:
// one huge page at most, half the time none). So a fresh block of
// hugeBlockMinPages huge pages or more is placed in an allocation one
// huge page larger (and its last huge page whole), starting on a huge
// page (placeBlock), and its huge pages are advised (madvise
// MADV_HUGEPAGE) before its first write: the kernel then backs them with
// huge pages as they are faulted in, where the system allows it
// (transparent_hugepage "always" or "madvise"; "never" ignores the
// advice). Flat records in 1 MB batches, lockstep with the 32 MB call
// (bench -run-one flat ours-1t-1mb-paired), same CPU: 73-78% -> 81-87% of
// its MB per CPU-second. The slack is never written; the pool counts a
// block by the huge pages it holds (allocBytes). What it costs is that
// memory: a 2.7 MB block holds 4 MiB, and the same run's peak RSS went
// from 145 to 188 MB (tf.Example records: 122 to 181 MB); batches of 32
// MB, whose blocks were advised before, did not move.
//
// Only blocks this package allocates are advised, so the advice never
// reaches memory that is not ours: the stretch advised lies inside the
// allocation, and memory the collector later reuses for other objects
// only keeps a flag that lets the kernel use huge pages there, which
// changes no byte. A block that comes back to the pool keeps its pages.
// The advice splits the runtime's mapping of the heap where an advised
// stretch begins and ends (the kernel merges advised neighbours): an
// allocation of two huge pages at least per stretch, so at most 512
// mappings more per GiB of heap, far under the kernel's default limit of
// 65530 per process. Memory the runtime had faulted in before (a block
// carved from a collected one) keeps its small pages until the kernel's
// background collapse gets to it; the advice is not worth a synchronous
// collapse, a copy of each page. A program that wants no huge pages
// turns them off for itself (prctl PR_SET_THP_DISABLE, inherited across
// fork and exec), which the kernel honours over the advice:
// TestBlocksStartOnHugePages run so finds the flag set and no huge page
// behind it.

// hugeBlockMinPages is the fewest huge pages a block must span to be
// placed on them.
const hugeBlockMinPages = 1

// maxPlacedHugePage is the largest huge page blocks are placed on.
const maxPlacedHugePage = 2 << 20

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

// hugeSlack is how many bytes more than size a fresh block of size bytes
// is allocated with, so that placeBlock can start it on a huge page and
// advise its huge pages, the last one whole: 0 for blocks under
// hugeBlockMinPages huge pages, or when the system has none, or huge
// pages larger than maxPlacedHugePage (arm64 with 64 KiB pages has 512
// MiB ones: a block's slack and its last page whole would be that much
// memory).
func hugeSlack(size int) int {
	huge := int(hugePageBytes())
	if huge == 0 || huge > maxPlacedHugePage || size < hugeBlockMinPages*huge {
		return 0
	}
	return roundUpTo(size, huge) - size + huge
}

// placeBlock returns where in alloc, a fresh allocation of
// size+hugeSlack(size) bytes, the block of size bytes starts: at 0 when
// there is no slack, else at its first huge page, the block's huge pages
// advised.
func placeBlock(alloc []byte, size int) int {
	if len(alloc) == size {
		return 0
	}
	huge := hugePageBytes()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(alloc)))
	off := int((base+huge-1)&^(huge-1) - base)
	// An old kernel without the advice: the block works as it is.
	_ = syscall.Madvise(alloc[off:off+roundUpTo(size, int(huge))], syscall.MADV_HUGEPAGE)
	return off
}

// allocBytes is what the pool counts of a block of size bytes: the
// memory it holds once written, its huge pages whole (placeBlock).
func allocBytes(size int) int {
	if hugeSlack(size) == 0 {
		return size
	}
	return roundUpTo(size, int(hugePageBytes()))
}

// roundUpTo rounds n up to a multiple of m, a power of two.
func roundUpTo(n, m int) int { return (n + m - 1) &^ (m - 1) }
