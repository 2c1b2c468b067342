package decode_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// From a TFRecord file of serialized protos to Arrow record batches: each
// decoded batch is exported to Arrow without copying its columns.
func ExamplePlan_Batches() {
	desc, err := decode.ParseProtoFiles([]string{"../testdata/proto"}, "recipe.proto")
	if err != nil {
		log.Fatal(err)
	}
	plan, err := decode.Compile(desc, "structtensor.testdata.recipe.Recipe", "title", "servings")
	if err != nil {
		log.Fatal(err)
	}

	// A file of five records (title is field 1, servings field 5).
	var file bytes.Buffer
	w := tfrecord.NewWriter(&file)
	for i, title := range []string{"Tea", "Toast", "Soup", "Stew", "Pie"} {
		rec := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), title)
		rec = protowire.AppendVarint(protowire.AppendTag(rec, 5, protowire.VarintType), uint64(i+1))
		if err := w.Write(rec); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	for batch, err := range plan.Batches(context.Background(), &file, decode.StreamOptions{BatchSize: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		rec, err := starrow.ToArrow(batch)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rec.NumRows(), rec.Column(0), rec.Column(1))
		rec.Release()
	}
	// Output:
	// 2 ["Tea" "Toast"] [1 2]
	// 2 ["Soup" "Stew"] [3 4]
	// 1 ["Pie"] [5]
}
