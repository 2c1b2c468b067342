package structtensor

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// mustT, mustR and mustS build test values and stop the test on error.
func mustT(t testing.TB, shape Shape, values any) *Tensor {
	t.Helper()
	x, err := NewTensor(shape, values)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func mustR(t testing.TB, values *Tensor, splits ...[]int64) *Ragged {
	t.Helper()
	r, err := NewRaggedFromSplits(values, splits...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustP(t testing.TB, splits ...int64) *RowPartition {
	t.Helper()
	p, err := NewRowSplits(splits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustU(t testing.TB, nrows, rowLen int) *RowPartition {
	t.Helper()
	p, err := NewUniformPartition(nrows, rowLen)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRowPartitionValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		splits  []int64
		lengths []int64
		want    string // "" for success, else a substring of the error
	}{
		{name: "ok", splits: []int64{0, 2, 2, 5}},
		{name: "only zero", splits: []int64{0}},
		{name: "empty", splits: []int64{}, want: "empty"},
		{name: "nonzero start", splits: []int64{1, 2}, want: "row_splits[0] = 1"},
		{name: "decreasing", splits: []int64{0, 3, 2}, want: "decrease at 2"},
		{name: "lengths ok", lengths: []int64{2, 0, 3}},
		{name: "negative length", lengths: []int64{2, -1}, want: "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *RowPartition
			var err error
			if tc.lengths != nil {
				p, err = NewRowLengths(tc.lengths)
			} else {
				p, err = NewRowSplits(tc.splits)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := validatePartition(p); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrPartition) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrPartition containing %q", err, tc.want)
			}
		})
	}
	if _, err := NewUniformPartition(-1, 2); !errors.Is(err, ErrPartition) {
		t.Errorf("negative uniform rows: err = %v", err)
	}
	p, _ := NewRowLengths([]int64{2, 0, 3})
	if got := p.RowSplits(); !sliceEqual(got, []int64{0, 2, 2, 5}) {
		t.Errorf("RowSplits = %v", got)
	}
	u := mustU(t, 3, 2)
	if got := u.RowSplits(); !sliceEqual(got, []int64{0, 2, 4, 6}) {
		t.Errorf("uniform RowSplits = %v", got)
	}
	if !u.Equal(mustP(t, 0, 2, 4, 6)) || u.Equal(mustP(t, 0, 1, 4, 6)) {
		t.Errorf("uniform vs ragged Equal is wrong")
	}
}

// TestLastSplitMustMatchValues checks the third partition rule, which
// needs the values: the last split must equal their number.
func TestLastSplitMustMatchValues(t *testing.T) {
	vals := mustT(t, nil, []int64{1, 2, 3})
	for _, splits := range [][]int64{{0, 1, 2}, {0, 2, 4}} {
		_, err := NewRaggedFromSplits(vals, splits)
		if !errors.Is(err, ErrPartition) {
			t.Errorf("splits %v over 3 values: err = %v, want ErrPartition", splits, err)
		}
	}
	_, err := NewRaggedFromSplits(vals, []int64{0, 2}, []int64{0, 1, 2})
	if !errors.Is(err, ErrPartition) {
		t.Errorf("non-nesting partitions: err = %v", err)
	}
	if _, err := NewRagged(vals); !errors.Is(err, ErrPartition) {
		t.Errorf("no partitions: err = %v", err)
	}
	if _, err := NewRagged(nil, mustP(t, 0, 3)); !errors.Is(err, ErrShape) {
		t.Errorf("nil values: err = %v", err)
	}
	if _, err := NewRagged(vals, nil); !errors.Is(err, ErrPartition) {
		t.Errorf("nil partition: err = %v", err)
	}
	scalar, _ := NewScalar(int64(1))
	if _, err := NewRagged(scalar, mustP(t, 0, 1)); !errors.Is(err, ErrShape) {
		t.Errorf("scalar values: err = %v", err)
	}
	if _, err := NewPartitionedStruct(2, []*RowPartition{mustP(t, 0, 1, 3)}, Field{"a", vals}); err != nil {
		t.Errorf("valid partitioned struct: %v", err)
	}
	if _, err := NewPartitionedStruct(2, []*RowPartition{mustP(t, 0, 1, 2)}, Field{"a", vals}); !errors.Is(err, ErrShape) {
		t.Errorf("field rows != last split: err = %v", err)
	}
	if _, err := NewPartitionedStruct(3, []*RowPartition{mustP(t, 0, 1, 3)}); !errors.Is(err, ErrPartition) {
		t.Errorf("nrows != outer partition rows: err = %v", err)
	}
}

func TestTensorConstruction(t *testing.T) {
	if _, err := NewTensor(Shape{2, 2}, []int64{1, 2, 3}); !errors.Is(err, ErrShape) {
		t.Errorf("3 values for [2,2]: err = %v", err)
	}
	if _, err := NewTensor(Shape{-1}, []int64{}); !errors.Is(err, ErrShape) {
		t.Errorf("unknown dim: err = %v", err)
	}
	if _, err := NewTensor(nil, []int{1}); !errors.Is(err, ErrDType) {
		t.Errorf("[]int: err = %v", err)
	}
	s := mustT(t, Shape{2, 1}, []string{"héllo", "x"})
	if s.DType() != String || !s.UTF8() || string(s.StringAt(0)) != "héllo" || s.Elem(1) != "x" {
		t.Errorf("string tensor = %v %v %q", s.DType(), s.UTF8(), s.StringAt(0))
	}
	for _, tc := range []struct {
		data    string
		offsets []int64
		want    bool
	}{
		{"", []int64{0}, true},
		{"\xc3\xa9", []int64{0, 1, 2}, false}, // halves of "é": the whole is valid, no part is
		{"\xc3\xa9", []int64{0, 2, 2}, true},
		{"a\xc3\xa9", []int64{1, 3}, true},
		{"\xa9\xc3\xa9", []int64{1, 3}, true}, // bytes outside the strings are not looked at
		{"x\xe2\x82\xacy", []int64{0, 1, 3, 5}, false},
		{"x\xe2\x82\xacy", []int64{0, 1, 4, 5}, true},
		{"\xff", []int64{0, 1}, false},
	} {
		if got := ValidUTF8Strings([]byte(tc.data), tc.offsets); got != tc.want {
			t.Errorf("ValidUTF8Strings(%q, %v) = %v, want %v", tc.data, tc.offsets, got, tc.want)
		}
		if s, err := NewStringTensor(nil, []byte(tc.data), tc.offsets, false); err != nil || s.ValidateUTF8() != tc.want {
			t.Errorf("ValidateUTF8 of %q %v = %v (%v), want %v", tc.data, tc.offsets, s.ValidateUTF8(), err, tc.want)
		}
	}
	b := mustT(t, nil, [][]byte{{0xff}, nil})
	if b.UTF8() || b.ValidateUTF8() || b.Len() != 2 {
		t.Errorf("binary tensor marked UTF-8")
	}
	for _, tc := range []struct {
		shape   Shape
		data    []byte
		offsets []int64
	}{
		{Shape{2}, []byte("abc"), []int64{0, 1}},
		{Shape{1}, []byte("abc"), []int64{-1, 1}},
		{Shape{2}, []byte("abc"), []int64{0, 2, 1}},
		{Shape{1}, []byte("abc"), []int64{0, 4}},
		{nil, []byte("abc"), nil},
	} {
		if _, err := NewStringTensor(tc.shape, tc.data, tc.offsets, true); !errors.Is(err, ErrShape) {
			t.Errorf("NewStringTensor(%v, %q, %v): err = %v", tc.shape, tc.data, tc.offsets, err)
		}
	}
	st, err := NewStringTensor(nil, []byte("xxabc"), []int64{2, 3, 5}, true)
	if err != nil || st.Elem(1) != "bc" {
		t.Errorf("offset string tensor: %v %v", st, err)
	}
	m := mustT(t, Shape{3, 2}, []int32{1, 2, 3, 4, 5, 6})
	rows, err := m.SliceRows(1, 3)
	if err != nil || !rows.Shape().Equal(Shape{2, 2}) || rows.Int32s()[0] != 3 {
		t.Fatalf("SliceRows = %v, %v", rows, err)
	}
	if &rows.Int32s()[0] != &m.Int32s()[2] {
		t.Errorf("SliceRows copied")
	}
	for _, r := range [][2]int{{-1, 1}, {2, 1}, {0, 4}} {
		if _, err := m.SliceRows(r[0], r[1]); !errors.Is(err, ErrIndex) {
			t.Errorf("SliceRows(%d, %d): err = %v", r[0], r[1], err)
		}
	}
	if _, err := m.Reshape(Shape{4}); !errors.Is(err, ErrShape) {
		t.Errorf("Reshape to 4: err = %v", err)
	}
	if e := EmptyTensor(String, 3); e.Len() != 0 || !e.Shape().Equal(Shape{0, 3}) {
		t.Errorf("EmptyTensor = %v", e.Shape())
	}
	for _, v := range []any{true, int32(1), int64(1), 1, uint32(1), uint64(1), float32(1), 1.0, "s", []byte("b")} {
		x, err := NewScalar(v)
		if err != nil || x.Rank() != 0 || x.Len() != 1 {
			t.Errorf("NewScalar(%T) = %v, %v", v, x, err)
		}
	}
	if _, err := NewScalar(struct{}{}); !errors.Is(err, ErrDType) {
		t.Errorf("NewScalar(struct): err = %v", err)
	}
}

func TestFieldNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "Ab_9": true, "x_": true, "Z": true,
		"": false, "_a": false, "9a": false, "a-b": false, "a.b": false, "é": false, "a b": false,
	} {
		if got := ValidFieldName(name); got != ok {
			t.Errorf("ValidFieldName(%q) = %v", name, got)
		}
		_, err := NewScalarStruct(Field{name, mustT(t, nil, []int64{1})})
		if ok != (err == nil) || (!ok && !errors.Is(err, ErrFieldName)) {
			t.Errorf("NewScalarStruct with field %q: err = %v", name, err)
		}
	}
	x := mustT(t, nil, []int64{1})
	if _, err := NewScalarStruct(Field{"a", x}, Field{"a", x}); !errors.Is(err, ErrFieldName) {
		t.Errorf("duplicate field: err = %v", err)
	}
	if _, err := NewScalarStruct(Field{"a", nil}); !errors.Is(err, ErrShape) {
		t.Errorf("nil field: err = %v", err)
	}
	if _, err := NewScalarStruct(Field{"a", (*Tensor)(nil)}); !errors.Is(err, ErrShape) {
		t.Errorf("typed nil field: err = %v", err)
	}
}

