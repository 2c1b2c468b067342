package structtensor

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// m and l keep the literal Go values in the tables short.
type m = map[string]any
type l = []any

func splitsOf(t *testing.T, v Value) [][]int64 {
	t.Helper()
	var parts []*RowPartition
	switch x := v.(type) {
	case *Ragged:
		parts = x.Partitions()
	case *StructTensor:
		parts = x.Partitions()
	}
	out := make([][]int64, len(parts))
	for i, p := range parts {
		out[i] = p.RowSplits()
	}
	return out
}

func mustFromValue(t *testing.T, v any, spec ...Spec) Value {
	t.Helper()
	x, err := FromValue(v, spec...)
	if err != nil {
		t.Fatalf("FromValue(%v): %v", v, err)
	}
	return x
}

// TestFromValueTensorFlow checks the StructuredTensor.from_pyval
// behaviours named in issue 2 (shapes, kinds and partitions as TensorFlow
// 2.21 prints them for the same Python values).
func TestFromValueTensorFlow(t *testing.T) {
	t.Run("scalar struct", func(t *testing.T) {
		x := mustFromValue(t, m{"a": 12, "b": l{1, 2, 3}, "c": l{l{1, 2}, l{3}}})
		st := x.(*StructTensor)
		if !st.Shape().Equal(Shape{}) {
			t.Errorf("shape %v, want []", st.Shape())
		}
		want := map[string]Spec{
			"a": &TensorSpec{DType: Int64, Shape: Shape{}},
			"b": &TensorSpec{DType: Int64, Shape: Shape{3}},
			"c": &RaggedSpec{DType: Int64, Shape: Shape{2, Unknown}, RaggedRank: 1},
		}
		for name, ws := range want {
			f, err := st.FieldValue(name)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Spec().Equal(ws) {
				t.Errorf("field %s: %v, want %v", name, f.Spec(), ws)
			}
		}
	})
	t.Run("ragged struct", func(t *testing.T) {
		x := mustFromValue(t, l{l{m{"a": 1}, m{"a": 2}, m{"a": 3}}, l{m{"a": 4}, m{"a": 5}}})
		if !x.Shape().Equal(Shape{2, Unknown}) {
			t.Errorf("shape %v, want [2, None]", x.Shape())
		}
		a, err := x.(*StructTensor).FieldValue("a")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ToValue(a), (l{l{int64(1), int64(2), int64(3)}, l{int64(4), int64(5)}}); !reflect.DeepEqual(got, want) {
			t.Errorf("a = %v, want %v", got, want)
		}
	})
	t.Run("three levels", func(t *testing.T) {
		x := m{}
		v := mustFromValue(t, l{l{l{x, x}, l{x}}, l{l{x, x}}, l{l{x, x}, l{x}}})
		if got, want := splitsOf(t, v), [][]int64{{0, 2, 3, 5}, {0, 2, 3, 5, 7, 8}}; !reflect.DeepEqual(got, want) {
			t.Errorf("partitions %v, want %v", got, want)
		}
		if !v.Shape().Equal(Shape{3, Unknown, Unknown}) {
			t.Errorf("shape %v", v.Shape())
		}
	})
	t.Run("empty structs", func(t *testing.T) {
		v := mustFromValue(t, l{m{}, m{}, m{}})
		st, ok := v.(*StructTensor)
		if !ok || !st.Shape().Equal(Shape{3}) || st.NumFields() != 0 {
			t.Errorf("got %v, want a struct of shape [3] with no fields", v.Spec())
		}
	})
	t.Run("RFC matrix", func(t *testing.T) {
		// The RFC's 2x2 example: "raz" has y = [] where the others have
		// lists of lists, which is an empty list at a shallower depth.
		v := mustFromValue(t, l{
			l{m{"x": "foo", "y": l{l{1, 2}, l{3}}}, m{"x": "bar", "y": l{l{4}, l{5, 6}}}},
			l{m{"x": "baz", "y": l{l{7, 8, 9}}}, m{"x": "raz", "y": l{}}},
		})
		y, err := v.(*StructTensor).FieldValue("y")
		if err != nil {
			t.Fatal(err)
		}
		want := &RaggedSpec{DType: Int64, Shape: Shape{2, Unknown, Unknown, Unknown}, RaggedRank: 3}
		if !y.Spec().Equal(want) {
			t.Errorf("y: %v, want %v", y.Spec(), want)
		}
	})
	t.Run("int and float widen", func(t *testing.T) {
		v := mustFromValue(t, l{m{"a": 1}, m{"a": 2.5}})
		a, _ := v.(*StructTensor).Field("a")
		if a.Spec().(*TensorSpec).DType != Float64 {
			t.Errorf("a: %v, want float64", a.Spec())
		}
	})
	t.Run("empty lists are float32", func(t *testing.T) {
		v := mustFromValue(t, m{"a": l{}, "b": l{l{}, l{}}})
		for _, f := range v.(*StructTensor).Fields() {
			if dt := f.Value.Spec(); !strings.Contains(dt.String(), "float32") {
				t.Errorf("%s: %v, want float32", f.Name, dt)
			}
		}
	})
}

func TestFromValueErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		spec Spec
		is   error
		want string // substring of the message
	}{
		{"dtype conflict", l{m{"a": 1}, m{"a": "c"}}, nil, ErrInference, `field "a" at [1]: int64 vs string`},
		{"missing field", l{m{"a": l{1, 2}}, m{"b": l{3, 4}}}, nil, ErrInference, `field "b" is missing from earlier elements`},
		{"missing field later", l{m{"a": 1, "b": 2}, m{"a": 3}}, nil, ErrInference, `at [1]: missing field "b"`},
		// The RFC's three values that cannot be encoded.
		{"RFC dtypes", l{m{"a": 1}, m{"a": "hello"}}, nil, ErrInference, `field "a" at [1]: int64 vs string`},
		{"RFC ranks", l{m{"b": l{1, 2, 3}}, m{"b": l{l{1, 2}, l{3, 4}}}}, nil, ErrInference, `field "b" at [1] element [0]: int64 at depth 1 vs list at depth 1 (different ranks)`},
		{"RFC nested fields", l{m{"c": m{"x": 1}}, m{"c": m{"y": 1}}}, nil, ErrInference, `field "c" at [1]: field "y" is missing from earlier elements`},
		{"structs and scalars", l{l{m{"a": 1}}, 5}, nil, ErrInference, `at [1]: struct at depth 2 vs int64 at depth 1 (different ranks)`},
		{"scalars then struct", l{1, m{"a": 1}}, nil, ErrInference, `at [1]: int64 vs struct`},
		{"list depths", l{l{1}, l{l{2}}}, nil, ErrInference, `at [1][0]: int64 at depth 2 vs list at depth 2 (different ranks)`},
		{"deeper empty list", l{l{l{}}, l{1}}, nil, ErrInference, `at [1][0]: lists nested 3 deep vs int64 at depth 2`},
		{"nil", m{"a": nil}, nil, ErrInference, `field "a": nil value`},
		{"bad name", m{"a b": 1}, nil, ErrFieldName, `"a b"`},
		{"int32 vs int64", l{int32(1), int64(2)}, nil, ErrInference, `at [1]: int32 vs int64`},
		{"negative then uint64", l{-1, uint64(math.MaxUint64)}, nil, ErrInference, `at [1]: int64 with negative values`},
		{"unsupported", l{struct{}{}}, nil, ErrInference, `unsupported Go type`},
		{"spec dense length", l{l{1, 2}, l{3}}, &TensorSpec{DType: Int64, Shape: Shape{2, 2}}, ErrSpec, `list of length 1, expected 2`},
		{"spec dtype", l{1, "x"}, &TensorSpec{DType: Int64, Shape: Shape{Unknown}}, ErrSpec, `at [1]: int64 vs string`},
		{"spec int32 range", l{int64(1) << 40}, &TensorSpec{DType: Int32, Shape: Shape{1}}, ErrSpec, `at [0]: 1099511627776 out of range for int32`},
		{"spec uint negative", l{-1}, &TensorSpec{DType: Uint64, Shape: Shape{1}}, ErrSpec, `at [0]: -1 out of range for uint64`},
		{"spec float for int", l{1.5}, &TensorSpec{DType: Int64, Shape: Shape{1}}, ErrSpec, `at [0]: int64 vs float64`},
		{"spec unknown field", m{"a": 1, "z": 2}, &StructSpec{Shape: Shape{}, Fields: []FieldSpec{{"a", &TensorSpec{DType: Int64, Shape: Shape{}}}}}, ErrSpec, `field "z" is not in the spec`},
		{"spec missing field", l{m{}}, &StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{{"a", &TensorSpec{DType: Int64, Shape: Shape{Unknown}}}}}, ErrSpec, `at [0]: missing field "a"`},
		{"spec rank", l{l{1}}, &TensorSpec{DType: Int64, Shape: Shape{Unknown}}, ErrSpec, `at [0]: expected int64, got a list`},
		{"spec rank low", l{1}, &RaggedSpec{DType: Int64, Shape: Shape{Unknown, Unknown}, RaggedRank: 1}, ErrSpec, `at [0]: expected a list, got int64`},
		{"spec nrows", l{1, 2}, &TensorSpec{DType: Int64, Shape: Shape{3}}, ErrSpec, `list of length 2, expected 3`},
		{"spec field path", l{m{"a": l{1}}, m{"a": l{"x"}}}, &StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{{"a", &RaggedSpec{DType: Int64, Shape: Shape{Unknown, Unknown}, RaggedRank: 1}}}}, ErrSpec, `field "a" at [1] element [0]: int64 vs string`},
		{"spec uniform partition", l{m{"a": l{1}}, m{"a": l{2, 3}}}, &StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{{"a", &RaggedSpec{DType: Int64, Shape: Shape{Unknown, 1}, RaggedRank: 1}}}}, ErrSpec, `field "a" at [1]: list of length 2, expected 1`},
		{"bad spec", 1, &RaggedSpec{DType: Int64, Shape: Shape{2}, RaggedRank: 1}, ErrSpec, `ragged_rank 1 for rank 1`},
		{"bad field spec", m{"a": 1}, &StructSpec{Shape: Shape{2}, Fields: []FieldSpec{{"a", &TensorSpec{DType: Int64, Shape: Shape{}}}}}, ErrSpec, `does not begin with the struct's shape`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec []Spec
			if tc.spec != nil {
				spec = append(spec, tc.spec)
			}
			v, err := FromValue(tc.v, spec...)
			if err == nil {
				t.Fatalf("FromValue(%v) = %v, want an error", tc.v, v.Spec())
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines", err)
			}
		})
	}
}

