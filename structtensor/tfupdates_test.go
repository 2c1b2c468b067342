package structtensor_test

import (
	"reflect"
	"testing"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// updateCase is st.with_updates({path: value, ...}, validate=True) on a
// value built by from_pyval; each update value is built with
// tf.ragged.constant (ragged) or tf.constant, and a nil value removes.
type updateCase struct {
	value   any
	updates []update
}

type update struct {
	path   []string
	value  any
	ragged bool
}

func (c updateCase) py() map[string]any {
	var ups [][]any
	for _, u := range c.updates {
		ups = append(ups, []any{u.path, u.value, u.ragged})
	}
	return map[string]any{"op": "with_updates", "value": c.value, "updates": ups}
}

func updateCases() []updateCase {
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
	return []updateCase{
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
}

func checkUpdates(t *testing.T, cases []updateCase, results []tfResult) {
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
			if g := st.AsJSON(t, st.ToValue(got)); !reflect.DeepEqual(g, tf.Value) {
				t.Errorf("case %d: WithUpdates = %v\nTensorFlow = %v", i, g, tf.Value)
			}
		}
	}
	if compared < 8 {
		t.Errorf("only %d of %d cases compared values with TensorFlow", compared, len(cases))
	}
}
