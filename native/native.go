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

	"github.com/structtensor/structtensor-go/internal/testhook"
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
//
// Engine memory: the plan keeps the buffers of up to 16 finished decodes
// (each of at most 64 MiB, PoolBytesLimit in all) for the next batch to
// reuse. That C memory is invisible to the garbage collector: Close frees
// it at once; otherwise it goes when the Plan is collected.
type Plan struct {
	p      *C.st_plan
	closed atomic.Bool
	// dtypes are the element types of the plan's columns.
	dtypes []uint8
}

// Recycle hands back blocks, the memory lent to an earlier decode
// (Result.LentBlocks), for a later decode to lend the engine again at
// once: the caller guarantees that nothing reads or writes it any more.
// Blocks also come back by themselves once nothing refers to them (see
// lendpool.go), a garbage collection later; Recycle saves that wait and
// the cycle. Anything but LentBlocks' blocks must not be passed.
func (p *Plan) Recycle(blocks [][]byte) { recycleBlocks(blocks) }

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
	plan := &Plan{p: p, dtypes: make([]uint8, int(C.st_plan_num_columns(p)))}
	for c := range plan.dtypes {
		plan.dtypes[c] = uint8(C.st_plan_column_dtype(p, C.int64_t(c)))
	}
	runtime.AddCleanup(plan, func(p *C.st_plan) { C.st_plan_free(p) }, p)
	return plan, nil
}

// PoolBytesLimit bounds the C memory a Plan keeps for reuse between
// decodes.
const PoolBytesLimit = C.ST_PLAN_POOL_BYTES

// Close frees the engine memory the plan keeps for reuse and makes later
// decodes fail; results already returned stay valid. It is safe to call
// more than once and concurrently with decodes (those under way finish).
func (p *Plan) Close() {
	if p.closed.Swap(true) {
		return
	}
	C.st_plan_close(p.p)
	runtime.KeepAlive(p)
}

// PoolBytes returns the capacity of the decode buffers the plan keeps for
// reuse.
func (p *Plan) PoolBytes() int64 {
	n := int64(C.st_plan_pool_bytes(p.p))
	runtime.KeepAlive(p)
	return n
}

// NumColumns returns the number of value columns of the plan.
func (p *Plan) NumColumns() int { return len(p.dtypes) }

// NumPartitions returns the number of partitions (row splits) of the plan.
func (p *Plan) NumPartitions() int {
	n := int(C.st_plan_num_partitions(p.p))
	runtime.KeepAlive(p)
	return n
}

// NumTagTables returns how many field tables the plan's nodes use: nodes
// with equal fields (one message type, projected alike) share one, so
// that the walk over many of them reads one table's few cache lines. A
// diagnostic.
func (p *Plan) NumTagTables() int {
	n := int(C.st_plan_num_tag_tables(p.p))
	runtime.KeepAlive(p)
	return n
}

// ColumnDType returns the element type of column c (the numbering of
// structtensor.DType), or 0 for a bad index.
func (p *Plan) ColumnDType(c int) uint8 {
	if c < 0 || c >= len(p.dtypes) {
		return 0
	}
	return p.dtypes[c]
}

var errClosed = &Error{Code: CodeArgument, Record: -1, Offset: -1, Message: "the plan is closed"}

// threadLimit is the engine's thread limit last set from GOMAXPROCS.
var threadLimit atomic.Int32

// syncThreadLimit bounds the engine's worker threads, all decodes of the
// process together, by GOMAXPROCS: the Go scheduler's view of the CPUs
// the process may use (cgroup quotas included since Go 1.25).
func syncThreadLimit() {
	n := int32(runtime.GOMAXPROCS(0))
	if threadLimit.Load() != n {
		threadLimit.Store(n)
		C.st_set_thread_limit(C.int32_t(n))
	}
}

// Options are the decode-time options.
type Options struct {
	// Threads is the number of threads: 0 means GOMAXPROCS, 1 serial.
	// However many a decode asks for, the engine's threads of all decodes
	// together are bounded by GOMAXPROCS (a pool of threads kept between
	// decodes); a thread that cannot start slows a decode, never fails it.
	Threads int
}