func TestFromValueCycle(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	list := []any{nil}
	list[0] = list
	type selfList []selfList
	typed := selfList{nil}
	typed[0] = typed
	for _, v := range []any{cyclic, list, typed} {
		if _, err := FromValue(v); !errors.Is(err, ErrInference) || !strings.Contains(err.Error(), "cyclic") {
			t.Errorf("FromValue(cyclic): %v, want a cyclic-value error", err)
		}
	}
}

func TestFromValueSpecOverrides(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		spec Spec
		want any // ToValue of the result
	}{
		{"dense inner dims", l{l{1, 2}, l{3, 4}}, &TensorSpec{DType: Int64, Shape: Shape{Unknown, 2}}, l{l{int64(1), int64(2)}, l{int64(3), int64(4)}}},
		{"int32", l{1, -2}, &TensorSpec{DType: Int32, Shape: Shape{2}}, l{int32(1), int32(-2)}},
		{"uint32", l{uint64(7)}, &TensorSpec{DType: Uint32, Shape: Shape{1}}, l{uint32(7)}},
		{"uint64 exact", l{uint64(math.MaxUint64)}, &TensorSpec{DType: Uint64, Shape: Shape{1}}, l{uint64(math.MaxUint64)}},
		{"float32 from ints", l{1, 2.5}, &TensorSpec{DType: Float32, Shape: Shape{2}}, l{float32(1), float32(2.5)}},
		{"float64 from json.Number", l{json.Number("1"), json.Number("0.1")}, &TensorSpec{DType: Float64, Shape: Shape{2}}, l{1.0, 0.1}},
		{"non-finite strings", l{"NaN", "Infinity", "-Infinity"}, &TensorSpec{DType: Float64, Shape: Shape{3}}, nil},
		{"ragged rank 1 of 2", l{l{l{1, 2}}, l{}}, &RaggedSpec{DType: Int64, Shape: Shape{2, Unknown, 2}, RaggedRank: 1}, l{l{l{int64(1), int64(2)}}, l{}}},
		{"uniform partition", l{l{1, 2}, l{3, 4}}, &RaggedSpec{DType: Int64, Shape: Shape{2, 2}, RaggedRank: 1}, l{l{int64(1), int64(2)}, l{int64(3), int64(4)}}},
		{"spec field order", m{"b": 1, "a": "x"}, &StructSpec{Shape: Shape{}, Fields: []FieldSpec{{"b", &TensorSpec{DType: Int64, Shape: Shape{}}}, {"a", &TensorSpec{DType: String, Shape: Shape{}}}}}, m{"b": int64(1), "a": "x"}},
		{"uniform struct", l{l{m{"a": 1}}, l{m{"a": 2}}}, &StructSpec{Shape: Shape{2, 1}, Fields: []FieldSpec{{"a", &TensorSpec{DType: Int64, Shape: Shape{2, 1}}}}}, l{l{m{"a": int64(1)}}, l{m{"a": int64(2)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := mustFromValue(t, tc.v, tc.spec)
			if !x.Spec().IsCompatibleWith(tc.spec) {
				t.Errorf("spec %v, want %v", x.Spec(), tc.spec)
			}
			if tc.want != nil && !reflect.DeepEqual(ToValue(x), tc.want) {
				t.Errorf("ToValue = %#v, want %#v", ToValue(x), tc.want)
			}
			if st, ok := x.(*StructTensor); ok {
				if got, want := st.FieldNames(), specFieldNames(tc.spec); !slices.Equal(got, want) {
					t.Errorf("fields %v, want %v", got, want)
				}
			}
		})
	}
	x := mustFromValue(t, l{"NaN", "Infinity", "-Infinity"}, &TensorSpec{DType: Float32, Shape: Shape{3}})
	f := x.(*Tensor).Float32s()
	if !math.IsNaN(float64(f[0])) || !math.IsInf(float64(f[1]), 1) || !math.IsInf(float64(f[2]), -1) {
		t.Errorf("non-finite strings: %v", f)
	}
}

func specFieldNames(s Spec) []string {
	var out []string
	for _, f := range s.(*StructSpec).Fields {
		out = append(out, f.Name)
	}
	return out
}

func TestFromValueGoTypes(t *testing.T) {
	for _, tc := range []struct {
		v    any
		spec string
	}{
		{[]int64{1, 2}, "TensorSpec([2], int64)"},
		{[]int{1, 2}, "TensorSpec([2], int64)"},
		{[]string{"a"}, "TensorSpec([1], string)"},
		{[][]float32{{1}, {2, 3}}, "RaggedTensorSpec([2, None], float32, ragged_rank=1)"},
		{[2][]uint8{{1}, {}}, "TensorSpec([2], string)"},
		{[][]uint16{{1}, {}}, "RaggedTensorSpec([2, None], uint32, ragged_rank=1)"},
		{[]byte("raw"), "TensorSpec([], string)"},
		{[][]byte{[]byte("x")}, "TensorSpec([1], string)"},
		{map[string]int32{"a": 1}, "StructSpec([], {a: TensorSpec([], int32)})"},
		{[]map[string]any{{"a": true}}, "StructSpec([1], {a: TensorSpec([1], bool)})"},
		{json.Number("18446744073709551615"), "TensorSpec([], uint64)"},
		{json.Number("1e3"), "TensorSpec([], float64)"},
		{uint(3), "TensorSpec([], uint64)"},
		{int16(3), "TensorSpec([], int32)"},
	} {
		x, err := FromValue(tc.v)
		if err != nil {
			t.Errorf("FromValue(%#v): %v", tc.v, err)
			continue
		}
		if got := x.Spec().String(); got != tc.spec {
			t.Errorf("FromValue(%#v) spec %s, want %s", tc.v, got, tc.spec)
		}
	}
}

func TestToValueTyped(t *testing.T) {
	x := mustFromValue(t, m{
		"i32": int32(1), "i64": int64(2), "u32": uint32(3), "u64": uint64(4),
		"f32": float32(5), "f64": 6.5, "b": true, "s": "x", "r": l{l{int64(1)}, l{}},
		"st": l{m{"x": "a"}, m{"x": "b"}},
	})
	want := m{
		"i32": int32(1), "i64": int64(2), "u32": uint32(3), "u64": uint64(4),
		"f32": float32(5), "f64": 6.5, "b": true, "s": "x", "r": l{l{int64(1)}, l{}},
		"st": l{m{"x": "a"}, m{"x": "b"}},
	}
	if got := ToValue(x); !reflect.DeepEqual(got, want) {
		t.Errorf("ToValue = %#v\nwant %#v", got, want)
	}
	if got := x.(*StructTensor).ToValue(); !reflect.DeepEqual(got, want) {
		t.Errorf("method ToValue differs: %#v", got)
	}
}

// The generators below draw a random schema (a tree of value positions),
// then random Go values that fit it, and from the schema the exact Spec
// those values have. Positions cover dense, uniform and ragged dimensions,
// every dtype and nested structs, for values of rank 0 to 3.

type dimKind uint8

const (
	dimRagged dimKind = iota
	dimUniform
	dimDense
)

type schemaDim struct {
	kind dimKind
	n    int // length for uniform and dense dimensions
}

// schema describes one value position: the list dimensions of one
// occurrence, then a scalar of dtype or a struct of fields.
type schema struct {
	dims     []schemaDim
	isStruct bool
	dtype    DType
	fields   []schemaField
	shuffled bool // fields not in name order
}

type schemaField struct {
	name string
	s    *schema
}

var allDTypes = []DType{Bool, Int32, Int64, Uint32, Uint64, Float32, Float64, String}

// drawSchema draws a position. rank0 positions have one occurrence (the
// top-level value, a field of a scalar struct), whose first dimension is
// the value's outer dimension rather than a partition.
func drawSchema(t *rapid.T, depth int, rank0 bool, maxRank int, label string) *schema {
	s := &schema{}
	s.isStruct = depth < 3 && rapid.IntRange(0, 2).Draw(t, label+"struct") == 0
	ndims := rapid.IntRange(0, maxRank).Draw(t, label+"ndims")
	dense := false
	for i := 0; i < ndims; i++ {
		k := dimKind(rapid.IntRange(0, 2).Draw(t, label+"dim"))
		if s.isStruct && k == dimDense {
			k = dimUniform
		}
		if rank0 && i == 0 && k == dimDense {
			k = dimUniform // the outer dimension is never a partition
		}
		if dense && !(rank0 && i == 0) {
			k = dimDense // dense dimensions are innermost
		}
		if k == dimDense {
			dense = true
		}
		d := schemaDim{kind: k}
		if k != dimRagged {
			d.n = rapid.IntRange(0, 3).Draw(t, label+"len")
		}
		s.dims = append(s.dims, d)
	}
	if !s.isStruct {
		s.dtype = rapid.SampledFrom(allDTypes).Draw(t, label+"dtype")
		return s
	}
	names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "c", "x_1", "Y"}), 0, 3, rapid.ID[string]).
		Draw(t, label+"fields")
	s.shuffled = !slices.IsSorted(names)
	fieldRank0 := rank0 && ndims == 0
	for _, name := range names {
		s.fields = append(s.fields, schemaField{name, drawSchema(t, depth+1, fieldRank0, 2, label+name+".")})
	}
	return s
}

