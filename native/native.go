package native

/*
#cgo CXXFLAGS: -std=c++17 -O2
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include "include/structtensor_native.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Error codes returned by the engine (ST_ERR_* in the C header).
const (
	CodeMalformed = C.ST_ERR_MALFORMED
	CodeWireType  = C.ST_ERR_WIRE_TYPE
	CodeDepth     = C.ST_ERR_DEPTH
	CodeUTF8      = C.ST_ERR_UTF8
	CodeRequired  = C.ST_ERR_REQUIRED
	CodePlan      = C.ST_ERR_PLAN
	CodeCancelled = C.ST_ERR_CANCELLED
	CodeArgument  = C.ST_ERR_ARGUMENT
	CodeInternal  = C.ST_ERR_INTERNAL
)

// Error is a failure reported by the engine.
type Error struct {
	Code    int
	Record  int64 // index of the bad record in the batch, or -1
	Offset  int64 // byte offset inside that record, or -1
	Message string
}

func (e *Error) Error() string {
	if e.Record >= 0 && e.Offset >= 0 {
		return fmt.Sprintf("record %d, byte %d: %s", e.Record, e.Offset, e.Message)
	}
	if e.Record >= 0 {
		return fmt.Sprintf("record %d: %s", e.Record, e.Message)
	}
	return e.Message
}

func toError(e *C.st_error) error {
	return &Error{
		Code:    int(e.code),
		Record:  int64(e.record),
		Offset:  int64(e.offset),
		Message: C.GoString(&e.message[0]),
	}
}

// Plan is a parsed plan owned by the engine. It is safe for concurrent use.
type Plan struct {
	p *C.st_plan
}

// NewPlan parses the byte form of a plan (see the package documentation).
// The Plan frees its engine memory when it is garbage collected.
func NewPlan(b []byte) (*Plan, error) {
	var cerr C.st_error
	var ptr *C.uint8_t
	if len(b) > 0 {
		ptr = (*C.uint8_t)(unsafe.Pointer(&b[0]))
	}
	p := C.st_plan_new(ptr, C.size_t(len(b)), &cerr)
	runtime.KeepAlive(b)
	if p == nil {
		return nil, toError(&cerr)
	}
	plan := &Plan{p: p}
	runtime.AddCleanup(plan, func(p *C.st_plan) { C.st_plan_free(p) }, p)
	return plan, nil
}

// NumColumns returns the number of value columns of the plan.
func (p *Plan) NumColumns() int { return int(C.st_plan_num_columns(p.p)) }

// NumPartitions returns the number of partitions (row splits) of the plan.
func (p *Plan) NumPartitions() int { return int(C.st_plan_num_partitions(p.p)) }

// ColumnDType returns the element type of column c (the numbering of
// structtensor.DType), or 0 for a bad index.
func (p *Plan) ColumnDType(c int) uint8 { return uint8(C.st_plan_column_dtype(p.p, C.int64_t(c))) }

// Options are the decode-time options.
type Options struct {
	// Threads is the number of threads: 0 means all cores, 1 serial.
	Threads int
}

// cancelFlag is an int32 in C memory that the engine polls between
// records; a goroutine raises it when the context is done.
func watch(ctx context.Context) (flag *C.int32_t, stop func()) {
	if ctx == nil || ctx.Done() == nil {
		return nil, func() {}
	}
	flag = (*C.int32_t)(C.calloc(1, 4))
	if ctx.Err() != nil {
		*flag = 1
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-ctx.Done():
			atomic.StoreInt32((*int32)(unsafe.Pointer(flag)), 1)
		case <-done:
		}
	}()
	return flag, func() {
		close(done)
		<-finished
		C.free(unsafe.Pointer(flag))
	}
}

func (p *Plan) options(o Options, flag *C.int32_t) C.st_options {
	return C.st_options{threads: C.int32_t(o.Threads), cancel: (*C.int32_t)(flag)}
}

// Decode decodes records. It pins the records for the duration of the
// call so that the engine may read them in place.
func (p *Plan) Decode(ctx context.Context, records [][]byte, o Options) (*Result, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := make([]*C.uint8_t, len(records))
	lens := make([]C.size_t, len(records))
	for i, r := range records {
		if len(r) > 0 {
			pin.Pin(&r[0])
			ptrs[i] = (*C.uint8_t)(unsafe.Pointer(&r[0]))
		}
		lens[i] = C.size_t(len(r))
	}
	flag, stop := watch(ctx)
	defer stop()
	opts := p.options(o, flag)
	var cerr C.st_error
	var pp **C.uint8_t
	var lp *C.size_t
	if len(records) > 0 {
		pp, lp = &ptrs[0], &lens[0]
	}
	r := C.st_decode(p.p, pp, lp, C.int64_t(len(records)), &opts, &cerr)
	runtime.KeepAlive(p)
	if r == nil {
		return nil, toError(&cerr)
	}
	return newResult(r, p), nil
}

// DecodeContiguous decodes the records data[offsets[i]:offsets[i+1]].
func (p *Plan) DecodeContiguous(ctx context.Context, data []byte, offsets []int64, o Options) (*Result, error) {
	if len(offsets) == 0 {
		return nil, &Error{Code: CodeArgument, Record: -1, Offset: -1, Message: "offsets are empty (need n+1 entries)"}
	}
	flag, stop := watch(ctx)
	defer stop()
	opts := p.options(o, flag)
	var cerr C.st_error
	var dp *C.uint8_t
	if len(data) > 0 {
		dp = (*C.uint8_t)(unsafe.Pointer(&data[0]))
	}
	r := C.st_decode_contiguous(p.p, dp, C.size_t(len(data)), (*C.int64_t)(unsafe.Pointer(&offsets[0])),
		C.int64_t(len(offsets)-1), &opts, &cerr)
	runtime.KeepAlive(p)
	runtime.KeepAlive(data)
	runtime.KeepAlive(offsets)
	if r == nil {
		return nil, toError(&cerr)
	}
	return newResult(r, p), nil
}

// Result holds decoded columns in engine memory until it is copied out.
// Call Free when done; a finalizer frees a forgotten one.
type Result struct {
	r *C.st_result
	// plan keeps the plan alive while the result exists: freeing a result
	// hands its buffers back to the plan's pool.
	plan *Plan
}

func newResult(r *C.st_result, plan *Plan) *Result {
	res := &Result{r: r, plan: plan}
	runtime.SetFinalizer(res, (*Result).Free)
	return res
}

// Free releases the engine memory. It is safe to call twice.
func (r *Result) Free() {
	if r.r != nil {
		C.st_result_free(r.r)
		r.r = nil
		runtime.KeepAlive(r.plan)
	}
	runtime.SetFinalizer(r, nil)
}

// NumRecords returns the number of records decoded.
func (r *Result) NumRecords() int { return int(C.st_result_num_records(r.r)) }

var errCopy = errors.New("native: copy failed")

// releaseBytes is the size from which a column's engine buffers are freed
// as soon as they are copied out: a large batch then never holds its
// output twice, while small buffers go back to the plan's pool and save
// the next batch their allocation. Each column can be copied out once.
const releaseBytes = 1 << 20

// Column copies out fixed-width column c as a []bool, []int32, []int64,
// []uint32, []uint64, []float32 or []float64 according to dtype (the
// numbering of structtensor.DType).
func (r *Result) Column(c int, dtype uint8) (any, error) {
	n := int(C.st_result_column_length(r.r, C.int64_t(c)))
	nb := int(C.st_result_column_bytes(r.r, C.int64_t(c)))
	if n < 0 {
		return nil, fmt.Errorf("%w: bad column %d", errCopy, c)
	}
	var out any
	var ptr unsafe.Pointer
	switch dtype {
	case C.ST_BOOL:
		s := make([]bool, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	case C.ST_INT32:
		s := make([]int32, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	case C.ST_UINT32:
		s := make([]uint32, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	case C.ST_FLOAT32:
		s := make([]float32, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	case C.ST_INT64:
		s := make([]int64, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	case C.ST_UINT64:
		s := make([]uint64, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	case C.ST_FLOAT64:
		s := make([]float64, n)
		out = s
		if n > 0 {
			ptr = unsafe.Pointer(&s[0])
		}
	default:
		return nil, fmt.Errorf("%w: column %d: dtype %d is not fixed-width", errCopy, c, dtype)
	}
	if n > 0 {
		if rc := C.st_result_copy_column(r.r, C.int64_t(c), ptr, C.size_t(nb)); rc != 0 {
			return nil, fmt.Errorf("%w: column %d (code %d)", errCopy, c, int(rc))
		}
	}
	if nb >= releaseBytes {
		C.st_result_release_column(r.r, C.int64_t(c))
	}
	return out, nil
}

// Strings copies out string column c as one data buffer plus len+1
// offsets.
func (r *Result) Strings(c int) (data []byte, offsets []int64, err error) {
	n := int(C.st_result_column_length(r.r, C.int64_t(c)))
	nb := int(C.st_result_column_bytes(r.r, C.int64_t(c)))
	if n < 0 {
		return nil, nil, fmt.Errorf("%w: bad column %d", errCopy, c)
	}
	data = make([]byte, nb)
	offsets = make([]int64, n+1)
	if nb > 0 {
		if rc := C.st_result_copy_column(r.r, C.int64_t(c), unsafe.Pointer(&data[0]), C.size_t(nb)); rc != 0 {
			return nil, nil, fmt.Errorf("%w: column %d (code %d)", errCopy, c, int(rc))
		}
	}
	if rc := C.st_result_copy_string_offsets(r.r, C.int64_t(c), (*C.int64_t)(unsafe.Pointer(&offsets[0])), C.size_t(n+1)); rc != 0 {
		return nil, nil, fmt.Errorf("%w: string offsets of column %d (code %d)", errCopy, c, int(rc))
	}
	if nb+8*n >= releaseBytes {
		C.st_result_release_column(r.r, C.int64_t(c))
	}
	return data, offsets, nil
}

// Splits copies out the row splits of partition p.
func (r *Result) Splits(p int) ([]int64, error) {
	n := int(C.st_result_partition_length(r.r, C.int64_t(p)))
	if n < 1 {
		return nil, fmt.Errorf("%w: bad partition %d", errCopy, p)
	}
	s := make([]int64, n)
	if rc := C.st_result_copy_partition(r.r, C.int64_t(p), (*C.int64_t)(unsafe.Pointer(&s[0])), C.size_t(n)); rc != 0 {
		return nil, fmt.Errorf("%w: partition %d (code %d)", errCopy, p, int(rc))
	}
	if 8*n >= releaseBytes {
		C.st_result_release_partition(r.r, C.int64_t(p))
	}
	return s, nil
}
