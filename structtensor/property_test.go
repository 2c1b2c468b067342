package structtensor

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Property tests: Get, WithUpdates, Without and WithOnly against naive
// references that work on the nested Go form (nested), over random
// StructTensors of rank 0 to 3 whose fields are dense, ragged and nested
// struct values.

var fieldNames = []string{"a", "b", "c", "d"}

// genPartitions draws nrows and the partitions of a rank-r value.
func genPartitions(t *rapid.T, rank int, nrows int) []*RowPartition {
	var parts []*RowPartition
	n := nrows
	for d := 1; d < rank; d++ {
		var p *RowPartition
		var err error
		if rapid.Bool().Draw(t, "uniform") {
			p, err = NewUniformPartition(n, rapid.IntRange(0, 3).Draw(t, "rowLen"))
		} else {
			lengths := make([]int64, n)
			for i := range lengths {
				lengths[i] = int64(rapid.IntRange(0, 3).Draw(t, "len"))
			}
			p, err = NewRowLengths(lengths)
		}
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
		n = p.NumValues()
	}
	return parts
}

// genTensor draws a dense tensor of shape [n, inner...].
func genTensor(t *rapid.T, shape Shape) *Tensor {
	n := shape.NumElements()
	var data any
	switch rapid.IntRange(0, 3).Draw(t, "dtype") {
	case 0:
		data = rapid.SliceOfN(rapid.Int64Range(-9, 9), n, n).Draw(t, "ints")
	case 1:
		data = rapid.SliceOfN(rapid.StringMatching(`[a-z]{0,3}`), n, n).Draw(t, "strings")
	case 2:
		f := rapid.SliceOfN(rapid.IntRange(-99, 99), n, n).Draw(t, "floats")
		fs := make([]float32, n)
		for i, x := range f {
			fs[i] = float32(x) / 4
		}
		data = fs
	default:
		data = rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, "bools")
	}
	x, err := NewTensor(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// genFlat draws a value with n rows (or any value, when n < 0: the field
// of a scalar struct).
func genFlat(t *rapid.T, n int, depth int) Value {
	kinds := 2
	if depth < 2 {
		kinds = 3
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		var shape Shape
		if n < 0 {
			rank := rapid.IntRange(0, 2).Draw(t, "rank")
			for range rank {
				shape = append(shape, rapid.IntRange(0, 3).Draw(t, "dim"))
			}
		} else {
			shape = Shape{n}
			if rapid.Bool().Draw(t, "inner") {
				shape = append(shape, rapid.IntRange(0, 3).Draw(t, "dim"))
			}
		}
		return genTensor(t, shape)
	case 1:
		rows := n
		if rows < 0 {
			rows = rapid.IntRange(0, 3).Draw(t, "rows")
		}
		parts := genPartitions(t, rapid.IntRange(2, 3).Draw(t, "rrank"), rows)
		shape := Shape{parts[len(parts)-1].NumValues()}
		if rapid.Bool().Draw(t, "inner") {
			shape = append(shape, rapid.IntRange(0, 2).Draw(t, "dim"))
		}
		r, err := NewRagged(genTensor(t, shape), parts...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if n < 0 {
		return genStruct(t, depth+1)
	}
	// A struct field of a struct with n flat rows: its own rank is >= 1.
	rank := rapid.IntRange(1, 2).Draw(t, "srank")
	return genStructRows(t, rank, n, depth+1)
}

func genStructRows(t *rapid.T, rank, nrows, depth int) *StructTensor {
	parts := genPartitions(t, rank, nrows)
	n := nrows
	if len(parts) > 0 {
		n = parts[len(parts)-1].NumValues()
	}
	if rank == 0 {
		n = -1
	}
	var fields []Field
	for _, name := range fieldNames {
		if rapid.IntRange(0, 2).Draw(t, "has_"+name) > 0 {
			fields = append(fields, Field{name, genFlat(t, n, depth)})
		}
	}
	var st *StructTensor
	var err error
	if rank == 0 {
		st, err = NewScalarStruct(fields...)
	} else {
		st, err = NewPartitionedStruct(nrows, parts, fields...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func genStruct(t *rapid.T, depth int) *StructTensor {
	rank := rapid.IntRange(0, 3).Draw(t, "rank")
	return genStructRows(t, rank, rapid.IntRange(0, 4).Draw(t, "nrows"), depth)
}

// --- naive Get ---

func naiveGet(x any, spec Spec, keys []any) (any, error) {
	if len(keys) == 0 {
		return x, nil
	}
	s, ok := spec.(*StructSpec)
	if !ok {
		if len(keys) > len(spec.ValueShape()) {
			return nil, fmt.Errorf("too many keys")
		}
		for _, k := range keys {
			if _, ok := k.(string); ok {
				return nil, fmt.Errorf("name on a tensor")
			}
		}
		return naiveDims(x, keys)
	}
	r := len(s.Shape)
	if r == 0 {
		m := x.(map[string]any)
		switch k := keys[0].(type) {
		case string:
			fs, ok := s.Field(k)
			if !ok {
				return nil, fmt.Errorf("no field")
			}
			return naiveGet(m[k], fs, keys[1:])
		case Slice:
			if k.Start != nil || k.Stop != nil || (k.Step != 0 && k.Step != 1) {
				return nil, fmt.Errorf("slice of scalar struct")
			}
			out := map[string]any{}
			for _, f := range s.Fields {
				v, err := naiveGet(m[f.Name], f.Spec, keys[1:])
				if err != nil {
					return nil, err
				}
				out[f.Name] = v
			}
			return out, nil
		}
		return nil, fmt.Errorf("bad key on scalar struct")
	}
	for _, k := range keys[:min(len(keys), r)] {
		if _, ok := k.(string); ok {
			return nil, fmt.Errorf("name among dims")
		}
	}
	if len(keys) <= r {
		return naiveDims(x, keys)
	}
	name, ok := keys[r].(string)
	if !ok {
		return nil, fmt.Errorf("want name")
	}
	fs, ok := s.Field(name)
	if !ok {
		return nil, fmt.Errorf("no field")
	}
	rest := append(append([]any{}, keys[:r]...), keys[r+1:]...)
	return naiveGet(project(x, r, name), fs, rest)
}

func project(x any, depth int, name string) any {
	if depth == 0 {
		return x.(map[string]any)[name]
	}
	l := x.([]any)
	out := make([]any, len(l))
	for i := range l {
		out[i] = project(l[i], depth-1, name)
	}
	return out
}

func naiveDims(x any, keys []any) (any, error) {
	if len(keys) == 0 {
		return x, nil
	}
	l := x.([]any)
	n := len(l)
	switch k := keys[0].(type) {
	case int:
		i := k
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, fmt.Errorf("out of range")
		}
		return naiveDims(l[i], keys[1:])
	case Slice:
		out := make([]any, 0)
		for _, i := range pySlice(k, n) {
			v, err := naiveDims(l[i], keys[1:])
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("name on a tensor")
}

// pySlice lists the positions Python's range(n)[start:stop:step] holds,
// by testing every position against the normalised bounds.
func pySlice(s Slice, n int) []int {
	step := s.Step
	if step == 0 {
		step = 1
	}
	norm := func(b *int, def int) int {
		if b == nil {
			return def
		}
		if *b < 0 {
			return *b + n
		}
		return *b
	}
	var out []int
	if step > 0 {
		lo, hi := max(norm(s.Start, 0), 0), norm(s.Stop, n)
		for i := 0; i < n; i++ {
			if i >= lo && i < hi && (i-lo)%step == 0 {
				out = append(out, i)
			}
		}
		return out
	}
	hi, lo := min(norm(s.Start, n-1), n-1), norm(s.Stop, -1)
	if s.Stop != nil && *s.Stop < -n {
		lo = -1
	}
	for i := n - 1; i >= 0; i-- {
		if i <= hi && i > lo && (hi-i)%(-step) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// genGuidedKeys draws keys that follow the spec (field names that exist,
// one dimension key per dimension), so that most lookups go deep.
func genGuidedKeys(t *rapid.T, spec Spec) []any {
	var keys []any
	for {
		s, isStruct := spec.(*StructSpec)
		rank := len(spec.ValueShape())
		ndims := rank
		if isStruct && (len(s.Fields) == 0 || rapid.IntRange(0, 3).Draw(t, "stop") == 0) {
			ndims = rapid.IntRange(0, rank).Draw(t, "ndims")
		} else if !isStruct {
			ndims = rapid.IntRange(0, rank).Draw(t, "ndims")
		}
		for range ndims {
			keys = append(keys, genDimKey(t))
		}
		if !isStruct || ndims < rank || len(s.Fields) == 0 {
			return keys
		}
		f := rapid.SampledFrom(s.Fields).Draw(t, "field")
		keys = append(keys, f.Name)
		// The dimension keys already given apply to the field's outer dims.
		spec = f.Spec
		if fs, ok := spec.(*StructSpec); ok && len(fs.Shape) > rank {
			// Continue with the field's own inner dimensions.
			inner := &StructSpec{Shape: fs.Shape[rank:], Fields: fs.Fields}
			spec = inner
		} else if !ok {
			inner := spec.ValueShape()[rank:]
			for range rapid.IntRange(0, len(inner)).Draw(t, "inner") {
				keys = append(keys, genDimKey(t))
			}
			return keys
		} else {
			spec = &StructSpec{Shape: Shape{}, Fields: fs.Fields}
		}
	}
}

func genDimKey(t *rapid.T) any {
	switch rapid.IntRange(0, 2).Draw(t, "dimkind") {
	case 0:
		return rapid.IntRange(-3, 3).Draw(t, "index")
	case 1:
		return All
	}
	var s Slice
	if rapid.Bool().Draw(t, "hasStart") {
		s.Start = new(rapid.IntRange(-4, 4).Draw(t, "start"))
	}
	if rapid.Bool().Draw(t, "hasStop") {
		s.Stop = new(rapid.IntRange(-4, 4).Draw(t, "stop"))
	}
	s.Step = rapid.IntRange(-3, 3).Draw(t, "step")
	return s
}

func genKeys(t *rapid.T) []any {
	n := rapid.IntRange(0, 5).Draw(t, "nkeys")
	keys := make([]any, n)
	for i := range keys {
		switch rapid.IntRange(0, 4).Draw(t, "keykind") {
		case 0, 1:
			keys[i] = rapid.SampledFrom(fieldNames).Draw(t, "name")
		case 2:
			keys[i] = rapid.IntRange(-4, 4).Draw(t, "index")
		case 3:
			keys[i] = All
		default:
			var s Slice
			if rapid.Bool().Draw(t, "hasStart") {
				s.Start = new(rapid.IntRange(-5, 5).Draw(t, "start"))
			}
			if rapid.Bool().Draw(t, "hasStop") {
				s.Stop = new(rapid.IntRange(-5, 5).Draw(t, "stop"))
			}
			s.Step = rapid.IntRange(-3, 3).Draw(t, "step")
			keys[i] = s
		}
	}
	return keys
}

func TestPropertyGet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := genStruct(t, 0)
		var keys []any
		if rapid.IntRange(0, 4).Draw(t, "guided") > 0 {
			keys = genGuidedKeys(t, st.Spec())
		} else {
			keys = genKeys(t)
		}
		want, werr := naiveGet(nested(st), st.Spec(), keys)
		got, err := st.Get(keys...)
		if (err != nil) != (werr != nil) {
			t.Fatalf("Get%v on %v: err = %v, naive err = %v", keys, st.Spec(), err, werr)
		}
		if err != nil {
			return
		}
		if verr := validate(got); verr != nil {
			t.Fatalf("Get%v: invalid result: %v", keys, verr)
		}
		if g := nested(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("Get%v on\n%v\n= %#v\nwant %#v", keys, st, g, want)
		}
	})
}

// --- naive updates ---

// structPaths lists every field path of s, descending into struct fields.
func structPaths(s *StructSpec, prefix []string) [][]string {
	var out [][]string
	for _, f := range s.Fields {
		p := append(append([]string{}, prefix...), f.Name)
		out = append(out, p)
		if fs, ok := f.Spec.(*StructSpec); ok {
			out = append(out, structPaths(fs, p)...)
		}
	}
	return out
}

// naiveEdit applies edit to the map of every structure of the struct at
// path[:len(path)-1] (the holder of the last field), zipping upd (nested
// form with the top struct's outer lists) along.
func naiveEdit(x any, spec *StructSpec, depth int, path []string, upd any, edit func(m map[string]any, name string, upd any)) {
	if depth > 0 {
		l := x.([]any)
		var u []any
		if upd != nil {
			u = upd.([]any)
		}
		for i := range l {
			var ui any
			if u != nil {
				ui = u[i]
			}
			naiveEdit(l[i], spec, depth-1, path, ui, edit)
		}
		return
	}
	m := x.(map[string]any)
	if len(path) == 1 {
		edit(m, path[0], upd)
		return
	}
	child, _ := spec.Field(path[0])
	cs := child.(*StructSpec)
	naiveEdit(m[path[0]], cs, len(cs.Shape)-len(spec.Shape), path[1:], upd, edit)
}

func TestPropertyWithUpdates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := genStruct(t, 0)
		spec := st.Spec().(*StructSpec)
		// The holder: the top struct, or a struct field at any depth.
		holders := [][]string{nil}
		for _, p := range structPaths(spec, nil) {
			if v, _ := st.FieldValue(p...); v != nil {
				if _, ok := v.(*StructTensor); ok {
					holders = append(holders, p)
				}
			}
		}
		hp := rapid.SampledFrom(holders).Draw(t, "holder")
		holder := st
		if hp != nil {
			v, _ := st.FieldValue(hp...)
			holder = v.(*StructTensor)
		}
		name := rapid.SampledFrom(fieldNames).Draw(t, "name")
		path := append(append([]string{}, hp...), name)
		// A full-shape value for the holder's shape.
		var val Value
		if holder.Rank() == 0 {
			val = genFlat(t, -1, 2)
		} else {
			flat := genFlat(t, holder.NumElements(), 2)
			v, err := JoinOuterDims(holder.Partitions(), flat)
			if err != nil {
				t.Fatal(err)
			}
			val = v
		}
		got, err := st.WithUpdates(map[string]Value{strings.Join(path, "."): val})
		if err != nil {
			t.Fatalf("WithUpdates(%v = %v): %v", path, val.Spec(), err)
		}
		if verr := validate(got); verr != nil {
			t.Fatalf("invalid result: %v", verr)
		}
		want := nested(st)
		naiveEdit(want, spec, len(spec.Shape), path, nested(val), func(m map[string]any, name string, upd any) { m[name] = upd })
		if g := nested(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("WithUpdates(%v) = %#v\nwant %#v", path, g, want)
		}
		// Existing top-level fields keep their order; a new one is last.
		names := st.FieldNames()
		if _, ok := st.Field(path[0]); !ok {
			names = append(names, path[0])
		}
		if !reflect.DeepEqual(got.FieldNames(), names) {
			t.Fatalf("fields %v, want %v", got.FieldNames(), names)
		}
		// An update whose outer shape differs is rejected.
		if holder.Rank() > 0 && holder.NumElements() > 0 {
			bad := genTensor(t, Shape{holder.NumElements() + 1})
			if _, err := st.WithUpdatesOrdered(Update{Path: path, Value: bad}); err == nil {
				t.Fatalf("update with %d rows for a holder of shape %v accepted", holder.NumElements()+1, holder.Shape())
			}
		}
	})
}

func TestPropertyWithoutWithOnly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := genStruct(t, 0)
		spec := st.Spec().(*StructSpec)
		paths := structPaths(spec, nil)
		if len(paths) == 0 {
			if _, err := st.Without("a"); err == nil {
				t.Fatalf("Without on a struct without fields succeeded")
			}
			return
		}
		p := rapid.SampledFrom(paths).Draw(t, "path")
		got, err := st.Without(strings.Join(p, "."))
		if err != nil {
			t.Fatal(err)
		}
		want := nested(st)
		naiveEdit(want, spec, len(spec.Shape), p, nil, func(m map[string]any, name string, _ any) { delete(m, name) })
		if g := nested(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("Without(%v) = %#v\nwant %#v", p, g, want)
		}
		if verr := validate(got); verr != nil {
			t.Fatal(verr)
		}

		keep := rapid.SliceOfNDistinct(rapid.SampledFrom(paths), 1, 3, func(p []string) string { return strings.Join(p, ".") }).Draw(t, "keep")
		dotted := make([]string, len(keep))
		for i, k := range keep {
			dotted[i] = strings.Join(k, ".")
		}
		only, err := st.WithOnly(dotted...)
		if err != nil {
			t.Fatal(err)
		}
		if verr := validate(only); verr != nil {
			t.Fatal(verr)
		}
		if g, w := nested(only), naiveWithOnly(nested(st), spec, len(spec.Shape), keep); !reflect.DeepEqual(g, w) {
			t.Fatalf("WithOnly(%v) = %#v\nwant %#v", dotted, g, w)
		}
		// Kept whole fields are shared.
		for _, k := range keep {
			if len(k) == 1 {
				a, _ := st.Field(k[0])
				b, _ := only.Field(k[0])
				if a != b {
					t.Fatalf("WithOnly copied %v", k)
				}
			}
		}
	})
}

