package main

import (
	"bytes"
	"strings"
	"testing"
)

// The values below were worked out by hand from testdata/recipe/recipes.json:
// the ingredient names of recipe 0 (Snickerdoodle cookies) are flour, white
// sugar, brown sugar, butter, cinnamon, cream of tartar; of recipe 1
// (Pancakes) flour, milk, egg; of recipe 2 (Lemonade) lemon juice, sugar,
// water, ice. Recipe 0 has two ratings (scores 0.8, 0.4), recipe 1 three
// (0.9, 0.7, 0.6), recipe 2 none: five examples after rerooting.
var opsDemoWant = []string{
	"Promote(recipe.ingredients.name -> recipe.ingredient_names)",
	`Ragged([["flour", "white sugar", "brown sugar", "butter", "cinnamon", "cream of tartar"], ["flour", "milk", "egg"], ["lemon juice", "sugar", "water", "ice"]], shape=[3, None], dtype=string)`,
	"not copied: true",
	`recipe_title Ragged([["Snickerdoodle cookies", "Snickerdoodle cookies"], ["Pancakes", "Pancakes", "Pancakes"], []], shape=[3, None], dtype=string)`,
	`score        Ragged([[0.8, 0.4], [0.9, 0.7, 0.6], []], shape=[3, None], dtype=float32)`,
	"StructTensor(shape=[5], fields={",
	`recipe_title: Tensor(["Snickerdoodle cookies", "Snickerdoodle cookies", "Pancakes", "Pancakes", "Pancakes"], shape=[5], dtype=string)`,
	`score: Tensor([0.8, 0.4, 0.9, 0.7, 0.6], shape=[5], dtype=float32)`,
	`recipe_index: Tensor([0, 0, 1, 1, 1], shape=[5], dtype=int64)`,
}

// TestOpsDemoStep runs "structtensor demo" in process and checks the
// values the ops section computes.
func TestOpsDemoStep(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"demo"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("demo exited %d: %s\n%s", code, stderr.String(), stdout.String())
	}
	out := stdout.String()
	start := strings.Index(out, "== ops: ")
	if start < 0 {
		t.Fatalf("demo output has no ops section:\n%s", out)
	}
	section := out[start:]
	if end := strings.Index(section[1:], "\n== "); end >= 0 {
		section = section[:end+1]
	}
	for _, want := range opsDemoWant {
		if !strings.Contains(section, want) {
			t.Errorf("ops section lacks %q; section:\n%s", want, section)
		}
	}
}
