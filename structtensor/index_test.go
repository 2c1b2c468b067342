package structtensor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustGet(t *testing.T, v interface {
	Get(...any) (Value, error)
}, keys ...any) Value {
	t.Helper()
	got, err := v.Get(keys...)
	if err != nil {
		t.Fatalf("Get%v: %v", keys, err)
	}
	if err := validate(got); err != nil {
		t.Fatalf("Get%v returned an invalid value: %v", keys, err)
	}
	return got
}

// TestRecipeIndexing runs the RFC's indexing examples on its recipe.
func TestRecipeIndexing(t *testing.T) {
	st := recipe(t)
	for _, tc := range []struct {
		keys []any
		spec string
		want any
	}{
		{[]any{"user_embedding"}, "TensorSpec([6], float32)", []any{float32(0.8), float32(2.1), float32(0.3), float32(0.1), float32(9.2), float32(1.8)}},
		{[]any{"recipe", "title"}, "TensorSpec([], string)", "Snickerdoodle cookies"},
		{[]any{"recipe", "ingredients", 0, "name"}, "TensorSpec([], string)", "flour"},
		{[]any{"recipe", "ingredients", -1, "name"}, "TensorSpec([], string)", "brown sugar"},
		{[]any{"recipe", "ingredients", All, "name"}, "TensorSpec([3], string)", []any{"flour", "white sugar", "brown sugar"}},
		{[]any{"recipe", "user_rating", All, "user_embedding", Slice{Step: 2}}, "TensorSpec([3, 3], float32)", []any{
			[]any{float32(0.7), float32(0.3), float32(5.2)},
			[]any{float32(1.4), float32(3.1), float32(1.2)},
			[]any{float32(0.5), float32(0.5), float32(0.6)},
		}},
		{[]any{"recipe", "ingredients", 0}, "", map[string]any{"amount": float32(3), "unit": "cup", "name": "flour"}},
		{[]any{"recipe", "ingredients", Slice{Start: new(1)}, "amount"}, "TensorSpec([2], float32)", []any{float32(1), float32(0.5)}},
		{[]any{"recipe", "user_rating", 1, "user_embedding", Slice{Start: new(-2)}}, "TensorSpec([2], float32)", []any{float32(1.2), float32(0.3)}},
		{[]any{"recipe", "step", Slice{Step: -1}, "description", 0}, "", nil}, // error: description is a vector of scalars
	} {
		got, err := st.Get(tc.keys...)
		if tc.want == nil {
			if !errors.Is(err, ErrIndex) {
				t.Errorf("Get%v: err = %v, want ErrIndex", tc.keys, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Get%v: %v", tc.keys, err)
			continue
		}
		if tc.spec != "" && got.Spec().String() != tc.spec {
			t.Errorf("Get%v: spec %v, want %s", tc.keys, got.Spec(), tc.spec)
		}
		if g := nested(got); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("Get%v = %#v\nwant %#v", tc.keys, g, tc.want)
		}
	}
	// The ingredient struct is a scalar struct, and recipe a scalar struct.
	ing := mustGet(t, st, "recipe", "ingredients", 0).(*StructTensor)
	if ing.Rank() != 0 || strings.Join(ing.FieldNames(), ",") != "amount,unit,name" {
		t.Errorf("ingredient 0: rank %d, fields %v", ing.Rank(), ing.FieldNames())
	}
}

func TestGetErrors(t *testing.T) {
	st := recipe(t)
	for _, tc := range []struct {
		keys []any
		err  error
		msg  string
	}{
		{[]any{"nope"}, ErrNoField, `"nope"`},
		{[]any{"recipe", "ingredients", 0, "color"}, ErrNoField, `"recipe.ingredients.color"`},
		{[]any{"recipe", "ingredients", 3, "name"}, ErrIndex, `index 3 out of range for dimension 0 of size 3`},
		{[]any{"recipe", "ingredients", -4}, ErrIndex, `index -4 out of range`},
		{[]any{"recipe", "ingredients", "name"}, ErrIndex, `field name "name" among the first 1 keys`},
		{[]any{"recipe", "ingredients", 0, 1}, ErrIndex, `key 1 after the 1 dimension keys`},
		{[]any{0}, ErrIndex, `key 0 on a scalar struct`},
		{[]any{"user_embedding", 0, 0}, ErrIndex, `2 keys for a rank-1 value (at field "user_embedding")`},
		{[]any{"user_embedding", "x"}, ErrIndex, `field name "x" on a tensor value`},
		{[]any{"user_embedding", 6}, ErrIndex, `index 6 out of range`},
		{[]any{1.5}, ErrIndex, `unsupported type float64`},
	} {
		_, err := st.Get(tc.keys...)
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Get%v: err = %v, want %v containing %q", tc.keys, err, tc.err, tc.msg)
		}
	}
}

