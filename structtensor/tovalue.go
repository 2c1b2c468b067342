package structtensor

// ToValue returns v as nested Go values: a StructTensor of rank 0 is a
// map[string]any, a value of rank r >= 1 is a []any of its rows nested r
// deep (ragged dimensions give rows of different lengths), and scalars are
// typed: bool, int32, int64, uint32, uint64, float32, float64 or string.
// FromValue(ToValue(v), v.Spec()) equals v.
func ToValue(v Value) any {
	if v.Rank() == 0 {
		switch x := v.(type) {
		case *Tensor:
			return x.Elem(0)
		case *StructTensor:
			m := make(map[string]any, len(x.fields))
			for _, f := range x.fields {
				m[f.Name] = ToValue(f.Value)
			}
			return m
		}
		return nil
	}
	return rowValues(v)
}

// ToValue returns t as nested Go values (see the package function ToValue).
func (t *Tensor) ToValue() any { return ToValue(t) }

// ToValue returns r as nested Go values (see the package function ToValue).
func (r *Ragged) ToValue() any { return ToValue(r) }

// ToValue returns st as nested Go values (see the package function
// ToValue).
func (st *StructTensor) ToValue() any { return ToValue(st) }

// rowValues returns the rows of a value of rank >= 1 as Go values.
func rowValues(v Value) []any {
	switch x := v.(type) {
	case *Tensor:
		return tensorRows(x, 0, x.shape)
	case *Ragged:
		return partitionRows(x.partitions, rowValues(x.values))
	case *StructTensor:
		elems := make([]any, x.flatRows())
		ms := make([]map[string]any, len(elems))
		for i := range elems {
			ms[i] = make(map[string]any, len(x.fields))
			elems[i] = ms[i]
		}
		for _, f := range x.fields {
			rows := rowValues(f.Value)
			for i, r := range rows {
				ms[i][f.Name] = r
			}
		}
		return partitionRows(x.partitions, elems)
	}
	return nil
}

// tensorRows returns the rows of the dense block of t starting at flat
// element off with the given shape (rank >= 1).
func tensorRows(t *Tensor, off int, shape Shape) []any {
	out := make([]any, shape[0])
	if len(shape) == 1 {
		for i := range out {
			out[i] = t.Elem(off + i)
		}
		return out
	}
	inner := Shape(shape[1:]).NumElements()
	for i := range out {
		out[i] = tensorRows(t, off+i*inner, shape[1:])
	}
	return out
}

// partitionRows groups items by partitions, innermost partition first.
func partitionRows(parts []*RowPartition, items []any) []any {
	for k := len(parts) - 1; k >= 0; k-- {
		p := parts[k]
		rows := make([]any, p.NumRows())
		for i := range rows {
			lo, hi := p.RowStart(i), p.RowLimit(i)
			rows[i] = items[lo:hi:hi]
		}
		items = rows
	}
	return items
}
