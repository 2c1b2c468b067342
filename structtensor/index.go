package structtensor

import (
	"fmt"
	"strconv"
	"strings"
)

// Slice selects a range of one dimension with Python's slice semantics
// (start:stop:step). Start and Stop are pointers because an omitted bound
// is not the same as any integer (the default start of a negative step is
// the end of the dimension): a nil bound is omitted, as in Python. Go 1.26's
// new(expr) writes a bound inline:
//
//	Slice{Step: 2}                       // [::2]
//	Slice{Start: new(1)}                 // [1:]
//	Slice{Start: new(-3), Stop: new(-1)} // [-3:-1]
//	Slice{Step: -1}                      // [::-1]
//
// Negative bounds count from the end of the dimension, and bounds out of
// range are clamped, as in Python. A zero Step means 1 (Python rejects a
// zero step; here the zero value of Slice is the full slice, All).
type Slice struct {
	Start, Stop *int
	Step        int
}

// All is the full slice, Python's ":": it keeps a dimension whole.
var All = Slice{}

func (s Slice) step() int {
	if s.Step == 0 {
		return 1
	}
	return s.Step
}

// isFull reports whether s selects a whole dimension in order.
func (s Slice) isFull() bool { return s.Start == nil && s.Stop == nil && s.step() == 1 }

// indices returns start, stop, step and the number of selected positions
// of a dimension of size n, as Python's slice.indices.
func (s Slice) indices(n int) (start, stop, step, count int) {
	step = s.step()
	lower, upper := 0, n
	if step < 0 {
		lower, upper = -1, n-1
	}
	clamp := func(b *int, def int) int {
		if b == nil {
			return def
		}
		v := *b
		if v < 0 {
			v += n
			if v < lower {
				v = lower
			}
		} else if v > upper {
			v = upper
		}
		return v
	}
	if step > 0 {
		start, stop = clamp(s.Start, lower), clamp(s.Stop, upper)
		if stop > start {
			count = (stop - start + step - 1) / step
		}
	} else {
		start, stop = clamp(s.Start, upper), clamp(s.Stop, lower)
		if start > stop {
			count = (start - stop + (-step) - 1) / (-step)
		}
	}
	return start, stop, step, count
}

// String formats s as Python does: "1:5:2", "::-1", ":".
func (s Slice) String() string {
	var b strings.Builder
	if s.Start != nil {
		b.WriteString(strconv.Itoa(*s.Start))
	}
	b.WriteByte(':')
	if s.Stop != nil {
		b.WriteString(strconv.Itoa(*s.Stop))
	}
	if s.Step != 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(s.Step))
	}
	return b.String()
}

type keyKind uint8

const (
	keyField keyKind = iota // a field name
	keyIndex                // one position; the dimension is dropped
	keySlice                // a Slice; the dimension is kept
)

// key is one parsed Get key.
type key struct {
	kind  keyKind
	name  string
	index int
	slice Slice
}

func (k key) String() string {
	switch k.kind {
	case keyField:
		return strconv.Quote(k.name)
	case keyIndex:
		return strconv.Itoa(k.index)
	}
	return k.slice.String()
}

func parseKeys(keys []any) ([]key, error) {
	out := make([]key, len(keys))
	for i, k := range keys {
		switch x := k.(type) {
		case string:
			out[i] = key{kind: keyField, name: x}
		case int:
			out[i] = key{kind: keyIndex, index: x}
		case int32:
			out[i] = key{kind: keyIndex, index: int(x)}
		case int64:
			out[i] = key{kind: keyIndex, index: int(x)}
		case Slice:
			out[i] = key{kind: keySlice, slice: x}
		case *Slice:
			if x == nil {
				return nil, fmt.Errorf("%w: key %d is a nil *Slice", ErrIndex, i)
			}
			out[i] = key{kind: keySlice, slice: *x}
		default:
			return nil, fmt.Errorf("%w: key %d has unsupported type %T (want a field name, an int or a Slice)", ErrIndex, i, k)
		}
	}
	return out, nil
}