func TestSliceIndices(t *testing.T) {
	ten := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, tc := range []struct {
		s    Slice
		n    int
		want []int
	}{
		{All, 10, ten},
		{Slice{Step: 2}, 10, []int{0, 2, 4, 6, 8}},
		{Slice{Step: -1}, 4, []int{3, 2, 1, 0}},
		{Slice{Start: new(-3)}, 10, []int{7, 8, 9}},
		{Slice{Stop: new(-8)}, 10, []int{0, 1}},
		{Slice{Start: new(2), Stop: new(8), Step: 3}, 10, []int{2, 5}},
		{Slice{Start: new(8), Stop: new(2), Step: -3}, 10, []int{8, 5}},
		{Slice{Start: new(100)}, 10, nil},
		{Slice{Start: new(-100), Stop: new(2)}, 10, []int{0, 1}},
		{Slice{Start: new(100), Step: -4}, 10, []int{9, 5, 1}},
		{Slice{Stop: new(-100), Step: -1}, 3, []int{2, 1, 0}},
		{Slice{Start: new(5), Stop: new(5)}, 10, nil},
		{Slice{Step: -1}, 0, nil},
		{All, 0, nil},
	} {
		start, _, step, count := tc.s.indices(tc.n)
		var got []int
		for j := 0; j < count; j++ {
			got = append(got, start+j*step)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("[%v] of %d = %v, want %v", tc.s, tc.n, got, tc.want)
		}
	}
	if s := (Slice{Start: new(1), Stop: new(-1), Step: 2}).String(); s != "1:-1:2" {
		t.Errorf("String = %q", s)
	}
	if s := All.String(); s != ":" {
		t.Errorf("All.String = %q", s)
	}
}

