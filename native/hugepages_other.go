//go:build !linux

package native

// adviseHugePages is a no-op where there is no madvise MADV_HUGEPAGE
// (see hugepages_linux.go).
func adviseHugePages(b []byte) []byte { return nil }
