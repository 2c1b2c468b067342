package main

import (
	"fmt"
	"io"

	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/structtensor"
)

func init() {
	registerDemoStep(demoStep{rank: 30, title: "ops: struct2tensor's path ops on the recipes", run: runOpsDemo})
}

// runOpsDemo promotes each recipe's ingredient names to the recipe,
// broadcasts each recipe's title to its ratings, and reroots on the
// ratings: the flattening steps that turn nested records into training
// examples.
func runOpsDemo(w io.Writer) error {
	st, err := loadRecipes()
	if err != nil {
		return err
	}

	promoted, err := ops.Promote(st, "recipe.ingredients.name", "ingredient_names")
	if err != nil {
		return err
	}
	names, err := promoted.FieldValue("recipe", "ingredient_names")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Promote(recipe.ingredients.name -> recipe.ingredient_names): one list of names per recipe\n  %v\n", names)
	orig, err := st.FieldValue("recipe", "ingredients", "name")
	if err != nil {
		return err
	}
	a, _ := orig.(*structtensor.Ragged).Values().StringData()
	b, _ := names.(*structtensor.Ragged).Values().StringData()
	shared := len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
	fmt.Fprintf(w, "  (the names' bytes are shared with recipe.ingredients.name, not copied: %v)\n\n", shared)

	broadcast, err := ops.Broadcast(st, "recipe.title", "user_rating", "recipe_title")
	if err != nil {
		return err
	}
	titles, err := broadcast.FieldValue("recipe", "user_rating", "recipe_title")
	if err != nil {
		return err
	}
	scores, err := broadcast.FieldValue("recipe", "user_rating", "score")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Broadcast(recipe.title onto recipe.user_rating as recipe_title): the title under each rating\n  recipe_title %v\n  score        %v\n\n", titles, scores)

	ratings, err := ops.Reroot(broadcast, "recipe.user_rating", "recipe_index")
	if err != nil {
		return err
	}
	flat, err := ops.Project(ratings, "recipe_title", "score", "recipe_index")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Reroot(recipe.user_rating) + Project: one example per rating\n%v\n", flat)
	return nil
}
