package tfbridge

// #include <stdint.h>
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync/atomic"
)

// loans counts Go buffers currently lent to TensorFlow (for tests).
var loans atomic.Int64

// tfbRelease is the last step of the deallocator of a tensor that borrows
// Go memory: TensorFlow has dropped its last reference, so the memory may
// be unpinned. It may run on a TensorFlow thread.
//
//export tfbRelease
func tfbRelease(h C.uintptr_t) {
	handle := cgo.Handle(h)
	handle.Value().(*runtime.Pinner).Unpin()
	handle.Delete()
	loans.Add(-1)
}