func TestOuterDimsMustMatch(t *testing.T) {
	three := mustT(t, nil, []int64{1, 2, 3})
	two := mustT(t, nil, []float32{1, 2})
	scalar, _ := NewScalar("s")
	for _, tc := range []struct {
		name   string
		fields []Field
		want   string
	}{
		{"rows differ", []Field{{"a", three}, {"b", two}}, `field "b" has 2 rows`},
		{"scalar in vector", []Field{{"a", scalar}}, `field "a" is a scalar`},
	} {
		_, err := NewStruct(3, tc.fields...)
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrShape with %q", tc.name, err, tc.want)
		}
	}
	// From full-shape fields: the outer partitions must agree.
	r1 := mustR(t, three, []int64{0, 1, 3})
	r2 := mustR(t, mustT(t, nil, []int64{4, 5, 6}), []int64{0, 2, 3})
	if _, err := NewStructFromFieldValues(2, Field{"a", r1}, Field{"b", r2}); !errors.Is(err, ErrShape) {
		t.Errorf("different splits: err = %v", err)
	}
	if _, err := NewStructFromFieldValues(2, Field{"a", r1}, Field{"b", three}); !errors.Is(err, ErrShape) {
		t.Errorf("rank-1 field in rank-2 struct: err = %v", err)
	}
	if _, err := NewStructFromFieldValues(1, Field{"a", three}, Field{"b", two}); !errors.Is(err, ErrShape) {
		t.Errorf("3 vs 2 rows: err = %v", err)
	}
	if _, err := NewStructFromFieldValues(1); !errors.Is(err, ErrShape) {
		t.Errorf("rank 1 without fields: err = %v", err)
	}
	st, err := NewStructFromFieldValues(2, Field{"a", r1}, Field{"b", mustR(t, mustT(t, nil, []string{"x", "y", "z"}), []int64{0, 1, 3})})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Shape().Equal(Shape{2, Unknown}) || st.NumElements() != 3 || st.Partitions()[0] == nil {
		t.Errorf("shape %v, %d elements", st.Shape(), st.NumElements())
	}
	a, _ := st.FieldValue("a")
	if !Equal(a, r1) {
		t.Errorf("FieldValue(a) = %v, want %v", a, r1)
	}
	if _, err := st.FieldValue("nope"); !errors.Is(err, ErrNoField) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("FieldValue(nope): err = %v", err)
	}
	if _, err := st.FieldValue("a", "b"); !errors.Is(err, ErrNoField) || !strings.Contains(err.Error(), "not a struct") {
		t.Errorf("FieldValue(a, b): err = %v", err)
	}
	if _, err := st.FieldValue(); !errors.Is(err, ErrNoField) {
		t.Errorf("FieldValue(): err = %v", err)
	}
}