// cancelFlag is an int32 in C memory that the engine polls between
// records; a goroutine raises it when the context is done.
func watch(ctx context.Context) (flag *C.int32_t, stop func()) {
	if ctx == nil || ctx.Done() == nil {
		return nil, func() {}
	}
	flag = (*C.int32_t)(C.calloc(1, 4))
	if flag == nil {
		panic("native: out of C memory for a cancel flag")
	}
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

// options are the engine's options for a decode: it marks the columns of
// string fields whose strings are all valid UTF-8 (Result.StringsUTF8).
func (p *Plan) options(o Options, flag *C.int32_t) C.st_options {
	return C.st_options{threads: C.int32_t(o.Threads), cancel: (*C.int32_t)(flag), mark_utf8: 1}
}

// Decode decodes records. It pins the records for the duration of the
// call so that the engine may read them in place.
func (p *Plan) Decode(ctx context.Context, records [][]byte, o Options) (*Result, error) {
	if p.closed.Load() {
		return nil, errClosed
	}
	syncThreadLimit()
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
	n := len(records)
	l := p.lend(func(sizes *C.st_lend_sizes) C.int32_t {
		return C.st_plan_lend_sizes(p.p, pp, lp, C.int64_t(n), &opts, sizes)
	})
	r := C.st_decode_into(p.p, pp, lp, C.int64_t(n), &opts, l.output(), &cerr)
	runtime.KeepAlive(p)
	if r == nil {
		l.free()
		return nil, toError(&cerr)
	}
	return p.result(r, l), nil
}

// result wraps a decode's result, keeping what was lent until it is
// freed.
func (p *Plan) result(r *C.st_result, l *lent) *Result {
	res := newResult(r, p)
	res.lent = l
	l.settle(res)
	return res
}

// DecodeContiguous decodes the records data[offsets[i]:offsets[i+1]].
//
// A decode (here and in Decode) of a batch of at least 64 KiB lends the
// engine Go buffers of the sizes the engine's one sizing policy gives
// (st_plan_lend_sizes, shared with the TensorFlow kernel: scaled from the
// plan's last such batch, or for its first from a sample of the batch),
// so the engine writes the columns in their final place (each thread its
// share, closed up afterwards): no engine copy of the output exists
// beside the Go one. Outputs that outgrow their buffer are copied out as
// usual, so the result is the same either way.
func (p *Plan) DecodeContiguous(ctx context.Context, data []byte, offsets []int64, o Options) (*Result, error) {
	if len(offsets) == 0 {
		return nil, &Error{Code: CodeArgument, Record: -1, Offset: -1, Message: "offsets are empty (need n+1 entries)"}
	}
	if p.closed.Load() {
		return nil, errClosed
	}
	// Validate before anything is sized from the offsets: buffers lent
	// below are sized from offsets[n]-offsets[0], which must then be at
	// most len(data).
	if err := checkOffsets(offsets, len(data)); err != nil {
		return nil, err
	}
	syncThreadLimit()
	flag, stop := watch(ctx)
	defer stop()
	opts := p.options(o, flag)
	var cerr C.st_error
	var dp *C.uint8_t
	if len(data) > 0 {
		dp = (*C.uint8_t)(unsafe.Pointer(&data[0]))
	}
	n := len(offsets) - 1
	offp := (*C.int64_t)(unsafe.Pointer(&offsets[0]))
	l := p.lend(func(sizes *C.st_lend_sizes) C.int32_t {
		return C.st_plan_lend_sizes_contiguous(p.p, dp, C.size_t(len(data)), offp, C.int64_t(n), &opts, sizes)
	})
	r := C.st_decode_contiguous_into(p.p, dp, C.size_t(len(data)), offp, C.int64_t(n), &opts, l.output(), &cerr)
	runtime.KeepAlive(p)
	runtime.KeepAlive(data)
	runtime.KeepAlive(offsets)
	if r == nil {
		l.free()
		return nil, toError(&cerr)
	}
	return p.result(r, l), nil
}

// checkOffsets checks that offsets are non-decreasing and within
// [0, dataLen], naming the first record whose bounds are not.
func checkOffsets(offsets []int64, dataLen int) error {
	if offsets[0] < 0 || offsets[0] > int64(dataLen) {
		return &Error{Code: CodeArgument, Record: 0, Offset: -1,
			Message: fmt.Sprintf("offsets[0] = %d is outside the data (%d bytes)", offsets[0], dataLen)}
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] || offsets[i] > int64(dataLen) {
			return &Error{Code: CodeArgument, Record: int64(i - 1), Offset: -1,
				Message: fmt.Sprintf("record %d spans offsets [%d, %d), not a range of the data (%d bytes)", i-1, offsets[i-1], offsets[i], dataLen)}
		}
	}
	return nil
}