// inferred reports whether the position's values are in the form FromValue
// infers without a spec: all partitions ragged, no dense inner dimensions
// (but the outer dimension of a rank-0 position) and fields in name order.
func (s *schema) inferred(rank0 bool) bool {
	for i, d := range s.dims {
		if rank0 && i == 0 {
			continue
		}
		if d.kind != dimRagged {
			return false
		}
	}
	if s.shuffled {
		return false
	}
	fieldRank0 := rank0 && len(s.dims) == 0
	for _, f := range s.fields {
		if !f.s.inferred(fieldRank0) {
			return false
		}
	}
	return true
}

// spec returns the full spec of the position under a struct of shape
// prefix (nil for a rank-0 position).
func (s *schema) spec(prefix Shape, rank0 bool) Spec {
	shape := prefix.clone()
	k := 0 // own partitions
	for i, d := range s.dims {
		if d.kind == dimRagged {
			shape = append(shape, Unknown)
		} else {
			shape = append(shape, d.n)
		}
		if d.kind != dimDense && !(rank0 && i == 0) {
			k++
		}
	}
	if s.isStruct {
		st := &StructSpec{Shape: shape}
		for _, f := range s.fields {
			st.Fields = append(st.Fields, FieldSpec{f.name, f.s.spec(shape, len(shape) == 0)})
		}
		return st
	}
	if rank0 {
		if k == 0 {
			return &TensorSpec{DType: s.dtype, Shape: shape}
		}
		return &RaggedSpec{DType: s.dtype, Shape: shape, RaggedRank: k}
	}
	uniform := Shape(prefix[1:]).IsFullyKnown()
	if k == 0 && uniform {
		return &TensorSpec{DType: s.dtype, Shape: shape}
	}
	return &RaggedSpec{DType: s.dtype, Shape: shape, RaggedRank: len(prefix) - 1 + k}
}

