package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// convertFile runs "structtensor convert args... FILE" in process with
// FILE holding input, so that the input is streamed.
func convertFile(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	return convert(t, "", append(args, in)...)
}

// setBatch makes convert stream JSON lines n records at a time for the
// rest of the test.
func setBatch(t *testing.T, n int) {
	old := jsonlBatchRecords
	jsonlBatchRecords = n
	t.Cleanup(func() { jsonlBatchRecords = old })
}

// A JSON-lines file is streamed, and converts to exactly what the whole
// read of the same bytes gives, errors included, with or without a spec: where the first batch
// does not show the types of later ones, too.
func TestConvertStreamsJSONLines(t *testing.T) {
	setBatch(t, 2)
	var many strings.Builder
	for i := range 25 {
		fmt.Fprintf(&many, "{\"id\": %d, \"tags\": [%s], \"w\": {\"x\": %d.5}}\n", i, strings.Repeat(`"t",`, i%4)+`"u"`, i)
	}
	dir := t.TempDir()
	// specOf writes the spec the whole read infers from input.
	specOf := func(name, input string) string {
		path := filepath.Join(dir, name)
		if code, _, errs := convert(t, input, "--from", "jsonl", "--to", "spec", "-o", path); code != 0 {
			t.Fatal(errs)
		}
		return path
	}
	manySpec := specOf("many", many.String())
	anyRows := filepath.Join(dir, "anyrows")
	if err := os.WriteFile(anyRows, []byte(`{"kind":"struct","shape":[null],"fields":[{"name":"a","spec":{"kind":"ragged","dtype":"int64","shape":[null,null],"ragged_rank":1}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, input, spec, to string
	}{
		{"many records", many.String(), manySpec, "jsonl"},
		{"many records to json", many.String(), manySpec, "json"},
		{"many records to spec", many.String(), manySpec, "spec"},
		{"spec of another number of records", many.String() + "{\"id\": 99, \"tags\": [], \"w\": {\"x\": 1}}\n", manySpec, "spec"},
		{"empty lists first", "{\"a\": []}\n{\"a\": []}\n{\"a\": [1, 2]}\n", anyRows, "spec"},
		{"blank lines", "\n{\"a\": [1]}\n\n\n{\"a\": [2]}\n\n{\"a\": [3]}", anyRows, "jsonl"},
		{"empty", "", anyRows, "jsonl"},
		{"bad record in a later batch", "{\"a\": [1]}\n{\"a\": [2]}\n{\"a\": [3]}\n{\"a\": [\"x\"]}\n", anyRows, "jsonl"},
		{"unknown field in a later batch", "{\"a\": [1]}\n{\"a\": [2]}\n{\"a\": [3], \"b\": 1}\n", anyRows, "jsonl"},
		{"syntax error in a later batch", "{\"a\": [1]}\n{\"a\": [2]}\n{\"a\": [3]}\n{\"a\": \n", anyRows, "jsonl"},
		{"no spec: many records", many.String(), "", "jsonl"},
		{"no spec: many records to spec", many.String(), "", "spec"},
		{"no spec: field appears later", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3, \"b\": \"x\"}\n", "", "jsonl"},
		{"no spec: fields in another order later", "{\"a\": 1, \"b\": 1}\n{\"a\": 2, \"b\": 1}\n{\"b\": 3, \"a\": 1}\n", "", "jsonl"},
		{"no spec: int then float", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3.5}\n", "", "spec"},
		{"no spec: float then int", "{\"a\": 1.5}\n{\"a\": 2.5}\n{\"a\": 3}\n", "", "jsonl"},
		{"no spec: empty lists first", "{\"a\": []}\n{\"a\": []}\n{\"a\": [1, 2]}\n", "", "spec"},
		{"no spec: same lengths first", "{\"a\": [1, 2]}\n{\"a\": [3, 4]}\n{\"a\": [5]}\n", "", "spec"},
		{"no spec: empty", "", "", "jsonl"},
		{"no spec: bad record in a later batch", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n{\"a\": \"x\"}\n", "", "jsonl"},
		{"no spec: syntax error in a later batch", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n{\"a\": \n", "", "jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--from", "jsonl", "--to", tc.to}
			if tc.spec != "" {
				args = append(args, "--spec", tc.spec)
			}
			wantCode, wantOut, wantErr := convertWhole(t, tc.input, args...)
			code, out, errs := convertFile(t, tc.input, args...)
			// Errors name the input: stdin for the whole read.
			if i := strings.Index(errs, ": structtensor:"); i >= 0 {
				errs = "structtensor convert: stdin" + errs[i:]
			}
			// On standard output, the batches before an error stay written
			// (as decode's do); the error is the whole read's.
			if code != 0 && wantCode != 0 {
				out = wantOut
			}
			if code != wantCode || out != wantOut || errs != wantErr {
				t.Errorf("streamed: exit %d, stdout %q, stderr %q\nwhole: exit %d, stdout %q, stderr %q", code, out, errs, wantCode, wantOut, wantErr)
			}
			// Standard input streams too (in one pass with a spec).
			code, out, errs = convert(t, tc.input, args...)
			if code != 0 && wantCode != 0 {
				out = wantOut
			}
			if code != wantCode || out != wantOut || errs != wantErr {
				t.Errorf("stdin streamed: exit %d, stdout %q, stderr %q\nwhole: exit %d, stdout %q, stderr %q", code, out, errs, wantCode, wantOut, wantErr)
			}
		})
	}
}

// The progress bar is drawn when stderr is a terminal (stood in for here)
// and not when stderr is a pipe.
func TestConvertProgress(t *testing.T) {
	setBatch(t, 10)
	input := strings.Repeat("{\"a\": [1, 2, 3]}\n", 100)
	spec := filepath.Join(t.TempDir(), "spec")
	if err := os.WriteFile(spec, []byte(`{"kind":"struct","shape":[100],"fields":[{"name":"a","spec":{"kind":"tensor","dtype":"int64","shape":[100,3]}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}

	newConvertProgress = func(w io.Writer, size int64) *progress { return &progress{w: w, size: size} }
	code, out, errs := convertFile(t, input, "--from", "jsonl", "--to", "jsonl", "--spec", spec)
	newConvertProgress = newProgress
	if code != 0 || out != strings.Repeat("{\"a\":[1,2,3]}\n", 100) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "] 100% 100 records\n") || strings.Count(errs, "\r[") != 10 {
		t.Errorf("stderr %q: want a bar redrawn after each of 10 batches, ending at 100%%", errs)
	}
	newConvertProgress = func(w io.Writer, size int64) *progress { return &progress{w: w, size: size} }
	code, _, errs = convertFile(t, input, "--from", "jsonl", "--to", "jsonl")
	newConvertProgress = newProgress
	if code != 0 || !strings.Contains(errs, "] 100% 100 records\n") || strings.Count(errs, "\r[") != 10 {
		t.Errorf("without a spec: exit %d, stderr %q: want a bar redrawn after each of 10 batches", code, errs)
	}

	// Standard input is not a file of known size: no bar even on a terminal.
	newConvertProgress = func(w io.Writer, size int64) *progress { return &progress{w: w, size: size} }
	code, _, errs = convert(t, input, "--from", "jsonl", "--to", "jsonl", "--spec", spec)
	newConvertProgress = newProgress
	if code != 0 || errs != "" {
		t.Errorf("from stdin: exit %d, stderr %q, want no progress", code, errs)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	code = run([]string{"convert", "--from", "jsonl", "--to", "jsonl", "--spec", spec, in}, strings.NewReader(""), &stdout, pw)
	pw.Close()
	piped, _ := io.ReadAll(pr)
	if code != 0 || len(piped) != 0 {
		t.Errorf("stderr a pipe: exit %d, stderr %q, want nothing", code, piped)
	}
}

// An input read whole (a JSON document that is not an array of objects
// here) shows the bytes read as its progress.
func TestConvertProgressWholeRead(t *testing.T) {
	input := "[" + strings.TrimSuffix(strings.Repeat("[1, 2, 3],", 1000), ",") + "]"
	newConvertProgress = func(w io.Writer, size int64) *progress { return &progress{w: w, size: size} }
	code, out, errs := convertFile(t, input, "--from", "json", "--to", "spec")
	newConvertProgress = newProgress
	if code != 0 || !strings.Contains(out, `"shape":[1000,null]`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.HasSuffix(errs, "] 100% 0.0 MB\n") || !strings.HasPrefix(errs, "\r[") {
		t.Errorf("stderr %q: want a byte-progress bar ending at 100%%", errs)
	}
}

// convert streams a JSON-lines file: each batch reaches the output as it
// is read, while most of the input is still unread (so memory holds a
// batch, not the input), for every output format, with or without a
// spec, and the output is the whole read's.
func TestConvertStreamsToEveryFormat(t *testing.T) {
	const records, batch = 20000, 1000
	setBatch(t, batch)
	var input strings.Builder
	for i := range records {
		fmt.Fprintf(&input, "{\"id\": %d, \"tags\": [%s], \"w\": {\"x\": %d.5}}\n", i, strings.Repeat(`"t",`, i%4)+`"u"`, i)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(input.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "spec.json")
	if code, _, errs := convert(t, "", "--from", "jsonl", "--to", "spec", "-o", spec, in); code != 0 {
		t.Fatal(errs)
	}
	for _, to := range []string{"json", "jsonl", "arrow", "parquet"} {
		for _, withSpec := range []bool{false, true} {
			args := []string{"--from", "jsonl", "--to", to}
			if withSpec {
				args = append(args, "--spec", spec)
			}
			var seen []int64
			convertBatchWritten = func(n int64) { seen = append(seen, n) }
			code, out, errs := convert(t, "", append(args, in)...)
			convertBatchWritten = nil
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			if len(seen) != records/batch || seen[0] > int64(input.Len())/4 {
				t.Errorf("%v: %d batches written, the first after %d of %d input bytes", args, len(seen), seen, input.Len())
			}
			_, whole, _ := convertWhole(t, input.String(), args...)
			if to == "json" || to == "jsonl" {
				if out != whole {
					t.Errorf("%v: streamed output differs from the whole read's", args)
				}
				continue
			}
			for _, o := range []string{out, whole} {
				if code, back, errs := convert(t, o, "--from", to, "--to", "jsonl"); code != 0 || back != mustJSONL(t, input.String()) {
					t.Errorf("%v: read back: exit %d, %s", args, code, errs)
				}
			}
		}
	}
}

// An Arrow IPC stream converts record batch by record batch.
func TestConvertStreamsArrowBatches(t *testing.T) {
	const records, batch = 20000, 1000
	setBatch(t, batch)
	var input strings.Builder
	for i := range records {
		fmt.Fprintf(&input, "{\"id\": %d, \"tags\": [%s]}\n", i, strings.Repeat(`"t",`, i%4)+`"u"`)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(input.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	arrowFile := filepath.Join(dir, "in.arrow")
	if code, _, errs := convert(t, "", "--from", "jsonl", "--to", "arrow", "-o", arrowFile, in); code != 0 {
		t.Fatal(errs)
	}
	size := int64(0)
	if fi, err := os.Stat(arrowFile); err == nil {
		size = fi.Size()
	}
	for _, to := range []string{"jsonl", "parquet"} {
		var seen []int64
		convertBatchWritten = func(n int64) { seen = append(seen, n) }
		code, out, errs := convert(t, "", "--from", "arrow", "--to", to, arrowFile)
		convertBatchWritten = nil
		if code != 0 {
			t.Fatalf("arrow to %s: exit %d: %s", to, code, errs)
		}
		if len(seen) != records/batch || seen[0] > size/4 {
			t.Errorf("arrow to %s: %d batches written, the first after %d of %d input bytes", to, len(seen), seen, size)
		}
		if to == "jsonl" && out != mustJSONL(t, input.String()) {
			t.Errorf("arrow to jsonl: output differs from the input's records")
		}
	}
}

// mustJSONL is input as convert writes JSON lines.
func mustJSONL(t *testing.T, input string) string {
	code, out, errs := convert(t, input, "--from", "jsonl", "--to", "jsonl")
	if code != 0 {
		t.Fatal(errs)
	}
	return out
}
