package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// tempPath matches the input file's name in an error.
var tempPath = regexp.MustCompile(`/\S+/in: `)

// convertWhole runs "structtensor convert args..." on stdin reading the
// input whole, the reference every streamed conversion must equal.
func convertWhole(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	convertReadWhole = true
	defer func() { convertReadWhole = false }()
	return convert(t, stdin, args...)
}

// sameOutput compares a streamed conversion's output with the whole
// read's: byte for byte for text formats; for Arrow and Parquet, whose
// batches or row groups follow the input's, by the JSON lines they read
// back to.
func sameOutput(t *testing.T, to, got, want string) bool {
	t.Helper()
	if got == want {
		return true
	}
	if to != "arrow" && to != "parquet" {
		return false
	}
	_, g, _ := convert(t, got, "--from", to, "--to", "jsonl")
	_, w, _ := convert(t, want, "--from", to, "--to", "jsonl")
	return g == w && g != ""
}

// records returns n JSON objects with ragged lists and a nested struct,
// each about 100 bytes.
func records(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("{\"id\": %d, \"tags\": [%s], \"w\": {\"x\": %d.5, \"name\": \"n%08d\"}}", i, strings.Repeat(`"t",`, i%4)+`"u"`, i, i)
	}
	return out
}

func jsonArray(recs []string) string { return "[" + strings.Join(recs, ",\n ") + "]\n" }

// A JSON array of objects streams element by element, from a file and
// from standard input, to what the whole read gives (errors included);
// other documents are read whole.
func TestConvertStreamsJSONArray(t *testing.T) {
	setBatch(t, 3)
	many := jsonArray(records(25))
	for _, tc := range []struct {
		name, input string
		streamed    bool // batches reach the output
	}{
		{"many records", many, true},
		{"spaces and newlines", " \n[ {\"a\": 1} ,\n{\"a\": 2},{\"a\":3}, {\"a\": 4} ] \n", true},
		{"int then float", "[{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, {\"a\": 3.5}]", false},
		{"field appears later", "[{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, {\"a\": 3, \"b\": [1]}]", false},
		{"empty array", "[]", false},
		{"not objects", "[[1, 2], [3]]", false},
		{"object first then number", "[{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, 4]", false},
		{"one object", "{\"a\": [1, 2]}", false},
		{"syntax error later", "[{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, {\"a\": 4}, {\"a\": ]", false},
		{"data after the array", "[{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, {\"a\": 4}] [", false},
		{"unterminated", "[{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, {\"a\": 4}", false},
		{"escapes", `[{"s": "a\"b\\c\u00e9\n"}, {"s": "x"}, {"s": "y"}, {"s": "z"}]`, true},
	} {
		for _, to := range []string{"json", "jsonl", "spec", "arrow", "parquet"} {
			args := []string{"--from", "json", "--to", to}
			wantCode, wantOut, wantErr := convertWhole(t, tc.input, args...)
			var seen int
			convertBatchWritten = func(int64) { seen++ }
			code, out, errs := convertFile(t, tc.input, args...)
			convertBatchWritten = nil
			errs = tempPath.ReplaceAllString(errs, "stdin: ")
			if code != 0 && wantCode != 0 {
				out = wantOut // batches before an error stay on stdout
			}
			if code != wantCode || !sameOutput(t, to, out, wantOut) || errs != wantErr {
				t.Errorf("%s to %s: streamed: exit %d, stdout %.300q, stderr %q\nwhole: exit %d, stdout %.300q, stderr %q", tc.name, to, code, out, errs, wantCode, wantOut, wantErr)
			}
			if tc.streamed && to != "spec" && seen < 2 {
				t.Errorf("%s to %s: %d batches written, want the input in batches", tc.name, to, seen)
			}
			code, out, errs = convert(t, tc.input, args...)
			if code != 0 && wantCode != 0 {
				out = wantOut
			}
			if code != wantCode || !sameOutput(t, to, out, wantOut) || errs != wantErr {
				t.Errorf("%s to %s from stdin: exit %d, stdout %.300q, stderr %q\nwhole: exit %d, stderr %q", tc.name, to, code, out, errs, wantCode, wantErr)
			}
		}
	}
}

