package structtensor_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// TestWithUpdatesMatchesTensorFlow applies the same updates with
// TensorFlow's StructuredTensor.with_updates (validate=True) in the .venv
// and with WithUpdatesOrdered, and compares the results as nested values,
// or that both reject the update.
func TestWithUpdatesMatchesTensorFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts TensorFlow (about 10 s); make test runs it")
	}
	python, err := filepath.Abs(filepath.Join("..", ".venv", "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(python); err != nil {
		t.Skipf("needs the TensorFlow venv (make setup): %v", err)
	}
	L := func(x ...any) []any { return append([]any{}, x...) }
	P := func(x ...string) []string { return x }
	recipe := map[string]any{
		"recipe": map[string]any{
			"title": "Snickerdoodle cookies",
			"step":  L(map[string]any{"description": "Preheat."}, map[string]any{"description": "Mix."}),
			"user_rating": L(
				map[string]any{"user_embedding": L(0.75, 2.0), "score": 0.75},
				map[string]any{"user_embedding": L(1.5, 0.0), "score": 0.5},
			),
		},
	}
	batch := L(map[string]any{"x": 1}, map[string]any{"x": 2}, map[string]any{"x": 3})
	matrix := L(L(map[string]any{"a": 1}, map[string]any{"a": 2}), L(map[string]any{"a": 3}))
	type update struct {
		path   []string
		value  any // nil removes
		ragged bool
	}
	type tcase struct {
		value   any
		updates []update
	}
	cases := []tcase{
		{recipe, []update{{P("recipe", "user_rating", "double"), L(1.5, 1.0), false}}},
		{recipe, []update{{P("servings"), 24, false}}},
		{recipe, []update{{P("recipe", "title"), "Sugar cookies", false}}},
		{recipe, []update{{P("recipe", "step"), nil, false}}},
		{recipe, []update{{P("recipe", "user_rating", "tags"), L(L("a"), L("b", "c")), true}, {P("recipe", "title"), "T", false}}},
		{recipe, []update{{P("recipe", "title", "x"), 1, false}}},
		{recipe, []update{{P("recipe", "user_rating", "double"), L(1.5), false}}},
		{batch, []update{{P("z"), L(1.5, 2.5, 3.5), false}}},
		{batch, []update{{P("z"), L(1.5, 2.5), false}}},
		{batch, []update{{P("x"), L("a", "b", "c"), false}}},
		{batch, []update{{P("x"), nil, false}, {P("y"), L(true, false, true), false}}},
		{matrix, []update{{P("c"), L(L(1, 2), L(3)), true}}},
		{matrix, []update{{P("c"), L(L(1), L(2, 3)), true}}},
		{matrix, []update{{P("c"), L(L(L(1), L()), L(L(2, 3))), true}}},
	}
	type pyCase struct {
		Value   any     `json:"value"`
		Updates [][]any `json:"updates"`
	}
	in := make([]pyCase, len(cases))
	for i, c := range cases {
		in[i].Value = c.value
		for _, u := range c.updates {
			in[i].Updates = append(in[i].Updates, []any{u.path, u.value, u.ragged})
		}
	}
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "tf", "withupdates.py"))
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("withupdates.py: %v\n%s", err, stderr.String())
	}
	var results []struct {
		OK    bool   `json:"ok"`
		Value any    `json:"value"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(cases) {
		t.Fatalf("withupdates.py output (%v): %s", err, out)
	}
	compared := 0
	for i, c := range cases {
		tf := results[i]
		v, err := st.FromValue(c.value)
		if err != nil {
			t.Fatalf("case %d: FromValue: %v", i, err)
		}
		var ups []st.Update
		for _, u := range c.updates {
			var uv st.Value
			if u.value != nil {
				if uv, err = st.FromValue(u.value); err != nil {
					t.Fatalf("case %d: FromValue(%v): %v", i, u.value, err)
				}
			}
			ups = append(ups, st.Update{Path: u.path, Value: uv})
		}
		got, gerr := v.(*st.StructTensor).WithUpdatesOrdered(ups...)
		switch {
		case !tf.OK && gerr == nil:
			t.Errorf("case %d: TensorFlow fails (%s), WithUpdates gives %v", i, tf.Error, got)
		case tf.OK && gerr != nil:
			t.Errorf("case %d: TensorFlow gives %v, WithUpdates fails: %v", i, tf.Value, gerr)
		case tf.OK:
			compared++
			if g := asJSON(t, st.ToValue(got)); !reflect.DeepEqual(g, tf.Value) {
				t.Errorf("case %d: WithUpdates = %v\nTensorFlow = %v", i, g, tf.Value)
			}
		}
	}
	if compared < 8 {
		t.Errorf("only %d of %d cases compared values with TensorFlow", compared, len(cases))
	}
}
