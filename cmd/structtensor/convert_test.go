package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// convert runs "structtensor convert args..." in process on stdin and
// returns the exit code, stdout and stderr.
func convert(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"convert"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestConvert(t *testing.T) {
	records := "{\"id\": 1, \"tags\": [\"a\"]}\n{\"id\": 2, \"tags\": []}\n"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"json to json", `{"a":12,"b":[1,2,3],"c":[[1,2],[3]]}`, []string{"--from", "json", "--to", "json"},
			`{"a":12,"b":[1,2,3],"c":[[1,2],[3]]}` + "\n"},
		{"json defaults", `[1, 2]`, nil, "[1,2]\n"},
		{"json to spec", `[[{"a":1},{"a":2},{"a":3}],[{"a":4},{"a":5}]]`, []string{"--from", "json", "--to", "spec", "-"},
			`{"kind":"struct","shape":[2,null],"fields":[{"name":"a","spec":{"kind":"ragged","dtype":"int64","shape":[2,null],"ragged_rank":1}}]}` + "\n"},
		{"jsonl to json", records, []string{"--from", "jsonl", "--to", "json"},
			`[{"id":1,"tags":["a"]},{"id":2,"tags":[]}]` + "\n"},
		{"jsonl to jsonl", records, []string{"--from", "jsonl", "--to", "jsonl"},
			"{\"id\":1,\"tags\":[\"a\"]}\n{\"id\":2,\"tags\":[]}\n"},
		{"json to jsonl", `[[1], [2, 3]]`, []string{"--to", "jsonl"}, "[1]\n[2,3]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := convert(t, tc.stdin, tc.args...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if out != tc.want {
				t.Errorf("stdout %q, want %q", out, tc.want)
			}
		})
	}
}

func TestConvertSpecAndFiles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte("{\"x\": [1, 2]}\n{\"x\": [3, 4]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specFile, []byte(`{"kind":"struct","shape":[null],"fields":[{"name":"x","spec":{"kind":"tensor","dtype":"float32","shape":[null,2]}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(dir, "out.spec")
	code, out, errs := convert(t, "", "--from", "jsonl", "--to", "spec", "--spec", specFile, "-o", outFile, in)
	if code != 0 || errs != "" || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	got, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"struct","shape":[2],"fields":[{"name":"x","spec":{"kind":"tensor","dtype":"float32","shape":[2,2]}}]}` + "\n"; string(got) != want {
		t.Errorf("%s = %s, want %s", outFile, got, want)
	}
	// A failed conversion leaves no output file behind.
	bad := filepath.Join(dir, "bad.json")
	if code, _, _ := convert(t, "[1, \"x\"]", "-o", bad); code == 0 {
		t.Fatal("bad input succeeded")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("output file exists after a failure: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestConvertErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"dtype", "{\"a\": 1}\n{\"a\": \"x\"}\n", []string{"--from", "jsonl"},
			`structtensor convert: stdin: structtensor: cannot infer value: line 2, byte offset 15: field "a" at [1]: int64 vs string`},
		{"syntax", "[1,\n 2", []string{"--from", "json"}, `stdin: structtensor: invalid JSON: line 2, byte offset 6:`},
		{"unknown format", "", []string{"--from", "xml"}, `cannot read format "xml" (readable: `},
		{"unwritable format", "", []string{"--to", "nope"}, `cannot write format "nope"`},
		{"spec is not readable", "", []string{"--from", "spec"}, `cannot read format "spec"`},
		{"missing file", "", []string{"/nonexistent/in.json"}, `no such file`},
		{"two files", "", []string{"a", "b"}, `one input file at most`},
		{"jsonl of a scalar", "5", []string{"--to", "jsonl"}, `rank >= 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := convert(t, tc.stdin, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0, stdout %q", out)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q does not contain %q", errs, tc.want)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n > 0 && !strings.Contains(errs, "usage:") {
				t.Errorf("stderr spans %d lines: %q", n+1, errs)
			}
		})
	}
}
