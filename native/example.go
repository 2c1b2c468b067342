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
func (p *ExamplePlan) Decode(ctx context.Context, records [][]byte, dtypes []uint8, o Options) ([]SlotOutput, error) {
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
func (p *ExamplePlan) DecodeContiguous(ctx context.Context, data []byte, offsets []int64, dtypes []uint8, o Options) ([]SlotOutput, error) {
	if len(offsets) == 0 {
		return nil, &Error{Code: CodeArgument, Record: -1, Offset: -1, Message: "no offsets"}
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
		return nil, toError(&cerr)
	}
	defer C.st_example_result_free(r)
	defer runtime.KeepAlive(p)
	return copyExampleResult(r, dtypes)
}

// copyExampleResult copies every slot of r into Go memory (one memcpy
// per slot output and chunk, done by the engine into Go slices that are
// only written during the call). The slices are not cleared first: the
// copies write every element.
func copyExampleResult(r *C.st_example_result, dtypes []uint8) ([]SlotOutput, error) {
	out := make([]SlotOutput, len(dtypes))
	fail := func(code C.int32_t) error {
		return &Error{Code: int(code), Record: -1, Offset: -1, Message: "copying the feature decoder's output"}
	}
	for s, dt := range dtypes {
		cs := C.int64_t(s)
		n := int(C.st_example_result_values_length(r, cs))
		nb := int(C.st_example_result_values_bytes(r, cs))
		if n < 0 || nb < 0 {
			return nil, fail(C.ST_ERR_ARGUMENT)
		}
		o := &out[s]
		var dst unsafe.Pointer
		switch dt {
		case 3: // Int64
			v := makeUncleared[int64](n)
			o.Values = v
			if n > 0 {
				dst = unsafe.Pointer(&v[0])
			}
		case 6: // Float32
			v := makeUncleared[float32](n)
			o.Values = v
			if n > 0 {
				dst = unsafe.Pointer(&v[0])
			}
		default: // String
			o.Bytes = makeUncleared[byte](nb)
			if nb > 0 {
				dst = unsafe.Pointer(&o.Bytes[0])
			}
			o.Offsets = makeUncleared[int64](n + 1)
			if c := C.st_example_result_copy_string_offsets(r, cs, (*C.int64_t)(unsafe.Pointer(&o.Offsets[0])), C.size_t(n+1)); c != 0 {
				return nil, fail(c)
			}
		}
		if c := C.st_example_result_copy_values(r, cs, dst, C.size_t(nb)); c != 0 {
			return nil, fail(c)
		}
		for level, sp := range []*[]int64{&o.Splits0, &o.Splits1} {
			k := int(C.st_example_result_splits_length(r, cs, C.int32_t(level)))
			if k == 0 {
				continue
			}
			*sp = makeUncleared[int64](k)
			if c := C.st_example_result_copy_splits(r, cs, C.int32_t(level), (*C.int64_t)(unsafe.Pointer(&(*sp)[0])), C.size_t(k)); c != 0 {
				return nil, fail(c)
			}
		}
	}
	return out, nil
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