// lent holds the Go buffers lent to the engine for one decode: slices of
// one block of Go memory (or a few, see below), pinned until the result
// is freed, and the C arrays that point at them.
//
// One block rather than a slice per output: each large allocation may
// start a garbage collection cycle, whose fixed costs (stopping the world,
// waking the other Ps, the mark workers) were a fifth of the time of a
// decode of flat records with two hundred outputs and two cycles per
// batch; one allocation starts at most one. The cost is retention: any
// output slice a caller keeps keeps the whole block, which is why a
// result that uses much less than its block copies its outputs out (see
// lent.keep).
//
// Outputs of more than lendBlockBytes go into several blocks of about an
// eighth of them each (maxLendBlock): one huge allocation right after the
// last batch's was freed may find the freed run of pages split by the
// runtime's background scavenger, which holds the pages it is returning
// to the operating system for a moment, and then takes fresh pages for
// the whole output while the freed ones are still resident, doubling the
// process's memory for a batch; with blocks of an eighth, such a miss
// costs an eighth.
type lent struct {
	blocks [][]byte // every buffer below is a stretch of one of them
	// cols holds per column its buffer: the typed slice is made when
	// Column hands it out, not here (as an any, each is an allocation:
	// made here and cut to length there, two a column a batch).
	cols  []lentColumn
	offs  [][]int64 // per string column: the offsets
	parts [][]int64
	pin   runtime.Pinner
	out   *C.st_output
	mem   unsafe.Pointer // C memory of out and its arrays
	// keep is set once the decode is done: whether the outputs decoded in
	// place fill enough of the block to be handed out as they are.
	keep bool
}

// lentColumn is a column's buffer in a lent block: n elements of dtype
// (a string column's: bytes) at p.
type lentColumn struct {
	p     unsafe.Pointer
	n     int
	dtype uint8
}

// typedSlice returns n elements of a column's dtype at p, in Go memory.
func typedSlice(dtype uint8, p unsafe.Pointer, n int) any {
	switch dtype {
	case C.ST_BOOL:
		return unsafe.Slice((*bool)(p), n)
	case C.ST_INT32:
		return unsafe.Slice((*int32)(p), n)
	case C.ST_UINT32:
		return unsafe.Slice((*uint32)(p), n)
	case C.ST_FLOAT32:
		return unsafe.Slice((*float32)(p), n)
	case C.ST_INT64:
		return unsafe.Slice((*int64)(p), n)
	case C.ST_UINT64:
		return unsafe.Slice((*uint64)(p), n)
	case C.ST_FLOAT64:
		return unsafe.Slice((*float64)(p), n)
	case C.ST_STRING:
		return unsafe.Slice((*byte)(p), n)
	}
	return nil
}

// elemSize is the size of an element of a fixed-width dtype (strings: 1).
func elemSize(dtype uint8) int {
	switch dtype {
	case C.ST_BOOL, C.ST_STRING:
		return 1
	case C.ST_INT32, C.ST_UINT32, C.ST_FLOAT32:
		return 4
	}
	return 8
}

// lendAlign is the alignment of each buffer in the block: a cache line,
// so that no two outputs share one (the threads of a decode write
// different stretches of every buffer, and each buffer's start is the
// start of a stretch).
const lendAlign = 64