// naiveWithOnly keeps the paths in each structure's map.
func naiveWithOnly(x any, spec *StructSpec, depth int, keep [][]string) any {
	if depth > 0 {
		l := x.([]any)
		out := make([]any, len(l))
		for i := range l {
			out[i] = naiveWithOnly(l[i], spec, depth-1, keep)
		}
		return out
	}
	m := x.(map[string]any)
	out := map[string]any{}
	whole := map[string]bool{}
	sub := map[string][][]string{}
	for _, k := range keep {
		if len(k) == 1 {
			whole[k[0]] = true
		} else {
			sub[k[0]] = append(sub[k[0]], k[1:])
		}
	}
	for name, v := range m {
		if whole[name] {
			out[name] = v
		} else if sub[name] != nil {
			fs, _ := spec.Field(name)
			cs := fs.(*StructSpec)
			out[name] = naiveWithOnly(v, cs, len(cs.Shape)-len(spec.Shape), sub[name])
		}
	}
	return out
}

// allUniformRagged reports the one documented exception to the
// SplitOuterDims/JoinOuterDims round trip.
func allUniformRagged(v Value) bool {
	r, ok := v.(*Ragged)
	if !ok {
		return false
	}
	for _, p := range r.Partitions() {
		if !p.IsUniform() {
			return false
		}
	}
	return true
}

// TestPropertySplitJoin: JoinOuterDims(SplitOuterDims(v, d)) equals v for
// every full-shape field value v of a random struct and every d.
func TestPropertySplitJoin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genStruct(t, 0)
		var values []Value
		for _, p := range structPaths(s.Spec().(*StructSpec), nil) {
			v, err := s.FieldValue(p...)
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, v)
		}
		if s.Rank() > 0 {
			values = append(values, s)
		}
		for _, v := range values {
			if allUniformRagged(v) {
				continue
			}
			for d := 1; d <= v.Rank(); d++ {
				parts, flat, err := SplitOuterDims(v, d)
				if err != nil {
					t.Fatalf("SplitOuterDims(%v, %d): %v", v.Spec(), d, err)
				}
				back, err := JoinOuterDims(parts, flat)
				if err != nil {
					t.Fatalf("JoinOuterDims after split %d of %v: %v", d, v.Spec(), err)
				}
				if !Equal(back, v) || !back.Spec().Equal(v.Spec()) {
					t.Fatalf("split/join %d: %v became %v", d, v.Spec(), back.Spec())
				}
			}
		}
	})
}
