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
// Without it the memory comes back too, by itself, once a garbage
// collection finds nothing refers to it (see the package documentation);
// Recycle makes it available at once, which matters most for simple
// records decoded fast in batches smaller than a collection cycle. A
// StructTensor the plan did not return lately (it keeps the last few),
// or one already recycled, is ignored.
func (p *Plan) Recycle(st *structtensor.StructTensor) {
	if st == nil {
		return
	}
	if blocks := p.recent.take(st); blocks != nil {
		p.native.Recycle(blocks)
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
	st     weak.Pointer[structtensor.StructTensor]
	blocks []weak.Pointer[byte] // the first byte of each lent block
	sizes  []int
}

// add remembers that st was decoded into blocks (the result's lent
// memory; nil when nothing was lent, and nothing is remembered).
func (r *recentOutputs) add(st *structtensor.StructTensor, blocks [][]byte) {
	if r == nil || len(blocks) == 0 || len(blocks[0]) == 0 {
		return
	}
	e := recentOutput{st: weak.Make(st)}
	for _, b := range blocks {
		e.blocks = append(e.blocks, weak.Make(unsafe.SliceData(b)))
		e.sizes = append(e.sizes, len(b))
	}
	r.mu.Lock()
	r.ring[r.next] = e
	r.next = (r.next + 1) % len(r.ring)
	r.mu.Unlock()
}

// take returns the blocks st was decoded into and forgets them, or nil.
func (r *recentOutputs) take(st *structtensor.StructTensor) [][]byte {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.ring {
		e := &r.ring[i]
		if len(e.sizes) == 0 || e.st.Value() != st {
			continue
		}
		blocks := make([][]byte, len(e.blocks))
		for k, w := range e.blocks {
			ptr := w.Value()
			if ptr == nil {
				blocks = nil
				break
			}
			blocks[k] = unsafe.Slice(ptr, e.sizes[k])
		}
		*e = recentOutput{}
		return blocks
	}
	return nil
}