// splitJoinCases are values of every kind and rank for the round trip of
// SplitOuterDims and JoinOuterDims.
func splitJoinCases(t *testing.T) map[string]Value {
	ints := mustT(t, nil, []int64{1, 2, 3, 4, 5, 6, 7, 8})
	cube, _ := ints.Reshape(Shape{2, 2, 2})
	inner, _ := ints.Reshape(Shape{4, 2})
	vec, _ := NewStruct(4, Field{"v", inner}, Field{"s", mustT(t, nil, []string{"a", "b", "c", "d"})})
	st2, _ := NewPartitionedStruct(2, []*RowPartition{mustP(t, 0, 3, 4)}, vec.Fields()...)
	st3, _ := NewPartitionedStruct(1, []*RowPartition{mustU(t, 1, 2), mustP(t, 0, 3, 4)}, vec.Fields()...)
	nested, _ := NewStruct(2, Field{"inner", st2}, Field{"n", mustT(t, nil, []bool{true, false})})
	return map[string]Value{
		"vector":           ints,
		"cube":             cube,
		"ragged":           mustR(t, ints, []int64{0, 3, 3, 8}),
		"ragged 2":         mustR(t, ints, []int64{0, 2, 3}, []int64{0, 3, 3, 8}),
		"ragged dense in":  mustR(t, inner, []int64{0, 1, 4}),
		"ragged uniform":   &Ragged{values: inner, partitions: []*RowPartition{mustP(t, 0, 1, 2), mustU(t, 2, 2)}},
		"struct rank 1":    vec,
		"struct rank 2":    st2,
		"struct rank 3":    st3,
		"struct of struct": nested,
	}
}

