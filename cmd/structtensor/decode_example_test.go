package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/tfrecord"
)

// ageTermsSpec is the feature spec of the tf.Example command tests:
// "age", fixed_len with a default, and "terms", var_len, read from the
// feature "query/terms".
const ageTermsSpec = `{"features": {
	"age":   {"kind": "fixed_len", "dtype": "int64", "default": -1},
	"terms": {"kind": "var_len", "dtype": "string", "key": "query/terms"}}}`

// writeFile writes content to the file name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDecodeCommandExampleSpec(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "spec.json", ageTermsSpec)
	records := exampleRecords(t, features(map[string]*tfexample.Feature{"age": int64Feature(42), "query/terms": bytesFeature("tea")}), &tfexample.Example{})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", "jsonl"}, "{\"age\":42,\"terms\":[\"tea\"]}\n{\"age\":-1,\"terms\":[]}"},
		{[]string{"--to", "spec"}, "age"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"decode", "--example-spec", spec}, tt.args...)
		if code := run(append(args, "-"), bytes.NewReader(records), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errb.String())
		}
		if got := strings.TrimSpace(out.String()); !strings.Contains(got, tt.want) {
			t.Errorf("%v: got %s, want %s", tt.args, got, tt.want)
		}
	}
	schema := writeFile(t, dir, "schema.pbtxt", `feature { name: "query/terms" type: BYTES value_count { min: 1 } }`)
	var sout, serr bytes.Buffer
	if code := run([]string{"decode", "--schema", schema, "--to", "jsonl", "-"}, bytes.NewReader(records), &sout, &serr); code != 0 {
		t.Fatalf("--schema: exit %d: %s", code, serr.String())
	}
	if got, want := strings.TrimSpace(sout.String()), "{\"query_terms\":[\"tea\"]}\n{\"query_terms\":[]}"; got != want {
		t.Errorf("--schema: got %s, want %s", got, want)
	}
	// A bad record is named by its place in the stream.
	var bad bytes.Buffer
	w := tfrecord.NewWriter(&bad)
	w.Write(nil)
	w.Write([]byte{0x0a, 0x05})
	w.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"decode", "--example-spec", spec, "-"}, &bad, &out, &errb); code == 0 || !strings.Contains(errb.String(), "record 1") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// exampleRecords writes examples as a TFRecord stream.
func exampleRecords(t *testing.T, examples ...proto.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	for _, ex := range examples {
		b, err := proto.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func int64Feature(v ...int64) *tfexample.Feature {
	return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
}

func bytesFeature(v ...string) *tfexample.Feature {
	b := make([][]byte, len(v))
	for i, s := range v {
		b[i] = []byte(s)
	}
	return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: b}}}
}

func features(m map[string]*tfexample.Feature) *tfexample.Example {
	return &tfexample.Example{Features: &tfexample.Features{Feature: m}}
}

// --infer-schema infers the spec from the first --infer-sample records
// (a feature with one value in each is fixed_len, scalar per record),
// decodes every record, sample and rest, in --batch batches, and names
// a record past the sample that breaks the inferred spec.
func TestDecodeCommandInferSchema(t *testing.T) {
	var exs []proto.Message
	for i := range 5 {
		exs = append(exs, features(map[string]*tfexample.Feature{
			"id":   int64Feature(int64(i)),
			"tags": bytesFeature(strings.Repeat("t", i%3)),
		}))
	}
	records := exampleRecords(t, exs...)
	decodeArgs := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(append(append([]string{"decode", "--infer-schema"}, args...), "-"), bytes.NewReader(records), &out, &errb)
		return strings.TrimSpace(out.String()), errb.String(), code
	}
	got, stderr, code := decodeArgs("--to", "jsonl", "--batch", "2", "--infer-sample", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{"id":[0],"tags":[""]}
{"id":[1],"tags":["t"]}
{"id":[2],"tags":["tt"]}
{"id":[3],"tags":[""]}
{"id":[4],"tags":["t"]}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got, stderr, code = decodeArgs("--to", "spec")
	if code != 0 {
		t.Fatalf("--to spec: exit %d: %s", code, stderr)
	}
	if !strings.Contains(got, `"id"`) || !strings.Contains(got, `"tags"`) {
		t.Errorf("--to spec: %s", got)
	}

	// A record past the sample without "id": the inferred fixed_len
	// feature is missing there.
	records = exampleRecords(t, append(exs, features(map[string]*tfexample.Feature{"tags": bytesFeature("x")}))...)
	_, stderr, code = decodeArgs("--to", "jsonl", "--infer-sample", "2")
	if code == 0 || !strings.Contains(stderr, "record 5") || !strings.Contains(stderr, "--infer-sample") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// With the whole file as the sample, "id" is var_len.
	got, stderr, code = decodeArgs("--to", "jsonl", "--infer-sample", "100")
	if code != 0 || !strings.HasSuffix(got, `{"id":[],"tags":["x"]}`) {
		t.Errorf("exit %d: %s\n%s", code, got, stderr)
	}

	// SequenceExample: context and feature lists.
	seq := &tfexample.SequenceExample{
		Context: &tfexample.Features{Feature: map[string]*tfexample.Feature{"user": bytesFeature("u")}},
		FeatureLists: &tfexample.FeatureLists{FeatureList: map[string]*tfexample.FeatureList{
			"clicks": {Feature: []*tfexample.Feature{int64Feature(1, 2), int64Feature(3)}},
		}},
	}
	records = exampleRecords(t, seq)
	got, stderr, code = decodeArgs("--sequence-example", "--to", "jsonl")
	if want := `{"user":["u"],"clicks":[[1,2],[3]]}`; code != 0 || got != want {
		t.Errorf("--sequence-example: exit %d: got %s, want %s\n%s", code, got, want, stderr)
	}
}

// --schema-environment keeps the features of one environment, by the
// schema's default_environment and in/not_in_environment.
func TestDecodeCommandSchemaEnvironment(t *testing.T) {
	schema := writeFile(t, t.TempDir(), "schema.pbtxt", `
default_environment: "TRAINING"
default_environment: "SERVING"
feature { name: "x" type: INT }
feature { name: "label" type: INT not_in_environment: "SERVING" }
feature { name: "debug" type: BYTES in_environment: "DEBUG" }
`)
	records := exampleRecords(t, features(map[string]*tfexample.Feature{
		"x": int64Feature(1), "label": int64Feature(0), "debug": bytesFeature("d"),
	}))
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{nil, `{"debug":["d"],"label":[0],"x":[1]}`},
		{[]string{"--schema-environment", "SERVING"}, `{"x":[1]}`},
		{[]string{"--schema-environment", "TRAINING"}, `{"label":[0],"x":[1]}`},
		{[]string{"--schema-environment", "DEBUG"}, `{"debug":["d"]}`},
	} {
		var out, errb bytes.Buffer
		args := append(append([]string{"decode", "--schema", schema, "--to", "jsonl"}, tt.env...), "-")
		if code := run(args, bytes.NewReader(records), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.env, code, errb.String())
		}
		if got := strings.TrimSpace(out.String()); got != tt.want {
			t.Errorf("%v: got %s, want %s", tt.env, got, tt.want)
		}
	}
	for _, args := range [][]string{
		{"decode", "--schema-environment", "SERVING", "--example-spec", schema, "-"},
		{"decode", "--infer-sample", "5", "--example-spec", schema, "-"},
		{"decode", "--infer-schema", "--schema", schema, "-"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, bytes.NewReader(records), &out, &errb); code == 0 {
			t.Errorf("%v: exit 0, want an error", args)
		}
	}
}