// lend returns the buffers to lend the engine for one decode, or nil to
// lend nothing. sized asks the engine for their sizes (st_plan_lend_sizes
// for the decode's batch: the one sizing policy, which the TensorFlow
// kernel shares), writing them into the capacity arrays of the
// st_output; lend then carves the buffers out of one block of Go memory,
// or a few for large outputs (the recycled ones when they are large
// enough), and pins them. It returns nil too when C memory for the
// arrays is short.
func (p *Plan) lend(sized func(*C.st_lend_sizes) C.int32_t) *lent {
	nc, np := len(p.dtypes), p.NumPartitions()
	const w = unsafe.Sizeof(uintptr(0))
	mem := C.calloc(C.size_t(4*nc+2*np+1), C.size_t(w))
	out := (*C.st_output)(C.calloc(1, C.size_t(unsafe.Sizeof(C.st_output{}))))
	if mem == nil || out == nil {
		C.free(mem)
		C.free(unsafe.Pointer(out))
		return nil
	}
	arr := func(i int) unsafe.Pointer { return unsafe.Add(mem, uintptr(i)*w) }
	colData := unsafe.Slice((*unsafe.Pointer)(arr(0)), nc)
	colCap := unsafe.Slice((*C.size_t)(arr(nc)), nc)
	offData := unsafe.Slice((**C.int64_t)(arr(2*nc)), nc)
	offCap := unsafe.Slice((*C.size_t)(arr(3*nc)), nc)
	partData := unsafe.Slice((**C.int64_t)(arr(4*nc)), np)
	partCap := unsafe.Slice((*C.size_t)(arr(4*nc+np)), np)
	sizes := C.st_lend_sizes{column_bytes: (*C.size_t)(arr(nc)), string_offsets_len: (*C.size_t)(arr(3 * nc)), partition_len: (*C.size_t)(arr(4*nc + np))}
	if sized(&sizes) != 1 {
		C.free(mem)
		C.free(unsafe.Pointer(out))
		return nil
	}
	// The layout: per column its values, per string column its offsets,
	// per partition its splits, each at a multiple of lendAlign, in
	// blocks of at most maxLendBlock bytes (an output larger than that has
	// one of its own).
	type place struct{ block, at int }
	colAt, offAt, partAt := make([]place, nc), make([]place, nc), make([]place, np)
	outBytes := make([]int, 0, 4*nc+np)
	for c, dtype := range p.dtypes {
		outBytes = append(outBytes, int(colCap[c]))
		if dtype == C.ST_STRING {
			outBytes = append(outBytes, 8*int(offCap[c]))
		}
	}
	for k := range np {
		outBytes = append(outBytes, 8*int(partCap[k]))
	}
	total := 0
	for i, b := range outBytes {
		outBytes[i] = (b + lendAlign - 1) / lendAlign * lendAlign
		total += outBytes[i]
	}
	maxBlock := maxLendBlock(total)
	need := []int{0}
	next := 0
	at := func() place {
		b := outBytes[next]
		next++
		if cur := &need[len(need)-1]; *cur > 0 && *cur+b > maxBlock {
			need = append(need, 0)
		}
		cur := &need[len(need)-1]
		pl := place{len(need) - 1, *cur}
		*cur += b
		return pl
	}
	for c, dtype := range p.dtypes {
		colAt[c] = at()
		if dtype == C.ST_STRING {
			offAt[c] = at()
		}
	}
	for k := range np {
		partAt[k] = at()
	}
	// From the pool of blocks that came back, else new (takeBlock rounds
	// up to a size class: the slack lets the next batch of about the same
	// size fit in a block of this one).
	blocks := takeBlocks(need...)
	l := &lent{blocks: blocks, cols: make([]lentColumn, nc), offs: make([][]int64, nc), parts: make([][]int64, np), mem: mem, out: out}
	bases := make([]unsafe.Pointer, len(blocks))
	for i, b := range blocks {
		bases[i] = unsafe.Pointer(unsafe.SliceData(b))
		l.pin.Pin(bases[i])
	}
	addr := func(pl place) unsafe.Pointer { return unsafe.Add(bases[pl.block], pl.at) }
	for c, dtype := range p.dtypes {
		ptr := addr(colAt[c])
		l.cols[c], colData[c] = lentColumn{ptr, int(colCap[c]) / elemSize(dtype), uint8(dtype)}, ptr
		if dtype == C.ST_STRING {
			o := addr(offAt[c])
			l.offs[c], offData[c] = unsafe.Slice((*int64)(o), int(offCap[c])), (*C.int64_t)(o)
		}
	}
	for k := range np {
		s := addr(partAt[k])
		l.parts[k], partData[k] = unsafe.Slice((*int64)(s), int(partCap[k])), (*C.int64_t)(s)
	}
	out.column_data = (*unsafe.Pointer)(arr(0))
	out.column_bytes = (*C.size_t)(arr(nc))
	out.string_offsets = (**C.int64_t)(arr(2 * nc))
	out.string_offsets_len = (*C.size_t)(arr(3 * nc))
	out.partition_splits = (**C.int64_t)(arr(4 * nc))
	out.partition_len = (*C.size_t)(arr(4*nc + np))
	return l
}

// settle decides, once the decode into l is done, whether its outputs
// may be handed out in place: only when those decoded in place fill at
// least half the block (less, and a caller keeping them would keep a
// block mostly of slack: the batch was smaller than the last one's
// sizes said; the outputs are then copied out, as when nothing is lent).
func (l *lent) settle(res *Result) {
	if l == nil {
		return
	}
	used := 0
	for c, v := range l.cols {
		if res.cols[c][2] != 1 {
			continue
		}
		used += int(res.cols[c][1])
		if v.dtype == C.ST_STRING {
			used += 8 * (int(res.cols[c][0]) + 1)
		}
	}
	for k := range l.parts {
		if res.parts[k][1] == 1 {
			used += 8 * int(res.parts[k][0])
		}
	}
	size := 0
	for _, b := range l.blocks {
		size += len(b)
	}
	l.keep = 2*used >= size-4096
}