func TestSplitJoinOuterDims(t *testing.T) {
	for name, v := range splitJoinCases(t) {
		for dims := 1; dims <= v.Rank(); dims++ {
			parts, flat, err := SplitOuterDims(v, dims)
			if err != nil {
				t.Errorf("%s: SplitOuterDims(%d): %v", name, dims, err)
				continue
			}
			if len(parts) != dims-1 {
				t.Errorf("%s: SplitOuterDims(%d) gave %d partitions", name, dims, len(parts))
			}
			if err := validate(flat); err != nil {
				t.Errorf("%s: SplitOuterDims(%d) flat value invalid: %v", name, dims, err)
			}
			back, err := JoinOuterDims(parts, flat)
			if err != nil {
				t.Errorf("%s: JoinOuterDims after split %d: %v", name, dims, err)
				continue
			}
			if !Equal(back, v) || !back.Spec().Equal(v.Spec()) {
				t.Errorf("%s: split/join %d dims: got %v, want %v", name, dims, back.Spec(), v.Spec())
			}
		}
		if _, _, err := SplitOuterDims(v, v.Rank()+1); !errors.Is(err, ErrShape) {
			t.Errorf("%s: splitting rank+1 dims: err = %v", name, err)
		}
		if _, _, err := SplitOuterDims(v, 0); !errors.Is(err, ErrShape) {
			t.Errorf("%s: splitting 0 dims: err = %v", name, err)
		}
	}
	scalar, _ := NewScalar(int64(1))
	if _, err := JoinOuterDims([]*RowPartition{mustP(t, 0, 1)}, scalar); !errors.Is(err, ErrShape) {
		t.Errorf("JoinOuterDims on a scalar: err = %v", err)
	}
	if _, err := JoinOuterDims([]*RowPartition{mustP(t, 0, 2)}, mustT(t, nil, []int64{1, 2, 3})); !errors.Is(err, ErrPartition) {
		t.Errorf("JoinOuterDims with wrong count: err = %v", err)
	}
}

