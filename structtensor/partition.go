package structtensor

import (
	"bytes"
	"fmt"

	"github.com/structtensor/structtensor-go/internal/memview"
)

// RowPartition splits a flat sequence of values into rows. Its canonical
// form is row_splits: len nrows+1, splits[0] == 0, non-decreasing, and the
// last split equal to the number of values; row i is
// values[splits[i]:splits[i+1]]. This is exactly an Arrow large_list offsets
// buffer, so export shares it. A partition may instead be uniform: nrows
// rows of the same length, which needs no splits at all.
//
// A RowPartition is immutable and shared by pointer: every field of a
// StructTensor refers to the same *RowPartition objects.
type RowPartition struct {
	splits  []int64 // nil when uniform
	nrows   int
	rowLen  int // uniform row length; -1 when ragged
	nvalues int
	// dense marks a uniform partition that SplitOuterDims made from a
	// dense dimension of a Tensor, so that JoinOuterDims folds it back into
	// the flat values instead of keeping it as a ragged-rank partition.
	dense bool
}

// NewRowSplits returns the partition described by splits, which it shares.
func NewRowSplits(splits []int64) (*RowPartition, error) {
	if len(splits) == 0 {
		return nil, fmt.Errorf("%w: row_splits is empty (need at least [0])", ErrPartition)
	}
	if splits[0] != 0 {
		return nil, fmt.Errorf("%w: row_splits[0] = %d, want 0", ErrPartition, splits[0])
	}
	for i := 1; i < len(splits); i++ {
		if splits[i] < splits[i-1] {
			return nil, fmt.Errorf("%w: row_splits decrease at %d (%d < %d)", ErrPartition, i, splits[i], splits[i-1])
		}
	}
	return &RowPartition{splits: splits, nrows: len(splits) - 1, rowLen: -1, nvalues: int(splits[len(splits)-1])}, nil
}

// NewRowLengths returns the partition whose row i has lengths[i] values.
func NewRowLengths(lengths []int64) (*RowPartition, error) {
	splits := make([]int64, len(lengths)+1)
	for i, n := range lengths {
		if n < 0 {
			return nil, fmt.Errorf("%w: row length %d is negative (%d)", ErrPartition, i, n)
		}
		splits[i+1] = splits[i] + n
	}
	return NewRowSplits(splits)
}

// NewUniformPartition returns a partition of nrows rows of rowLen values each.
func NewUniformPartition(nrows, rowLen int) (*RowPartition, error) {
	if nrows < 0 || rowLen < 0 {
		return nil, fmt.Errorf("%w: uniform partition of %d rows of %d", ErrPartition, nrows, rowLen)
	}
	return &RowPartition{nrows: nrows, rowLen: rowLen, nvalues: nrows * rowLen}, nil
}

// NumRows returns the number of rows.
func (p *RowPartition) NumRows() int { return p.nrows }

// NumValues returns the number of values partitioned.
func (p *RowPartition) NumValues() int { return p.nvalues }

// UniformRowLength returns the row length and true for a uniform partition.
func (p *RowPartition) UniformRowLength() (int, bool) { return p.rowLen, p.rowLen >= 0 }

// IsUniform reports whether the partition was built with a uniform row
// length.
func (p *RowPartition) IsUniform() bool { return p.rowLen >= 0 }

// RowSplits returns the row splits. For a ragged partition they are the
// shared buffer and must not be modified; a uniform partition builds them.
func (p *RowPartition) RowSplits() []int64 {
	if p.rowLen < 0 {
		return p.splits
	}
	s := make([]int64, p.nrows+1)
	for i := range s {
		s[i] = int64(i * p.rowLen)
	}
	return s
}

// RowStart returns the index of the first value of row i.
func (p *RowPartition) RowStart(i int) int {
	if p.rowLen >= 0 {
		return i * p.rowLen
	}
	return int(p.splits[i])
}

// RowLimit returns one past the index of the last value of row i.
func (p *RowPartition) RowLimit(i int) int {
	if p.rowLen >= 0 {
		return (i + 1) * p.rowLen
	}
	return int(p.splits[i+1])
}

// RowLength returns the number of values in row i.
func (p *RowPartition) RowLength(i int) int { return p.RowLimit(i) - p.RowStart(i) }

// Equal reports whether p and o split values into the same rows. A uniform
// partition equals ragged splits that describe the same rows.
func (p *RowPartition) Equal(o *RowPartition) bool {
	if p == o {
		return true
	}
	if p.nrows != o.nrows || p.nvalues != o.nvalues {
		return false
	}
	if p.rowLen >= 0 && o.rowLen >= 0 {
		return p.rowLen == o.rowLen || p.nrows == 0
	}
	if p.rowLen < 0 && o.rowLen < 0 {
		return bytes.Equal(memview.Bytes(p.splits), memview.Bytes(o.splits))
	}
	for i := 0; i < p.nrows; i++ {
		if p.RowLimit(i) != o.RowLimit(i) {
			return false
		}
	}
	return true
}

// String formats the partition as its row splits, or as uniform(n).
func (p *RowPartition) String() string {
	if p.rowLen >= 0 {
		return fmt.Sprintf("uniform(%d x %d)", p.nrows, p.rowLen)
	}
	return fmt.Sprint(p.splits)
}

// slice returns the partition of rows [start, end) and the value range
// they cover. Ragged splits are rebased, which copies them.
func (p *RowPartition) slice(start, end int) (q *RowPartition, lo, hi int) {
	lo, hi = p.RowStart(start), p.RowStart(end)
	if start == end {
		lo, hi = 0, 0
	}
	if p.rowLen >= 0 {
		return &RowPartition{nrows: end - start, rowLen: p.rowLen, nvalues: (end - start) * p.rowLen, dense: p.dense}, lo, hi
	}
	s := make([]int64, end-start+1)
	for i := range s {
		s[i] = p.splits[start+i] - int64(lo)
	}
	if start == end {
		s[0] = 0
	}
	return &RowPartition{splits: s, nrows: end - start, rowLen: -1, nvalues: hi - lo}, lo, hi
}