func formatKeys(keys []key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Get returns the piece of st that keys select, following TensorFlow's
// StructuredTensor indexing (the RFC's st[k1, k2, ...]). A key is a field
// name (string), an index (int, negative counting from the end) or a
// Slice (All keeps a dimension whole).
//
// On a scalar struct the first key must be a field name, and the rest
// index that field's value; All as the first key applies the rest to
// every field. On a struct of rank r, the first r keys apply to its
// dimensions, outermost first; a key after them must be a field name, and
// the keys before it then index that field's full-shape value, followed by
// the keys after it. So
//
//	st.Get("recipe", "ingredients", 0, "name")
//
// is the name of the first ingredient, and
//
//	st.Get("recipe", "user_rating", All, "user_embedding", Slice{Step: 2})
//
// every other element of every rating's embedding. An index drops its
// dimension; a slice keeps it, and slices and indices on ragged dimensions
// apply to each row. Indices out of range, unknown fields and keys that do
// not apply return errors wrapping ErrIndex or ErrNoField that name the
// keys and the field path.
//
// Results share st's buffers when the selected values are contiguous (an
// index, a slice with step 1, All); other selections are copied.
func (st *StructTensor) Get(keys ...any) (Value, error) { return getValue(st, keys) }

// Get returns the elements of t that keys (ints and Slices, one per
// dimension from the outermost) select; see StructTensor.Get.
func (t *Tensor) Get(keys ...any) (Value, error) { return getValue(t, keys) }

// Get returns the elements of r that keys (ints and Slices, one per
// dimension from the outermost) select; indices and slices on ragged
// dimensions apply to each row. See StructTensor.Get.
func (r *Ragged) Get(keys ...any) (Value, error) { return getValue(r, keys) }

func getValue(v Value, keys []any) (Value, error) {
	ks, err := parseKeys(keys)
	if err != nil {
		return nil, err
	}
	res, err := get(v, ks, nil)
	if err != nil {
		return nil, fmt.Errorf("Get%s: %w", formatKeys(ks), err)
	}
	checkInvariants(res)
	return res, nil
}

// get applies keys to v; path is the field path from the value Get was
// called on, for errors.
func get(v Value, keys []key, path []string) (Value, error) {
	if len(keys) == 0 {
		return v, nil
	}
	st, isStruct := v.(*StructTensor)
	if !isStruct {
		if len(keys) > v.Rank() {
			return nil, fmt.Errorf("%w: %d keys for a rank-%d value%s", ErrIndex, len(keys), v.Rank(), atPath(path))
		}
		for _, k := range keys {
			if k.kind == keyField {
				return nil, fmt.Errorf("%w: field name %s on a %s value, not a struct%s", ErrIndex, k, kindName(v), atPath(path))
			}
		}
		return indexDims(v, keys, path)
	}
	r := st.rank
	if r == 0 {
		k := keys[0]
		switch {
		case k.kind == keyField:
			fv, ok := st.Field(k.name)
			if !ok {
				return nil, noField(st, append(path, k.name))
			}
			return get(fv, keys[1:], append(path, k.name))
		case k.kind == keySlice && k.slice.isFull():
			fields := make([]Field, len(st.fields))
			for i, f := range st.fields {
				fv, err := get(f.Value, keys[1:], append(path, f.Name))
				if err != nil {
					return nil, err
				}
				fields[i] = Field{Name: f.Name, Value: fv}
			}
			return NewScalarStruct(fields...)
		}
		return nil, fmt.Errorf("%w: key %s on a scalar struct: want a field name or All%s", ErrIndex, k, atPath(path))
	}
	n := min(len(keys), r)
	for _, k := range keys[:n] {
		if k.kind == keyField {
			return nil, fmt.Errorf("%w: field name %s among the first %d keys of a rank-%d struct: index its dimensions first (All keeps one whole)%s",
				ErrIndex, k, r, r, atPath(path))
		}
	}
	if len(keys) <= r {
		return indexDims(st, keys, path)
	}
	k := keys[r]
	if k.kind != keyField {
		return nil, fmt.Errorf("%w: key %s after the %d dimension keys of a rank-%d struct: want a field name%s", ErrIndex, k, r, r, atPath(path))
	}
	if _, ok := st.Field(k.name); !ok {
		return nil, noField(st, append(path, k.name))
	}
	fv, err := st.FieldValue(k.name)
	if err != nil {
		return nil, err
	}
	rest := append(append([]key(nil), keys[:r]...), keys[r+1:]...)
	return get(fv, rest, append(path, k.name))
}

func noField(st *StructTensor, path []string) error {
	return fmt.Errorf("%w: %q (fields: %s)", ErrNoField, strings.Join(path, "."), strings.Join(st.FieldNames(), ", "))
}

func kindName(v Value) string {
	switch v.(type) {
	case *Tensor:
		return "tensor"
	case *Ragged:
		return "ragged"
	}
	return "struct"
}

// emittedDim is a dimension kept in the result of indexDims: its number of
// selected positions in each group (one group per selected position of the
// kept or dropped dimension above it).
type emittedDim struct {
	lengths []int64
	uniform bool // every group has rowLen positions
	rowLen  int
	dense   bool
}

// indexDims applies dimension keys (no field names) to v, one per
// dimension from the outermost; dimensions past the keys are kept whole.
// It walks the keyed dimensions once, tracking the selected positions at
// each level (each selected position spans a range one level down, so a
// key on a ragged dimension applies to each row), then takes the selected
// rows of the value below the last keyed dimension: by slicing when they
// are contiguous, by gathering otherwise.
func indexDims(v Value, keys []key, path []string) (Value, error) {
	if v.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot index a scalar", ErrIndex)
	}
	if len(keys) > v.Rank() {
		return nil, fmt.Errorf("%w: %d keys for a rank-%d value", ErrIndex, len(keys), v.Rank())
	}
	whole := true
	for _, k := range keys {
		whole = whole && k.kind == keySlice && k.slice.isFull()
	}
	if whole {
		return v, nil
	}
	last := len(keys) - 1
	// dims[d-1] partitions dimension d, for d = 1..last (dense dimensions
	// as uniform partitions marked dense); below is the value whose rows are
	// the positions of dimension last.
	dims, below, err := SplitOuterDims(v, last+1)
	if err != nil {
		return nil, err
	}
	// Groups at the current level are the ranges [lo[g], hi[g]).
	lo, hi := []int{0}, []int{v.NumRows()}
	var out []emittedDim
	var sel []int
	for d := 0; d <= last; d++ {
		var src *RowPartition // the partition of this dimension; nil for d == 0
		if d > 0 {
			src = dims[d-1]
		}
		k := keys[d]
		sel = make([]int, 0, len(lo))
		switch k.kind {
		case keyIndex:
			for g := range lo {
				n, i := hi[g]-lo[g], k.index
				if i < 0 {
					i += n
				}
				if i < 0 || i >= n {
					where := ""
					if d > 0 {
						where = fmt.Sprintf(" in row %d", g)
					}
					return nil, fmt.Errorf("%w: index %d out of range for dimension %d of size %d%s%s",
						ErrIndex, k.index, d, n, where, atPath(path))
				}
				sel = append(sel, lo[g]+i)
			}
		case keySlice:
			e := emittedDim{lengths: make([]int64, len(lo))}
			total := 0
			for g := range lo {
				_, _, _, count := k.slice.indices(hi[g] - lo[g])
				e.lengths[g] = int64(count)
				total += count
			}
			sel = make([]int, 0, total)
			for g := range lo {
				start, _, step, count := k.slice.indices(hi[g] - lo[g])
				for j := 0; j < count; j++ {
					sel = append(sel, lo[g]+start+j*step)
				}
			}
			if src != nil && src.IsUniform() {
				_, _, _, e.rowLen = k.slice.indices(src.rowLen)
				e.uniform, e.dense = true, src.dense
			}
			out = append(out, e)
		default:
			return nil, fmt.Errorf("%w: key %s does not index a dimension", ErrIndex, k)
		}
		if d < last {
			p := dims[d]
			lo, hi = make([]int, len(sel)), make([]int, len(sel))
			for j, s := range sel {
				lo[j], hi[j] = p.RowStart(s), p.RowLimit(s)
			}
		}
	}
	rows, err := takeRows(below, sel)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return rowValue(rows, 0)
	}
	parts := make([]*RowPartition, 0, len(out)-1)
	for _, e := range out[1:] {
		var p *RowPartition
		if e.uniform {
			p, err = NewUniformPartition(len(e.lengths), e.rowLen)
			if p != nil {
				p.dense = e.dense
			}
		} else {
			p, err = NewRowLengths(e.lengths)
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if t, ok := rows.(*Tensor); ok && len(parts) > 0 {
		if _, ok := v.(*Ragged); ok {
			return joinRagged(parts, t)
		}
	}
	return JoinOuterDims(parts, rows)
}

func atPath(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return " (at field " + strconv.Quote(strings.Join(path, ".")) + ")"
}

// joinRagged is JoinOuterDims for the result of indexing a Ragged: it
// keeps uniform partitions that were ragged dimensions of the source as
// partitions, where JoinOuterDims would turn an all-uniform result dense.
func joinRagged(parts []*RowPartition, flat *Tensor) (Value, error) {
	for _, p := range parts {
		if !p.dense {
			k := len(parts)
			for k > 0 && parts[k-1].dense {
				k--
			}
			inner := Shape{parts[k-1].NumValues()}
			for _, q := range parts[k:] {
				inner = append(inner, q.rowLen)
			}
			vals, err := flat.Reshape(append(inner, flat.shape[1:]...))
			if err != nil {
				return nil, err
			}
			return NewRagged(vals, parts[:k]...)
		}
	}
	return JoinOuterDims(parts, flat)
}

// rowValue returns row i of v (rank >= 1) as a value of rank one less,
// sharing v's buffers.
func rowValue(v Value, i int) (Value, error) {
	if v.Rank() == 1 {
		switch x := v.(type) {
		case *Tensor:
			row, err := x.SliceRows(i, i+1)
			if err != nil {
				return nil, err
			}
			return row.Reshape(Shape{})
		case *StructTensor:
			fields := make([]Field, len(x.fields))
			for j, f := range x.fields {
				fv, err := rowValue(f.Value, i)
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
				fields[j] = Field{Name: f.Name, Value: fv}
			}
			return NewScalarStruct(fields...)
		}
	}
	parts, rest, err := SplitOuterDims(v, 2)
	if err != nil {
		return nil, err
	}
	return sliceRows(rest, parts[0].RowStart(i), parts[0].RowLimit(i))
}

// TakeRows returns rows idx of v's outer dimension, in that order: a
// zero-copy slice when idx is a contiguous ascending run, a gathered copy
// otherwise (ops.Gather is the general gather, with TensorFlow's
// arguments). An index out of [0, v.NumRows()) or a scalar v is an error
// wrapping ErrIndex.
func TakeRows(v Value, idx []int) (Value, error) {
	if v.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot take rows of a scalar", ErrIndex)
	}
	n := v.NumRows()
	for j, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: row %d (index %d) of %d", ErrIndex, i, j, n)
		}
	}
	return takeRows(v, idx)
}