func TestSpecs(t *testing.T) {
	cases := splitJoinCases(t)
	specs := []Spec{
		&TensorSpec{DType: Int64, Shape: Shape{}},
		&TensorSpec{DType: Float32, Shape: Shape{Unknown, 3}},
		&RaggedSpec{DType: String, Shape: Shape{2, Unknown, Unknown}, RaggedRank: 2},
		&StructSpec{Shape: Shape{}},
		&StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{
			{"a", &TensorSpec{DType: Int64, Shape: Shape{Unknown}}},
			{"b", &StructSpec{Shape: Shape{Unknown, Unknown}, Fields: []FieldSpec{{"c", &TensorSpec{DType: Bool, Shape: Shape{Unknown, Unknown, 2}}}}}},
		}},
	}
	for _, v := range cases {
		specs = append(specs, v.Spec())
	}
	for i, s := range specs {
		b, err := MarshalSpec(s)
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		back, err := UnmarshalSpec(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !back.Equal(s) || back.String() != s.String() {
			t.Errorf("JSON round trip of %v gave %v (%s)", s, back, b)
		}
		for j, o := range specs {
			if (i == j) != s.Equal(o) {
				t.Errorf("%v.Equal(%v) = %v", s, o, s.Equal(o))
			}
			if i == j && !s.IsCompatibleWith(o) {
				t.Errorf("%v not compatible with itself", s)
			}
		}
	}
	want := `StructSpec([None], {a: TensorSpec([None], int64), b: StructSpec([None, None], {c: TensorSpec([None, None, 2], bool)})})`
	if got := specs[4].String(); got != want {
		t.Errorf("String() = %s\nwant       %s", got, want)
	}
	if got := specs[2].String(); got != "RaggedTensorSpec([2, None, None], string, ragged_rank=2)" {
		t.Errorf("RaggedSpec.String() = %s", got)
	}
	b, _ := MarshalSpec(specs[1])
	if string(b) != `{"kind":"tensor","dtype":"float32","shape":[null,3]}` {
		t.Errorf("TensorSpec JSON = %s", b)
	}
	// Compatibility: known dims agree, unknown match anything.
	known := &TensorSpec{DType: Float32, Shape: Shape{5, 3}}
	if !known.IsCompatibleWith(specs[1]) || known.Equal(specs[1]) {
		t.Errorf("[5,3] vs [None,3]: compatible %v, equal %v", known.IsCompatibleWith(specs[1]), known.Equal(specs[1]))
	}
	if known.IsCompatibleWith(&TensorSpec{DType: Float32, Shape: Shape{5, 4}}) ||
		known.IsCompatibleWith(&TensorSpec{DType: Float64, Shape: Shape{5, 3}}) ||
		known.IsCompatibleWith(&RaggedSpec{DType: Float32, Shape: Shape{5, 3}, RaggedRank: 1}) {
		t.Errorf("incompatible specs reported compatible")
	}
	s4 := specs[4].(*StructSpec)
	renamed := &StructSpec{Shape: Shape{3}, Fields: []FieldSpec{{"a", s4.Fields[0].Spec}, {"x", s4.Fields[1].Spec}}}
	if renamed.IsCompatibleWith(s4) {
		t.Errorf("struct specs with different field names reported compatible")
	}
	if f, ok := s4.Field("a"); !ok || !f.Equal(s4.Fields[0].Spec) {
		t.Errorf("Field(a) = %v, %v", f, ok)
	}
}

