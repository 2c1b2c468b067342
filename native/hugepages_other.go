//go:build !linux

package native

// hugeSlack is 0 where there is no madvise MADV_HUGEPAGE (see
// hugepages_linux.go): blocks are allocated as they are.
func hugeSlack(size int) int { return 0 }

// placeBlock returns alloc, which has no slack here, as the block.
func placeBlock(alloc []byte, size int) []byte { return alloc[:size:size] }
