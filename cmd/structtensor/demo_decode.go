package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/tfrecord"
)

func init() {
	registerDemoStep(demoStep{rank: 20, title: "decode: protobuf records to a StructTensor in one native pass", run: runDecodeDemo})
}

// runDecodeDemo decodes the bundled recipe TFRecord file (written by
// go run ./decode/internal/gendata) with the recipe schema, prints the
// plan's Spec (known before any data), the decoded StructTensor, and a
// projection onto a few paths.
func runDecodeDemo(w io.Writer) error {
	desc, err := demoDescriptors()
	if err != nil {
		return err
	}
	const message = "structtensor.testdata.recipe.Recipe"
	plan, err := decode.Compile(desc, message)
	if err != nil {
		return err
	}
	batch, err := demoRecipeRecords()
	if err != nil {
		return err
	}
	st, err := plan.DecodeContiguous(batch.Data, batch.Offsets)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d records, %d bytes, decoded as %s\n\n", "testdata/decode/recipes.tfrecord", batch.Len(), len(batch.Data), message)
	fmt.Fprintf(w, "Spec (from the descriptors alone):\n%v\n\n", plan.Spec())
	fmt.Fprintf(w, "StructTensor:\n%v\n\n", st)

	paths := []string{"title", "steps.tools.name", "ratings.user_embedding"}
	proj, err := decode.Compile(desc, message, paths...)
	if err != nil {
		return err
	}
	pst, err := proj.DecodeContiguous(batch.Data, batch.Offsets)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Projected on %q:\n%v\n", paths, pst)
	return nil
}

// demoDescriptors loads the bundled FileDescriptorSet of the test schemas
// (written by go run ./decode/internal/gendesc).
func demoDescriptors() (*decode.Descriptors, error) {
	b, err := readBundled("proto/testdata.pb")
	if err != nil {
		return nil, err
	}
	return decode.LoadDescriptorSet(b)
}

// demoRecipeRecords reads the bundled recipe TFRecord file as one batch.
func demoRecipeRecords() (*tfrecord.Batch, error) {
	b, err := readBundled("decode/recipes.tfrecord")
	if err != nil {
		return nil, err
	}
	batch, err := tfrecord.NewReader(bytes.NewReader(b)).NextBatch(0)
	if err != nil {
		return nil, fmt.Errorf("testdata/decode/recipes.tfrecord: %w", err)
	}
	return batch, nil
}