// draw draws one occurrence of the position.
func (s *schema) draw(t *rapid.T, dims []schemaDim, utf8Only bool) any {
	if len(dims) > 0 {
		n := dims[0].n
		if dims[0].kind == dimRagged {
			n = rapid.IntRange(0, 3).Draw(t, "n")
		}
		out := make([]any, n)
		for i := range out {
			out[i] = s.draw(t, dims[1:], utf8Only)
		}
		return out
	}
	if s.isStruct {
		out := map[string]any{}
		for _, f := range s.fields {
			out[f.name] = f.s.draw(t, f.s.dims, utf8Only)
		}
		return out
	}
	return drawScalar(t, s.dtype, utf8Only)
}

func drawScalar(t *rapid.T, dt DType, utf8Only bool) any {
	switch dt {
	case Bool:
		return rapid.Bool().Draw(t, "bool")
	case Int32:
		return rapid.Int32().Draw(t, "int32")
	case Int64:
		return rapid.Int64().Draw(t, "int64")
	case Uint32:
		return rapid.Uint32().Draw(t, "uint32")
	case Uint64:
		return rapid.Uint64().Draw(t, "uint64")
	case Float32:
		return rapid.Float32().Filter(func(f float32) bool { return !math.IsNaN(float64(f)) }).Draw(t, "float32")
	case Float64:
		return rapid.Float64().Filter(func(f float64) bool { return !math.IsNaN(f) }).Draw(t, "float64")
	}
	if utf8Only {
		return rapid.String().Draw(t, "string")
	}
	return string(rapid.SliceOfN(rapid.Byte(), 0, 6).Draw(t, "bytes"))
}

