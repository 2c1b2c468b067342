package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/stats"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// exactStats are the quantities of a statistics JSON that do not come
// from a sketch, so any run over the same rows gives them.
type exactStats struct {
	Records  uint64
	Features []struct {
		Path                    []string
		Kind                    string
		Present, Empty, Missing uint64
		Values                  uint64
		Levels                  json.RawMessage
		Numbers                 *struct {
			Count, Nan, Zeros uint64
			Min, Max          json.RawMessage
			Mean              json.RawMessage
			StdDev            json.RawMessage `json:"std_dev"`
		}
		Strings *struct {
			Count      uint64
			TotalBytes uint64 `json:"total_bytes"`
		}
	}
}

func readExact(t *testing.T, js []byte) exactStats {
	var e exactStats
	if err := json.Unmarshal(js, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func directStats(t *testing.T, st *structtensor.StructTensor) exactStats {
	a, err := stats.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(st); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := a.Summary().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return readExact(t, b.Bytes())
}

func checkStatsFiles(t *testing.T, prefix string, want exactStats) {
	js, err := os.ReadFile(prefix + ".json")
	if err != nil {
		t.Fatal(err)
	}
	got := readExact(t, js)
	if len(want.Features) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("statistics differ from one process's:\n%s", js)
	}
	for _, ext := range []string{".pb", ".pbtxt"} {
		if fi, err := os.Stat(prefix + ext); err != nil || fi.Size() == 0 {
			t.Fatalf("%s%s: %v", prefix, ext, err)
		}
	}
}

// stats over TFRecord files (decoded) and over Parquet files writes the
// statistics of one process over the same rows.
func TestStatsCommand(t *testing.T) {
	dir := t.TempDir()
	fdsPath, plan, recs := recipeFile(t, dir, 500, 11)
	const msg = recipeMessage
	st, err := plan.Decode(recs)
	if err != nil {
		t.Fatal(err)
	}
	want := directStats(t, st)

	prefix := filepath.Join(dir, "out", "recipes")
	out, err := command(t, "stats", "--input", filepath.Join(dir, "*.tfrecord"), "--output", prefix,
		"--descriptor_set", fdsPath, "--message", msg, "--dataset_name", "recipes")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkStatsFiles(t, prefix, want)

	// The file read in 3 parts (cut between them), flattened before the
	// one combine: the same statistics.
	prefix = filepath.Join(dir, "out", "parts")
	out, err = command(t, "stats", "--input", filepath.Join(dir, "*.tfrecord"), "--output", prefix,
		"--descriptor_set", fdsPath, "--message", msg, "--dataset_name", "recipes", "--read_parts", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkStatsFiles(t, prefix, want)

	// The same rows from Parquet.
	var pq bytes.Buffer
	if err := stparquet.Write(&pq, st); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "in.parquet"), pq.Bytes(), 0o644)
	back, err := stparquet.Read(bytes.NewReader(pq.Bytes()), stparquet.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prefix = filepath.Join(dir, "out", "parquet")
	out, err = command(t, "stats", "--input", filepath.Join(dir, "*.parquet"), "--input_format", "parquet", "--output", prefix)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkStatsFiles(t, prefix, directStats(t, back))

	out, err = command(t, "stats", "--input", filepath.Join(dir, "*.tfrecord"), "--output", prefix)
	if err == nil {
		t.Fatalf("stats without a message ran:\n%s", out)
	}
}
