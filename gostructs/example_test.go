package gostructs_test

import (
	"fmt"

	"github.com/structtensor/structtensor-go/gostructs"
)

type Step struct {
	Text string `structtensor:"description"`
}

type Recipe struct {
	Title   string   `structtensor:"title"`
	Minutes *float32 `structtensor:"est_time"`
	Steps   []Step   `structtensor:"step"`
	Tags    []string `structtensor:"tags"`
	RGB     [3]uint8 `structtensor:"rgb"`
}

func ExampleFromStructs() {
	m := float32(20)
	rows := []Recipe{
		{Title: "Pancakes", Minutes: &m, Steps: []Step{{"Whisk."}, {"Fry."}}, Tags: []string{"sweet"}},
		{Title: "Tea", RGB: [3]uint8{200, 120, 40}},
	}
	s, err := gostructs.FromStructs(rows)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Spec())
	steps, _ := s.FieldValue("step", "description")
	fmt.Println(steps)
	// Output:
	// StructSpec([2], {title: TensorSpec([2], string), est_time: RaggedTensorSpec([2, None], float32, ragged_rank=1), step: StructSpec([2, None], {description: RaggedTensorSpec([2, None], string, ragged_rank=1)}), tags: RaggedTensorSpec([2, None], string, ragged_rank=1), rgb: TensorSpec([2, 3], uint32)})
	// Ragged([["Whisk.", "Fry."], []], shape=[2, None], dtype=string)
}

func ExampleToStructs() {
	m := float32(20)
	s, err := gostructs.FromStructs([]Recipe{{Title: "Pancakes", Minutes: &m}, {Title: "Tea"}})
	if err != nil {
		panic(err)
	}
	// Read back into a narrower view: only the fields it names.
	type Title struct {
		Title   string   `structtensor:"title"`
		Minutes *float64 `structtensor:"est_time"`
	}
	out, err := gostructs.ToStructs[Title](s)
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0].Title, *out[0].Minutes, out[1].Title, out[1].Minutes)
	// Output:
	// Pancakes 20 Tea <nil>
}
