package tfbridge

// #include "bridge.h"
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"unsafe"

	"github.com/structtensor/structtensor-go/structtensor"
)

// Tensor owns one TF_Tensor: a session feed or fetch, or an attribute
// value. Close releases it at once; otherwise a cleanup releases it when
// the Tensor becomes unreachable. A Tensor is not safe for concurrent use
// with its own Close.
type Tensor struct {
	c       *C.TF_Tensor
	cleanup runtime.Cleanup
}

func deleteTensor(c *C.TF_Tensor) { C.TF_DeleteTensor(c) }

// wrapTensor takes ownership of c.
func wrapTensor(c *C.TF_Tensor) *Tensor {
	t := &Tensor{c: c}
	t.cleanup = runtime.AddCleanup(t, deleteTensor, c)
	return t
}

// Close releases the TF_Tensor. TensorFlow keeps the buffer alive for as
// long as a graph or another tensor still shares it. Close is idempotent.
func (t *Tensor) Close() {
	if t == nil || t.c == nil {
		return
	}
	t.cleanup.Stop()
	C.TF_DeleteTensor(t.c)
	t.c = nil
}

// DType returns the TensorFlow element type.
func (t *Tensor) DType() DType {
	defer runtime.KeepAlive(t)
	return DType(C.TF_TensorType(t.c))
}

// Shape returns the dimensions.
func (t *Tensor) Shape() structtensor.Shape {
	defer runtime.KeepAlive(t)
	n := int(C.TF_NumDims(t.c))
	s := make(structtensor.Shape, n)
	for i := range s {
		s[i] = int(C.TF_Dim(t.c, C.int(i)))
	}
	return s
}

// NumElements returns the number of elements.
func (t *Tensor) NumElements() int {
	defer runtime.KeepAlive(t)
	return int(C.TF_TensorElementCount(t.c))
}

// cDims converts a fully known shape for TF_AllocateTensor/TF_NewTensor.
func cDims(s structtensor.Shape) []C.int64_t {
	d := make([]C.int64_t, len(s))
	for i, v := range s {
		d[i] = C.int64_t(v)
	}
	return d
}

func dimsPtr(d []C.int64_t) *C.int64_t {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// borrowMin is the payload size from which NewTensor lends TensorFlow the
// Go buffer instead of copying it: below it, pinning and the release
// callback cost more than the copy saves.
const borrowMin = 64 << 10

// tstringSize is sizeof(TF_TString).
const tstringSize = 24

// conversion chooses how NewTensor hands data to TensorFlow.
type conversion int

const (
	convAuto   conversion = iota // borrow large payloads, copy the rest
	convCopy                     // always copy
	convBorrow                   // always borrow (non-empty payloads)
)

// NewTensor converts a structtensor Tensor into a TensorFlow tensor.
//
// Small payloads are copied: numeric and bool elements have the same
// layout on both sides, so that is one TF_AllocateTensor and one memcpy;
// strings become one TF_TString per element (inline up to 22 bytes, an
// allocation each beyond), written by a single C loop. From 64 KiB on
// (counting 24 bytes of TF_TString per string element), the Go buffer is
// lent instead: it is pinned (runtime.Pinner) and wrapped with
// TF_NewTensor, numerics as they are and strings as TF_TString views of
// the data buffer, so no element byte is copied. The buffer is unpinned when
// TensorFlow drops its last reference to it, which may be after Run
// returns and after Close (Identity forwards its input into its output;
// a Gather or Concat of strings copies the views, each of which holds a
// reference until it dies).
// TensorFlow copies numeric buffers that are not 64-byte aligned
// regardless, releasing the loan at once. Lending relies on the value
// model's promise that tensors are immutable; a Tensor built over memory
// the Go runtime does not own must outlive its TensorFlow use.
func NewTensor(v *structtensor.Tensor) (*Tensor, error) { return newTensor(v, convAuto) }

func newTensor(v *structtensor.Tensor, mode conversion) (*Tensor, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: nil tensor", ErrShape)
	}
	dt, err := DTypeOf(v.DType())
	if err != nil {
		return nil, err
	}
	dims := cDims(v.Shape())
	n := v.Len()
	if dt == String {
		data, offsets := v.StringData()
		used := offsets[len(offsets)-1] - offsets[0]
		borrow := mode == convBorrow && used > 0 ||
			mode == convAuto && used > 0 && used+int64(n)*tstringSize >= borrowMin
		var c *C.TF_Tensor
		dataPtr := (*C.char)(unsafe.Pointer(unsafe.SliceData(data)))
		offPtr := (*C.int64_t)(unsafe.Pointer(unsafe.SliceData(offsets)))
		if borrow {
			c = C.tfb_new_string_view_tensor(dimsPtr(dims), C.int(len(dims)), dataPtr, offPtr, C.int64_t(n), lend(unsafe.Pointer(unsafe.SliceData(data))))
		} else {
			c = C.tfb_new_string_tensor(dimsPtr(dims), C.int(len(dims)), dataPtr, offPtr, C.int64_t(n))
		}
		if c == nil {
			return nil, fmt.Errorf("%w: cannot allocate a string tensor of shape %v", ErrResourceExhausted, v.Shape())
		}
		return wrapTensor(c), nil
	}
	nbytes := n * v.DType().Size()
	if nbytes > 0 && (mode == convBorrow || mode == convAuto && nbytes >= borrowMin) {
		p := goPointer(v.Data())
		c := C.tfb_new_borrowed_tensor(C.TF_DataType(dt), dimsPtr(dims), C.int(len(dims)), p, C.size_t(nbytes), lend(p))
		if c == nil {
			return nil, fmt.Errorf("%w: cannot wrap a %v tensor of shape %v", ErrResourceExhausted, dt, v.Shape())
		}
		return wrapTensor(c), nil
	}
	c := C.TF_AllocateTensor(C.TF_DataType(dt), dimsPtr(dims), C.int(len(dims)), C.size_t(nbytes))
	if c == nil {
		return nil, fmt.Errorf("%w: cannot allocate a %v tensor of shape %v", ErrResourceExhausted, dt, v.Shape())
	}
	if nbytes > 0 {
		dst := unsafe.Slice((*byte)(C.TF_TensorData(c)), nbytes)
		copy(dst, goBytes(v.Data(), nbytes))
	}
	return wrapTensor(c), nil
}