// takeRows is TakeRows on indices known to be rows of v.
func takeRows(v Value, idx []int) (Value, error) {
	contiguous := true
	for j := 1; j < len(idx); j++ {
		if idx[j] != idx[j-1]+1 {
			contiguous = false
			break
		}
	}
	if contiguous {
		start := 0
		if len(idx) > 0 {
			start = idx[0]
		}
		return sliceRows(v, start, start+len(idx))
	}
	return gatherRows(v, idx)
}

// gatherRows copies rows idx of v (rank >= 1), level by level: the rows'
// ranges one level down become the rows taken there.
func gatherRows(v Value, idx []int) (Value, error) {
	if t, ok := v.(*Tensor); ok {
		return gatherTensorRows(t, idx), nil
	}
	if st, ok := v.(*StructTensor); ok && st.rank == 1 {
		fields := make([]Field, len(st.fields))
		for j, f := range st.fields {
			fv, err := takeRows(f.Value, idx)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[j] = Field{Name: f.Name, Value: fv}
		}
		return st.withFieldsRows(len(idx), fields), nil
	}
	parts, rest, err := SplitOuterDims(v, 2)
	if err != nil {
		return nil, err
	}
	p := parts[0]
	lengths := make([]int64, len(idx))
	total := 0
	for j, r := range idx {
		lengths[j] = int64(p.RowLength(r))
		total += int(lengths[j])
	}
	next := make([]int, 0, total)
	for _, r := range idx {
		for k := p.RowStart(r); k < p.RowLimit(r); k++ {
			next = append(next, k)
		}
	}
	var np *RowPartition
	if p.IsUniform() {
		np, err = NewUniformPartition(len(idx), p.rowLen)
		if np != nil {
			np.dense = p.dense
		}
	} else {
		np, err = NewRowLengths(lengths)
	}
	if err != nil {
		return nil, err
	}
	inner, err := takeRows(rest, next)
	if err != nil {
		return nil, err
	}
	switch x := inner.(type) {
	case *Tensor:
		return &Ragged{values: x, partitions: []*RowPartition{np}}, nil
	case *Ragged:
		return &Ragged{values: x.values, partitions: append([]*RowPartition{np}, x.partitions...)}, nil
	case *StructTensor:
		return &StructTensor{rank: x.rank + 1, nrows: len(idx), partitions: append([]*RowPartition{np}, x.partitions...),
			fields: x.fields, index: x.index}, nil
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrShape, inner)
}

