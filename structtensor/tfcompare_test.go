package structtensor_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// TestMatchesTensorFlow runs the same indexing and updates on TensorFlow's
// StructuredTensor and RaggedTensor (testdata/tf/reference.py, one Python
// process in the repository's .venv, which make setup builds) and with
// Get and WithUpdatesOrdered, and compares the results as nested values.
func TestMatchesTensorFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts TensorFlow (about 10 s); make test runs it")
	}
	python := testenv.Python(t, ".venv")
	gets, ups := getCases(), updateCases()
	var in []map[string]any
	for _, c := range gets {
		in = append(in, c.py())
	}
	for _, c := range ups {
		in = append(in, c.py())
	}
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "tf", "reference.py"))
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.py: %v\n%s", err, stderr.String())
	}
	var results []tfResult
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(in) {
		t.Fatalf("reference.py output (%v): %s", err, out)
	}
	t.Run("Get", func(t *testing.T) { checkGets(t, gets, results[:len(gets)]) })
	t.Run("WithUpdates", func(t *testing.T) { checkUpdates(t, ups, results[len(gets):]) })
}

// tfResult is reference.py's answer for one case.
type tfResult struct {
	OK    bool   `json:"ok"`
	Value any    `json:"value"`
	Error string `json:"error"`
}

// getCase is st[keys] on a value built by from_pyval (or
// tf.ragged.constant when ragged). Floats are exact in float32, which
// TensorFlow infers. Where TensorFlow refuses to index into an inner
// ragged dimension, Get indexes each row (as NumPy would a list of
// arrays); those cases are marked extension and checked against values
// worked out by hand.
type getCase struct {
	value     any
	ragged    bool
	keys      []any
	extension bool
	want      any
}

func (c getCase) py() map[string]any {
	keys := make([]any, len(c.keys))
	for j, k := range c.keys {
		if sl, ok := k.(st.Slice); ok {
			var step any
			if sl.Step != 0 {
				step = sl.Step
			}
			keys[j] = map[string]any{"slice": []any{sl.Start, sl.Stop, step}}
		} else {
			keys[j] = k
		}
	}
	return map[string]any{"op": "getitem", "value": c.value, "ragged": c.ragged, "keys": keys}
}

