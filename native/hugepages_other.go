//go:build !linux

package native

// hugeSlack is 0 where there is no madvise MADV_HUGEPAGE (see
// hugepages_linux.go): blocks are allocated as they are.
func hugeSlack(size int) int { return 0 }

// placeBlock places the block at the start of alloc, which has no slack
// here.
func placeBlock(alloc []byte, size int) int { return 0 }

// allocBytes is what the pool counts of a block of size bytes: its size.
func allocBytes(size int) int { return size }
