package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
)

// TestDataViewExportSchemaTFXIO exports the DataView of a schema.pbtxt
// whose tensor_representation_group shapes its features (dense_tensor
// with defaults, varlen_sparse_tensor, ragged_tensor with row_length and
// uniform_row_length partitions, beside features no representation
// reads), and has tfx-bsl's TFExampleRecord read the same records by the
// same schema (testdata/schema_tfxio.py, .venv-tfx): the DataView's
// decode_fun (Python TensorFlow) gives TFXIO's tensors, named as TFXIO
// names them, with equal values and row partitions.
func TestDataViewExportSchemaTFXIO(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tfx-bsl")
	}
	lib := testenv.OpsLibrary(t)
	python := testenv.Python(t, ".venv-tfx")
	dir := t.TempDir()
	script := filepath.Join("testdata", "schema_tfxio.py")
	pyRun := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(python, append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("schema_tfxio.py %s: %v\n%s", args[0], err, stderr.Bytes())
		}
		return out
	}
	pyRun("write", dir)
	dv := filepath.Join(dir, "dv")
	var out, errOut bytes.Buffer
	if code := run([]string{"dataview", "export", "--schema", filepath.Join(dir, "schema.pbtxt"), "-o", dv}, nil, &out, &errOut); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	var got struct {
		Tensors  []string `json:"tensors"`
		Compared int      `json:"compared"`
		Records  int      `json:"records"`
	}
	if err := json.Unmarshal(pyRun("check", lib, dir, dv), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"age", "cells", "country", "embedding", "grid2", "ids", "language", "price", "query"}
	if !slices.Equal(got.Tensors, want) || got.Compared != len(want) || got.Records == 0 {
		t.Errorf("TFXIO's tensors %v (%d compared, %d records), want %v", got.Tensors, got.Compared, got.Records, want)
	}
}