// withFieldsRows returns a rank-1 struct of nrows rows with the given
// fields (already checked) and st's field index.
func (st *StructTensor) withFieldsRows(nrows int, fields []Field) *StructTensor {
	return &StructTensor{rank: 1, nrows: nrows, fields: fields, index: st.index}
}

// sliceRows returns rows [start, end) of v (rank >= 1), sharing its
// buffers; only rebased row splits are new.
func sliceRows(v Value, start, end int) (Value, error) {
	if v.Rank() == 0 {
		return nil, fmt.Errorf("%w: cannot slice a scalar", ErrIndex)
	}
	if start < 0 || end < start || end > v.NumRows() {
		return nil, fmt.Errorf("%w: rows [%d, %d) of %d", ErrIndex, start, end, v.NumRows())
	}
	if start == 0 && end == v.NumRows() {
		return v, nil
	}
	switch x := v.(type) {
	case *Tensor:
		return x.SliceRows(start, end)
	case *Ragged:
		parts, lo, hi := slicePartitions(x.partitions, start, end)
		vals, err := x.values.SliceRows(lo, hi)
		if err != nil {
			return nil, err
		}
		return &Ragged{values: vals, partitions: parts}, nil
	case *StructTensor:
		parts, lo, hi := slicePartitions(x.partitions, start, end)
		fields := make([]Field, len(x.fields))
		for j, f := range x.fields {
			fv, err := sliceRows(f.Value, lo, hi)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[j] = Field{Name: f.Name, Value: fv}
		}
		return &StructTensor{rank: x.rank, nrows: end - start, partitions: parts, fields: fields, index: x.index}, nil
	}
	return nil, fmt.Errorf("%w: unknown value type %T", ErrShape, v)
}