// lend pins the Go object at p and returns the handle that tfbRelease
// unpins it with.
func lend(p unsafe.Pointer) C.uintptr_t {
	pinner := new(runtime.Pinner)
	pinner.Pin(p)
	loans.Add(1)
	return C.uintptr_t(cgo.NewHandle(pinner))
}

// goPointer returns the address of the first element of a numeric slice.
func goPointer(data any) unsafe.Pointer {
	switch x := data.(type) {
	case []bool:
		return unsafe.Pointer(unsafe.SliceData(x))
	case []int32:
		return unsafe.Pointer(unsafe.SliceData(x))
	case []int64:
		return unsafe.Pointer(unsafe.SliceData(x))
	case []uint32:
		return unsafe.Pointer(unsafe.SliceData(x))
	case []uint64:
		return unsafe.Pointer(unsafe.SliceData(x))
	case []float32:
		return unsafe.Pointer(unsafe.SliceData(x))
	case []float64:
		return unsafe.Pointer(unsafe.SliceData(x))
	}
	return nil
}

// goBytes views the backing array of a numeric slice as bytes.
func goBytes(data any, nbytes int) []byte {
	p := goPointer(data)
	if p == nil || nbytes == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), nbytes)
}

// Value copies the tensor into a structtensor Tensor (one memcpy for
// numeric types; for strings one pass to size the elements and one to copy
// their bytes into a single buffer). The copy is what makes the result
// safe to keep: TensorFlow owns the source buffer and may reuse it.
// Strings that are all valid UTF-8 are marked as such.
func (t *Tensor) Value() (*structtensor.Tensor, error) {
	if t == nil || t.c == nil {
		return nil, fmt.Errorf("%w: tensor", ErrClosed)
	}
	defer runtime.KeepAlive(t)
	sd, err := t.DType().StructDType()
	if err != nil {
		return nil, err
	}
	shape := t.Shape()
	n := t.NumElements()
	if sd == structtensor.String {
		offsets := make([]int64, n+1)
		total := int64(0)
		if n > 0 {
			total = int64(C.tfb_string_offsets(t.c, C.int64_t(n), (*C.int64_t)(unsafe.Pointer(&offsets[0]))))
		}
		data := make([]byte, total)
		if total > 0 {
			C.tfb_string_copy(t.c, C.int64_t(n), (*C.char)(unsafe.Pointer(&data[0])))
		}
		return structtensor.NewStringTensor(shape, data, offsets, structtensor.ValidUTF8Strings(data, offsets))
	}
	nbytes := n * sd.Size()
	if got := int(C.TF_TensorByteSize(t.c)); got < nbytes {
		return nil, fmt.Errorf("%w: %v tensor of shape %v has %d bytes, want %d", ErrShape, sd, shape, got, nbytes)
	}
	return structtensor.NewTensor(shape, cloneElements(sd, C.TF_TensorData(t.c), n))
}

// cloneElements copies n elements of dtype d at p (TensorFlow memory)
// into a new Go slice. append onto a nil slice allocates without zeroing
// what it then overwrites (a make-then-copy would write every byte
// twice), and the copy is what makes the result safe to keep: TensorFlow
// owns the source buffer and may reuse it.
func cloneElements(d structtensor.DType, p unsafe.Pointer, n int) any {
	switch d {
	case structtensor.Bool:
		return append(make([]bool, 0, 0), unsafe.Slice((*bool)(p), n)...)
	case structtensor.Int32:
		return append(make([]int32, 0, 0), unsafe.Slice((*int32)(p), n)...)
	case structtensor.Int64:
		return append(make([]int64, 0, 0), unsafe.Slice((*int64)(p), n)...)
	case structtensor.Uint32:
		return append(make([]uint32, 0, 0), unsafe.Slice((*uint32)(p), n)...)
	case structtensor.Uint64:
		return append(make([]uint64, 0, 0), unsafe.Slice((*uint64)(p), n)...)
	case structtensor.Float32:
		return append(make([]float32, 0, 0), unsafe.Slice((*float32)(p), n)...)
	case structtensor.Float64:
		return append(make([]float64, 0, 0), unsafe.Slice((*float64)(p), n)...)
	}
	return nil
}