func TestUnmarshalSpecErrors(t *testing.T) {
	for _, bad := range []string{
		``,
		`{}`,
		`{"kind":"tensor","dtype":"int64"}`,
		`{"kind":"tensor","dtype":"int128","shape":[]}`,
		`{"kind":"tensor","dtype":"int64","shape":[-2]}`,
		`{"kind":"tensor","dtype":"int64","shape":[],"extra":1}`,
		`{"kind":"tensor","dtype":"int64","shape":[]} {}`,
		`{"kind":"tensor","dtype":"int64","shape":[2],"ragged_rank":1}`,
		`{"kind":"ragged","dtype":"int64","shape":[2,null],"ragged_rank":2}`,
		`{"kind":"ragged","dtype":"int64","shape":[2,null],"ragged_rank":0}`,
		`{"kind":"struct","shape":[],"fields":[{"name":"_x","spec":{"kind":"tensor","dtype":"int64","shape":[]}}]}`,
		`{"kind":"struct","shape":[],"fields":[{"name":"x","spec":{"kind":"tensor","dtype":"int64","shape":[]}},{"name":"x","spec":{"kind":"tensor","dtype":"int64","shape":[]}}]}`,
		`{"kind":"struct","shape":[3],"fields":[{"name":"x","spec":{"kind":"tensor","dtype":"int64","shape":[]}}]}`,
		`{"kind":"struct","shape":[3],"fields":[{"name":"x","spec":{"kind":"tensor","dtype":"int64","shape":[4]}}]}`,
		`{"kind":"struct","dtype":"int64","shape":[]}`,
		`{"kind":"tensor","dtype":"int64","shape":[],"fields":[{"name":"x","spec":{}}]}`,
		`{"kind":"map","shape":[]}`,
	} {
		if s, err := UnmarshalSpec([]byte(bad)); !errors.Is(err, ErrSpec) {
			t.Errorf("UnmarshalSpec(%s) = %v, %v; want ErrSpec", bad, s, err)
		}
	}
}

func TestDType(t *testing.T) {
	for d := Bool; d <= String; d++ {
		b, err := d.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back DType
		if err := back.UnmarshalText(b); err != nil || back != d {
			t.Errorf("%v: text round trip gave %v, %v", d, back, err)
		}
	}
	if _, err := Invalid.MarshalText(); !errors.Is(err, ErrDType) {
		t.Errorf("Invalid.MarshalText: err = %v", err)
	}
	if _, err := ParseDType("invalid"); !errors.Is(err, ErrDType) {
		t.Errorf(`ParseDType("invalid"): err = %v`, err)
	}
	if DType(200).String() != "DType(200)" || Float64.Size() != 8 || String.Size() != 0 {
		t.Errorf("DType basics wrong")
	}
}

