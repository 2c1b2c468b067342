package main

import (
	"fmt"
	"io"

	"github.com/structtensor/structtensor-go/structtensor"
)

func init() {
	registerDemoStep(demoStep{rank: 10, title: "value model: the RFC's recipes as a StructTensor", run: runValueDemo})
}

// runValueDemo reads the RFC's recipe example (three recipes as JSON
// lines), prints it, indexes it the way the RFC does, and adds a field.
func runValueDemo(w io.Writer) error {
	st, err := loadRecipes()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d recipes from testdata/recipe/recipes.json (spec recipes.spec.json), shape %v:\n%v\n\n",
		st.NumRows(), st.Shape(), st)

	fmt.Fprintln(w, "indexing (TensorFlow StructuredTensor semantics):")
	for _, q := range []struct {
		python string
		keys   []any
	}{
		{`st[0, "recipe", "ingredients", 0, "name"]`, []any{0, "recipe", "ingredients", 0, "name"}},
		{`st[:, "recipe", "ingredients", 0, "name"]`, []any{structtensor.All, "recipe", "ingredients", 0, "name"}},
		{`st[0, "recipe", "user_rating", :, "user_embedding", ::2]`,
			[]any{0, "recipe", "user_rating", structtensor.All, "user_embedding", structtensor.Slice{Step: 2}}},
	} {
		r, err := st.Get(q.keys...)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s\n    = %v\n", q.python, r)
	}

	// WithUpdates: each recipe's number of ingredients, a [3] field of the
	// [3] recipe struct, from the row lengths of the ingredients dimension.
	ing, err := st.FieldValue("recipe", "ingredients")
	if err != nil {
		return err
	}
	rows := ing.(*structtensor.StructTensor).Partitions()[0]
	counts := make([]int64, rows.NumRows())
	for i := range counts {
		counts[i] = int64(rows.RowLength(i))
	}
	n, err := structtensor.NewTensor(nil, counts)
	if err != nil {
		return err
	}
	up, err := st.WithUpdates(map[string]structtensor.Value{"recipe.num_ingredients": n})
	if err != nil {
		return err
	}
	got, err := up.Get(structtensor.All, "recipe", "num_ingredients")
	if err != nil {
		return err
	}
	rec, _ := up.FieldValue("recipe")
	fmt.Fprintf(w, "\nwith_updates(recipe.num_ingredients):\n  recipe fields %v\n  st[:, \"recipe\", \"num_ingredients\"]\n    = %v\n",
		rec.(*structtensor.StructTensor).FieldNames(), got)
	return nil
}

// loadRecipes reads the bundled recipes (JSON lines) with their spec, for
// every demo step that shows them. The spec gives the RFC's schema:
// embeddings are dense vectors of 6 floats (inference alone would make
// them ragged, as TensorFlow's from_pyval does) and fields keep the RFC's
// order.
func loadRecipes() (*structtensor.StructTensor, error) {
	specJSON, err := readBundled("recipe/recipes.spec.json")
	if err != nil {
		return nil, err
	}
	spec, err := structtensor.UnmarshalSpec(specJSON)
	if err != nil {
		return nil, fmt.Errorf("testdata/recipe/recipes.spec.json: %w", err)
	}
	data, err := readBundled("recipe/recipes.json")
	if err != nil {
		return nil, err
	}
	v, err := structtensor.FromJSONLines(data, spec)
	if err != nil {
		return nil, fmt.Errorf("testdata/recipe/recipes.json: %w", err)
	}
	st, ok := v.(*structtensor.StructTensor)
	if !ok {
		return nil, fmt.Errorf("testdata/recipe/recipes.json: want records, got %v", v.Spec())
	}
	return st, nil
}
