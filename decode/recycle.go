package decode

import (
	"sync"
	"unsafe"
	"weak"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/internal/unchecked"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Recycle hands the memory of st, a StructTensor one of the plan's recent
// decodes returned, back to the plan, for a later decode to write its
// output into instead of allocating new memory: the buffers of its values
// and the values themselves (its columns, tensors and structs). After the
// call st, every value and every slice taken from it (values, string
// data, row splits) must no longer be used: a later decode overwrites
// them.
//
// Recycling is for a loop that decodes batch after batch and is done with
// each before the next (a stream consumer, a training input pipeline, a
// server decoding a request's records). Without it the memory comes back
// too, by itself, once a garbage collection finds nothing refers to it
// (see the package documentation); Recycle makes it available at once,
// which matters most for simple records decoded fast in batches smaller
// than a collection cycle, and for small batches of wide records, whose
// values outweigh their buffers. A StructTensor the plan did not return
// lately (it keeps the last few), or one already recycled, is ignored.
func (p *Plan) Recycle(st *structtensor.StructTensor) {
	if st == nil {
		return
	}
	blocks, room := p.recent.take(st)
	if blocks != nil {
		p.native.Recycle(blocks)
	}
	p.recent.spareRoom(room)
}

// recentOutputs remembers the memory of a plan's last few outputs,
// weakly: it keeps neither the StructTensors nor their memory alive. It
// also holds the room of one recycled output's values, for the plan's
// next build (room).
type recentOutputs struct {
	mu    sync.Mutex
	ring  [4]recentOutput
	next  int
	spare *unchecked.Room
}

type recentOutput struct {
	st     weak.Pointer[structtensor.StructTensor]
	blocks []weak.Pointer[byte] // the first byte of each lent block
	sizes  []int
	// room is the slab of the output's values, which its structs keep
	// reachable (unchecked.Room).
	room weak.Pointer[unchecked.Room]
}

// add remembers that st was decoded into blocks (the result's lent
// memory; nil when nothing was lent) and its values built in room (nil:
// allocated alone); nothing is remembered when there is neither.
func (r *recentOutputs) add(st *structtensor.StructTensor, blocks [][]byte, room *unchecked.Room) {
	if r == nil || (room == nil && (len(blocks) == 0 || len(blocks[0]) == 0)) {
		return
	}
	e := recentOutput{st: weak.Make(st)}
	if room != nil {
		e.room = weak.Make(room)
	}
	for _, b := range blocks {
		if len(b) == 0 {
			continue
		}
		e.blocks = append(e.blocks, weak.Make(unsafe.SliceData(b)))
		e.sizes = append(e.sizes, len(b))
	}
	r.mu.Lock()
	r.ring[r.next] = e
	r.next = (r.next + 1) % len(r.ring)
	r.mu.Unlock()
}

// take returns the blocks st was decoded into (nil when there were none,
// or one is gone) and the room of its values (nil when none), and
// forgets them; nil and nil when st is not among the recent outputs.
func (r *recentOutputs) take(st *structtensor.StructTensor) ([][]byte, *unchecked.Room) {
	if r == nil || st == nil { // nil would match an empty entry
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.ring {
		e := &r.ring[i]
		if e.st.Value() != st {
			continue
		}
		var blocks [][]byte
		for k, w := range e.blocks {
			ptr := w.Value()
			if ptr == nil {
				blocks = nil
				break
			}
			blocks = append(blocks, unsafe.Slice(ptr, e.sizes[k]))
		}
		room := e.room.Value()
		*e = recentOutput{}
		return blocks, room
	}
	return nil, nil
}

// spareRoom keeps room (when not nil) for the next build, in place of
// the one kept before.
func (r *recentOutputs) spareRoom(room *unchecked.Room) {
	if r == nil || room == nil {
		return
	}
	r.mu.Lock()
	r.spare = room
	r.mu.Unlock()
}

// room returns room for a batch's values: the room kept by spareRoom
// (forgotten, made free again), or else a new slab.
func (r *recentOutputs) room(newSlab func() *unchecked.Room) *unchecked.Room {
	var room *unchecked.Room
	if r != nil {
		r.mu.Lock()
		room, r.spare = r.spare, nil
		r.mu.Unlock()
	}
	if room == nil {
		return newSlab()
	}
	unchecked.ReuseSlab(room)
	testhook.SlabsReused.Add(1)
	return room
}
