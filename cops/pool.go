package cops

// #cgo CFLAGS: -I${SRCDIR}/../native/include
// #include "decode_op.h"
// #include "structtensor_native.h"
import "C"

import "unsafe"

// loanedBlocks is the number of output memory blocks the kernels have lent
// (to the engine or to tensors) and not had back; see decode_op.cc.
func loanedBlocks() int64 { return int64(C.structtensor_cops_loaned_blocks()) }

// outputCounts returns how many outputs the kernels have produced in the
// memory they lent the engine, and how many outgrew it.
func outputCounts() (inPlace, outgrown int64) {
	var i, o C.longlong
	C.structtensor_cops_output_counts(&i, &o)
	return int64(i), int64(o)
}

// arenaLoans is the number of decodes whose outputs the kernels lent in
// one arena, and hugePageBytes the huge page size they advise it for (0:
// none); see decode_op.cc.
func arenaLoans() int64    { return int64(C.structtensor_cops_arena_loans()) }
func hugePageBytes() int64 { return int64(C.structtensor_cops_huge_page_bytes()) }

// injectFault makes the next kernel creation (1) or computation (2) throw
// std::bad_alloc inside the kernel, for tests of the C++/TensorFlow
// boundary; 0 cancels.
func injectFault(where int) { C.structtensor_cops_inject_fault(C.int(where)) }

// lendLog turns the engine's log of the sizes its sizing policy gives
// (st_test_lend_log, every caller in the process: the kernel and the Go
// path) on or off, clearing it.
func lendLog(on bool) {
	v := C.int32_t(0)
	if on {
		v = 1
	}
	C.st_test_lend_log(v)
}

// lendLogEntries returns the engine's log of lend sizes (see
// st_test_lend_log for its layout).
func lendLogEntries() []int64 {
	n := int64(C.st_test_lend_log_read(nil, 0))
	if n == 0 {
		return nil
	}
	out := make([]int64, n)
	got := int64(C.st_test_lend_log_read((*C.int64_t)(unsafe.Pointer(&out[0])), C.int64_t(n)))
	return out[:min(n, got)]
}