// slicePartitions slices nested partitions to rows [start, end) of the
// outermost and returns the value range of the innermost.
func slicePartitions(parts []*RowPartition, start, end int) ([]*RowPartition, int, int) {
	out := make([]*RowPartition, len(parts))
	lo, hi := start, end
	for i, p := range parts {
		out[i], lo, hi = p.slice(lo, hi)
	}
	return out, lo, hi
}

// gatherTensorRows copies rows idx of t.
func gatherTensorRows(t *Tensor, idx []int) *Tensor {
	inner := t.innerSize()
	shape := t.shape.clone()
	shape[0] = len(idx)
	c := &Tensor{dtype: t.dtype, shape: shape, utf8: t.utf8}
	switch v := t.data.(type) {
	case []bool:
		c.data = gatherInner(v, idx, inner)
	case []int32:
		c.data = gatherInner(v, idx, inner)
	case []int64:
		c.data = gatherInner(v, idx, inner)
	case []uint32:
		c.data = gatherInner(v, idx, inner)
	case []uint64:
		c.data = gatherInner(v, idx, inner)
	case []float32:
		c.data = gatherInner(v, idx, inner)
	case []float64:
		c.data = gatherInner(v, idx, inner)
	default:
		size := 0
		for _, r := range idx {
			size += int(t.strOffsets[(r+1)*inner] - t.strOffsets[r*inner])
		}
		c.strData = make([]byte, 0, size)
		c.strOffsets = make([]int64, 1, len(idx)*inner+1)
		for _, r := range idx {
			for e := r * inner; e < (r+1)*inner; e++ {
				c.strData = append(c.strData, t.StringAt(e)...)
				c.strOffsets = append(c.strOffsets, int64(len(c.strData)))
			}
		}
	}
	return c
}

func gatherInner[T any](v []T, idx []int, inner int) []T {
	out := make([]T, 0, len(idx)*inner)
	for _, r := range idx {
		out = append(out, v[r*inner:(r+1)*inner]...)
	}
	return out
}
