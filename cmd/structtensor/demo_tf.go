package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

func init() {
	registerDemoStep(demoStep{rank: 50, title: "tensorflow: the decoder as a native op, saved and loaded as a SavedModel DataView", run: runTFDemo})
}

// runTFDemo exports the recipe DataView to a temporary directory, loads it
// back into TensorFlow, runs the bundled recipe records through the saved
// graph, and checks the result against the Go decoder.
func runTFDemo(w io.Writer) error {
	desc, err := demoDescriptors()
	if err != nil {
		return err
	}
	paths := []string{"title", "ingredients.name", "ingredients.amount", "steps.tools.name", "steps.tools.electric"}
	plan, err := decode.Compile(desc, "structtensor.testdata.recipe.Recipe", paths...)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "structtensor-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "recipe-dataview")
	if err := savedmodel.ExportDataView(dir, plan); err != nil {
		return err
	}
	meta, err := savedmodel.ReadMetadata(dir)
	if err != nil {
		return err
	}
	digest, err := savedmodel.Digest(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "TensorFlow %s. Exported %s to a temporary SavedModel DataView\n", tfbridge.Version(), plan)
	fmt.Fprintf(w, "(tag %q, signatures %q, TFX-loadable decode_fun; digest %s...); decode_fun outputs:\n", savedmodel.Tag, meta.Signatures, digest[:23])
	for _, l := range meta.Leaves {
		fmt.Fprintf(w, "  %-34s %-7s ragged rank %d\n", l.Path, l.DType, l.RaggedRank)
	}

	dv, err := savedmodel.LoadDataView(dir, savedmodel.LoadOptions{Digest: digest})
	if err != nil {
		return err
	}
	defer dv.Close()
	batch, err := demoRecipeRecords()
	if err != nil {
		return err
	}
	records, err := structtensor.NewStringTensor(structtensor.Shape{batch.Len()}, batch.Data, batch.Offsets, false)
	if err != nil {
		return err
	}
	st, err := dv.DecodeTensor(records)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLoaded it back and ran the %d bundled records through TensorFlow:\n%v\n", batch.Len(), st)
	want, err := plan.DecodeContiguous(batch.Data, batch.Offsets)
	if err != nil {
		return err
	}
	if !structtensor.Equal(st, want) {
		return fmt.Errorf("the DataView's StructTensor differs from the Go decoder's")
	}
	fmt.Fprintln(w, "\nEqual to the Go decoder's StructTensor for the same records.")
	return nil
}
