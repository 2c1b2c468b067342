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
			b.t.setVector(values, b.shape[:])
			checkInvariants(&b.t)
			return &b.t
		}
		b := take(&s.ragged)
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
		b := take(&slabOf(slab).structs)
		b.st = StructTensor{rank: 1, nrows: nrows, fields: fields.([]Field), index: index}
		if splits != nil {
			b.p.setSplits(splits)
			b.parts[0] = &b.p
			b.st.rank, b.st.partitions = 2, b.parts[:]
		}
		checkInvariants(&b.st)
		return &b.st
	}
	unchecked.Slab = func(ragged, vectors, strings, structs int) any {
		return &valueSlab{
			ragged:  make([]raggedBlock, ragged),
			vectors: make([]vectorBlock, vectors),
			strings: make([]stringBlock, strings),
			structs: make([]structBlock, structs),
		}
	}
}

// valueSlab is unchecked.Slab's room: values of each kind, handed out
// from the front.
type valueSlab struct {
	ragged  []raggedBlock
	vectors []vectorBlock
	strings []stringBlock
	structs []structBlock
}

// slabOf returns the *valueSlab in slab, or an empty one when slab is
// nil (values then allocated alone; an empty slab is never written, so
// one serves every caller).
func slabOf(slab any) *valueSlab {
	if s, ok := slab.(*valueSlab); ok {
		return s
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
