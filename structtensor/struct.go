package structtensor

import (
	"fmt"
	"strings"
)

// Field is one named field of a StructTensor.
type Field struct {
	Name  string
	Value Value
}

// StructTensor is a collection of records with one schema and a shape: a
// scalar struct (rank 0), a vector of records (rank 1), or a
// multi-dimensional collection whose inner dimensions are row partitions.
//
// Fields are stored flat: each holds one row per structure of the
// innermost dimension, and the struct's partitions are shared by every
// field rather than copied into each. Field returns that stored value;
// FieldValue re-applies the partitions and returns the full-shape view
// (shape = the struct's shape followed by the field's own inner shape)
// without copying.
//
// A StructTensor is immutable. WithUpdates, Without and WithOnly return new
// values that share every buffer they did not change.
type StructTensor struct {
	rank       int
	nrows      int             // size of dimension 0; 1 for rank 0
	partitions []*RowPartition // len rank-1 (0 for rank 0)
	fields     []Field         // flat values; for rank 0 the values themselves
	index      map[string]int
}

func (*StructTensor) isValue() {}

// NewScalarStruct returns a rank-0 StructTensor (one record) whose fields
// hold values of any shape.
func NewScalarStruct(fields ...Field) (*StructTensor, error) {
	st := &StructTensor{rank: 0, nrows: 1}
	if err := st.setFields(fields); err != nil {
		return nil, err
	}
	checkInvariants(st)
	return st, nil
}

// NewStruct returns a rank-1 StructTensor of nrows records. Each field must
// have nrows rows.
func NewStruct(nrows int, fields ...Field) (*StructTensor, error) {
	return NewPartitionedStruct(nrows, nil, fields...)
}

// NewPartitionedStruct returns a StructTensor of rank len(partitions)+1
// with nrows outer rows, stored flat: partitions[0] splits the nrows rows,
// each partition's values are the next one's rows, and every field holds
// one row per value of the innermost partition.
func NewPartitionedStruct(nrows int, partitions []*RowPartition, fields ...Field) (*StructTensor, error) {
	if nrows < 0 {
		return nil, fmt.Errorf("%w: negative number of rows %d", ErrShape, nrows)
	}
	for i, p := range partitions {
		if p == nil {
			return nil, fmt.Errorf("%w: partition %d is nil", ErrPartition, i)
		}
	}
	if len(partitions) > 0 {
		if partitions[0].NumRows() != nrows {
			return nil, fmt.Errorf("%w: %d rows but outer partition has %d", ErrPartition, nrows, partitions[0].NumRows())
		}
		if err := checkNesting(partitions, partitions[len(partitions)-1].NumValues()); err != nil {
			return nil, err
		}
	}
	st := &StructTensor{rank: len(partitions) + 1, nrows: nrows, partitions: append([]*RowPartition(nil), partitions...)}
	if err := st.setFields(fields); err != nil {
		return nil, err
	}
	checkInvariants(st)
	return st, nil
}

// NewStructFromFieldValues returns a StructTensor of the given rank whose
// fields are given in full shape, as TensorFlow's
// StructuredTensor.from_fields takes them: the outer rank dimensions of
// every field must agree (same sizes, same row splits) and become the
// struct's shared partitions. With no fields, rank must be 0 (use
// NewStruct or NewPartitionedStruct for an empty struct of higher rank).
func NewStructFromFieldValues(rank int, fields ...Field) (*StructTensor, error) {
	if rank == 0 {
		return NewScalarStruct(fields...)
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: rank-%d struct with no fields needs an explicit shape", ErrShape, rank)
	}
	var parts []*RowPartition
	nrows := 0
	flat := make([]Field, len(fields))
	for i, f := range fields {
		if isNil(f.Value) || f.Value.Rank() < rank {
			return nil, fmt.Errorf("%w: field %q has rank %d, struct has rank %d", ErrShape, f.Name, rankOf(f.Value), rank)
		}
		p, v, err := SplitOuterDims(f.Value, rank)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		if i == 0 {
			parts, nrows = p, f.Value.NumRows()
		} else {
			if f.Value.NumRows() != nrows {
				return nil, fmt.Errorf("%w: field %q has %d rows, field %q has %d", ErrShape, f.Name, f.Value.NumRows(), fields[0].Name, nrows)
			}
			for j := range p {
				if !p[j].Equal(parts[j]) {
					return nil, fmt.Errorf("%w: field %q differs from field %q in dimension %d", ErrShape, f.Name, fields[0].Name, j+1)
				}
			}
		}
		flat[i] = Field{Name: f.Name, Value: v}
	}
	return NewPartitionedStruct(nrows, parts, flat...)
}

func rankOf(v Value) int {
	if isNil(v) {
		return -1
	}
	return v.Rank()
}