func TestGetTensorAndRagged(t *testing.T) {
	m := mustT(t, Shape{2, 3}, []int64{1, 2, 3, 4, 5, 6})
	// [[1, 2, 3], [], [4, 5], [6]]
	r := mustR(t, mustT(t, nil, []int64{1, 2, 3, 4, 5, 6}), []int64{0, 3, 3, 5, 6})
	// [[[1, 2], [3]], [[4, 5, 6]]]
	r2 := mustR(t, mustT(t, nil, []string{"1", "2", "3", "4", "5", "6"}), []int64{0, 2, 3}, []int64{0, 2, 3, 6})
	// [[[1, 2], [3, 4]], [], [[5, 6]]]: a ragged dim over dense pairs.
	rd := mustR(t, mustT(t, Shape{3, 2}, []float64{1, 2, 3, 4, 5, 6}), []int64{0, 2, 2, 3})
	L := func(x ...any) []any { return append([]any{}, x...) }
	for _, tc := range []struct {
		name string
		v    interface {
			Get(...any) (Value, error)
		}
		keys []any
		spec string
		want any
	}{
		{"dense row", m, L(1), "TensorSpec([3], int64)", L(int64(4), int64(5), int64(6))},
		{"dense elem", m, L(-1, -1), "TensorSpec([], int64)", int64(6)},
		{"dense column", m, L(All, 1), "TensorSpec([2], int64)", L(int64(2), int64(5))},
		{"dense reverse", m, L(Slice{Step: -1}, Slice{Step: 2}), "TensorSpec([2, 2], int64)", L(L(int64(4), int64(6)), L(int64(1), int64(3)))},
		{"dense empty", m, L(Slice{Start: new(2)}), "TensorSpec([0, 3], int64)", L()},
		{"no keys", m, L(), "TensorSpec([2, 3], int64)", L(L(int64(1), int64(2), int64(3)), L(int64(4), int64(5), int64(6)))},
		{"ragged row", r, L(2), "TensorSpec([2], int64)", L(int64(4), int64(5))},
		{"ragged empty row", r, L(1), "TensorSpec([0], int64)", L()},
		{"ragged rows", r, L(Slice{Start: new(1), Stop: new(3)}), "RaggedTensorSpec([2, None], int64, ragged_rank=1)", L(L(), L(int64(4), int64(5)))},
		{"ragged every row sliced", r, L(All, Slice{Stop: new(1)}), "RaggedTensorSpec([4, None], int64, ragged_rank=1)", L(L(int64(1)), L(), L(int64(4)), L(int64(6)))},
		{"ragged per-row reverse", r, L(Slice{Step: 2}, Slice{Step: -1}), "RaggedTensorSpec([2, None], int64, ragged_rank=1)", L(L(int64(3), int64(2), int64(1)), L(int64(5), int64(4)))},
		{"ragged last of rows", r, L(Slice{Start: new(2)}, -1), "TensorSpec([2], int64)", L(int64(5), int64(6))},
		{"ragged2 inner", r2, L(0, 0), "TensorSpec([2], string)", L("1", "2")},
		{"ragged2 elem", r2, L(1, 0, -1), "TensorSpec([], string)", "6"},
		{"ragged2 first of each", r2, L(All, 0), "RaggedTensorSpec([2, None], string, ragged_rank=1)", L(L("1", "2"), L("4", "5", "6"))},
		{"ragged2 deep", r2, L(All, All, 0), "RaggedTensorSpec([2, None], string, ragged_rank=1)", L(L("1", "3"), L("4"))},
		{"ragged over dense", rd, L(0), "TensorSpec([2, 2], float64)", L(L(1.0, 2.0), L(3.0, 4.0))},
		{"ragged over dense inner col", rd, L(All, All, 1), "RaggedTensorSpec([3, None], float64, ragged_rank=1)", L(L(2.0, 4.0), L(), L(6.0))},
		{"ragged over dense rows", rd, L(Slice{Step: 2}), "RaggedTensorSpec([2, None, 2], float64, ragged_rank=1)", L(L(L(1.0, 2.0), L(3.0, 4.0)), L(L(5.0, 6.0)))},
	} {
		got, err := tc.v.Get(tc.keys...)
		if err != nil {
			t.Errorf("%s: Get%v: %v", tc.name, tc.keys, err)
			continue
		}
		if err := validate(got); err != nil {
			t.Errorf("%s: invalid result: %v", tc.name, err)
		}
		if got.Spec().String() != tc.spec {
			t.Errorf("%s: spec %v, want %s", tc.name, got.Spec(), tc.spec)
		}
		if g := nested(got); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%s: Get%v = %#v, want %#v", tc.name, tc.keys, g, tc.want)
		}
	}
	// Per-row errors name the row.
	if _, err := r.Get(All, 0); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), "in row 1") {
		t.Errorf("index into an empty row: err = %v", err)
	}
	if _, err := m.Get(0, 0, 0); !errors.Is(err, ErrIndex) {
		t.Errorf("too many keys: err = %v", err)
	}
	s, _ := NewScalar(int64(1))
	if _, err := s.Get(0); !errors.Is(err, ErrIndex) {
		t.Errorf("indexing a scalar: err = %v", err)
	}
}

