package stparquet_test

import (
	"bytes"
	"context"
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

func ExampleFile_RowGroups() {
	v, _ := st.StructFromJSONLines([]byte(`{"title": "tea", "tags": ["hot"]}
{"title": "toast", "tags": []}
{"title": "soup", "tags": ["hot", "salty"]}
`))
	var file bytes.Buffer
	w := stparquet.NewWriter(&file)
	for _, rows := range []st.Slice{{Stop: new(2)}, {Start: new(2)}} {
		part, _ := v.Get(rows)
		if err := w.Write(part.(*st.StructTensor)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	// Memory holds one row group at a time.
	f, err := stparquet.Open(bytes.NewReader(file.Bytes()), int64(file.Len()), stparquet.ReadOptions{Name: "recipes.parquet"})
	if err != nil {
		panic(err)
	}
	for s, err := range f.RowGroups(context.Background()) {
		if err != nil {
			panic(err)
		}
		tags, _ := s.FieldValue("tags")
		fmt.Println(s.NumRows(), tags)
	}
	// Output:
	// 2 Ragged([["hot"], []], shape=[2, None], dtype=string)
	// 1 Ragged([["hot", "salty"]], shape=[1, None], dtype=string)
}
