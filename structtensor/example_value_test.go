package structtensor_test

import (
	"fmt"
	"math"
	"os"

	"github.com/structtensor/structtensor-go/structtensor"
)

func ExampleFromValue() {
	// A ragged collection of structs, as TensorFlow's
	// StructuredTensor.from_pyval reads it.
	st, err := structtensor.FromValue([]any{
		[]any{map[string]any{"a": 1}, map[string]any{"a": 2}, map[string]any{"a": 3}},
		[]any{map[string]any{"a": 4}, map[string]any{"a": 5}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Spec())
	a, _ := st.(*structtensor.StructTensor).FieldValue("a")
	fmt.Println(structtensor.ToValue(a))

	// Fields that disagree are an error naming the path.
	_, err = structtensor.FromValue([]any{map[string]any{"a": 1}, map[string]any{"a": "c"}})
	fmt.Println(err)

	// A spec overrides inference: here dense inner dimensions and int32.
	t, _ := structtensor.FromValue([]any{[]any{1, 2}, []any{3, 4}},
		&structtensor.TensorSpec{DType: structtensor.Int32, Shape: structtensor.Shape{structtensor.Unknown, 2}})
	fmt.Println(t.Spec())
	// Output:
	// StructSpec([2, None], {a: RaggedTensorSpec([2, None], int64, ragged_rank=1)})
	// [[1 2 3] [4 5]]
	// structtensor: cannot infer value: field "a" at [1]: int64 vs string
	// TensorSpec([2, 2], int32)
}

func ExampleToValue() {
	st, _ := structtensor.FromValue(map[string]any{"a": 12, "b": []any{1.5, 2.5}, "c": []any{[]any{"x"}, []any{}}})
	v := structtensor.ToValue(st).(map[string]any)
	fmt.Printf("%T %v\n", v["a"], v["a"])
	fmt.Printf("%T %v\n", v["b"], v["b"])
	fmt.Printf("%v\n", v["c"])
	// Output:
	// int64 12
	// []interface {} [1.5 2.5]
	// [[x] []]
}

func ExampleFromJSON() {
	st, err := structtensor.FromJSON([]byte(`{"a": 12, "b": [1, 2, 3], "c": [[1, 2], [3]]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Spec())
	out, _ := structtensor.ToJSON(st)
	fmt.Println(string(out))
	// Output:
	// StructSpec([], {a: TensorSpec([], int64), b: TensorSpec([3], int64), c: RaggedTensorSpec([2, None], int64, ragged_rank=1)})
	// {"a":12,"b":[1,2,3],"c":[[1,2],[3]]}
}

func ExampleFromJSONLines() {
	records := []byte(`{"id": 1, "tags": ["a", "b"]}
{"id": 2, "tags": []}
{"id": 3, "tags": ["c"]}
`)
	st, err := structtensor.FromJSONLines(records)
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Spec())
	if err := structtensor.WriteJSONLines(os.Stdout, st); err != nil {
		panic(err)
	}
	// Bad records are reported with their line, byte offset and path.
	_, err = structtensor.FromJSONLines([]byte("{\"id\": 1}\n{\"id\": \"two\"}\n"))
	fmt.Println(err)
	// Output:
	// StructSpec([3], {id: TensorSpec([3], int64), tags: RaggedTensorSpec([3, None], string, ragged_rank=1)})
	// {"id":1,"tags":["a","b"]}
	// {"id":2,"tags":[]}
	// {"id":3,"tags":["c"]}
	// structtensor: cannot infer value: line 2, byte offset 17: field "id" at [1]: int64 vs string
}

func ExampleToJSON() {
	x, _ := structtensor.FromValue(map[string]any{
		"id":    uint64(18446744073709551615),
		"score": []any{0.5, math.Inf(1), math.NaN()},
		"raw":   []byte{0xff, 0x00},
	})
	out, _ := structtensor.ToJSON(x)
	fmt.Println(string(out))
	// uint64 stays exact, non-finite floats are strings that a float spec
	// reads back, and bytes that are not UTF-8 are written as base64.
	back, _ := structtensor.FromJSON(out, x.Spec())
	fmt.Println(structtensor.ToValue(back).(map[string]any)["score"])
	// Output:
	// {"id":18446744073709551615,"raw":"/wA=","score":[0.5,"Infinity","NaN"]}
	// [0.5 +Inf NaN]
}

// StructFromJSONLines returns the *StructTensor of one-object-per-line
// input directly, and an error for lines that are not objects.
func ExampleStructFromJSONLines() {
	st, err := structtensor.StructFromJSONLines([]byte("{\"id\": 1}\n{\"id\": 2}\n"))
	if err != nil {
		panic(err)
	}
	fmt.Println(st.NumRows(), st.FieldNames())
	_, err = structtensor.StructFromJSONLines([]byte("1\n2\n"))
	fmt.Println(err)
	// Output:
	// 2 [id]
	// structtensor: cannot infer value: the JSON lines hold TensorSpec([2], int64) values, not objects
}