// lendBlockBytes is the size up to which a decode's lent buffers share one
// block (see lent).
const lendBlockBytes = 128 << 20

// maxLendBlock is the largest block that buffers of total bytes in all
// are lent in: one block up to lendBlockBytes, else about an eighth.
func maxLendBlock(total int) int {
	limit := lendBlockBytes
	if v := testhook.LendBlockBytes.Load(); v > 0 {
		limit = int(v)
	}
	return max(limit, (total+7)/8)
}

// LentBlocks returns the pool's blocks this decode's outputs may be
// slices of: the memory lent to the engine, which the outputs decoded in
// place are slices of, and the block the others were copied out into in
// one call when it came from the pool (copyOut); nil if none. It is for
// Plan.Recycle, once nothing uses the outputs any more.
func (r *Result) LentBlocks() [][]byte {
	var blocks [][]byte
	if r.lent != nil {
		blocks = r.lent.blocks
	}
	if r.copied != nil && r.copied.pooled != nil {
		blocks = append(blocks[:len(blocks):len(blocks)], r.copied.pooled)
	}
	return blocks
}

// output is what to pass the engine: nil lends nothing.
func (l *lent) output() *C.st_output {
	if l == nil {
		return nil
	}
	return l.out
}

// free unpins the buffers and frees the C arrays; the engine must no
// longer use them (the result is freed).
func (l *lent) free() {
	if l == nil {
		return
	}
	l.pin.Unpin()
	C.free(unsafe.Pointer(l.out))
	C.free(l.mem)
	l.out, l.mem = nil, nil
}

// Result holds decoded columns in engine memory until it is copied out.
// Call Free when done; a finalizer frees a forgotten one.
type Result struct {
	r *C.st_result
	// plan keeps the plan alive while the result exists: freeing a result
	// hands its buffers back to the plan's pool.
	plan *Plan
	// lent are the Go buffers the engine wrote into, or nil.
	lent *lent
	// cols and parts are every output's sizes, read in one call
	// (st_result_layout) rather than five cgo calls per output, which
	// weighed on small batches: per column its length, bytes and
	// whether it is in place (1), per partition its length and whether it
	// is in place.
	cols  [][3]int64
	parts [][2]int64
	// copied holds the outputs copied out in one call (copyOut), once the
	// first output to copy out was asked for; nil before, or when the
	// outputs to copy are too large to copy at once.
	copied     *copiedOutputs
	copyChosen bool // whether copyOut has decided
}

func newResult(r *C.st_result, plan *Plan) *Result {
	res := &Result{r: r, plan: plan}
	nc, np := len(plan.dtypes), plan.NumPartitions()
	layout := make([]int64, 3*nc+2*np+1) // +1: never empty, so &layout[k] is valid
	C.st_result_layout(r, (*C.int64_t)(unsafe.Pointer(&layout[0])), (*C.int64_t)(unsafe.Pointer(&layout[3*nc])))
	// Only when there are some: a *[3]int64 (*[2]int64) at the spare last
	// element would reach past the allocation (checkptr refuses it).
	if nc > 0 {
		res.cols = unsafe.Slice((*[3]int64)(unsafe.Pointer(&layout[0])), nc)
	}
	if np > 0 {
		res.parts = unsafe.Slice((*[2]int64)(unsafe.Pointer(&layout[3*nc])), np)
	}
	runtime.SetFinalizer(res, (*Result).Free)
	return res
}

// Free releases the engine memory. It is safe to call twice.
func (r *Result) Free() {
	if r.r != nil {
		C.st_result_free(r.r)
		r.r = nil
		runtime.KeepAlive(r.plan)
		r.lent.free()
		r.lent = nil
	}
	runtime.SetFinalizer(r, nil)
}

