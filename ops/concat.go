package ops

import (
	"fmt"

	"github.com/structtensor/structtensor-go/ops/internal/kernel"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// concatRows returns the rows of vals one after the other. The values must
// share a schema; path names the value in errors ("" for the top).
func concatRows(vals []st.Value, path string) (st.Value, error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("%w: nothing to concatenate", ErrArgument)
	}
	if len(vals) == 1 {
		return vals[0], nil
	}
	r := vals[0].Rank()
	for i, v := range vals {
		if v.Rank() != r {
			return nil, fmt.Errorf("%w: %s: input %d has rank %d, input 0 has rank %d", ErrSchema, where(path), i, v.Rank(), r)
		}
	}
	if r == 0 {
		return nil, fmt.Errorf("%w: %s: cannot concatenate scalars", ErrShape, where(path))
	}
	switch x := vals[0].(type) {
	case *st.StructTensor:
		return concatStructs(x, vals, path)
	case *st.Tensor, *st.Ragged:
		return concatLeaves(vals, path)
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrArgument, vals[0])
}

func where(path string) string {
	if path == "" {
		return "value"
	}
	return fmt.Sprintf("field %q", path)
}

func child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func concatStructs(first *st.StructTensor, vals []st.Value, path string) (st.Value, error) {
	structs := make([]*st.StructTensor, len(vals))
	for i, v := range vals {
		s, ok := v.(*st.StructTensor)
		if !ok {
			return nil, fmt.Errorf("%w: %s: input %d is a %s, input 0 is a struct", ErrSchema, where(path), i, kindName(v))
		}
		if err := sameFieldNames(first, s, i, path); err != nil {
			return nil, err
		}
		structs[i] = s
	}
	nrows := 0
	levels := make([][]*st.RowPartition, len(first.Partitions()))
	for _, s := range structs {
		nrows += s.NumRows()
		for l, p := range s.Partitions() {
			levels[l] = append(levels[l], p)
		}
	}
	parts := make([]*st.RowPartition, len(levels))
	for l, ps := range levels {
		p, err := concatPartitions(ps)
		if err != nil {
			return nil, err
		}
		parts[l] = p
	}
	fields := make([]st.Field, first.NumFields())
	column := make([]st.Value, len(structs))
	for i, f := range first.Fields() {
		for j, s := range structs {
			column[j], _ = s.Field(f.Name)
		}
		fv, err := concatRows(column, child(path, f.Name))
		if err != nil {
			return nil, err
		}
		fields[i] = st.Field{Name: f.Name, Value: fv}
	}
	return st.NewPartitionedStruct(nrows, parts, fields...)
}

// sameFieldNames reports the first field that s lacks or has in excess
// compared with first.
func sameFieldNames(first, s *st.StructTensor, i int, path string) error {
	for _, f := range first.Fields() {
		if _, ok := s.Field(f.Name); !ok {
			return fmt.Errorf("%w: field %q is missing from input %d", ErrSchema, child(path, f.Name), i)
		}
	}
	for _, f := range s.Fields() {
		if _, ok := first.Field(f.Name); !ok {
			return fmt.Errorf("%w: field %q of input %d is missing from input 0", ErrSchema, child(path, f.Name), i)
		}
	}
	return nil
}

func kindName(v st.Value) string {
	switch v.(type) {
	case *st.Tensor:
		return "tensor"
	case *st.Ragged:
		return "ragged tensor"
	case *st.StructTensor:
		return "struct"
	}
	return fmt.Sprintf("%T", v)
}

// concatLeaves concatenates Tensors and Ragged values of one dtype. When
// the inputs mix dense and ragged, dense dimensions are read as uniform
// partitions so that the result is ragged where any input was.
func concatLeaves(vals []st.Value, path string) (st.Value, error) {
	raggedRank := 0
	var dtype st.DType
	for i, v := range vals {
		switch x := v.(type) {
		case *st.Ragged:
			if x.RaggedRank() > raggedRank {
				raggedRank = x.RaggedRank()
			}
			if i == 0 {
				dtype = x.DType()
			} else if x.DType() != dtype {
				return nil, fmt.Errorf("%w: %s: input %d is %v, input 0 is %v", ErrSchema, where(path), i, x.DType(), dtype)
			}
		case *st.Tensor:
			if i == 0 {
				dtype = x.DType()
			} else if x.DType() != dtype {
				return nil, fmt.Errorf("%w: %s: input %d is %v, input 0 is %v", ErrSchema, where(path), i, x.DType(), dtype)
			}
		default:
			return nil, fmt.Errorf("%w: %s: input %d is a %s, input 0 is a %s", ErrSchema, where(path), i, kindName(v), kindName(vals[0]))
		}
	}
	levels := make([][]*st.RowPartition, raggedRank)
	tensors := make([]*st.Tensor, len(vals))
	for i, v := range vals {
		var parts []*st.RowPartition
		var flat st.Value = v
		if raggedRank > 0 {
			var err error
			if parts, flat, err = st.SplitOuterDims(v, raggedRank+1); err != nil {
				return nil, fmt.Errorf("%s: input %d: %w", where(path), i, err)
			}
		}
		t, ok := flat.(*st.Tensor)
		if !ok {
			return nil, fmt.Errorf("%w: %s: input %d has a different ragged rank", ErrSchema, where(path), i)
		}
		if i > 0 && !st.Shape(t.Shape()[1:]).Equal(tensors[0].Shape()[1:]) {
			return nil, fmt.Errorf("%w: %s: input %d has inner shape %v, input 0 has %v", ErrSchema, where(path), i, st.Shape(t.Shape()[1:]), st.Shape(tensors[0].Shape()[1:]))
		}
		tensors[i] = t
		for l, p := range parts {
			levels[l] = append(levels[l], p)
		}
	}
	values, err := concatTensors(tensors)
	if err != nil {
		return nil, err
	}
	if raggedRank == 0 {
		return values, nil
	}
	parts := make([]*st.RowPartition, raggedRank)
	for l, ps := range levels {
		if parts[l], err = concatPartitions(ps); err != nil {
			return nil, err
		}
	}
	return st.NewRagged(values, parts...)
}