// TestGetSharesBuffers checks that contiguous selections do not copy.
func TestGetSharesBuffers(t *testing.T) {
	st := recipe(t)
	emb, _ := st.FieldValue("recipe")
	ur, _ := emb.(*StructTensor).Field("user_rating")
	flat, _ := ur.(*StructTensor).Field("user_embedding")
	base := &flat.(*Tensor).Float32s()[0]

	got := mustGet(t, st, "recipe", "user_rating", All, "user_embedding").(*Tensor)
	if &got.Float32s()[0] != base {
		t.Errorf("Get(All, field) copied the field")
	}
	got = mustGet(t, st, "recipe", "user_rating", 1, "user_embedding").(*Tensor)
	if &got.Float32s()[0] != &flat.(*Tensor).Float32s()[6] {
		t.Errorf("Get(1, field) copied the row")
	}
	got = mustGet(t, st, "recipe", "user_rating", Slice{Start: new(1)}, "user_embedding", Slice{Stop: new(6)}).(*Tensor)
	if &got.Float32s()[0] != &flat.(*Tensor).Float32s()[6] {
		t.Errorf("Get(1:, field, :6) copied")
	}
	strs := mustGet(t, st, "recipe", "ingredients", Slice{Start: new(1)}, "name").(*Tensor)
	d1, _ := strs.StringData()
	names, _ := st.FieldValue("recipe", "ingredients", "name")
	d0, _ := names.(*Tensor).StringData()
	if &d1[0] != &d0[0] {
		t.Errorf("string slice copied its data")
	}
	// A step gathers: the result must not alias the source.
	got = mustGet(t, st, "recipe", "user_rating", All, "user_embedding", Slice{Step: 2}).(*Tensor)
	if &got.Float32s()[0] == base && got.Len() > 1 && got.Float32s()[1] == flat.(*Tensor).Float32s()[1] {
		t.Errorf("gather aliases")
	}
}

func TestTakeRows(t *testing.T) {
	vals := mustT(t, nil, []int64{1, 2, 3, 4, 5, 6})
	splits, err := NewRowSplits([]int64{0, 2, 3, 3, 6})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRagged(vals, splits)
	if err != nil {
		t.Fatal(err)
	}
	names := mustT(t, nil, []string{"a", "bb", "", "dddd"})
	s, err := NewStruct(4, Field{"r", r}, Field{"name", names})
	if err != nil {
		t.Fatal(err)
	}
	got, err := TakeRows(s, []int{3, 0, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"r": []any{int64(4), int64(5), int64(6)}, "name": "dddd"},
		map[string]any{"r": []any{int64(1), int64(2)}, "name": "a"},
		map[string]any{"r": []any{int64(1), int64(2)}, "name": "a"},
		map[string]any{"r": []any{}, "name": ""},
	}
	if g := nested(got); !reflect.DeepEqual(g, want) {
		t.Errorf("TakeRows(3, 0, 0, 2) = %#v\nwant %#v", g, want)
	}
	// A contiguous run shares the values.
	run, err := TakeRows(r, []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if &run.(*Ragged).Values().Int64s()[0] != &vals.Int64s()[2] {
		t.Errorf("TakeRows of rows 1-3 copied the values")
	}
	if none, err := TakeRows(r, nil); err != nil || none.NumRows() != 0 {
		t.Errorf("TakeRows(nil) = %v, %v", none, err)
	}
	for _, idx := range [][]int{{4}, {0, -1}} {
		if _, err := TakeRows(r, idx); !errors.Is(err, ErrIndex) {
			t.Errorf("TakeRows(%v) of 4 rows: err = %v, want ErrIndex", idx, err)
		}
	}
	if _, err := TakeRows(mustT(t, Shape{}, []int64{1}), []int{0}); !errors.Is(err, ErrIndex) {
		t.Errorf("TakeRows of a scalar: err = %v, want ErrIndex", err)
	}
}
