package starrow_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/structtensor"
)

// schemaText writes a tensorflow_metadata Schema for a spec of FixedLen
// and VarLen features, as TFDV would infer it: a FixedLen feature has its
// shape and is present in every record, a VarLen one has neither.
func schemaText(spec *decode.ExampleSpec) string {
	var b strings.Builder
	types := map[structtensor.DType]string{structtensor.Int64: "INT", structtensor.Float32: "FLOAT", structtensor.String: "BYTES"}
	for name, f := range spec.Features {
		key := f.Key
		if key == "" {
			key = name
		}
		fmt.Fprintf(&b, "feature { name: %q type: %s", key, types[f.DType])
		if f.Kind == decode.FixedLen {
			b.WriteString(" shape {")
			for _, d := range f.Shape {
				fmt.Fprintf(&b, " dim { size: %d }", d)
			}
			b.WriteString(" } presence { min_fraction: 1 }")
		}
		b.WriteString(" }\n")
	}
	return b.String()
}

// TestExampleArrowAgainstTFXBSL decodes random tf.Example records (every
// dtype, FixedLen of several shapes, VarLen, absent features, empty
// lists, keys outside the spec, extreme values) with Go and converts the
// StructTensor to Arrow (WriteIPC); tfx-bsl's ExamplesToRecordBatchDecoder
// (in .venv-tfx) decodes the same records, with the schema the spec
// corresponds to (Go: decode.ExampleSpecFromSchema of the same text) and
// without one (Go: decode.InferExampleSpec of the records). The columns
// and every record's values must be equal; the normalisations of the
// layouts that differ by design are in testdata/tfxbsl_examples.py.
func TestExampleArrowAgainstTFXBSL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tfx-bsl")
	}
	testenv.Python(t, ".venv-tfx")
	dir := t.TempDir()
	type pyCase struct {
		Records []string          `json:"records"`
		Schema  *string           `json:"schema"`
		IPC     string            `json:"ipc"`
		Columns map[string]string `json:"columns"`
	}
	var cases []pyCase
	for i, c := range copstest.ExampleCases(21, 40, copstest.ExampleOptions{NoPartitions: true, NoFixedLenSequence: true, NoDefaults: true, MaxRecords: 20}) {
		for _, withSchema := range []bool{true, false} {
			var spec *decode.ExampleSpec
			var err error
			var schema *string
			if withSchema {
				s := schemaText(c.Spec)
				schema = &s
				spec, err = decode.ExampleSpecFromSchema([]byte(s))
			} else {
				spec, err = decode.InferExampleSpec(c.Records, false)
			}
			if err != nil {
				t.Fatalf("case %d (schema %v): %v", i, withSchema, err)
			}
			plan, err := decode.CompileExample(spec)
			if err != nil {
				t.Fatalf("case %d (schema %v): %v", i, withSchema, err)
			}
			st, err := plan.Decode(c.Records)
			if err != nil {
				t.Fatalf("case %d (schema %v): %v", i, withSchema, err)
			}
			var ipc bytes.Buffer
			if err := starrow.WriteIPC(&ipc, st); err != nil {
				t.Fatalf("case %d (schema %v): %v", i, withSchema, err)
			}
			path := filepath.Join(dir, fmt.Sprintf("case%d_%v.arrows", i, withSchema))
			if err := os.WriteFile(path, ipc.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			pc := pyCase{Schema: schema, IPC: path, Columns: map[string]string{}}
			for _, r := range c.Records {
				pc.Records = append(pc.Records, base64.StdEncoding.EncodeToString(r))
			}
			for name, f := range spec.Features {
				key := f.Key
				if key == "" {
					key = name
				}
				pc.Columns[name] = key
			}
			cases = append(cases, pc)
		}
	}
	casesPath := filepath.Join(dir, "cases.json")
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(casesPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "tfxbsl_examples.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv-tfx", string(script), casesPath)
	sc := bufio.NewScanner(bytes.NewReader(out))
	n, columns := 0, 0
	for sc.Scan() {
		var r struct {
			OK      bool     `json:"ok"`
			Errors  []string `json:"errors"`
			Columns int      `json:"columns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if !r.OK {
			t.Errorf("case %d (schema %v): %s", n/2, n%2 == 0, strings.Join(r.Errors, "; "))
		}
		n++
		columns += r.Columns
	}
	if n != len(cases) {
		t.Fatalf("the script answered %d cases of %d:\n%s", n, len(cases), out)
	}
	t.Logf("%d batches, %d columns compared with tfx-bsl", n, columns)
}
