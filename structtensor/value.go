package structtensor

import "fmt"

// Value is a *Tensor, a *Ragged or a *StructTensor: the three kinds of
// value a StructTensor field can hold.
type Value interface {
	// Shape returns the full shape; ragged dimensions are Unknown.
	Shape() Shape
	// Rank returns the number of dimensions.
	Rank() int
	// NumRows returns the size of the outermost dimension (1 for rank 0).
	NumRows() int
	// Spec returns the type of the value.
	Spec() Spec
	isValue()
}

// SplitOuterDims decomposes the outer dims dimensions of v (dims >= 1) into
// row partitions and a flat value holding one row per element of the
// innermost of those dimensions. Dense dimensions become uniform
// partitions. Nothing is copied. It is the inverse of JoinOuterDims:
//
//	JoinOuterDims(SplitOuterDims(v, d)) equals v
//
// for every dims from 1 to v.Rank(), with one exception: a Ragged whose
// partitions are all uniform comes back as the equivalent dense Tensor
// once every partition is split off, because uniform partitions over a
// Tensor are how dense dimensions are represented.
func SplitOuterDims(v Value, dims int) (partitions []*RowPartition, flat Value, err error) {
	if dims < 1 || dims > v.Rank() {
		return nil, nil, fmt.Errorf("%w: cannot split %d outer dims of a rank-%d value", ErrShape, dims, v.Rank())
	}
	if dims == 1 {
		return nil, v, nil
	}
	switch x := v.(type) {
	case *Tensor:
		return splitDense(x, dims)
	case *Ragged:
		k := len(x.partitions)
		if dims-1 <= k {
			partitions = x.partitions[: dims-1 : dims-1]
			if dims-1 == k {
				return partitions, x.values, nil
			}
			return partitions, &Ragged{values: x.values, partitions: x.partitions[dims-1:]}, nil
		}
		inner, flat, err := splitDense(x.values, dims-k)
		if err != nil {
			return nil, nil, err
		}
		return append(append([]*RowPartition(nil), x.partitions...), inner...), flat, nil
	case *StructTensor:
		partitions = x.partitions[: dims-1 : dims-1]
		c := &StructTensor{
			rank:       x.rank - dims + 1,
			nrows:      partitions[len(partitions)-1].NumValues(),
			partitions: x.partitions[dims-1:],
			fields:     x.fields,
			index:      x.index,
		}
		return partitions, c, nil
	}
	return nil, nil, fmt.Errorf("%w: unknown value type %T", ErrShape, v)
}

func splitDense(t *Tensor, dims int) ([]*RowPartition, Value, error) {
	parts := make([]*RowPartition, 0, dims-1)
	n := t.shape[0]
	for i := 1; i < dims; i++ {
		p, err := NewUniformPartition(n, t.shape[i])
		if err != nil {
			return nil, nil, err
		}
		p.dense = true
		parts = append(parts, p)
		n *= t.shape[i]
	}
	flat, err := t.Reshape(append(Shape{n}, t.shape[dims:]...))
	if err != nil {
		return nil, nil, err
	}
	return parts, flat, nil
}

// JoinOuterDims applies partitions (outermost first) to flat, whose number
// of rows must equal the last partition's number of values, and returns
// the full-shape value. Nothing is copied: a Tensor under only uniform
// partitions becomes a reshaped dense Tensor, a Tensor under any ragged
// partition a Ragged, a Ragged gains outer partitions, and a StructTensor
// gains outer dimensions.
func JoinOuterDims(partitions []*RowPartition, flat Value) (Value, error) {
	if len(partitions) == 0 {
		return flat, nil
	}
	if err := checkNesting(partitions, flat.NumRows()); err != nil {
		return nil, err
	}
	if flat.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot partition a scalar", ErrShape)
	}
	switch x := flat.(type) {
	case *Tensor:
		dense := true
		shape := Shape{partitions[0].NumRows()}
		for _, p := range partitions {
			n, ok := p.UniformRowLength()
			dense = dense && ok
			shape = append(shape, n)
		}
		if dense {
			return x.Reshape(append(shape, x.shape[1:]...))
		}
		// Trailing partitions that SplitOuterDims made from dense
		// dimensions become dense dimensions of the flat values again.
		k := len(partitions)
		for k > 0 && partitions[k-1].dense {
			k--
		}
		if k < len(partitions) {
			inner := Shape{partitions[k].NumRows()}
			for _, p := range partitions[k:] {
				inner = append(inner, p.rowLen)
			}
			v, err := x.Reshape(append(inner, x.shape[1:]...))
			if err != nil {
				return nil, err
			}
			x, partitions = v, partitions[:k]
		}
		r := &Ragged{values: x, partitions: append([]*RowPartition(nil), partitions...)}
		checkInvariants(r)
		return r, nil
	case *Ragged:
		r := &Ragged{values: x.values, partitions: append(append([]*RowPartition(nil), partitions...), x.partitions...)}
		checkInvariants(r)
		return r, nil
	case *StructTensor:
		st := &StructTensor{
			rank:       x.rank + len(partitions),
			nrows:      partitions[0].NumRows(),
			partitions: append(append([]*RowPartition(nil), partitions...), x.partitions...),
			fields:     x.fields,
			index:      x.index,
		}
		checkInvariants(st)
		return st, nil
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrShape, flat)
}

// checkNesting verifies that each partition's values are the next one's
// rows and that the last partitions nvalues values.
func checkNesting(partitions []*RowPartition, nvalues int) error {
	for i := 1; i < len(partitions); i++ {
		if partitions[i-1].NumValues() != partitions[i].NumRows() {
			return fmt.Errorf("%w: partition %d has %d values but partition %d has %d rows",
				ErrPartition, i-1, partitions[i-1].NumValues(), i, partitions[i].NumRows())
		}
	}
	if last := partitions[len(partitions)-1]; last.NumValues() != nvalues {
		return fmt.Errorf("%w: innermost partition has %d values but there are %d",
			ErrPartition, last.NumValues(), nvalues)
	}
	return nil
}

func partitionedShape(nrows int, partitions []*RowPartition) Shape {
	s := make(Shape, 0, len(partitions)+1)
	s = append(s, nrows)
	for _, p := range partitions {
		if n, ok := p.UniformRowLength(); ok {
			s = append(s, n)
		} else {
			s = append(s, Unknown)
		}
	}
	return s
}