func getCases() []getCase {
	L := func(x ...any) []any { return append([]any{}, x...) }
	recipe := map[string]any{
		"user_embedding": L(0.5, 2.0, 0.25, 0.125, 9.0, 1.5),
		"recipe": map[string]any{
			"title":    "Snickerdoodle cookies",
			"est_time": 55.0,
			"ingredients": L(
				map[string]any{"amount": 3.0, "unit": "cup", "name": "flour"},
				map[string]any{"amount": 1.0, "unit": "cup", "name": "white sugar"},
				map[string]any{"amount": 0.5, "unit": "cup", "name": "brown sugar"},
			),
			"user_rating": L(
				map[string]any{"user_embedding": L(0.75, 2.0, 0.25, 0.25, 5.0, 2.0), "score": 0.75},
				map[string]any{"user_embedding": L(1.5, 0.0, 3.0, 1.0, 1.25, 0.5), "score": 0.5},
			),
		},
	}
	batch := L(
		map[string]any{"x": L(1, 2, 3), "y": "a"},
		map[string]any{"x": L(4), "y": "b"},
		map[string]any{"x": L(), "y": "c"},
	)
	matrix := L(
		L(map[string]any{"a": 1, "b": L(1, 2)}, map[string]any{"a": 2, "b": L()}),
		L(map[string]any{"a": 3, "b": L(4)}),
	)
	ragged := L(L(1, 2, 3), L(), L(4, 5))
	ragged3 := L(L(L(1, 2), L(3)), L(L(4, 5, 6)), L())
	s := func(start, stop *int, step int) st.Slice { return st.Slice{Start: start, Stop: stop, Step: step} }
	return []getCase{
		{value: recipe, keys: L("recipe", "ingredients", 0, "name")},
		{value: recipe, keys: L("recipe", "ingredients", st.All, "name")},
		{value: recipe, keys: L("recipe", "user_rating", st.All, "user_embedding", st.Slice{Step: 2})},
		{value: recipe, keys: L("recipe", "ingredients", -1)},
		{value: recipe, keys: L("recipe", "ingredients", s(new(1), nil, 0), "amount")},
		{value: recipe, keys: L("user_embedding", s(new(-2), nil, 0))},
		{value: recipe, keys: L("recipe", "title")},
		{value: recipe, keys: L("recipe")},
		{value: recipe, keys: L("recipe", "ingredients", 3, "name")},
		{value: recipe, keys: L("recipe", "nope")},
		{value: recipe, keys: L(st.All, "recipe", "title")},
		{value: batch, keys: L(st.Slice{Step: -1}, "y")},
		{value: batch, keys: L(st.All, "x", st.Slice{Step: 2})},
		{value: batch, keys: L(1)},
		{value: batch, keys: L(s(new(1), nil, 0))},
		{value: batch, keys: L(-1, "x")},
		{value: batch, keys: L(3)},
		{value: batch, keys: L("x")},
		{value: batch, keys: L(st.All, "y", 0)},
		{value: matrix, keys: L(1, 0, "b")},
		{value: matrix, keys: L(0)},
		{value: matrix, keys: L(s(new(1), nil, 0))},
		{value: matrix, keys: L(0, st.Slice{Step: -1}, "a")},
		{value: matrix, keys: L(st.All, 0, "a"), extension: true, want: L(1.0, 3.0)},
		{value: matrix, keys: L(st.All, 0, "b", 0), extension: true, want: L(1.0, 4.0)},
		{value: matrix, keys: L(st.All, -1, "b", 0)},
		{value: ragged, ragged: true, keys: L(s(new(1), nil, 0), st.Slice{Step: -1})},
		{value: ragged, ragged: true, keys: L(2, 0)},
		{value: ragged, ragged: true, keys: L(st.All, s(nil, new(2), 0))},
		{value: ragged, ragged: true, keys: L(1, 0)},
		{value: ragged3, ragged: true, keys: L(0, 1)},
		{value: ragged3, ragged: true, keys: L(st.All, s(new(-1), nil, 0))},
		{value: ragged3, ragged: true, keys: L(st.Slice{Step: 2}, st.All, s(nil, new(1), 0))},
		// Every list of ragged3 is non-empty (the third row has none), so
		// each has a last element.
		{value: ragged3, ragged: true, keys: L(st.All, st.All, -1), extension: true, want: L(L(2.0, 3.0), L(6.0), L())},
	}
}

func checkGets(t *testing.T, cases []getCase, results []tfResult) {
	compared := 0
	defer func() {
		// Guard the harness: most cases must be values TensorFlow computed.
		if compared < 20 {
			t.Errorf("only %d of %d cases compared values with TensorFlow", compared, len(cases))
		}
	}()
	for i, c := range cases {
		tf := results[i]
		v, err := st.FromValue(c.value)
		if err != nil {
			t.Fatalf("case %d: FromValue: %v", i, err)
		}
		var got st.Value
		var gerr error
		switch x := v.(type) {
		case *st.StructTensor:
			got, gerr = x.Get(c.keys...)
		case *st.Ragged:
			got, gerr = x.Get(c.keys...)
		case *st.Tensor:
			got, gerr = x.Get(c.keys...)
		}
		if c.extension {
			if tf.OK || !strings.Contains(tf.Error, "inner ragged dimension") {
				t.Errorf("case %d %v: marked as an extension, but TensorFlow gave %+v", i, c.keys, tf)
			}
			if gerr != nil {
				t.Errorf("case %d %v: %v", i, c.keys, gerr)
			} else if g := st.AsJSON(t, st.ToValue(got)); !reflect.DeepEqual(g, st.AsJSON(t, c.want)) {
				t.Errorf("case %d %v: got %v, want %v", i, c.keys, g, c.want)
			}
			continue
		}
		if !tf.OK {
			if gerr == nil {
				t.Errorf("case %d %v: TensorFlow fails (%s), Get gives %v", i, c.keys, tf.Error, got)
			}
			continue
		}
		if gerr != nil {
			t.Errorf("case %d %v: TensorFlow gives %v, Get fails: %v", i, c.keys, tf.Value, gerr)
			continue
		}
		compared++
		if g := st.AsJSON(t, st.ToValue(got)); !reflect.DeepEqual(g, tf.Value) {
			t.Errorf("case %d %v: Get = %v, TensorFlow = %v", i, c.keys, g, tf.Value)
		}
	}
}