// drawValue draws a schema for a value of rank 0 to 3, Go values fitting
// it, and their spec.
func drawValue(t *rapid.T, utf8Only bool) (*schema, any, Spec) {
	s := drawSchema(t, 0, true, 3, "")
	v := s.draw(t, s.dims, utf8Only)
	return s, v, s.spec(nil, true)
}

// notInferable reports whether x holds something inference cannot see:
// a scalar column with no values whose dtype is not float32, lists whose
// depth no value reveals (no list at the innermost level), or a struct
// with no elements.
func notInferable(x Value) bool {
	switch v := x.(type) {
	case *Tensor:
		return v.Len() == 0 && v.DType() != Float32
	case *Ragged:
		if v.Values().Len() > 0 {
			return false
		}
		parts := v.Partitions()
		return v.DType() != Float32 || parts[len(parts)-1].NumRows() == 0
	case *StructTensor:
		if v.NumElements() == 0 {
			return true
		}
		for _, f := range v.Fields() {
			if notInferable(f.Value) {
				return true
			}
		}
	}
	return false
}

func TestFromValueRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, v, spec := drawValue(t, false)
		x, err := FromValue(v, spec)
		if err != nil {
			t.Fatalf("FromValue(%#v, %v): %v", v, spec, err)
		}
		if got := outerUnknown(x.Spec()); !got.Equal(outerUnknown(spec)) {
			t.Fatalf("spec %v, want %v", got, spec)
		}
		if got := ToValue(x); !reflect.DeepEqual(got, v) {
			t.Fatalf("ToValue = %#v, want %#v", got, v)
		}
		back, err := FromValue(ToValue(x), x.Spec())
		if err != nil || !Equal(back, x) {
			t.Fatalf("FromValue(ToValue(x), x.Spec()) = %v, %v", back, err)
		}
		if s.inferred(true) && !notInferable(x) {
			back, err := FromValue(ToValue(x))
			if err != nil {
				t.Fatalf("FromValue(ToValue(x)) of inferred form %v: %v", spec, err)
			}
			if !Equal(back, x) {
				t.Fatalf("FromValue(ToValue(x)) = %v, want %v", back.Spec(), spec)
			}
		}
	})
}

