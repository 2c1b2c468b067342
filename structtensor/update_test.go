package structtensor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// flatOf returns the stored value of the field at path.
func flatOf(t *testing.T, st *StructTensor, path ...string) Value {
	t.Helper()
	for _, name := range path[:len(path)-1] {
		v, ok := st.Field(name)
		if !ok {
			t.Fatalf("no field %q", name)
		}
		st = v.(*StructTensor)
	}
	v, ok := st.Field(path[len(path)-1])
	if !ok {
		t.Fatalf("no field %q", path[len(path)-1])
	}
	return v
}

func TestWithUpdates(t *testing.T) {
	st := recipe(t)
	rec, _ := st.FieldValue("recipe")
	ratings, _ := rec.(*StructTensor).FieldValue("user_rating")
	// A new rank-1 field of the ratings: score doubled.
	doubled := mustT(t, nil, []float32{1.6, 0.8, 1.8})
	up, err := st.WithUpdates(map[string]Value{
		"recipe.user_rating.double_score": doubled,
		"recipe.title":                    mustScalar(t, "Sugar cookies"),
		"servings":                        mustScalar(t, int64(24)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(up); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(up.FieldNames(), ","); got != "user_embedding,recipe,servings" {
		t.Errorf("fields %s", got)
	}
	if v, _ := up.Get("recipe", "title"); nested(v) != "Sugar cookies" {
		t.Errorf("title = %v", nested(v))
	}
	if v, _ := up.Get("recipe", "user_rating", 2, "double_score"); nested(v) != float32(1.8) {
		t.Errorf("double_score[2] = %v", nested(v))
	}
	rr, _ := up.FieldValue("recipe", "user_rating")
	if got := strings.Join(rr.(*StructTensor).FieldNames(), ","); got != "user_embedding,score,double_score" {
		t.Errorf("user_rating fields %s", got)
	}
	// The original is unchanged.
	if v, _ := st.Get("recipe", "title"); nested(v) != "Snickerdoodle cookies" {
		t.Errorf("original changed: %v", nested(v))
	}
	if _, ok := ratings.(*StructTensor).Field("double_score"); ok {
		t.Errorf("original ratings changed")
	}
	// Unmodified buffers are shared: the same stored values, the same slices.
	for _, path := range [][]string{
		{"user_embedding"},
		{"recipe", "ingredients"},
		{"recipe", "step"},
		{"recipe", "est_time"},
		{"recipe", "user_rating", "score"},
		{"recipe", "user_rating", "user_embedding"},
	} {
		a, b := flatOf(t, st, path...), flatOf(t, up, path...)
		if a != b {
			t.Errorf("%v: not shared", path)
		}
	}
	a := flatOf(t, st, "recipe", "user_rating", "user_embedding").(*Tensor).Float32s()
	b := flatOf(t, up, "recipe", "user_rating", "user_embedding").(*Tensor).Float32s()
	if &a[0] != &b[0] {
		t.Errorf("embedding buffer copied")
	}
	if flatOf(t, up, "recipe", "user_rating", "double_score") != Value(doubled) {
		t.Errorf("the update value was copied")
	}
}

func mustScalar(t testing.TB, x any) *Tensor {
	t.Helper()
	v, err := NewScalar(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWithUpdatesPartitions(t *testing.T) {
	// A [2, None] struct: rows of 2 and 1 structures.
	p := mustP(t, 0, 2, 3)
	st, err := NewPartitionedStruct(2, []*RowPartition{p}, Field{"a", mustT(t, nil, []int64{1, 2, 3})})
	if err != nil {
		t.Fatal(err)
	}
	same := mustR(t, mustT(t, nil, []string{"x", "y", "z"}), []int64{0, 2, 3})
	up, err := st.WithUpdatesOrdered(Update{Path: []string{"b"}, Value: same})
	if err != nil {
		t.Fatal(err)
	}
	if up.Partitions()[0] != p {
		t.Errorf("the partition was not shared")
	}
	if got := nested(mustGet(t, up, 1, 0, "b")); got != "z" {
		t.Errorf("b[1][0] = %v", got)
	}
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{mustR(t, mustT(t, nil, []string{"x", "y", "z"}), []int64{0, 1, 3}), "row splits"},
		{mustT(t, nil, []int64{1, 2}), "rank 1, below the struct's rank 2"},
		{mustR(t, mustT(t, nil, []int64{1}), []int64{0, 1}), "outer shape"},
	} {
		_, err := st.WithUpdatesOrdered(Update{Path: []string{"c"}, Value: tc.v})
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"c"`) {
			t.Errorf("update c = %v: err = %v, want ErrShape with %q", tc.v.Spec(), err, tc.want)
		}
	}
}

func TestWithUpdatesErrors(t *testing.T) {
	st := recipe(t)
	x := mustScalar(t, int64(1))
	for _, tc := range []struct {
		ups  []Update
		err  error
		want string
	}{
		{[]Update{{Path: []string{"recipe", "nope", "x"}, Value: x}}, ErrNoField, `"recipe.nope"`},
		{[]Update{{Path: []string{"recipe", "title", "x"}, Value: x}}, ErrNoField, `"recipe.title" is a tensor, not a struct`},
		{[]Update{{Path: []string{"recipe", "ingredients", "x"}, Value: x}}, ErrShape, `"recipe.ingredients.x" has rank 0`},
		{[]Update{{Path: []string{"recipe", "9x"}, Value: x}}, ErrFieldName, `"9x"`},
		{[]Update{{Path: nil, Value: x}}, ErrFieldName, "empty path"},
		{[]Update{{Path: []string{"a"}, Value: x}, {Path: []string{"a"}, Value: x}}, ErrFieldName, "overlap"},
		{[]Update{{Path: []string{"recipe"}, Value: x}, {Path: []string{"recipe", "title"}, Value: x}}, ErrFieldName, "overlap"},
		{[]Update{{Path: []string{"nope"}}}, ErrNoField, `cannot remove "nope"`},
	} {
		_, err := st.WithUpdatesOrdered(tc.ups...)
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %v with %q", tc.ups, err, tc.err, tc.want)
		}
	}
	// A nil value removes.
	up, err := st.WithUpdates(map[string]Value{"recipe.step": nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.FieldValue("recipe", "step"); !errors.Is(err, ErrNoField) {
		t.Errorf("step not removed: %v", err)
	}
}

func TestWithoutWithOnly(t *testing.T) {
	st := recipe(t)
	wo, err := st.Without("user_embedding", "recipe.step", "recipe.user_rating.score")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"recipe": map[string]any{
		"title": "Snickerdoodle cookies", "est_time": float32(55),
		"ingredients": nested(mustGet(t, st, "recipe", "ingredients")),
		"user_rating": nested(mustGet(t, st, "recipe", "user_rating", All, "user_embedding")),
	}}
	// user_rating keeps only its embeddings: rebuild the expected rows.
	rows := []any{}
	for _, e := range want["recipe"].(map[string]any)["user_rating"].([]any) {
		rows = append(rows, map[string]any{"user_embedding": e})
	}
	want["recipe"].(map[string]any)["user_rating"] = rows
	if got := nested(wo); !reflect.DeepEqual(got, want) {
		t.Errorf("Without = %#v\nwant %#v", got, want)
	}
	if flatOf(t, wo, "recipe", "ingredients") != flatOf(t, st, "recipe", "ingredients") {
		t.Errorf("Without copied a kept field")
	}
	only, err := st.WithOnly("recipe.ingredients", "recipe.title", "recipe.user_rating.score")
	if err != nil {
		t.Fatal(err)
	}
	rec := only.Fields()[0].Value.(*StructTensor)
	if got := strings.Join(rec.FieldNames(), ","); only.NumFields() != 1 || got != "title,ingredients,user_rating" {
		t.Errorf("WithOnly fields: %v / %s", only.FieldNames(), got)
	}
	if got := nested(mustGet(t, only, "recipe", "user_rating", All, "score")); !reflect.DeepEqual(got, []any{float32(0.8), float32(0.4), float32(0.9)}) {
		t.Errorf("scores = %v", got)
	}
	if flatOf(t, only, "recipe", "user_rating", "score") != flatOf(t, st, "recipe", "user_rating", "score") {
		t.Errorf("WithOnly copied a kept field")
	}
	if _, err := st.Without("recipe.nope"); !errors.Is(err, ErrNoField) || !strings.Contains(err.Error(), `"recipe.nope"`) {
		t.Errorf("Without(recipe.nope): err = %v", err)
	}
	if _, err := st.WithOnly("recipe.title.x"); !errors.Is(err, ErrNoField) || !strings.Contains(err.Error(), "not a struct") {
		t.Errorf("WithOnly(recipe.title.x): err = %v", err)
	}
	if _, err := st.WithOnly("zzz"); !errors.Is(err, ErrNoField) {
		t.Errorf("WithOnly(zzz): err = %v", err)
	}
	empty, err := st.WithOnly()
	if err != nil || empty.NumFields() != 0 || empty.Rank() != 0 {
		t.Errorf("WithOnly() = %v, %v", empty, err)
	}

	// The []string forms take the same paths as names.
	woPaths, err := st.WithoutPaths([]string{"user_embedding"}, []string{"recipe", "step"}, []string{"recipe", "user_rating", "score"})
	if err != nil || !Equal(woPaths, wo) {
		t.Errorf("WithoutPaths = %v, %v; want %v", woPaths, err, wo)
	}
	onlyPaths, err := st.WithOnlyPaths([]string{"recipe", "ingredients"}, []string{"recipe", "title"}, []string{"recipe", "user_rating", "score"})
	if err != nil || !Equal(onlyPaths, only) {
		t.Errorf("WithOnlyPaths = %v, %v; want %v", onlyPaths, err, only)
	}
	if _, err := st.WithoutPaths([]string{"recipe", "nope"}); !errors.Is(err, ErrNoField) || !strings.Contains(err.Error(), `"recipe.nope"`) {
		t.Errorf("WithoutPaths(recipe, nope): err = %v", err)
	}
	if _, err := st.WithoutPaths([]string{"recipe"}, []string{}); !errors.Is(err, ErrFieldName) {
		t.Errorf("WithoutPaths with an empty path: err = %v, want ErrFieldName", err)
	}
	if _, err := st.WithOnlyPaths(nil); !errors.Is(err, ErrFieldName) {
		t.Errorf("WithOnlyPaths with an empty path: err = %v, want ErrFieldName", err)
	}
}