// NumRecords returns the number of records decoded.
func (r *Result) NumRecords() int {
	n := int(C.st_result_num_records(r.r))
	runtime.KeepAlive(r)
	return n
}

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
	if c < 0 || c >= len(r.cols) {
		return nil, fmt.Errorf("%w: bad column %d", errCopy, c)
	}
	n, nb := int(r.cols[c][0]), int(r.cols[c][1])
	defer runtime.KeepAlive(r)
	if r.columnInPlace(c) {
		if lc := r.lent.cols[c]; lc.dtype == dtype && n <= lc.n {
			if v := typedSlice(dtype, lc.p, n); v != nil {
				testhook.LentInPlace.Add(1)
				return v, nil
			}
		}
	}
	r.countCopied()
	if p := r.copyOut().values(c); p != nil && dtype == r.plan.dtypes[c] && nb == n*elemSize(dtype) {
		if v := typedSlice(dtype, p, n); v != nil {
			return v, nil
		}
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
	if c < 0 || c >= len(r.cols) {
		return nil, nil, fmt.Errorf("%w: bad column %d", errCopy, c)
	}
	n, nb := int(r.cols[c][0]), int(r.cols[c][1])
	defer runtime.KeepAlive(r)
	if r.columnInPlace(c) {
		if lc := r.lent.cols[c]; lc.dtype == C.ST_STRING && lc.n >= nb && len(r.lent.offs[c]) >= n+1 {
			testhook.LentInPlace.Add(1)
			return unsafe.Slice((*byte)(lc.p), nb), r.lent.offs[c][: n+1 : n+1], nil
		}
	}
	r.countCopied()
	if cp := r.copyOut(); cp.values(c) != nil && r.plan.dtypes[c] == C.ST_STRING {
		return unsafe.Slice((*byte)(cp.values(c)), nb), cp.words(len(r.cols)+c, n+1), nil
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

// StringsUTF8 tells whether each string of column c, a protobuf string
// field's, is valid UTF-8 on its own (as structtensor.ValidUTF8Strings
// has it), as the decoding threads found while storing the strings:
// known is false when the engine cannot tell (a string found invalid was
// replaced later in its record; a bytes field's column), and the caller
// checks the strings itself.
func (r *Result) StringsUTF8(c int) (valid, known bool) {
	if c < 0 || c >= len(r.cols) || testhook.IgnoreUTF8Marks.Load() {
		return false, false
	}
	defer runtime.KeepAlive(r)
	switch C.st_result_column_utf8(r.r, C.int64_t(c)) {
	case 1:
		return true, true
	case 0:
		return false, true
	}
	return false, false
}

// Splits copies out the row splits of partition p.
func (r *Result) Splits(p int) ([]int64, error) {
	if p < 0 || p >= len(r.parts) || r.parts[p][0] < 1 {
		return nil, fmt.Errorf("%w: bad partition %d", errCopy, p)
	}
	n := int(r.parts[p][0])
	defer runtime.KeepAlive(r)
	if r.partitionInPlace(p) && len(r.lent.parts[p]) >= n {
		testhook.LentInPlace.Add(1)
		return r.lent.parts[p][:n:n], nil
	}
	r.countCopied()
	if s := r.copyOut().words(2*len(r.cols)+p, n); s != nil {
		return s, nil
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

// columnInPlace and partitionInPlace tell whether column c or partition
// p lies complete in the buffers lent to the engine, to be handed out
// where it is.
func (r *Result) columnInPlace(c int) bool {
	return r.lent != nil && r.lent.keep && r.cols[c][2] == 1
}

func (r *Result) partitionInPlace(p int) bool {
	return r.lent != nil && r.lent.keep && r.parts[p][1] == 1
}

// copyAllBytes is the size up to which the outputs a result copies out
// of engine memory are copied in one call into one block of Go memory
// (copyOut), rather than each in a call into a slice of its own. A batch
// of a few records of a wide schema has hundreds of small outputs: a cgo
// call and an allocation each were most of the cost of decoding one
// record of six hundred leaves (see decode's small-batch benchmark). The
// bound keeps a large result from holding two copies of its output at
// once (each large output's engine buffer is released as soon as it is
// copied, see releaseBytes); an output kept keeps the whole block, which
// for a result this small is little.
const copyAllBytes = 8 << 20

// copyPoolMinBytes is the size from which copyOut takes its block from
// the pool of lent blocks: the runtime's largest small allocation.
const copyPoolMinBytes = 32 << 10

// copiedOutputs are the outputs of a result copied out in one call, each
// a stretch of one block of 8-byte words: per column the word its value
// bytes start at (and a string column's offsets), per partition its
// splits', or -1 for those not copied (in place in lent buffers). Word
// indices rather than slices: a wide schema's hundreds of slice headers
// would be as many pointers more for the collector to scan.
type copiedOutputs struct {
	block  []int64
	pooled []byte  // the block as the pool lent it, or nil
	at     []int32 // per column its values, then per column its offsets, then per partition its splits
}

// values returns the address of column c's copied value bytes, or nil.
func (cp *copiedOutputs) values(c int) unsafe.Pointer {
	if cp == nil || cp.at[c] < 0 {
		return nil
	}
	return unsafe.Pointer(&cp.block[cp.at[c]])
}

// words returns the n words at index k of at, or nil when not copied.
func (cp *copiedOutputs) words(k, n int) []int64 {
	if cp == nil || cp.at[k] < 0 {
		return nil
	}
	at := int(cp.at[k])
	return cp.block[at : at+n : at+n]
}

// copyOut copies every output not in place out of engine memory in one
// call, the first time one is asked for, if they fit in copyAllBytes,
// and returns them; nil when they do not (each is then copied on its
// own) or the copy failed (each then reports its own error).
func (r *Result) copyOut() *copiedOutputs {
	if r.copyChosen {
		return r.copied
	}
	r.copyChosen = true
	limit := copyAllBytes
	if v := testhook.CopyAllBytes.Load(); v != 0 {
		limit = int(v)
	}
	if limit < 0 {
		return nil
	}
	nc, np := len(r.cols), len(r.parts)
	cp := &copiedOutputs{at: make([]int32, 2*nc+np)}
	words := 0
	place := func(k, n int) {
		cp.at[k] = int32(words)
		words += n
	}
	for c := range r.cols {
		cp.at[c], cp.at[nc+c] = -1, -1
		if r.columnInPlace(c) {
			continue
		}
		place(c, (int(r.cols[c][1])+7)/8)
		if r.plan.dtypes[c] == C.ST_STRING {
			place(nc+c, int(r.cols[c][0])+1)
		}
		if words > limit/8 {
			return nil
		}
	}
	for p := range r.parts {
		cp.at[2*nc+p] = -1
		if r.partitionInPlace(p) || r.parts[p][0] < 1 {
			continue
		}
		place(2*nc+p, int(r.parts[p][0]))
		if words > limit/8 {
			return nil
		}
	}
	// One word more: an empty output's address is still inside the block.
	// A block past the runtime's small sizes comes from the pool of lent
	// blocks: a fresh large allocation is memory the runtime may have
	// returned to the operating system, faulted in again page by page
	// (wide sparse records in batches of a few hundred: a third of the
	// decode), where a pooled block is resident; it comes back to the
	// pool as lent blocks do, and Recycle hands it back.
	if bytes := 8 * (words + 1); bytes >= copyPoolMinBytes {
		b := takeBlocks(bytes)[0]
		cp.pooled = b
		testhook.CopiedIntoPooled.Add(1)
		cp.block = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), words+1)
	} else {
		cp.block = makeUncleared[int64](words + 1)
	}
	mem := C.calloc(C.size_t(2*nc+np+1), C.size_t(unsafe.Sizeof(uintptr(0))))
	if mem == nil {
		return nil
	}
	// The C arrays hold pointers into the block: pinned while they do (the
	// engine keeps none of them after the call), freed before unpinning.
	var pin runtime.Pinner
	pin.Pin(&cp.block[0])
	dst := unsafe.Slice((*unsafe.Pointer)(mem), 2*nc+np)
	for k, at := range cp.at {
		if at >= 0 {
			dst[k] = unsafe.Pointer(&cp.block[at])
		}
	}
	w := unsafe.Sizeof(uintptr(0))
	rc := C.st_result_copy_outputs(r.r, (*unsafe.Pointer)(mem), (**C.int64_t)(unsafe.Add(mem, uintptr(nc)*w)), (**C.int64_t)(unsafe.Add(mem, uintptr(2*nc)*w)))
	C.free(mem)
	pin.Unpin()
	if rc != 0 {
		return nil
	}
	testhook.CopiedAtOnce.Add(1)
	r.copied = cp
	return cp
}

// countCopied counts an output of a decode that lent buffers copied out
// of engine memory (testhook.LentCopied).
func (r *Result) countCopied() {
	if r.lent != nil {
		testhook.LentCopied.Add(1)
	}
}

// LentOutgrown returns how many lent buffers, or threads' shares of them,
// outputs have outgrown in this process, moving to engine memory (each
// costs a copy; the output is the same): for tests and diagnostics of the
// sizing policy.
func LentOutgrown() int64 { return int64(C.st_test_lent_outgrown()) }

// SteeredHelpers returns how many times in this process the engine kept
// a pool thread it was about to wake for a job off the waking thread's
// CPU until the thread ran (Linux, where the thread may run elsewhere).
func SteeredHelpers() int64 { return int64(C.st_test_steered_helpers()) }

// CloseUpMovedValues returns how many bytes of values (not string offsets
// nor row splits) the close-ups of multi-threaded decodes into lent
// buffers have moved within those buffers in this process: for tests and
// diagnostics of where each thread's share is placed.
func CloseUpMovedValues() int64 { return int64(C.st_test_closeup_moved_values()) }

// CloseUpMovedSplits returns how many bytes of row splits the same
// close-ups have moved within the lent buffers in this process (not those
// only rebased where a thread wrote them).
func CloseUpMovedSplits() int64 { return int64(C.st_test_closeup_moved_splits()) }

// CloseUpRebasedSplits returns how many bytes of the records' own row
// splits (those of their top-level list fields) the same close-ups have
// rebased, moved or in place, in this process: none of a chunk that took
// the hand-over of the totals of the chunks before it.
func CloseUpRebasedSplits() int64 { return int64(C.st_test_closeup_rebased_splits()) }

// Handovers returns how many hand-overs of the records' own row splits
// later chunks of multi-threaded decodes into lent buffers have taken in
// this process, and the bytes of splits that the threads asking them
// rebased in place.
func Handovers() (taken, rebasedBytes int64) {
	var b C.int64_t
	taken = int64(C.st_test_handovers(&b))
	return taken, int64(b)
}

// handover makes multi-threaded decodes into lent buffers hand the
// records' own row splits over never (mode -1), as the last batch says
// (0) or always (1), the first chunk taking share less time than the
// others.
func handover(mode int, share float64) { C.st_test_handover(C.int32_t(mode), C.double(share)) }

// Splits returns how many times, in this process, a thread of a
// multi-threaded decode into lent buffers or by feature spec, done with
// its chunk, split another thread's chunk and decoded the second half of
// its records left.
func Splits() int64 { return int64(C.st_test_splits()) }

// steal makes those decodes split chunks never (mode -1), when worth it
// (0), whenever two records or more are left (1), or so with the first
// (2) or the last (3) chunk's walk slowed down until the batch's first
// split.
func steal(mode int) { C.st_test_steal(C.int32_t(mode)) }

func minThreadSeconds(seconds float64) { C.st_test_min_thread_seconds(C.double(seconds)) }

// DeferredAdoptions returns how many later chunks of multi-threaded
// decodes into lent buffers, in this process, deferred the records' own
// row splits, ended their walk without taking the hand-over and had them
// written once the chunks before them were done.
func DeferredAdoptions() int64 { return int64(C.st_test_deferred_adoptions()) }

// DeferredPartsHelped returns how many record parts of deferred row
// splits, in this process, a thread other than the one writing them
// wrote (helping, its own chunks done).
func DeferredPartsHelped() int64 { return int64(C.st_test_deferred_parts_helped()) }

// deferSplits makes later chunks defer the records' own row splits until
// the hand-over where they are enough of the output (mode 0), wherever
// they may (1), or never (-1).
func deferSplits(mode int) { C.st_test_defer_splits(C.int32_t(mode)) }

// failThreadStarts makes every later start of an engine pool thread fail
// (or start again): for the test of the fallback to fewer threads.
func failThreadStarts(fail bool) {
	f := C.int32_t(0)
	if fail {
		f = 1
	}
	C.st_test_fail_thread_starts(f)
}

// forcePackedTier makes packed varints take the decoder of tier (0
// AVX-512, 1 AVX2, 2 pext, 3 scalar) or the best below it the CPU has,
// without pext if noPext; -1 restores the default. It returns the tier in
// effect.
func forcePackedTier(tier int, noPext bool) int {
	n := C.int32_t(0)
	if noPext {
		n = 1
	}
	return int(C.st_test_packed_tier(C.int32_t(tier), n))
}

func init() {
	testhook.ForcePackedTier = forcePackedTier
	testhook.Handover = handover
	testhook.DeferSplits = deferSplits
	testhook.Steal = steal
	testhook.MinThreadSeconds = minThreadSeconds
}

// PackedVarintDecoder names the decoder packed varints take in this
// process, by the names STRUCTTENSOR_NATIVE_PORTABLE takes: "avx512"
// (AVX-512 VBMI2), "avx2", "bmi2" (64-byte masks with pext) or "scalar":
// the CPU's best, or the lower one that variable names. Benchmarks report
// it beside the CPU, since their figures depend on it.
func PackedVarintDecoder() string {
	switch C.st_packed_varint_tier() {
	case 0:
		return "avx512"
	case 1:
		return "avx2"
	case 2:
		return "bmi2"
	}
	return "scalar"
}

// WorkerThreads returns the number of the engine's pool threads now
// running (at most GOMAXPROCS-1: the goroutine calling a decode works
// too).
func WorkerThreads() int { return int(C.st_worker_threads()) }