// concatPartitions returns the partition of the rows of ps one after the
// other; uniform partitions of one row length stay uniform.
func concatPartitions(ps []*st.RowPartition) (*st.RowPartition, error) {
	l0, uniform := ps[0].UniformRowLength()
	rows := 0
	for _, p := range ps {
		l, ok := p.UniformRowLength()
		uniform = uniform && ok && (l == l0 || p.NumRows() == 0)
		rows += p.NumRows()
	}
	if uniform {
		return st.NewUniformPartition(rows, l0)
	}
	splits := make([]int64, 1, rows+1)
	for _, p := range ps {
		off := splits[len(splits)-1]
		for i := 0; i < p.NumRows(); i++ {
			splits = append(splits, off+int64(p.RowLimit(i)))
		}
	}
	return st.NewRowSplits(splits)
}

func concatTensors(ts []*st.Tensor) (*st.Tensor, error) {
	rows := 0
	for _, t := range ts {
		rows += t.NumRows()
	}
	shape := withRows(ts[0].Shape(), rows)
	var out any
	switch ts[0].DType() {
	case st.Bool:
		out = kernel.Concat(collect(ts, (*st.Tensor).Bools))
	case st.Int32:
		out = kernel.Concat(collect(ts, (*st.Tensor).Int32s))
	case st.Int64:
		out = kernel.Concat(collect(ts, (*st.Tensor).Int64s))
	case st.Uint32:
		out = kernel.Concat(collect(ts, (*st.Tensor).Uint32s))
	case st.Uint64:
		out = kernel.Concat(collect(ts, (*st.Tensor).Uint64s))
	case st.Float32:
		out = kernel.Concat(collect(ts, (*st.Tensor).Float32s))
	case st.Float64:
		out = kernel.Concat(collect(ts, (*st.Tensor).Float64s))
	default:
		cols := make([]kernel.Strings, len(ts))
		utf8 := true
		for i, t := range ts {
			cols[i] = stringsOf(t)
			utf8 = utf8 && t.UTF8()
		}
		c := kernel.ConcatStrings(cols)
		return st.NewStringTensor(shape, c.Data, c.Offsets, utf8)
	}
	return st.NewTensor(shape, out)
}

func collect[T any](ts []*st.Tensor, get func(*st.Tensor) []T) [][]T {
	out := make([][]T, len(ts))
	for i, t := range ts {
		out[i] = get(t)
	}
	return out
}

// sameSchema reports the first difference between the schemas of a and b:
// kind, dtype, rank, inner dense shape or field set, naming its path.
func sameSchema(a, b st.Value, path string) error {
	if a.Rank() != b.Rank() {
		return fmt.Errorf("%w: %s: rank %d vs %d", ErrSchema, where(path), a.Rank(), b.Rank())
	}
	switch x := a.(type) {
	case *st.StructTensor:
		y, ok := b.(*st.StructTensor)
		if !ok {
			return fmt.Errorf("%w: %s: struct vs %s", ErrSchema, where(path), kindName(b))
		}
		if err := sameFieldNames(x, y, 1, path); err != nil {
			return err
		}
		for _, f := range x.Fields() {
			g, _ := y.Field(f.Name)
			if err := sameSchema(f.Value, g, child(path, f.Name)); err != nil {
				return err
			}
		}
		return nil
	case *st.Tensor, *st.Ragged:
		if _, ok := b.(*st.StructTensor); ok {
			return fmt.Errorf("%w: %s: %s vs struct", ErrSchema, where(path), kindName(a))
		}
		if da, db := leafDType(a), leafDType(b); da != db {
			return fmt.Errorf("%w: %s: %v vs %v", ErrSchema, where(path), da, db)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown value type %T", ErrArgument, a)
}

func leafDType(v st.Value) st.DType {
	switch x := v.(type) {
	case *st.Tensor:
		return x.DType()
	case *st.Ragged:
		return x.DType()
	}
	return st.Invalid
}
