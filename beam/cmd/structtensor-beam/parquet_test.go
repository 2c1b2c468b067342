package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// sortedRows returns the JSON lines of every row of the files, sorted
// (shards hold row groups in any order).
func sortedRows(t *testing.T, read func(path string) (*structtensor.StructTensor, error), files ...string) []string {
	t.Helper()
	var lines []string
	for _, path := range files {
		s, err := read(path)
		if err != nil {
			t.Fatal(err)
		}
		js, err := structtensor.ToJSONLines(s)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(string(js), "\n"), "\n")...)
	}
	slices.Sort(lines)
	return lines
}

// convert --input_format parquet rewrites the rows of Parquet files of
// several row groups as Parquet shards: the same rows as reading the
// inputs in one process; decode refuses Parquet input.
func TestConvertParquetCommand(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		var b strings.Builder
		for r := range 40 {
			fmt.Fprintf(&b, `{"id": %d, "tags": [%s], "w": {"x": %d.5}}`+"\n", i*100+r, strings.TrimSuffix(strings.Repeat(`"t",`, r%3), ","), r)
		}
		v, err := structtensor.StructFromJSONLines([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := stparquet.NewWriter(&buf)
		for start := 0; start < 40; start += 9 {
			part, err := v.Get(structtensor.Slice{Start: new(start), Stop: new(min(start+9, 40))})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(part.(*structtensor.StructTensor)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("in-%d.parquet", i)), buf.Bytes(), 0o644)
	}
	inputs, _ := filepath.Glob(filepath.Join(dir, "in-*.parquet"))
	out, err := command(t, "convert", "--input", filepath.Join(dir, "in-*.parquet"), "--input_format", "parquet",
		"--output", filepath.Join(dir, "out", "part"), "--shards", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "out", "part-*"))
	if len(shards) == 0 || !strings.HasSuffix(shards[0], ".parquet") {
		t.Fatalf("output files %v", shards)
	}
	read := func(p string) (*structtensor.StructTensor, error) {
		return stparquet.ReadFile(p, stparquet.ReadOptions{})
	}
	got, want := sortedRows(t, read, shards...), sortedRows(t, read, inputs...)
	if len(want) != 120 || !slices.Equal(got, want) {
		t.Fatalf("converted rows (%d) differ from the inputs' (%d)", len(got), len(want))
	}

	out, err = command(t, "decode", "--input", filepath.Join(dir, "in-*.parquet"), "--input_format", "parquet", "--output", filepath.Join(dir, "x"))
	if err == nil || !strings.Contains(out, "is for convert") {
		t.Fatalf("decode of parquet: %v\n%s", err, out)
	}
}
