package native

// #include <string.h>
import "C"

import (
	"unsafe"

	"github.com/structtensor/structtensor-go/internal/testhook"
)

// mallocgc is the Go runtime's allocator. The runtime keeps this linkname
// working for the packages that need memory without zeroing (it says so
// beside its definition; go.dev/issue/67401).
//
//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// makeUncleared returns a Go slice of n elements of a pointer-free type
// whose contents are undefined: the buffers lent to the engine, which
// writes every element the output exposes before Go reads it (the slack
// past the output is sliced off, never read). make would clear them
// first: a second pass over every output byte, a fifth of the time of a
// decode of flat numeric records. The memory is ordinary Go heap (typ nil
// allocates it as holding no pointers), collected like any slice.
func makeUncleared[T bool | int32 | uint32 | float32 | int64 | uint64 | float64 | byte](n int) []T {
	if n <= 0 {
		return make([]T, 0)
	}
	var zero T
	size := uintptr(n) * unsafe.Sizeof(zero)
	return unsafe.Slice((*T)(mallocgc(size, nil, false)), n)
}

// poison fills b with 0xA5 when the test hook asks for it: memory lent to
// the engine holds garbage, never zeros a missed element could pass for.
// C's memset fills it, as the engine writes it, unseen by the race
// detector: a Go fill there is checked byte by byte (a per-byte loop was a
// third of the CPU of the -race decode tests, copies still a tenth).
func poison(b []byte) {
	if testhook.PoisonLentBuffers.Load() && len(b) > 0 {
		C.memset(unsafe.Pointer(unsafe.SliceData(b)), 0xA5, C.size_t(len(b)))
	}
}
