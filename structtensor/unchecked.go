package structtensor

import (
	"fmt"

	"github.com/structtensor/structtensor-go/internal/unchecked"
)

// The constructors package internal/unchecked hands to the packages that
// build values from the engine's outputs: NewRowSplits and
// NewStringTensor without their linear checks (the engine's outputs pass
// them by construction), a column and a struct each in one allocation
// without the checks the decoder's plan makes once, all re-validated only
// with -tags invariants.
func init() {
	unchecked.RowSplits = func(splits []int64) any {
		p := new(RowPartition)
		p.setSplits(splits)
		if invariantsEnabled {
			if err := validatePartition(p); err != nil {
				panic("structtensor: invariant violated: unchecked row splits: " + err.Error())
			}
		}
		return p
	}
	unchecked.StringTensor = func(slab any, data []byte, offsets []int64, utf8 bool) any {
		b := take(&slabOf(slab).strings)
		b.shape[0] = len(offsets) - 1
		b.t = Tensor{dtype: String, shape: b.shape[:], strData: data, strOffsets: offsets, utf8: utf8}
		checkInvariants(&b.t)
		return &b.t
	}
	unchecked.Column = func(slab any, values any, splits []int64) any {
		s := slabOf(slab)
		if splits == nil {
			if t, ok := values.(*Tensor); ok {
				return t
			}
			b := take(&s.vectors)
			if s.reused {
				b.t = Tensor{}
			}
			b.t.setVector(values, b.shape[:])
			checkInvariants(&b.t)
			return &b.t
		}
		b := take(&s.ragged)
		if s.reused {
			b.t = Tensor{}
		}
		t, ok := values.(*Tensor)
		if !ok {
			t = &b.t
			t.setVector(values, b.shape[:])
		}
		b.p.setSplits(splits)
		b.parts[0] = &b.p
		b.r = Ragged{values: t, partitions: b.parts[:]}
		checkInvariants(&b.r)
		return &b.r
	}
	unchecked.Struct = func(slab any, nrows int, splits []int64, fields any, index map[string]int) any {
		room, _ := slab.(*unchecked.Room)
		b := take(&slabOf(slab).structs)
		*b = structBlock{st: StructTensor{rank: 1, nrows: nrows, fields: fields.([]Field), index: index}, room: room}
		if splits != nil {
			b.p.setSplits(splits)
			b.parts[0] = &b.p
			b.st.rank, b.st.partitions = 2, b.parts[:]
		}
		checkInvariants(&b.st)
		return &b.st
	}
	unchecked.Slab = func(ragged, vectors, strings, structs, fields int) *unchecked.Room {
		s := &valueSlab{slabArrays: slabArrays{
			ragged:  make([]raggedBlock, ragged),
			vectors: make([]vectorBlock, vectors),
			strings: make([]stringBlock, strings),
			structs: make([]structBlock, structs),
		}, fields: make([]Field, fields)}
		s.all = s.slabArrays
		return &unchecked.Room{Impl: s}
	}
	unchecked.SlabFields = func(room *unchecked.Room) any { return room.Impl.(*valueSlab).fields }
	unchecked.ReuseSlab = func(room *unchecked.Room) {
		s := room.Impl.(*valueSlab)
		s.slabArrays = s.all
		s.reused = true
	}
}

// valueSlab is unchecked.Slab's room: values of each kind, handed out
// from the front (slabArrays; all is the whole room, to hand out again,
// unchecked.ReuseSlab), and the fields of its structs, which the builder
// slices itself (unchecked.SlabFields).
type valueSlab struct {
	slabArrays
	all    slabArrays
	fields []Field
	// reused tells whether the room was handed out before: its values
	// then hold what they held, to overwrite; a new room's are zero.
	reused bool
}

type slabArrays struct {
	ragged  []raggedBlock
	vectors []vectorBlock
	strings []stringBlock
	structs []structBlock
}

// slabOf returns the *valueSlab in slab, or an empty one when slab is
// nil (values then allocated alone; an empty slab is never written, so
// one serves every caller).
func slabOf(slab any) *valueSlab {
	if r, ok := slab.(*unchecked.Room); ok && r != nil {
		return r.Impl.(*valueSlab)
	}
	return &noRoom
}

var noRoom valueSlab

// take hands out the first element of *room, or a new one when it is
// empty.
func take[T any](room *[]T) *T {
	if len(*room) == 0 {
		return new(T)
	}
	b := &(*room)[0]
	*room = (*room)[1:]
	return b
}

// vectorBlock, raggedBlock, stringBlock and structBlock are the single
// allocations of unchecked.Column, unchecked.StringTensor and
// unchecked.Struct, or their places in a slab: a value with the parts it
// points to (a pointer into the block keeps all of it).
type vectorBlock struct {
	t     Tensor
	shape [1]int
}

type raggedBlock struct {
	r     Ragged
	t     Tensor
	p     RowPartition
	parts [1]*RowPartition
	shape [1]int
}

type stringBlock struct {
	t     Tensor
	shape [1]int
}

type structBlock struct {
	st    StructTensor
	p     RowPartition
	parts [1]*RowPartition
	room  *unchecked.Room // the slab it was placed in, kept reachable by its structs
}

// setSplits makes p the partition of splits (shared, unchecked).
func (p *RowPartition) setSplits(splits []int64) {
	*p = RowPartition{splits: splits, nrows: len(splits) - 1, rowLen: -1, nvalues: int(splits[len(splits)-1])}
}

// setVector makes t the vector of values (a typed numeric slice, shared),
// its shape in shape (one element, of the block t lives in).
func (t *Tensor) setVector(values any, shape []int) {
	t.dtype = dtypeOfSlice(values)
	if t.dtype == Invalid {
		panic(fmt.Sprintf("structtensor: unchecked column of %T", values))
	}
	shape[0] = sliceLen(values)
	t.data, t.shape = values, shape
}