func TestEqual(t *testing.T) {
	cases := splitJoinCases(t)
	for n1, a := range cases {
		for n2, b := range cases {
			if got := Equal(a, b); got != (n1 == n2) {
				t.Errorf("Equal(%s, %s) = %v", n1, n2, got)
			}
		}
	}
	nan := mustT(t, nil, []float64{1, nanF64()})
	if !Equal(nan, mustT(t, nil, []float64{1, nanF64()})) {
		t.Errorf("NaN != NaN")
	}
	if Equal(mustT(t, nil, []string{"a", "b"}), mustT(t, nil, []string{"a", "c"})) {
		t.Errorf("different strings equal")
	}
	if !Equal(nil, nil) || Equal(nan, nil) {
		t.Errorf("Equal with nil wrong")
	}
	// Floats compare by value though their bytes differ (NaN payloads, the
	// sign of zero); equal bytes of other types are equal elements.
	three := mustT(t, nil, []int64{0, 1, 2})
	otherNaN := math.Float64frombits(math.Float64bits(math.NaN()) ^ 1)
	for _, c := range []struct {
		name string
		a, b Value
		want bool
	}{
		{"NaNs of other payloads", mustT(t, nil, []float64{otherNaN}), mustT(t, nil, []float64{math.NaN()}), true},
		{"float32 NaNs", mustT(t, nil, []float32{float32(math.NaN()), 2}), mustT(t, nil, []float32{math.Float32frombits(0x7fc00001), 2}), true},
		{"zeros of other signs", mustT(t, nil, []float64{0, 1}), mustT(t, nil, []float64{math.Copysign(0, -1), 1}), true},
		{"NaN and a number", mustT(t, nil, []float64{math.NaN()}), mustT(t, nil, []float64{0}), false},
		{"float32 last element", mustT(t, nil, []float32{1, 2, 3}), mustT(t, nil, []float32{1, 2, 4}), false},
		{"int64 last byte", mustT(t, nil, []int64{1, 1 << 56}), mustT(t, nil, []int64{1, 2 << 56}), false},
		{"uint32 lengths", mustT(t, nil, []uint32{1, 2}), mustT(t, nil, []uint32{1, 2, 3}), false},
		{"bools", mustT(t, nil, []bool{true, false}), mustT(t, nil, []bool{true, true}), false},
		{"same bools", mustT(t, nil, []bool{true, false}), mustT(t, nil, []bool{true, false}), true},
		{"ragged splits", mustR(t, three, []int64{0, 1, 3}), mustR(t, three, []int64{0, 2, 3}), false},
		{"same ragged splits", mustR(t, three, []int64{0, 1, 3}), mustR(t, three, []int64{0, 1, 3}), true},
	} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("%s: Equal = %v, want %v", c.name, got, c.want)
		}
		if got := Equal(c.b, c.a); got != c.want {
			t.Errorf("%s, swapped: Equal = %v, want %v", c.name, got, c.want)
		}
	}
	uniform, err := NewUniformPartition(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		splits []int64
		want   bool
	}{{[]int64{0, 2, 4}, true}, {[]int64{0, 1, 4}, false}} {
		ragged, err := NewRowSplits(c.splits)
		if err != nil {
			t.Fatal(err)
		}
		if uniform.Equal(ragged) != c.want || ragged.Equal(uniform) != c.want {
			t.Errorf("uniform rows of 2 and splits %v: Equal = %v, want %v", c.splits, uniform.Equal(ragged), c.want)
		}
	}
}

func nanF64() float64 { var z float64; return z / z }

func TestValidateCatchesCorruption(t *testing.T) {
	ints := mustT(t, nil, []int64{1, 2, 3})
	bad := []Value{
		&Tensor{dtype: Int64, shape: Shape{4}, data: []int64{1}},
		&Tensor{dtype: Int32, shape: Shape{1}, data: []int64{1}},
		&Tensor{dtype: String, shape: Shape{1}, strOffsets: []int64{0, 5}, strData: []byte("ab")},
		&Ragged{values: ints, partitions: []*RowPartition{{splits: []int64{0, 2}, nrows: 1, rowLen: -1, nvalues: 2}}},
		&StructTensor{rank: 1, nrows: 2, fields: []Field{{"a", ints}}, index: map[string]int{"a": 0}},
		&StructTensor{rank: 0, nrows: 1, fields: []Field{{"a", ints}}, index: map[string]int{}},
	}
	for i, v := range bad {
		if err := validate(v); err == nil {
			t.Errorf("case %d: corrupt value passed validation", i)
		}
	}
}
