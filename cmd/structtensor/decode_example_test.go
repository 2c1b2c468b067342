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

func TestDecodeCommandExampleSpec(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(spec, []byte(`{"features": {
		"age":   {"kind": "fixed_len", "dtype": "int64", "default": -1},
		"terms": {"kind": "var_len", "dtype": "string", "key": "query/terms"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	w := tfrecord.NewWriter(&in)
	for _, ex := range []*tfexample.Example{
		{Features: &tfexample.Features{Feature: map[string]*tfexample.Feature{
			"age":         {Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: []int64{42}}}},
			"query/terms": {Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: [][]byte{[]byte("tea")}}}},
		}}},
		{},
	} {
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
	records := in.Bytes()
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
	schema := filepath.Join(dir, "schema.pbtxt")
	if err := os.WriteFile(schema, []byte(`feature { name: "query/terms" type: BYTES value_count { min: 1 } }`), 0o644); err != nil {
		t.Fatal(err)
	}
	var sout, serr bytes.Buffer
	if code := run([]string{"decode", "--schema", schema, "--to", "jsonl", "-"}, bytes.NewReader(records), &sout, &serr); code != 0 {
		t.Fatalf("--schema: exit %d: %s", code, serr.String())
	}
	if got, want := strings.TrimSpace(sout.String()), "{\"query_terms\":[\"tea\"]}\n{\"query_terms\":[]}"; got != want {
		t.Errorf("--schema: got %s, want %s", got, want)
	}
	// A bad record is named by its place in the stream.
	var bad bytes.Buffer
	w = tfrecord.NewWriter(&bad)
	w.Write(nil)
	w.Write([]byte{0x0a, 0x05})
	w.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"decode", "--example-spec", spec, "-"}, &bad, &out, &errb); code == 0 || !strings.Contains(errb.String(), "record 1") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