// Standard input streams as the file does: JSON lines with a spec and an
// Arrow IPC stream in one pass as they arrive, JSON lines without a spec
// through a temporary file; the output is the whole read's.
func TestConvertStreamsStdin(t *testing.T) {
	setBatch(t, 4)
	// The temporary copy of standard input is unlinked while in use: no
	// file is left in TMPDIR during a conversion, however it ends.
	tmpDir := t.TempDir()
	t.Setenv("TMPDIR", tmpDir)
	var leftInTmp string // the first file seen there, and when
	input := strings.Join(records(30), "\n") + "\n"
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	if code, _, errs := convert(t, input, "--from", "jsonl", "--to", "spec", "-o", spec); code != 0 {
		t.Fatal(errs)
	}
	_, arrowIn, _ := convert(t, input, "--from", "jsonl", "--to", "arrow", "--spec", spec)
	if len(arrowIn) == 0 {
		t.Fatal("no Arrow input")
	}
	for _, tc := range []struct {
		name, input string
		args        []string
		batches     int // written as they were read, at least
	}{
		{"jsonl with a spec", input, []string{"--from", "jsonl", "--spec", spec}, 7},
		{"jsonl without a spec", input, []string{"--from", "jsonl"}, 7},
		{"arrow", arrowIn, []string{"--from", "arrow"}, 7},
		{"jsonl with a spec, bad record later", input + "{\"id\": \"x\"}\n", []string{"--from", "jsonl", "--spec", spec}, 0},
		{"jsonl with a spec, not records", "[1]\n[2]\n", []string{"--from", "jsonl", "--spec", spec}, 0},
		{"jsonl with a spec, too few records", "{\"id\": 1, \"tags\": [], \"w\": {\"x\": 1, \"name\": \"a\"}}\n", []string{"--from", "jsonl", "--spec", spec}, 0},
		{"arrow, truncated", arrowIn[:len(arrowIn)/2], []string{"--from", "arrow"}, 0},
	} {
		for _, to := range []string{"json", "jsonl", "arrow", "parquet"} {
			args := append(append([]string(nil), tc.args...), "--to", to)
			wantCode, wantOut, wantErr := convertWhole(t, tc.input, args...)
			var seen int
			convertBatchWritten = func(int64) {
				seen++
				if es, _ := os.ReadDir(tmpDir); len(es) > 0 && leftInTmp == "" {
					leftInTmp = tc.name + " to " + to + ": " + es[0].Name()
				}
			}
			code, out, errs := convert(t, tc.input, append(args, "-")...)
			convertBatchWritten = nil
			if code != 0 && wantCode != 0 {
				out = wantOut // batches before an error stay on stdout
			}
			if code != wantCode || !sameOutput(t, to, out, wantOut) || errs != wantErr {
				t.Errorf("%s to %s: streamed: exit %d, stdout %.200q, stderr %q\nwhole: exit %d, stdout %.200q, stderr %q", tc.name, to, code, out, errs, wantCode, wantOut, wantErr)
			}
			if seen < tc.batches {
				t.Errorf("%s to %s: %d batches written, want %d", tc.name, to, seen, tc.batches)
			}
		}
	}
	if leftInTmp != "" {
		t.Errorf("a file in TMPDIR during a conversion from standard input: %s", leftInTmp)
	}
}

