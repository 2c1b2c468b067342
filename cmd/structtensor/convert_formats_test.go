package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

func TestConvertArrowParquet(t *testing.T) {
	records := "{\"id\":1,\"tags\":[\"a\"],\"r\":{\"x\":1.5}}\n{\"id\":2,\"tags\":[],\"r\":{\"x\":2.5}}\n"
	// FromJSON orders inferred fields by name; the columnar round trip
	// must give what jsonl -> jsonl gives.
	code, want, errs0 := convert(t, records, "--from", "jsonl", "--to", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs0)
	}
	dir := t.TempDir()
	for _, to := range []string{"arrow", "parquet"} {
		path := filepath.Join(dir, "out."+to)
		if code, _, errs := convert(t, records, "--from", "jsonl", "--to", to, "-o", path); code != 0 {
			t.Fatalf("%s: exit %d: %s", to, code, errs)
		}
		code, out, errs := convert(t, "", "--from", to, "--to", "jsonl", path)
		if code != 0 {
			t.Fatalf("%s back: exit %d: %s", to, code, errs)
		}
		if out != want {
			t.Errorf("jsonl -> %s -> jsonl = %q, want %q", to, out, want)
		}
	}
	// Through stdout and stdin.
	code, arrowOut, errs := convert(t, records, "--from", "jsonl", "--to", "arrow")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, out, _ := convert(t, arrowOut, "--from", "arrow", "--to", "parquet")
	if code != 0 {
		t.Fatal("arrow -> parquet failed")
	}
	if s, err := stparquet.Read(bytes.NewReader([]byte(out)), stparquet.ReadOptions{}); err != nil || s.NumRows() != 2 {
		t.Fatalf("parquet from stdout: %v, %v", s, err)
	}
	// A value that is not records becomes one column named "value".
	code, out, errs = convert(t, "[[1,2],[3]]", "--to", "arrow")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s, err := starrow.ReadIPC(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.FieldValue("value")
	if err != nil || !structtensor.Equal(v, must(structtensor.NewRaggedFromSplits(must(structtensor.NewTensor(nil, []int64{1, 2, 3})), []int64{0, 2, 3}))) {
		t.Errorf("value column = %v, %v", v, err)
	}
	// Corrupt input: a one-line error, no output.
	code, out, errs = convert(t, "PAR1 not really", "--from", "parquet")
	if code == 0 || out != "" || !strings.Contains(errs, "corrupt") {
		t.Errorf("corrupt parquet: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestDecodeToArrowParquet(t *testing.T) {
	if _, err := os.Stat("../../testdata/decode/recipes.tfrecord"); err != nil {
		testenv.Missing(t, "decode test data absent")
	}
	args := []string{"decode", "--descriptor-set", "../../testdata/proto/testdata.pb",
		"--message", "structtensor.testdata.recipe.Recipe", "--path", "title", "--path", "steps.tools.name"}
	var js, errb bytes.Buffer
	if code := run(append(args, "../../testdata/decode/recipes.tfrecord"), nil, &js, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := bytes.TrimSpace(js.Bytes())
	var err error
	for _, to := range []string{"arrow", "parquet"} {
		var out bytes.Buffer
		if code := run(append(args, "--to", to, "../../testdata/decode/recipes.tfrecord"), nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", to, code, errb.String())
		}
		var got *structtensor.StructTensor
		if to == "arrow" {
			got, err = starrow.ReadIPC(&out)
		} else {
			got, err = stparquet.Read(bytes.NewReader(out.Bytes()), stparquet.ReadOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", to, err)
		}
		gj, _ := structtensor.ToJSON(got)
		if !bytes.Equal(gj, want) {
			t.Errorf("decode --to %s reads back as\n%s\nwant\n%s", to, gj, want)
		}
	}
}
