package starrow

/*
#include <stdint.h>

// The C Data Interface's ArrowArray (its ABI is fixed by the
// specification), under a name of our own: cdata's type is another
// package's C type.
struct stArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct stArrowArray** children;
  struct stArrowArray* dictionary;
  void (*release)(struct stArrowArray*);
  void* private_data;
};

extern void stArrowRelease(struct stArrowArray*);

static void st_arrow_release(struct stArrowArray* a) { stArrowRelease(a); }

// st_wrap_release makes a's release ours, with handle as its private
// data; the original release and private data are kept by the handle.
static void st_wrap_release(struct stArrowArray* a, uintptr_t handle) {
  a->release = st_arrow_release;
  a->private_data = (void*)handle;
}

// st_call_release restores a's original release and private data and
// calls that release.
static void st_call_release(struct stArrowArray* a, void* release, void* private_data) {
  a->release = (void (*)(struct stArrowArray*))release;
  a->private_data = private_data;
  a->release(a);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// ExportCData exports s through the Arrow C Data Interface: out receives a
// struct array of one child per field (a record batch) and outSchema its
// schema. out must be zeroed (or released) memory.
//
// Lifetimes: the consumer sees our buffers, not copies. Every Go buffer
// the export points at is pinned (runtime.Pinner) and reachable from a
// handle until the consumer calls out's release callback, whatever
// becomes of s: s may be dropped, and the garbage collector run, before
// the consumer reads. A consumer that never calls release keeps the
// memory for the life of the process.
func ExportCData(s *st.StructTensor, out *cdata.CArrowArray, outSchema *cdata.CArrowSchema) error {
	rec, err := ToArrow(s)
	if err != nil {
		return err
	}
	defer rec.Release()
	state := &exportState{}
	for _, col := range rec.Columns() {
		state.pinData(col.Data())
	}
	cdata.ExportArrowRecordBatch(rec, out, outSchema)
	a := (*C.struct_stArrowArray)(unsafe.Pointer(out))
	state.release, state.private = unsafe.Pointer(a.release), a.private_data
	C.st_wrap_release(a, C.uintptr_t(cgo.NewHandle(state)))
	exportsOut.Add(1)
	return nil
}

// exportsOut counts the arrays ExportCData exported and whose release has
// not run yet (for tests).
var exportsOut atomic.Int64

// exportState is what an exported array holds on the Go side until its
// release: the pins of its buffers and the release cdata installed.
type exportState struct {
	pin     runtime.Pinner
	release unsafe.Pointer // C function
	private unsafe.Pointer // C memory (cdata's handle)
}

// pinData pins every buffer of d and its children (Pin ignores memory
// that is not Go's). ToArrow makes no dictionary arrays.
func (s *exportState) pinData(d arrow.ArrayData) {
	for _, b := range d.Buffers() {
		if b != nil && b.Len() > 0 {
			s.pin.Pin(&b.Bytes()[0])
		}
	}
	for _, c := range d.Children() {
		s.pinData(c)
	}
}

// stArrowRelease is the release callback of an array ExportCData
// exported: cdata's release (which drops its references), then the pins.
//
//export stArrowRelease
func stArrowRelease(a *C.struct_stArrowArray) {
	h := cgo.Handle(uintptr(a.private_data))
	state := h.Value().(*exportState)
	h.Delete()
	C.st_call_release(a, state.release, state.private)
	state.pin.Unpin()
	exportsOut.Add(-1)
}

// ImportCData imports a record batch exported through the C Data Interface
// (taking ownership of arr and schema, as the interface requires) as a
// rank-1 StructTensor sharing the producer's buffers. The value is valid
// until release is called; release hands the buffers back to the producer.
func ImportCData(arr *cdata.CArrowArray, schema *cdata.CArrowSchema, opts FromArrowOptions) (s *st.StructTensor, release func(), err error) {
	rec, err := cdata.ImportCRecordBatch(arr, schema)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: arrow c data: %w", ErrInvalid, err)
	}
	s, err = opts.record(rec, true)
	if err != nil {
		rec.Release()
		return nil, nil, err
	}
	return s, rec.Release, nil
}