// A Parquet file converts row group by row group, from a file and from
// standard input, to what the whole read gives; a corrupt row group
// fails naming it and its column.
func TestConvertStreamsParquet(t *testing.T) {
	setBatch(t, 7)
	input := strings.Join(records(50), "\n") + "\n"
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(dir, "in.parquet")
	// Streamed from JSON lines: a row group per batch of 7 records.
	if code, _, errs := convert(t, "", "--from", "jsonl", "--to", "parquet", "-o", pq, in); code != 0 {
		t.Fatal(errs)
	}
	data, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"json", "jsonl", "spec", "arrow", "parquet"} {
		args := []string{"--from", "parquet", "--to", to}
		wantCode, want, wantErr := convertWhole(t, string(data), args...)
		if wantCode != 0 {
			t.Fatal(wantErr)
		}
		var seen int
		convertBatchWritten = func(int64) { seen++ }
		code, out, errs := convert(t, "", append(args, pq)...)
		convertBatchWritten = nil
		if code != 0 || !sameOutput(t, to, out, want) {
			t.Errorf("to %s: exit %d, %s; output differs from the whole read's", to, code, errs)
		}
		if to != "spec" && seen != 8 {
			t.Errorf("to %s: %d batches written, want 8 row groups", to, seen)
		}
		if code, out, errs := convert(t, string(data), args...); code != 0 || !sameOutput(t, to, out, want) {
			t.Errorf("to %s from stdin: exit %d, %s; output differs from the whole read's", to, code, errs)
		}
	}
	if code, out, _ := convert(t, "", "--from", "parquet", "--to", "jsonl", pq); code != 0 || out != mustJSONL(t, input) {
		t.Errorf("parquet to jsonl differs from the records written")
	}
	// Scramble the pages of a column chunk of row group 3: an error naming
	// it and the column, before anything is written (the first pass, which
	// checks that every row group has the same spec, meets it).
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := pf.MetaData().RowGroup(3).ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), data...)
	for i := cc.DataPageOffset(); i < cc.DataPageOffset()+cc.TotalCompressedSize(); i++ {
		bad[i] ^= 0x5a
	}
	badPath := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(badPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var seen int
	convertBatchWritten = func(int64) { seen++ }
	defer func() { convertBatchWritten = nil }()
	code, _, errs := convert(t, "", "--from", "parquet", "--to", "jsonl", badPath)
	want := fmt.Sprintf("row group 3 (rows 21 to 28) column %q", cc.PathInSchema().String())
	if code == 0 || seen != 0 || !strings.Contains(errs, badPath+": ") || !strings.Contains(errs, want) {
		t.Errorf("corrupt row group: exit %d after %d row groups, stderr %q; want one naming %s before any", code, seen, errs, want)
	}
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// Streaming holds a batch: converting an input several times larger than
// a batch, the live heap sampled after each batch stays a fraction of the
// input's size, for every streamed input format, from a file and from
// standard input.
func TestConvertMemoryBounded(t *testing.T) {
	const n, batch = 40000, 1000
	setBatch(t, batch)
	dir := t.TempDir()
	jsonl := strings.Join(records(n), "\n") + "\n"
	inputs := map[string]string{"jsonl": jsonl, "json": jsonArray(records(n))}
	// Arrow and Parquet inputs of 1000-record batches and row groups.
	jsonlPath := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(jsonlPath, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"arrow", "parquet"} {
		_, out, errs := convert(t, "", "--from", "jsonl", "--to", f, jsonlPath)
		if out == "" {
			t.Fatal(errs)
		}
		inputs[f] = out
	}
	outPath := filepath.Join(dir, "out")
	for _, from := range []string{"jsonl", "json", "arrow", "parquet"} {
		input := inputs[from]
		inPath := filepath.Join(dir, "in."+from)
		if err := os.WriteFile(inPath, []byte(input), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, stdin := range []bool{false, true} {
			args := []string{"--from", from, "--to", "jsonl", "-o", outPath}
			feed := ""
			if stdin {
				feed = input
			} else {
				args = append(args, inPath)
			}
			base := heapInUse()
			var peak uint64
			var batches int
			convertBatchWritten = func(int64) {
				batches++
				if h := heapInUse(); h > base {
					peak = max(peak, h-base)
				}
			}
			code, _, errs := convert(t, feed, args...)
			convertBatchWritten = nil
			if code != 0 {
				t.Fatalf("%s (stdin %v): %s", from, stdin, errs)
			}
			t.Logf("%s (stdin %v): %d-byte input, %d batches, live heap at most %d bytes above the start", from, stdin, len(input), batches, peak)
			if batches < n/batch || peak > uint64(len(jsonl))/4 {
				t.Errorf("%s (stdin %v): %d batches, live heap %d bytes above the start for a %d-byte input", from, stdin, batches, peak, len(input))
			}
			if got, err := os.ReadFile(outPath); err != nil || !bytes.Equal(got, []byte(mustJSONL(t, jsonl))) {
				t.Errorf("%s (stdin %v): output differs from the records", from, stdin)
			}
		}
	}
}
