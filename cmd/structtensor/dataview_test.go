package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
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

// TestDataViewRunArrow checks "dataview run --to arrow" writes TFXIO's
// layout: one column per leaf named by its path, large_list per ragged
// dimension (one for a dense leaf), bools as uint8, strings large_binary.
// The savedmodel package's TFXIO test compares the values with TFXIO's.
func TestDataViewRunArrow(t *testing.T) {
	desc, err := bundledData("proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := bundledData("decode/recipes.tfrecord")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dv")
	var out, errOut bytes.Buffer
	if code := run([]string{"dataview", "export", "--descriptor-set", desc, "--message", "structtensor.testdata.recipe.Recipe", "--path", "title", "--path", "steps.tools", "-o", dir}, nil, &out, &errOut); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"dataview", "run", dir, "--to", "arrow", "--batch", "2", recs}, nil, &out, &errOut); code != 0 {
		t.Fatalf("run --to arrow: exit %d: %s", code, errOut.String())
	}
	r, err := ipc.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	want := "schema:\n  fields: 3\n" +
		"    - steps.tools.electric: type=large_list<item: large_list<item: large_list<item: uint8, nullable>, nullable>, nullable>, nullable\n" +
		"    - steps.tools.name: type=large_list<item: large_list<item: large_binary, nullable>, nullable>, nullable\n" +
		"    - title: type=large_list<item: large_binary, nullable>, nullable"
	if got := r.Schema().String(); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	rows := 0
	for r.Next() {
		rows += int(r.RecordBatch().NumRows())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if rows == 0 {
		t.Error("no rows")
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

// TestDataViewDigestAndInspect pins the digest export prints: run and
// inspect accept it, refuse another, and inspect describes the DataView.
func TestDataViewDigestAndInspect(t *testing.T) {
	desc, err := bundledData("proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := bundledData("decode/recipes.tfrecord")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dv")
	var out, errOut bytes.Buffer
	if code := run([]string{"dataview", "export", "--descriptor-set", desc, "--message", "structtensor.testdata.recipe.Recipe", "-o", dir}, nil, &out, &errOut); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	_, digest, ok := strings.Cut(out.String(), "digest: ")
	digest = strings.TrimSpace(digest)
	if !ok || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("export printed no digest:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"dataview", "inspect", dir, "--digest", digest}, nil, &out, &errOut); code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut.String())
	}
	text, err := os.ReadFile(filepath.Join(dir, "assets", "tensor_representations.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  "+strings.ReplaceAll(strings.TrimSuffix(string(text), "\n"), "\n", "\n  ")) {
		t.Errorf("inspect output lacks the tensor representations asset:\n%s", out.String())
	}
	for _, want := range []string{"version 3", "loadable by TFX: yes", "structtensor.testdata.recipe.Recipe", "ingredients.name", "ragged rank 1", "digest: " + digest} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
	wrong := "sha256:" + strings.Repeat("0", 64)
	for _, args := range [][]string{
		{"dataview", "inspect", dir, "--digest", wrong},
		{"dataview", "run", dir, "--digest", wrong, recs},
	} {
		errOut.Reset()
		if code := run(args, nil, &bytes.Buffer{}, &errOut); code == 0 || !strings.Contains(errOut.String(), "fingerprint mismatch") {
			t.Errorf("%q: exit %d, stderr %q; want a fingerprint mismatch", args[:3], code, errOut.String())
		}
	}
	if code := run([]string{"dataview", "run", dir, "--digest", digest, "--to", "spec", recs}, nil, &bytes.Buffer{}, &errOut); code != 0 {
		t.Errorf("run with the right digest: exit %d: %s", code, errOut.String())
	}
}
