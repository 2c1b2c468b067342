package savedmodel_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Export a DataView for two fields of the recipe schema, load it back into
// TensorFlow and decode a record with it.
func ExampleExportDataView() {
	b, err := os.ReadFile("../testdata/proto/testdata.pb")
	if err != nil {
		log.Fatal(err)
	}
	d, err := decode.LoadDescriptorSet(b)
	if err != nil {
		log.Fatal(err)
	}
	plan, err := decode.Compile(d, "structtensor.testdata.recipe.Recipe", "title", "ingredients.name")
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "dataview-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "recipe")
	if err := savedmodel.ExportDataView(dir, plan); err != nil {
		log.Fatal(err)
	}

	dv, err := savedmodel.LoadDataView(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer dv.Close()
	for _, c := range dv.Metadata().Components {
		fmt.Println(c.Key, c.DType)
	}
	// Recipe{title: "Pancakes", ingredients: [{name: "flour"}, {name: "egg"}]}
	record := []byte("\x0a\x08Pancakes\x12\x07\x0a\x05flour\x12\x05\x0a\x03egg")
	st, err := dv.Decode([][]byte{record})
	if err != nil {
		log.Fatal(err)
	}
	names, _ := st.FieldValue("ingredients", "name")
	fmt.Printf("%s\n", names.(*structtensor.Ragged).Values().StringAt(1))
	want, _ := plan.Decode([][]byte{record})
	fmt.Println(structtensor.Equal(st, want))
	// Output:
	// title/values string
	// ingredients/row_splits_0 int64
	// ingredients.name/values string
	// egg
	// true
}
