package structtensor

import "fmt"

// Ragged is a tensor with one or more ragged dimensions: dense flat values
// plus row partitions, outermost first. Its shape is
// [partitions[0].NumRows(), one dim per partition..., values.Shape()[1:]...],
// where a dimension is Unknown unless its partition is uniform.
//
// A ragged collection of structs is not a Ragged: it is a StructTensor whose
// inner dimensions are partitioned (see StructTensor), so a Ragged's values
// are always a dense Tensor.
type Ragged struct {
	values     *Tensor
	partitions []*RowPartition
}

func (*Ragged) isValue() {}

// NewRagged returns values partitioned by partitions, outermost first. The
// partitions must nest (each one's values are the next one's rows) and the
// innermost must partition exactly values.NumRows() values. Nothing is
// copied.
func NewRagged(values *Tensor, partitions ...*RowPartition) (*Ragged, error) {
	if len(partitions) == 0 {
		return nil, fmt.Errorf("%w: a ragged value needs at least one partition", ErrPartition)
	}
	if values == nil {
		return nil, fmt.Errorf("%w: ragged flat values are nil", ErrShape)
	}
	for i, p := range partitions {
		if p == nil {
			return nil, fmt.Errorf("%w: partition %d is nil", ErrPartition, i)
		}
	}
	if values.Rank() == 0 {
		return nil, fmt.Errorf("%w: ragged flat values must have rank >= 1", ErrShape)
	}
	if err := checkNesting(partitions, values.NumRows()); err != nil {
		return nil, err
	}
	r := &Ragged{values: values, partitions: append([]*RowPartition(nil), partitions...)}
	checkInvariants(r)
	return r, nil
}

// NewRaggedFromSplits is NewRagged with partitions given as row splits.
func NewRaggedFromSplits(values *Tensor, rowSplits ...[]int64) (*Ragged, error) {
	parts := make([]*RowPartition, len(rowSplits))
	for i, s := range rowSplits {
		p, err := NewRowSplits(s)
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", i, err)
		}
		parts[i] = p
	}
	return NewRagged(values, parts...)
}

// Values returns the flat values.
func (r *Ragged) Values() *Tensor { return r.values }

// Partitions returns the row partitions, outermost first. The slice is
// r's own and must not be modified (slices.Clone gives one that may be).
func (r *Ragged) Partitions() []*RowPartition { return r.partitions }

// RaggedRank returns the number of partitions.
func (r *Ragged) RaggedRank() int { return len(r.partitions) }

// NumRows returns the number of outermost rows.
func (r *Ragged) NumRows() int { return r.partitions[0].NumRows() }

// Rank returns the number of dimensions.
func (r *Ragged) Rank() int { return len(r.partitions) + r.values.Rank() }

// DType returns the element type.
func (r *Ragged) DType() DType { return r.values.dtype }

// Shape returns the shape, with Unknown at ragged dimensions.
func (r *Ragged) Shape() Shape {
	return append(partitionedShape(r.NumRows(), r.partitions), r.values.shape[1:]...)
}

// Spec returns the RaggedSpec of r.
func (r *Ragged) Spec() Spec {
	return &RaggedSpec{DType: r.values.dtype, Shape: r.Shape(), RaggedRank: len(r.partitions)}
}
