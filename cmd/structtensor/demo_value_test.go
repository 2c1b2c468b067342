package main

import (
	"bytes"
	"strings"
	"testing"
)

// The values below were worked out by hand from testdata/recipe/recipes.json:
// recipe 0 (Snickerdoodle cookies) has 6 ingredients, the first "flour";
// recipe 1 (Pancakes) 3, the first "flour"; recipe 2 (Lemonade) 4, the
// first "lemon juice". Recipe 0's two ratings have embeddings
// [0.7 2.0 0.3 0.3 5.2 2.2] and [1.4 0.0 3.1 1.1 1.2 0.3], whose even
// positions are [0.7 0.3 5.2] and [1.4 3.1 1.2].
var valueDemoWant = []string{
	"== value model: the RFC's recipes as a StructTensor ==",
	"3 recipes from testdata/recipe/recipes.json",
	"StructTensor(shape=[3], fields={",
	`title: Tensor(["Snickerdoodle cookies", "Pancakes", "Lemonade"], shape=[3], dtype=string)`,
	`user_embedding: Tensor([[0.8, 2.1, 0.3, 0.1, 9.2, 1.8], [1, 0.5, 0.2, 0.9, 3.3, 0], [0, 0, 1, 1, 0, 0]], shape=[3, 6], dtype=float32)`,
	`score: Ragged([[0.8, 0.4], [0.9, 0.7, 0.6], []], shape=[3, None], dtype=float32)`,
	"st[0, \"recipe\", \"ingredients\", 0, \"name\"]\n    = Tensor(\"flour\", shape=[], dtype=string)",
	"st[:, \"recipe\", \"ingredients\", 0, \"name\"]\n    = Tensor([\"flour\", \"flour\", \"lemon juice\"], shape=[3], dtype=string)",
	"st[0, \"recipe\", \"user_rating\", :, \"user_embedding\", ::2]\n    = Tensor([[0.7, 0.3, 5.2], [1.4, 3.1, 1.2]], shape=[2, 3], dtype=float32)",
	"recipe fields [title est_time ingredients step user_rating num_ingredients]",
	"st[:, \"recipe\", \"num_ingredients\"]\n    = Tensor([6, 3, 4], shape=[3], dtype=int64)",
}

// TestValueDemoStep runs the value model's demo section and checks the
// values it computes.
func TestValueDemoStep(t *testing.T) {
	var step *demoStep
	for i := range demoSteps {
		if demoSteps[i].rank == 10 {
			step = &demoSteps[i]
		}
	}
	if step == nil {
		t.Fatal("no demo step of rank 10 registered")
	}
	var out bytes.Buffer
	out.WriteString("== " + step.title + " ==\n")
	if err := step.run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range valueDemoWant {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q; output:\n%s", want, out.String())
		}
	}
}

// TestDemoCommand runs "structtensor demo" in process, as make demo does,
// and checks that it succeeds and includes the value model's section.
func TestDemoCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"demo"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("demo exited %d: %s\n%s", code, stderr.String(), stdout.String())
	}
	for _, want := range valueDemoWant {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if code := run([]string{"demo", "extra"}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("demo with an argument exited %d, want 1", code)
	}
}
