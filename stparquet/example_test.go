package stparquet_test

import (
	"bytes"
	"fmt"

	"github.com/structtensor/structtensor-go/stparquet"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func ExampleRead() {
	v, _ := st.FromJSONLines([]byte(`{"title": "tea", "steps": [{"text": "boil", "minutes": 3}]}
{"title": "toast", "steps": [{"text": "slice", "minutes": 1}, {"text": "toast", "minutes": 2}]}
`))
	var file bytes.Buffer
	if err := stparquet.Write(&file, v.(*st.StructTensor)); err != nil {
		panic(err)
	}
	// Read only the step texts: one leaf column of the file.
	s, err := stparquet.Read(bytes.NewReader(file.Bytes()), stparquet.ReadOptions{Columns: []string{"steps.text"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Spec())
	text, _ := s.FieldValue("steps", "text")
	fmt.Println(text)
	// Output:
	// StructSpec([2], {steps: StructSpec([2, None], {text: RaggedTensorSpec([2, None], string, ragged_rank=1)})})
	// Ragged([["boil"], ["slice", "toast"]], shape=[2, None], dtype=string)
}
