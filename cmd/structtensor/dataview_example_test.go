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

// TestDataViewExportExampleSpec exports DataViews of tf.Example records
// with --example-spec and with --schema, runs records through each in
// TensorFlow ("dataview run"), and expects the output of "decode" by the
// same spec (the Go path) for every text format; inspect names the
// message.
func TestDataViewExportExampleSpec(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(spec, []byte(`{"features": {
		"age":   {"kind": "fixed_len", "dtype": "int64", "default": -1},
		"terms": {"kind": "var_len", "dtype": "string", "key": "query/terms"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(dir, "schema.pbtxt")
	if err := os.WriteFile(schema, []byte(`feature { name: "age" type: INT shape { dim { size: 1 } } presence { min_fraction: 1 } }
feature { name: "query/terms" type: BYTES }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := filepath.Join(dir, "examples.tfrecord")
	var in bytes.Buffer
	w := tfrecord.NewWriter(&in)
	for i := range 5 {
		b, err := proto.Marshal(&tfexample.Example{Features: &tfexample.Features{Feature: map[string]*tfexample.Feature{
			"age":         {Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: []int64{int64(40 + i)}}}},
			"query/terms": {Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: [][]byte{[]byte("tea"), []byte(strings.Repeat("x", i))}[:i%3]}}},
		}}})
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
	if err := os.WriteFile(recs, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{{"--example-spec", spec}, {"--schema", schema}} {
		dv := filepath.Join(t.TempDir(), "dv")
		var out, errOut bytes.Buffer
		if code := run(append(append([]string{"dataview", "export"}, flags...), "-o", dv), nil, &out, &errOut); code != 0 {
			t.Fatalf("%v: export: exit %d: %s", flags, code, errOut.String())
		}
		for _, to := range []string{"jsonl", "spec"} {
			var got, want bytes.Buffer
			errOut.Reset()
			if code := run([]string{"dataview", "run", dv, "--to", to, recs}, nil, &got, &errOut); code != 0 {
				t.Fatalf("%v: run --to %s: exit %d: %s", flags, to, code, errOut.String())
			}
			if code := run(append(append([]string{"decode"}, flags...), "--to", to, recs), nil, &want, &errOut); code != 0 {
				t.Fatalf("%v: decode --to %s: exit %d: %s", flags, to, code, errOut.String())
			}
			if got.Len() == 0 || got.String() != want.String() {
				t.Errorf("%v --to %s: dataview run gave\n%s\ndecode gave\n%s", flags, to, got.String(), want.String())
			}
		}
		out.Reset()
		if code := run([]string{"dataview", "inspect", dv}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "tensorflow.Example") {
			t.Errorf("%v: inspect: exit %d: %s%s", flags, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"dataview", "export", "--example-spec", spec, "--message", "x.Y", "-o", filepath.Join(dir, "bad")}, nil, &out, &errOut); code == 0 {
		t.Error("--example-spec with --message: exit 0")
	}
}
