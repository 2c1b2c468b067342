package structtensor

import (
	"fmt"
)

// nested returns v as nested Go values (map[string]any for a structure,
// []any for a dimension, typed scalars), built only from accessors, as the
// naive reference the indexing and update tests compare against.
func nested(v Value) any {
	if v.Rank() == 0 {
		switch x := v.(type) {
		case *Tensor:
			return x.Elem(0)
		case *StructTensor:
			m := map[string]any{}
			for _, f := range x.Fields() {
				m[f.Name] = nested(f.Value)
			}
			return m
		}
		panic(fmt.Sprintf("rank-0 %T", v))
	}
	return rowsOf(v)
}

// rowsOf returns the nested form of each outer row of v (rank >= 1).
func rowsOf(v Value) []any {
	switch x := v.(type) {
	case *Tensor:
		inner := x.Shape()[1:]
		size := inner.NumElements()
		rows := make([]any, x.NumRows())
		for i := range rows {
			rows[i] = denseBlock(x, i*size, inner)
		}
		return rows
	case *Ragged:
		var innerRows []any
		if len(x.Partitions()) == 1 {
			innerRows = rowsOf(x.Values())
		} else {
			innerRows = rowsOf(&Ragged{values: x.values, partitions: x.partitions[1:]})
		}
		return group(innerRows, x.Partitions()[0])
	case *StructTensor:
		n := x.NumElements()
		cols := map[string][]any{}
		for _, f := range x.Fields() {
			cols[f.Name] = rowsOf(f.Value)
		}
		rows := make([]any, n)
		for i := range rows {
			m := map[string]any{}
			for name, c := range cols {
				m[name] = c[i]
			}
			rows[i] = m
		}
		for j := len(x.Partitions()) - 1; j >= 0; j-- {
			rows = group(rows, x.Partitions()[j])
		}
		return rows
	}
	panic(fmt.Sprintf("%T", v))
}

func denseBlock(t *Tensor, start int, shape Shape) any {
	if len(shape) == 0 {
		return t.Elem(start)
	}
	size := Shape(shape[1:]).NumElements()
	out := make([]any, shape[0])
	for i := range out {
		out[i] = denseBlock(t, start+i*size, shape[1:])
	}
	return out
}

func group(rows []any, p *RowPartition) []any {
	out := make([]any, p.NumRows())
	for i := range out {
		out[i] = append([]any{}, rows[p.RowStart(i):p.RowLimit(i)]...)
	}
	return out
}
