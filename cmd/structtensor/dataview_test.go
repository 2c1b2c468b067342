package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataViewRunMatchesDecode exports a DataView with the CLI, runs the
// bundled recipe records through it in TensorFlow, and expects exactly the
// output of "decode" (the Go path) for every output format.
func TestDataViewRunMatchesDecode(t *testing.T) {
	desc, err := bundledData("proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := bundledData("decode/recipes.tfrecord")
	if err != nil {
		t.Fatal(err)
	}
	schema := []string{"--descriptor-set", desc, "--message", "structtensor.testdata.recipe.Recipe", "--path", "title", "--path", "steps.tools", "--path", "ratings.user_embedding"}
	dir := filepath.Join(t.TempDir(), "dv")
	var out, errOut bytes.Buffer
	if code := run(append(append([]string{"dataview", "export"}, schema...), "-o", dir), nil, &out, &errOut); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	for _, to := range []string{"json", "jsonl", "spec"} {
		var got, want bytes.Buffer
		errOut.Reset()
		if code := run([]string{"dataview", "run", dir, "--to", to, recs}, nil, &got, &errOut); code != 0 {
			t.Fatalf("run --to %s: exit %d: %s", to, code, errOut.String())
		}
		if code := run(append(append([]string{"decode"}, schema...), "--to", to, recs), nil, &want, &errOut); code != 0 {
			t.Fatalf("decode --to %s: exit %d: %s", to, code, errOut.String())
		}
		if got.Len() == 0 || got.String() != want.String() {
			t.Errorf("--to %s: dataview run gave\n%s\ndecode gave\n%s", to, got.String(), want.String())
		}
	}
}

func TestDataViewErrors(t *testing.T) {
	for _, args := range [][]string{
		{"dataview"},
		{"dataview", "bogus"},
		{"dataview", "export", "--message", "x"},
		{"dataview", "run"},
		{"dataview", "run", t.TempDir()},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errOut); code == 0 {
			t.Errorf("%q: exit 0, want an error", args)
		}
	}
}
