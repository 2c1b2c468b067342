package structtensor_test

import (
	"fmt"
	"log"

	"github.com/structtensor/structtensor-go/structtensor"
)

// A vector of three records with a dense and a ragged field: fields are
// stored flat, one row per record.
func ExampleNewStruct() {
	ids, _ := structtensor.NewTensor(nil, []int64{7, 8, 9})
	words, _ := structtensor.NewTensor(nil, []string{"a", "b", "c", "d"})
	tags, _ := structtensor.NewRaggedFromSplits(words, []int64{0, 2, 2, 4})
	st, err := structtensor.NewStruct(3,
		structtensor.Field{Name: "id", Value: ids},
		structtensor.Field{Name: "tags", Value: tags},
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Shape(), st.FieldNames())
	fmt.Println(st)
	// Output:
	// [3] [id tags]
	// StructTensor(shape=[3], fields={
	//   id: Tensor([7, 8, 9], shape=[3], dtype=int64)
	//   tags: Ragged([["a", "b"], [], ["c", "d"]], shape=[3, None], dtype=string)
	// })
}

// FieldValue re-applies the struct's shared partitions to a stored field:
// a [2, None] struct's int field is a [2, None] ragged value.
func ExampleStructTensor_FieldValue() {
	n, _ := structtensor.NewTensor(nil, []int64{1, 2, 3})
	rows, _ := structtensor.NewRowSplits([]int64{0, 2, 3})
	st, _ := structtensor.NewPartitionedStruct(2, []*structtensor.RowPartition{rows},
		structtensor.Field{Name: "n", Value: n})
	v, _ := st.FieldValue("n")
	fmt.Println(v)
	fmt.Println(v.Spec())
	// Output:
	// Ragged([[1, 2], [3]], shape=[2, None], dtype=int64)
	// RaggedTensorSpec([2, None], int64, ragged_rank=1)
}

// Get follows TensorFlow's StructuredTensor indexing: dimension keys for
// the struct's dimensions, then a field name, then keys into the field.
func ExampleStructTensor_Get() {
	names, _ := structtensor.NewTensor(nil, []string{"flour", "sugar", "butter"})
	amounts, _ := structtensor.NewTensor(nil, []float32{3, 1, 0.5})
	ingredients, _ := structtensor.NewStruct(3,
		structtensor.Field{Name: "name", Value: names},
		structtensor.Field{Name: "amount", Value: amounts},
	)
	recipe, _ := structtensor.NewScalarStruct(structtensor.Field{Name: "ingredients", Value: ingredients})

	first, _ := recipe.Get("ingredients", 0, "name")
	all, _ := recipe.Get("ingredients", structtensor.All, "name")
	everyOther, _ := recipe.Get("ingredients", structtensor.Slice{Step: 2}, "amount")
	last, _ := recipe.Get("ingredients", -1)
	_, err := recipe.Get("ingredients", 3, "name")
	fmt.Println(first)
	fmt.Println(all)
	fmt.Println(everyOther)
	fmt.Println(last)
	fmt.Println(err)
	// Output:
	// Tensor("flour", shape=[], dtype=string)
	// Tensor(["flour", "sugar", "butter"], shape=[3], dtype=string)
	// Tensor([3, 0.5], shape=[2], dtype=float32)
	// StructTensor(shape=[], fields={
	//   name: Tensor("butter", shape=[], dtype=string)
	//   amount: Tensor(0.5, shape=[], dtype=float32)
	// })
	// Get["ingredients", 3, "name"]: structtensor: bad index: index 3 out of range for dimension 0 of size 3 (at field "ingredients.name")
}

// WithUpdates adds or replaces fields by path; the update's outer
// dimensions must be the holding struct's shape. Unchanged fields are
// shared with the original.
func ExampleStructTensor_WithUpdates() {
	scores, _ := structtensor.NewTensor(nil, []float32{0.8, 0.4})
	ratings, _ := structtensor.NewStruct(2, structtensor.Field{Name: "score", Value: scores})
	st, _ := structtensor.NewScalarStruct(structtensor.Field{Name: "ratings", Value: ratings})

	pct, _ := structtensor.NewTensor(nil, []int32{80, 40})
	up, err := st.WithUpdates(map[string]structtensor.Value{"ratings.percent": pct})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(up)
	short, _ := structtensor.NewTensor(nil, []int32{1})
	_, err = st.WithUpdates(map[string]structtensor.Value{"ratings.percent": short})
	fmt.Println(err)
	// Output:
	// StructTensor(shape=[], fields={
	//   ratings: StructTensor(shape=[2], fields={
	//     score: Tensor([0.8, 0.4], shape=[2], dtype=float32)
	//     percent: Tensor([80, 40], shape=[2], dtype=int32)
	//   })
	// })
	// WithUpdates: structtensor: shape mismatch: field "ratings.percent" has outer shape [1], struct has shape [2]
}