// outerUnknown returns s with the outer dimensions of rank-0 positions
// (which the schema leaves unknown) set to Unknown.
func outerUnknown(s Spec) Spec {
	if st, ok := s.(*StructSpec); ok && len(st.Shape) == 0 {
		out := &StructSpec{Shape: Shape{}}
		for _, f := range st.Fields {
			out.Fields = append(out.Fields, FieldSpec{f.Name, outerUnknown(f.Spec)})
		}
		return out
	}
	return clearDim0(s)
}

func clearDim0(s Spec) Spec {
	switch x := s.(type) {
	case *TensorSpec:
		return &TensorSpec{DType: x.DType, Shape: withDim0Unknown(x.Shape)}
	case *RaggedSpec:
		return &RaggedSpec{DType: x.DType, Shape: withDim0Unknown(x.Shape), RaggedRank: x.RaggedRank}
	case *StructSpec:
		out := &StructSpec{Shape: withDim0Unknown(x.Shape)}
		for _, f := range x.Fields {
			out.Fields = append(out.Fields, FieldSpec{f.Name, clearDim0(f.Spec)})
		}
		return out
	}
	return s
}

func withDim0Unknown(s Shape) Shape {
	s = s.clone()
	if len(s) > 0 {
		s[0] = Unknown
	}
	return s
}
