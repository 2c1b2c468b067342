package native

/*
#include <stdlib.h>
#include "include/structtensor_example.h"
*/
import "C"

import (
	"context"
	"runtime"
	"unsafe"
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
	// data and offsets are cgo arguments, pinned for the call.
	var dp *C.uint8_t
	if len(data) > 0 {
		dp = (*C.uint8_t)(unsafe.Pointer(&data[0]))
	}
	flag, stop := watch(ctx)
	defer stop()
	opts := C.st_options{threads: C.int32_t(o.Threads), cancel: (*C.int32_t)(flag)}
	var cerr C.st_error
	r := C.st_example_decode_contiguous(p.p, dp, C.size_t(len(data)), (*C.int64_t)(unsafe.Pointer(&offsets[0])),
		C.int64_t(len(offsets)-1), &opts, &cerr)
	if r == nil {
		return nil, nil, toError(&cerr)
	}
	defer C.st_example_result_free(r)
	defer runtime.KeepAlive(p)
	return p.copyResult(r, dtypes)
}

// exampleSlotSizes are the lengths of one slot's outputs.
type exampleSlotSizes struct {
	n, nb  int    // values (strings: count), value bytes
	splits [2]int // row splits at levels 0 and 1 (0: no such level)
}

// copyResult copies every slot of r into Go memory: one block, recycled
// when the plan has a spare one that fits (and is not over twice the
// size: the outputs keep all of it alive), else allocated. The engine
// copies each output into its stretch of the block (one memcpy per slot
// output and chunk); the block is not cleared first, as the copies write
// every byte the outputs hold.
func (p *ExamplePlan) copyResult(r *C.st_example_result, dtypes []uint8) ([]SlotOutput, []byte, error) {
	fail := func(code C.int32_t) error {
		return &Error{Code: int(code), Record: -1, Offset: -1, Message: "copying the feature decoder's output"}
	}
	sizes := make([]exampleSlotSizes, len(dtypes))
	var total int
	stretch := func(bytes int) { total += (bytes + exampleAlign - 1) &^ (exampleAlign - 1) }
	for s, dt := range dtypes {
		cs := C.int64_t(s)
		z := &sizes[s]
		z.n = int(C.st_example_result_values_length(r, cs))
		z.nb = int(C.st_example_result_values_bytes(r, cs))
		if z.n < 0 || z.nb < 0 {
			return nil, nil, fail(C.ST_ERR_ARGUMENT)
		}
		stretch(z.nb)
		if dt != 3 && dt != 6 { // strings: offsets
			stretch(8 * (z.n + 1))
		}
		for level := range z.splits {
			z.splits[level] = int(C.st_example_result_splits_length(r, cs, C.int32_t(level)))
			stretch(8 * z.splits[level])
		}
	}
	block := takeBlocks(total)[0]
	base := unsafe.Pointer(unsafe.SliceData(block))
	var used int
	take := func(bytes int) unsafe.Pointer {
		ptr := unsafe.Add(base, used)
		used += (bytes + exampleAlign - 1) &^ (exampleAlign - 1)
		return ptr
	}
	out := make([]SlotOutput, len(dtypes))
	for s, dt := range dtypes {
		cs := C.int64_t(s)
		z, o := &sizes[s], &out[s]
		dst := take(z.nb)
		switch dt {
		case 3: // Int64
			o.Values = blockSlice[int64](dst, z.n)
		case 6: // Float32
			o.Values = blockSlice[float32](dst, z.n)
		default: // String
			o.Bytes = blockSlice[byte](dst, z.nb)
			o.Offsets = blockSlice[int64](take(8*(z.n+1)), z.n+1)
			if c := C.st_example_result_copy_string_offsets(r, cs, (*C.int64_t)(unsafe.Pointer(&o.Offsets[0])), C.size_t(z.n+1)); c != 0 {
				return nil, nil, fail(c)
			}
		}
		if z.nb == 0 {
			dst = nil // (it may point past the block's end)
		}
		if c := C.st_example_result_copy_values(r, cs, dst, C.size_t(z.nb)); c != 0 {
			return nil, nil, fail(c)
		}
		for level, sp := range []*[]int64{&o.Splits0, &o.Splits1} {
			k := z.splits[level]
			if k == 0 {
				continue
			}
			*sp = blockSlice[int64](take(8*k), k)
			if c := C.st_example_result_copy_splits(r, cs, C.int32_t(level), (*C.int64_t)(unsafe.Pointer(&(*sp)[0])), C.size_t(k)); c != 0 {
				return nil, nil, fail(c)
			}
		}
	}
	return out, block, nil
}

// exampleAlign is the alignment of each output in a block: a cache line.
const exampleAlign = 64

// blockSlice is the n elements of type T at ptr, a stretch of a block
// (an empty slice for none: ptr may be the block's end).
func blockSlice[T int64 | float32 | byte](ptr unsafe.Pointer, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(ptr), n)
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
