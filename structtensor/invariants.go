package structtensor

import (
	"fmt"
	"math"
)

// checkInvariants panics if v violates a representation invariant. It is
// called on every value a constructor or method of this package builds,
// but only when invariantsEnabled (build tag "invariants"): a violation is
// a bug in this package, not bad input, which the constructors reject with
// an error before any value is built.
func checkInvariants(v Value) {
	if !invariantsEnabled {
		return
	}
	if err := validate(v); err != nil {
		panic(fmt.Sprintf("structtensor: invariant violated: %v", err))
	}
}

// validate checks every representation invariant of v, recursively, and
// reports the first violation.
func validate(v Value) error {
	switch x := v.(type) {
	case *Tensor:
		return validateTensor(x)
	case *Ragged:
		if x == nil {
			return fmt.Errorf("nil *Ragged")
		}
		if x.values == nil {
			return fmt.Errorf("ragged value without flat values")
		}
		if err := validateTensor(x.values); err != nil {
			return fmt.Errorf("ragged values: %w", err)
		}
		if x.values.Rank() == 0 {
			return fmt.Errorf("ragged flat values are a scalar")
		}
		if len(x.partitions) == 0 {
			return fmt.Errorf("ragged value without partitions")
		}
		if err := validatePartitions(x.partitions, x.values.NumRows()); err != nil {
			return err
		}
		return nil
	case *StructTensor:
		return validateStruct(x)
	case nil:
		return fmt.Errorf("nil value")
	}
	return fmt.Errorf("unknown value type %T", v)
}

func validateTensor(t *Tensor) error {
	if t == nil {
		return fmt.Errorf("nil *Tensor")
	}
	if !t.dtype.Valid() {
		return fmt.Errorf("tensor dtype %v", t.dtype)
	}
	if err := checkShape(t.shape); err != nil {
		return err
	}
	n := t.shape.NumElements()
	if t.dtype == String {
		if t.data != nil {
			return fmt.Errorf("string tensor with typed data %T", t.data)
		}
		if len(t.strOffsets) != n+1 {
			return fmt.Errorf("string tensor of shape %v has %d offsets", t.shape, len(t.strOffsets))
		}
		if t.strOffsets[0] < 0 {
			return fmt.Errorf("negative string offset %d", t.strOffsets[0])
		}
		for i := 1; i < len(t.strOffsets); i++ {
			if t.strOffsets[i] < t.strOffsets[i-1] {
				return fmt.Errorf("string offsets decrease at %d", i)
			}
		}
		if last := t.strOffsets[n]; last > int64(len(t.strData)) {
			return fmt.Errorf("string offset %d past %d bytes", last, len(t.strData))
		}
		return nil
	}
	if l := sliceLen(t.data); l != n {
		return fmt.Errorf("%v tensor of shape %v holds %d values (%T)", t.dtype, t.shape, l, t.data)
	}
	if got := dtypeOfSlice(t.data); got != t.dtype {
		return fmt.Errorf("tensor dtype %v holds %T", t.dtype, t.data)
	}
	return nil
}

func validatePartitions(parts []*RowPartition, nvalues int) error {
	for i, p := range parts {
		if p == nil {
			return fmt.Errorf("partition %d is nil", i)
		}
		if err := validatePartition(p); err != nil {
			return fmt.Errorf("partition %d: %w", i, err)
		}
	}
	return checkNesting(parts, nvalues)
}

func validatePartition(p *RowPartition) error {
	if p.rowLen >= 0 {
		if p.splits != nil {
			return fmt.Errorf("uniform partition with splits")
		}
		if p.nrows < 0 || p.nvalues != p.nrows*p.rowLen {
			return fmt.Errorf("uniform partition of %d x %d claims %d values", p.nrows, p.rowLen, p.nvalues)
		}
		return nil
	}
	if len(p.splits) != p.nrows+1 || p.splits[0] != 0 || int(p.splits[p.nrows]) != p.nvalues {
		return fmt.Errorf("row splits %v for %d rows, %d values", p.splits, p.nrows, p.nvalues)
	}
	for i := 1; i < len(p.splits); i++ {
		if p.splits[i] < p.splits[i-1] {
			return fmt.Errorf("row splits decrease at %d", i)
		}
	}
	return nil
}

func validateStruct(st *StructTensor) error {
	if st == nil {
		return fmt.Errorf("nil *StructTensor")
	}
	if st.rank < 0 || len(st.partitions) != max(st.rank-1, 0) {
		return fmt.Errorf("rank-%d struct with %d partitions", st.rank, len(st.partitions))
	}
	if st.rank == 0 && st.nrows != 1 {
		return fmt.Errorf("scalar struct with nrows %d", st.nrows)
	}
	if st.nrows < 0 {
		return fmt.Errorf("negative nrows %d", st.nrows)
	}
	if len(st.partitions) > 0 {
		if st.partitions[0] == nil || st.partitions[0].NumRows() != st.nrows {
			return fmt.Errorf("outer partition does not have %d rows", st.nrows)
		}
		if err := validatePartitions(st.partitions, st.partitions[len(st.partitions)-1].nvalues); err != nil {
			return err
		}
	}
	if len(st.index) != len(st.fields) {
		return fmt.Errorf("index has %d names for %d fields", len(st.index), len(st.fields))
	}
	rows := st.flatRows()
	for i, f := range st.fields {
		if !ValidFieldName(f.Name) {
			return fmt.Errorf("field name %q", f.Name)
		}
		if j, ok := st.index[f.Name]; !ok || j != i {
			return fmt.Errorf("index of field %q is %d, want %d", f.Name, j, i)
		}
		if err := validate(f.Value); err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		if st.rank > 0 && (f.Value.Rank() == 0 || f.Value.NumRows() != rows) {
			return fmt.Errorf("field %q has %d rows (rank %d), struct stores %d", f.Name, f.Value.NumRows(), f.Value.Rank(), rows)
		}
	}
	return nil
}

func sliceLen(data any) int {
	switch v := data.(type) {
	case []bool:
		return len(v)
	case []int32:
		return len(v)
	case []int64:
		return len(v)
	case []uint32:
		return len(v)
	case []uint64:
		return len(v)
	case []float32:
		return len(v)
	case []float64:
		return len(v)
	}
	return math.MinInt
}

func dtypeOfSlice(data any) DType {
	switch data.(type) {
	case []bool:
		return Bool
	case []int32:
		return Int32
	case []int64:
		return Int64
	case []uint32:
		return Uint32
	case []uint64:
		return Uint64
	case []float32:
		return Float32
	case []float64:
		return Float64
	}
	return Invalid
}
