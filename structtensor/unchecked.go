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
	unchecked.StringTensor = func(data []byte, offsets []int64, utf8 bool) any {
		t := &Tensor{dtype: String, shape: Shape{len(offsets) - 1}, strData: data, strOffsets: offsets, utf8: utf8}
		checkInvariants(t)
		return t
	}
	unchecked.Column = func(values any, splits []int64) any {
		if splits == nil {
			if t, ok := values.(*Tensor); ok {
				return t
			}
			b := new(vectorBlock)
			b.t.setVector(values, b.shape[:])
			checkInvariants(&b.t)
			return &b.t
		}
		b := new(raggedBlock)
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
	unchecked.Struct = func(nrows int, splits []int64, fields any, index map[string]int) any {
		b := new(structBlock)
		b.st = StructTensor{rank: 1, nrows: nrows, fields: fields.([]Field), index: index}
		if splits != nil {
			b.p.setSplits(splits)
			b.parts[0] = &b.p
			b.st.rank, b.st.partitions = 2, b.parts[:]
		}
		checkInvariants(&b.st)
		return &b.st
	}
}

// vectorBlock, raggedBlock and structBlock are the single allocations of
// unchecked.Column and unchecked.Struct: a value with the parts it points
// to (a pointer into the block keeps all of it).
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
