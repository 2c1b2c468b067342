package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

func init() {
	registerDemoStep(demoStep{rank: 40, title: "formats: the recipes as Arrow and Parquet", run: runFormatsDemo})
}

// runFormatsDemo exports the recipes to an Arrow record batch (sharing the
// buffers), prints its schema, writes the batch as Parquet and reads it
// back whole and projected.
func runFormatsDemo(w io.Writer) error {
	st, err := loadRecipes()
	if err != nil {
		return err
	}
	rec, err := starrow.ToArrow(st)
	if err != nil {
		return err
	}
	defer rec.Release()
	fmt.Fprintf(w, "Arrow record batch of %d rows (no copy: the offsets of every list are our row_splits):\n", rec.NumRows())
	for _, line := range strings.Split(strings.TrimSpace(rec.Schema().String()), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}

	var buf bytes.Buffer
	if err := stparquet.Write(&buf, st); err != nil {
		return err
	}
	back, err := stparquet.Read(bytes.NewReader(buf.Bytes()), stparquet.ReadOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Parquet: %d bytes written; read back equal to the original: %v\n", buf.Len(), structtensor.Equal(back, st))

	proj, err := stparquet.Read(bytes.NewReader(buf.Bytes()), stparquet.ReadOptions{Columns: []string{"recipe.ingredients.name"}})
	if err != nil {
		return err
	}
	names, err := proj.FieldValue("recipe", "ingredients", "name")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Parquet projected to recipe.ingredients.name (one leaf column read):\n  %v\n  %v\n", proj.Spec(), names)
	return nil
}
