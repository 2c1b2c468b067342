package starrow_test

import (
	"bytes"
	"fmt"

	"github.com/structtensor/structtensor-go/starrow"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func ExampleToArrow() {
	v, err := st.FromJSONLines([]byte(`{"id": 1, "tags": ["a", "b"]}
{"id": 2, "tags": []}
`))
	if err != nil {
		panic(err)
	}
	rec, err := starrow.ToArrow(v.(*st.StructTensor))
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Schema().Field(1).Type)
	fmt.Println(rec.Column(1))
	// Output:
	// large_list<item: large_utf8>
	// [["a" "b"] []]
}

func ExampleFromArrow() {
	v, _ := st.FromJSONLines([]byte(`{"id": 1, "tags": ["a", "b"]}` + "\n"))
	rec, _ := starrow.ToArrow(v.(*st.StructTensor))
	back, err := starrow.FromArrow(rec)
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Equal(back, v))
	// Output:
	// true
}

func ExampleWriteIPC() {
	v, _ := st.FromJSONLines([]byte(`{"x": [1.5, 2]}` + "\n" + `{"x": []}` + "\n"))
	var stream bytes.Buffer
	if err := starrow.WriteIPC(&stream, v.(*st.StructTensor)); err != nil {
		panic(err)
	}
	back, err := starrow.ReadIPC(&stream)
	if err != nil {
		panic(err)
	}
	x, _ := back.FieldValue("x")
	fmt.Println(x)
	// Output:
	// Ragged([[1.5, 2], []], shape=[2, None], dtype=float64)
}
