package native

/*
#include <stdlib.h>
#include "include/structtensor_example.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"
	"unsafe"

	"github.com/structtensor/structtensor-go/internal/testhook"
)

// Error codes of the feature decoder (ST_ERR_FEATURE_* in
// include/structtensor_example.h).
const (
	CodeFeatureMissing = C.ST_ERR_FEATURE_MISSING
	CodeFeatureType    = C.ST_ERR_FEATURE_TYPE
	CodeFeatureShape   = C.ST_ERR_FEATURE_SHAPE
)

// ExamplePlan is a parsed feature plan (byte form "STEX", see the package
// documentation) for tf.Example or tf.SequenceExample records. It is safe
// for concurrent use.
type ExamplePlan struct {
	p *C.st_example_plan
}

// Recycle hands back block, the memory of an earlier decode's outputs
// (the block DecodeContiguous returned), for a later decode to copy its
// outputs into at once: the caller guarantees that nothing reads or
// writes it any more. As with Plan.Recycle, the block also comes back by
// itself once nothing refers to it.
func (p *ExamplePlan) Recycle(block []byte) { recycleBlocks([][]byte{block}) }

// NewExamplePlan parses the byte form of a feature plan. The plan frees
// its engine memory when it is garbage collected.
func NewExamplePlan(b []byte) (*ExamplePlan, error) {
	var cerr C.st_error
	var ptr *C.uint8_t
	if len(b) > 0 {
		ptr = (*C.uint8_t)(unsafe.Pointer(&b[0]))
	}
	p := C.st_example_plan_new(ptr, C.size_t(len(b)), &cerr)
	runtime.KeepAlive(b)
	if p == nil {
		return nil, toError(&cerr)
	}
	plan := &ExamplePlan{p: p}
	runtime.AddCleanup(plan, func(p *C.st_example_plan) { C.st_example_plan_free(p) }, p)
	return plan, nil
}

// NumSlots returns the number of slots of the plan.
func (p *ExamplePlan) NumSlots() int {
	n := int(C.st_example_plan_num_slots(p.p))
	runtime.KeepAlive(p)
	return n
}

// SlotOutput is the output of one slot, in Go memory.
type SlotOutput struct {
	// Values is []int64, []float32, or for strings nil (see Bytes).
	Values any
	// Bytes and Offsets hold string values (len(Offsets) = strings + 1).
	Bytes   []byte
	Offsets []int64
	// UTF8 reports that each string is valid UTF-8 on its own (as
	// structtensor.ValidUTF8Strings has it), checked by the threads that
	// decoded them.
	UTF8 bool
	// Splits0 has one row per record, Splits1 one row per step
	// (feature lists); nil for a level the slot does not have.
	Splits0, Splits1 []int64
}

// Decode decodes records with the feature plan and copies each slot's
// output into Go memory. dtypes gives each slot's dtype (the numbering of
// structtensor.DType), as the plan has it. The records are copied into
// one buffer first (a memcpy, a small part of the decode's cost), which
// the call passes as a cgo argument: no Go pointer is stored in memory
// the engine reads, and the engine keeps no reference after the call.
func (p *ExamplePlan) Decode(ctx context.Context, records [][]byte, dtypes []uint8, o Options) ([]SlotOutput, []byte, error) {
	var total int
	for _, r := range records {
		total += len(r)
	}
	data := make([]byte, 0, total)
	offsets := make([]int64, 1, len(records)+1)
	for _, r := range records {
		data = append(data, r...)
		offsets = append(offsets, int64(len(data)))
	}
	return p.DecodeContiguous(ctx, data, offsets, dtypes, o)
}

// DecodeContiguous is Decode for records laid out in one buffer: record i
// is data[offsets[i]:offsets[i+1]], read in place during the call.
//
// Every slice of the outputs is a stretch of one block of Go memory,
// which is also returned, for Recycle once the outputs are no longer
// used.
func (p *ExamplePlan) DecodeContiguous(ctx context.Context, data []byte, offsets []int64, dtypes []uint8, o Options) ([]SlotOutput, []byte, error) {
	if len(offsets) == 0 {
		return nil, nil, &Error{Code: CodeArgument, Record: -1, Offset: -1, Message: "no offsets"}
	}
	syncThreadLimit()
	// data and offsets are cgo arguments, pinned for the call.
	var dp *C.uint8_t
	if len(data) > 0 {
		dp = (*C.uint8_t)(unsafe.Pointer(&data[0]))
	}
	flag, stop := watch(ctx)
	defer stop()
	opts := C.st_options{threads: C.int32_t(o.Threads), cancel: (*C.int32_t)(flag), mark_utf8: 1}
	if out, block, ok, err := p.decodeInto(dp, data, offsets, dtypes, &opts); ok {
		return out, block, err
	}
	var cerr C.st_error
	r := C.st_example_decode_contiguous(p.p, dp, C.size_t(len(data)), (*C.int64_t)(unsafe.Pointer(&offsets[0])),
		C.int64_t(len(offsets)-1), &opts, &cerr)
	if r == nil {
		return nil, nil, toError(&cerr)
	}
	defer C.st_example_result_free(r)
	defer runtime.KeepAlive(p)
	return p.copyResult(r, dtypes, o.Threads)
}

// decodeInto decodes the records straight into one block
// laid out by the engine's guess from the plan's last batch
// (st_example_lend_sizes), each stretch of records' outputs copied there
// while still in cache (st_example_decode_contiguous_into). ok is false,
// and nothing done, when the engine has no guess for the batch. A guess
// too small for an output costs the batch a decode the usual way, whose
// result is copied out as copyResult does: the output never depends on
// the guess. The engine checks data and offsets.
func (p *ExamplePlan) decodeInto(dp *C.uint8_t, data []byte, offsets []int64, dtypes []uint8, opts *C.st_options) (out []SlotOutput, block []byte, ok bool, err error) {
	ns := len(dtypes)
	if ns == 0 {
		return nil, nil, false, nil
	}
	room := make([]int64, 4*ns)
	if C.st_example_lend_sizes(p.p, C.int64_t(offsets[len(offsets)-1]-offsets[0]), C.int64_t(len(offsets)-1), (*C.int64_t)(unsafe.Pointer(&room[0])), C.size_t(len(room))) != 1 {
		return nil, nil, false, nil
	}
	at := make([]int64, 4*ns)
	total := 0
	for i, b := range room {
		at[i] = int64(total)
		total += (int(b) + exampleAlign - 1) &^ (exampleAlign - 1)
	}
	block = takeBlocks(total)[0]
	sizes := make([]int64, 4*ns)
	utf8 := make([]uint8, ns)
	var rest *C.st_example_result
	var cerr C.st_error
	// block is a cgo argument, pinned for the call; at, room, sizes and
	// utf8 too. The engine keeps no reference to any after it.
	code := C.st_example_decode_contiguous_into(p.p, dp, C.size_t(len(data)), (*C.int64_t)(unsafe.Pointer(&offsets[0])),
		C.int64_t(len(offsets)-1), opts, unsafe.Pointer(unsafe.SliceData(block)), C.size_t(len(block)),
		(*C.int64_t)(unsafe.Pointer(&at[0])), (*C.int64_t)(unsafe.Pointer(&room[0])), C.size_t(len(at)),
		(*C.int64_t)(unsafe.Pointer(&sizes[0])), C.size_t(len(sizes)), (*C.uint8_t)(unsafe.Pointer(&utf8[0])), C.size_t(len(utf8)),
		&rest, &cerr)
	runtime.KeepAlive(p)
	if code != 0 || rest != nil {
		recycleBlocks([][]byte{block})
		if code != 0 {
			return nil, nil, true, toError(&cerr)
		}
		defer C.st_example_result_free(rest)
		testhook.ExampleIntoFallbacks.Add(1)
		out, block, err = p.copyResult(rest, dtypes, int(opts.threads))
		return out, block, true, err
	}
	testhook.ExampleInto.Add(1)
	return slotOutputs(unsafe.Pointer(unsafe.SliceData(block)), dtypes, sizes, at, utf8), block, true, nil
}

// copyResult copies every slot of r into Go memory: one block, recycled
// when the plan has a spare one that fits (and is not over twice the
// size: the outputs keep all of it alive), else allocated. Two cgo calls
// whatever the number of slots: one for the sizes of every output, one
// in which the engine copies every output into its stretch of the block,
// on up to threads threads. The block is not cleared first, as the
// copies write every byte the outputs hold. The engine writes the block
// only during that call (a cgo argument, pinned for it) and keeps no
// reference to it.
func (p *ExamplePlan) copyResult(r *C.st_example_result, dtypes []uint8, threads int) ([]SlotOutput, []byte, error) {
	fail := func(code C.int32_t) error {
		return &Error{Code: int(code), Record: -1, Offset: -1, Message: "copying the feature decoder's output"}
	}
	// sizes: per slot, values length, value bytes, splits lengths at
	// levels 0 and 1 (st_example_result_layout); at: per slot, where its
	// values, string offsets and splits go in the block (-1: none).
	sizes := make([]int64, 4*len(dtypes))
	at := make([]int64, 4*len(dtypes))
	utf8 := make([]uint8, len(dtypes))
	if len(dtypes) > 0 {
		if c := C.st_example_result_layout(r, (*C.int64_t)(unsafe.Pointer(&sizes[0])), C.size_t(len(sizes))); c != 0 {
			return nil, nil, fail(c)
		}
		if c := C.st_example_result_utf8(r, (*C.uint8_t)(unsafe.Pointer(&utf8[0])), C.size_t(len(utf8))); c != 0 {
			return nil, nil, fail(c)
		}
	}
	var total int
	place := func(i int, bytes int) {
		at[i] = int64(total)
		total += (bytes + exampleAlign - 1) &^ (exampleAlign - 1)
	}
	for s, dt := range dtypes {
		n, nb := int(sizes[4*s]), int(sizes[4*s+1])
		if n < 0 || nb < 0 {
			return nil, nil, fail(C.ST_ERR_ARGUMENT)
		}
		place(4*s, nb)
		at[4*s+1] = -1
		if dt != 3 && dt != 6 { // strings: offsets
			place(4*s+1, 8*(n+1))
		}
		for level := range 2 {
			at[4*s+2+level] = -1
			if k := int(sizes[4*s+2+level]); k > 0 {
				place(4*s+2+level, 8*k)
			}
		}
	}
	block := takeBlocks(total)[0]
	base := unsafe.Pointer(unsafe.SliceData(block))
	if len(dtypes) > 0 {
		if c := C.st_example_result_copy_into(r, base, C.size_t(len(block)), (*C.int64_t)(unsafe.Pointer(&at[0])), C.size_t(len(at)), C.int32_t(threads)); c != 0 {
			return nil, nil, fail(c)
		}
	}
	return slotOutputs(base, dtypes, sizes, at, utf8), block, nil
}

// slotOutputs slices the outputs of the slots of dtypes out of the block
// at base: sizes as st_example_result_layout gives them, each output at
// its byte offset in at, the strings' marks as st_example_result_utf8
// gives them.
func slotOutputs(base unsafe.Pointer, dtypes []uint8, sizes, at []int64, utf8 []uint8) []SlotOutput {
	out := make([]SlotOutput, len(dtypes))
	for s, dt := range dtypes {
		o := &out[s]
		n, nb := int(sizes[4*s]), int(sizes[4*s+1])
		switch dt {
		case 3: // Int64
			o.Values = blockSlice[int64](base, at[4*s], n)
		case 6: // Float32
			o.Values = blockSlice[float32](base, at[4*s], n)
		default: // String
			o.Bytes = blockSlice[byte](base, at[4*s], nb)
			o.Offsets = blockSlice[int64](base, at[4*s+1], n+1)
			o.UTF8 = utf8[s] != 0
		}
		for level, sp := range []*[]int64{&o.Splits0, &o.Splits1} {
			if k := int(sizes[4*s+2+level]); k > 0 {
				*sp = blockSlice[int64](base, at[4*s+2+level], k)
			}
		}
	}
	return out
}

// ExampleSharedCopies returns how many copy-outs of feature decodes were
// shared among several threads in this process: for tests of the
// copy-out that runs on the engine's threads.
func ExampleSharedCopies() int64 { return int64(C.st_test_example_shared_copies()) }

// DelayExampleClaim makes the thread that takes a multi-threaded feature
// decode's first chunk wait d before claiming it (0: none): for the test
// that a later chunk failing first does not make its error the batch's.
func DelayExampleClaim(d time.Duration) { C.st_test_example_claim_delay(C.int32_t(d.Microseconds())) }

func init() {
	testhook.ExampleStretchBytes = func(bytes int64) { C.st_test_example_stream_bytes(C.int64_t(bytes)) }
}

// copyInto decodes the records of data at offsets on one thread and
// copies the result with st_example_result_copy_into into block at the
// byte offsets at, returning the engine's code: for the tests of the
// copy's checks of its arguments, which copyResult always gets right.
func (p *ExamplePlan) copyInto(data []byte, offsets []int64, block []byte, at []int64) (int, error) {
	var cerr C.st_error
	opts := C.st_options{threads: 1}
	r := C.st_example_decode_contiguous(p.p, (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(data))), C.size_t(len(data)),
		(*C.int64_t)(unsafe.Pointer(&offsets[0])), C.int64_t(len(offsets)-1), &opts, &cerr)
	if r == nil {
		return 0, toError(&cerr)
	}
	defer C.st_example_result_free(r)
	defer runtime.KeepAlive(p)
	return int(C.st_example_result_copy_into(r, unsafe.Pointer(unsafe.SliceData(block)), C.size_t(len(block)),
		(*C.int64_t)(unsafe.Pointer(unsafe.SliceData(at))), C.size_t(len(at)), 1)), nil
}

// exampleAlign is the alignment of each output in a block: a cache line.
const exampleAlign = 64

// blockSlice is the n elements of type T at byte offset at of the block
// at base (an empty slice for none: at may be the block's end, which no
// pointer is made to).
func blockSlice[T int64 | float32 | byte](base unsafe.Pointer, at int64, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Add(base, at)), n)
}

// Len returns the number of values.
func (o *SlotOutput) Len() int {
	switch v := o.Values.(type) {
	case []int64:
		return len(v)
	case []float32:
		return len(v)
	}
	return len(o.Offsets) - 1
}
