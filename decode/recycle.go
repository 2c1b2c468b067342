package decode

import (
	"sync"
	"unsafe"
	"weak"

	"github.com/structtensor/structtensor-go/structtensor"
)

// Recycle hands the memory of st, a StructTensor one of the plan's recent
// decodes returned, back to the plan, for a later decode to write its
// output into instead of allocating new memory. After the call st and
// every slice taken from it (values, string data, row splits) must no
// longer be used: a later decode overwrites them.
//
// Recycling is for a loop that decodes batch after batch and is done with
// each before the next (a stream consumer, a training input pipeline).
// It matters most for simple records decoded fast: each batch's output in
// fresh memory starts a garbage collection cycle and makes the runtime
// return the previous batch's memory to the operating system and fault
// it in again, which on flat numeric records costs about a third of the
// decode. A StructTensor the plan did not return lately (it keeps the
// last few), or one already recycled, is ignored.
func (p *Plan) Recycle(st *structtensor.StructTensor) {
	if st == nil {
		return
	}
	if block := p.recent.take(st); block != nil {
		p.native.Recycle(block)
	}
}

// recentOutputs remembers the lent memory of a plan's last few outputs,
// weakly: it keeps neither the StructTensors nor their memory alive.
type recentOutputs struct {
	mu   sync.Mutex
	ring [4]recentOutput
	next int
}

type recentOutput struct {
	st    weak.Pointer[structtensor.StructTensor]
	block weak.Pointer[byte] // the first byte of the lent block
	size  int
}

// add remembers that st was decoded into block (the result's lent
// memory; nil when nothing was lent, and nothing is remembered).
func (r *recentOutputs) add(st *structtensor.StructTensor, block []byte) {
	if r == nil || len(block) == 0 {
		return
	}
	e := recentOutput{st: weak.Make(st), block: weak.Make(unsafe.SliceData(block)), size: len(block)}
	r.mu.Lock()
	r.ring[r.next] = e
	r.next = (r.next + 1) % len(r.ring)
	r.mu.Unlock()
}

// take returns the block st was decoded into and forgets it, or nil.
func (r *recentOutputs) take(st *structtensor.StructTensor) []byte {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.ring {
		e := &r.ring[i]
		if e.size == 0 || e.st.Value() != st {
			continue
		}
		ptr := e.block.Value()
		size := e.size
		*e = recentOutput{}
		if ptr == nil {
			return nil
		}
		return unsafe.Slice(ptr, size)
	}
	return nil
}
