package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

func TestDecodeCommand(t *testing.T) {
	args := []string{"decode", "--descriptor-set", "../../testdata/proto/testdata.pb",
		"--message", "structtensor.testdata.recipe.Recipe", "--path", "title", "--path", "steps.tools.name"}
	var out, errb bytes.Buffer
	if code := run(append(args, "../../testdata/decode/recipes.tfrecord"), nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("--to json output is not one JSON array: %v\n%s", err, out.String())
	}
	if len(got) != 3 || got[1]["title"] != "Green salad" || errb.Len() != 0 {
		t.Fatalf("got %v (stderr %q)", got, errb.String())
	}

	out.Reset()
	if code := run(append(args, "--to", "jsonl", "../../testdata/decode/recipes.tfrecord"), nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"oven"`) {
		t.Fatalf("jsonl: %q", out.String())
	}

	// Delimited input from stdin, with a bad second record: a one-line
	// error naming the record and offset, and a non-zero exit.
	var in bytes.Buffer
	w := tfrecord.NewDelimitedWriter(&in)
	_ = w.Write([]byte{0x0a, 0x01, 'x'})
	_ = w.Write([]byte{0x0a, 0x05, 'x'})
	_ = w.Close()
	out.Reset()
	errb.Reset()
	code := run(append(args, "--input-format", "delimited", "-"), &in, &out, &errb)
	msg := strings.TrimSpace(errb.String())
	if code == 0 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "record 1, byte 0") || !strings.Contains(msg, `"title"`) {
		t.Fatalf("exit %d, stderr %q", code, msg)
	}
	if out.Len() != 0 {
		t.Fatalf("output written despite the error: %q", out.String())
	}
}

// TestDecodeCommandOutputFile checks -o: the file holds what stdout would,
// and a failed decode leaves no file behind.
func TestDecodeCommandOutputFile(t *testing.T) {
	dir := t.TempDir()
	args := []string{"decode", "--descriptor-set", "../../testdata/proto/testdata.pb",
		"--message", "structtensor.testdata.recipe.Recipe", "--to", "jsonl"}
	var want, out, errb bytes.Buffer
	if code := run(append(args, "../../testdata/decode/recipes.tfrecord"), nil, &want, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	path := filepath.Join(dir, "recipes.jsonl")
	if code := run(append(args, "-o", path, "../../testdata/decode/recipes.tfrecord"), nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) || out.Len() != 0 {
		t.Fatalf("-o file %q (%v), stdout %q; want %q", got, err, out.String(), want.String())
	}

	var in bytes.Buffer
	w := tfrecord.NewDelimitedWriter(&in)
	_ = w.Write([]byte{0x0a, 0x05, 'x'})
	_ = w.Close()
	bad := filepath.Join(dir, "bad.jsonl")
	if code := run(append(args, "--input-format", "delimited", "-o", bad, "-"), &in, &out, &errb); code == 0 {
		t.Fatal("a malformed record decoded without error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left after a failed decode: %v", entries)
	}
}

func TestDecodeCommandProtoFiles(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"decode", "--proto", "recipe.proto", "-I", "../../testdata/proto",
		"--message", "structtensor.testdata.recipe.Recipe", "--to", "spec"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	// --to spec writes the JSON form that convert --spec reads.
	spec, err := structtensor.UnmarshalSpec(out.Bytes())
	if err != nil || !strings.HasPrefix(spec.String(), "StructSpec([None], {title: TensorSpec([None], string)") {
		t.Fatalf("spec %v (%v) from %s", spec, err, out.String())
	}
	// An unknown path names the fields that exist.
	errb.Reset()
	code = run([]string{"decode", "--proto", "recipe.proto", "-I", "../../testdata/proto",
		"--message", "structtensor.testdata.recipe.Recipe", "--path", "stepz", filepath.Join(dir, "none")}, nil, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "title, ingredients, ratings, steps") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	_ = os.Remove(dir)
}

// TestDecodeCommandJSONValues checks the JSON forms of values JSON cannot
// hold: bytes that are not UTF-8 (base64) and non-finite floats (the
// strings protojson uses).
func TestDecodeCommandJSONValues(t *testing.T) {
	var in bytes.Buffer
	w := tfrecord.NewWriter(&in)
	// Proto3Msg: dbl (5) = NaN, flt (6) = -Inf, blob (9) = "\xff".
	rec := []byte{0x29, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0x35, 0, 0, 0x80, 0xff, 0x4a, 1, 0xff}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"decode", "--descriptor-set", "../../testdata/proto/testdata.pb",
		"--message", "structtensor.testdata.proto3.Proto3Msg", "--path", "dbl", "--path", "flt", "--path", "blob", "-"}, &in, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := `[{"dbl":"NaN","flt":"-Infinity","blob":"/w=="}]`
	if strings.TrimSpace(out.String()) != want {
		t.Fatalf("got %s, want %s", out.String(), want)
	}
}