// isNil reports whether v is nil or a nil pointer of one of the value
// types, which constructors reject instead of dereferencing.
func isNil(v Value) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *Tensor:
		return x == nil
	case *Ragged:
		return x == nil
	case *StructTensor:
		return x == nil
	}
	return false
}

// ValidFieldName reports whether name matches ^[A-Za-z][A-Za-z0-9_]*$.
func ValidFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// setFields validates fields against the struct's dimensions and installs
// them.
func (st *StructTensor) setFields(fields []Field) error {
	st.fields = make([]Field, len(fields))
	st.index = make(map[string]int, len(fields))
	rows := st.flatRows()
	for i, f := range fields {
		if !ValidFieldName(f.Name) {
			return fmt.Errorf("%w: %q", ErrFieldName, f.Name)
		}
		if _, dup := st.index[f.Name]; dup {
			return fmt.Errorf("%w: %q appears twice", ErrFieldName, f.Name)
		}
		if isNil(f.Value) {
			return fmt.Errorf("%w: field %q has no value", ErrShape, f.Name)
		}
		if st.rank > 0 {
			if f.Value.Rank() == 0 {
				return fmt.Errorf("%w: field %q is a scalar in a rank-%d struct", ErrShape, f.Name, st.rank)
			}
			if f.Value.NumRows() != rows {
				return fmt.Errorf("%w: field %q has %d rows, struct has %d", ErrShape, f.Name, f.Value.NumRows(), rows)
			}
		}
		st.fields[i] = f
		st.index[f.Name] = i
	}
	return nil
}

// flatRows is the number of rows each stored field has.
func (st *StructTensor) flatRows() int {
	if len(st.partitions) > 0 {
		return st.partitions[len(st.partitions)-1].NumValues()
	}
	return st.nrows
}

// Rank returns the number of dimensions.
func (st *StructTensor) Rank() int { return st.rank }

// NumRows returns the size of the outermost dimension, or 1 for a scalar.
func (st *StructTensor) NumRows() int { return st.nrows }

// Shape returns the shape; ragged dimensions are Unknown.
func (st *StructTensor) Shape() Shape {
	if st.rank == 0 {
		return Shape{}
	}
	return partitionedShape(st.nrows, st.partitions)
}

// Partitions returns the row partitions of dimensions 1..rank-1, outermost
// first. The slice must not be modified.
func (st *StructTensor) Partitions() []*RowPartition { return st.partitions }

// NumElements returns the number of structures in the innermost dimension
// (the number of rows each stored field has; 1 for rank 0).
func (st *StructTensor) NumElements() int { return st.flatRows() }

// FieldNames returns the field names in order.
func (st *StructTensor) FieldNames() []string {
	names := make([]string, len(st.fields))
	for i, f := range st.fields {
		names[i] = f.Name
	}
	return names
}

// Fields returns the fields with their flat stored values. The slice is
// the struct's own and must not be modified (slices.Clone gives one that
// may be; the values themselves are immutable).
func (st *StructTensor) Fields() []Field { return st.fields }

// NumFields returns the number of fields.
func (st *StructTensor) NumFields() int { return len(st.fields) }

// Field returns the flat stored value of the named field: one row per
// innermost structure.
func (st *StructTensor) Field(name string) (Value, bool) {
	i, ok := st.index[name]
	if !ok {
		return nil, false
	}
	return st.fields[i].Value, true
}

// FieldValue returns the full-shape value of the field at path (one name,
// or several naming nested struct fields). The shape of the result is the
// struct's shape followed by the field's inner shape. Nothing is copied.
func (st *StructTensor) FieldValue(path ...string) (Value, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: empty field path", ErrNoField)
	}
	cur := st
	for i, name := range path {
		flat, ok := cur.Field(name)
		if !ok {
			return nil, fmt.Errorf("%w: %q (fields: %s)", ErrNoField, strings.Join(path[:i+1], "."), strings.Join(cur.FieldNames(), ", "))
		}
		v, err := JoinOuterDims(cur.partitions, flat)
		if err != nil {
			return nil, err
		}
		if i == len(path)-1 {
			return v, nil
		}
		next, ok := v.(*StructTensor)
		if !ok {
			return nil, fmt.Errorf("%w: %q is not a struct", ErrNoField, strings.Join(path[:i+1], "."))
		}
		cur = next
	}
	panic("unreachable")
}

// Spec returns the StructSpec of st; field specs are full-shape.
func (st *StructTensor) Spec() Spec {
	fs := make([]FieldSpec, len(st.fields))
	for i, f := range st.fields {
		v, err := JoinOuterDims(st.partitions, f.Value)
		if err != nil {
			// Construction checked the nesting; this cannot fail.
			panic(err)
		}
		fs[i] = FieldSpec{Name: f.Name, Spec: v.Spec()}
	}
	return &StructSpec{Shape: st.Shape(), Fields: fs}
}
