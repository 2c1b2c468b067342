package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// TestDataViewExportExampleSpec exports DataViews of tf.Example records
// with --example-spec and with --schema, runs records through each in
// TensorFlow ("dataview run"), and expects the output of "decode" by the
// same spec (the Go path) for every text format; inspect names the
// message.
func TestDataViewExportExampleSpec(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "spec.json", ageTermsSpec)
	schema := writeFile(t, dir, "schema.pbtxt", `feature { name: "age" type: INT shape { dim { size: 1 } } presence { min_fraction: 1 } }
feature { name: "query/terms" type: BYTES }
`)
	var exs []proto.Message
	for i := range 5 {
		exs = append(exs, features(map[string]*tfexample.Feature{
			"age":         int64Feature(int64(40 + i)),
			"query/terms": bytesFeature([]string{"tea", strings.Repeat("x", i)}[:i%3]...),
		}))
	}
	recs := writeFile(t, dir, "examples.tfrecord", string(exampleRecords(t, exs...)))
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
