// Package dvcases writes the DataView test cases shared by the Go and
// Python tests: for each case a DataView exported by
// savedmodel.ExportDataView, deterministic random records
// (cops/copstest) and what Go's decoder (decode.Plan.Decode, no
// TensorFlow involved) produced for them, leaf by leaf.
//
// DIR/cases.json lists the cases; DIR/<case>/dataview is the SavedModel,
// DIR/<case>/arrow.ipc what the DataView loaded in Go gives for the records
// as Arrow (DataView.ToArrow, an IPC stream of one batch) and
// DIR/<case>/case.json holds
//
//	{"message": ..., "paths": [...], "records": [base64...], "digest": ...,
//	 "leaves": {"<path>": {"dtype": ..., "values": [...],
//	                        "nested_row_splits": [[...], ...],
//	                        "inner_uniform": k}}}
//
// with strings base64-encoded, and each leaf in full shape: its values
// and every row partition from the batch dimension inwards.
package dvcases

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Case is one DataView test case.
type Case struct {
	Name    string   `json:"name"`
	Message string   `json:"message"`
	Paths   []string `json:"paths"`
	N       int      `json:"-"`
	Seed    uint64   `json:"-"`
	// Example, when set, makes the case a DataView of tf.Example (or
	// SequenceExample) records by this feature spec (Message is then
	// savedmodel.MessageExample or MessageSequenceExample).
	Example *decode.ExampleSpec `json:"-"`
}

// exampleSpec is the feature spec of the tf.Example cases: every kind and
// dtype, defaults of every dtype, FixedLenSequence features of scalar and
// several-value steps, and Ragged features partitioned every way a
// uniform partition can sit: below a ragged one (grid; cube, two
// levels), alone (duo), above a ragged one (blocks).
var exampleSpec = &decode.ExampleSpec{Features: map[string]decode.Feature{
	"age":    {Kind: decode.FixedLen, DType: structtensor.Int64, Default: []int64{-1}},
	"emb":    {Kind: decode.FixedLen, DType: structtensor.Float32, Shape: []int{2}, Default: []float32{0.5, -2}},
	"lang":   {Kind: decode.FixedLen, DType: structtensor.String, Key: "query/lang", Default: []string{"en"}},
	"ids":    {Kind: decode.VarLen, DType: structtensor.Int64},
	"scores": {Kind: decode.FixedLenSequence, DType: structtensor.Float32},
	"frames": {Kind: decode.FixedLenSequence, DType: structtensor.Float32, Shape: []int{3}},
	"pairs":  {Kind: decode.FixedLenSequence, DType: structtensor.String, Shape: []int{2, 2}},
	"tokens": {Kind: decode.Ragged, DType: structtensor.String, Partitions: []decode.Partition{{Kind: decode.RowLengths, Key: "token_lengths"}}},
	"grid": {Kind: decode.Ragged, DType: structtensor.Int64, Partitions: []decode.Partition{
		{Kind: decode.RowSplits, Key: "grid_splits"}, {Kind: decode.UniformRowLength, Length: 2}}},
	"cube": {Kind: decode.Ragged, DType: structtensor.Float32, Key: "cube_values", Partitions: []decode.Partition{
		{Kind: decode.RowLengths, Key: "cube_lengths"}, {Kind: decode.UniformRowLength, Length: 2}, {Kind: decode.UniformRowLength, Length: 3}}},
	"duo": {Kind: decode.Ragged, DType: structtensor.String, Partitions: []decode.Partition{{Kind: decode.UniformRowLength, Length: 2}}},
	"blocks": {Kind: decode.Ragged, DType: structtensor.Int64, Partitions: []decode.Partition{
		{Kind: decode.UniformRowLength, Length: 2}, {Kind: decode.RowLengths, Key: "block_lengths"}}},
}}

var sequenceExampleSpec = &decode.ExampleSpec{
	Features: map[string]decode.Feature{
		"user": {Kind: decode.FixedLen, DType: structtensor.String, Default: []string{"anon"}},
		"tags": {Kind: decode.VarLen, DType: structtensor.String},
	},
	SequenceFeatures: map[string]decode.Feature{
		"clicks": {Kind: decode.VarLen, DType: structtensor.Int64},
		"dwell":  {Kind: decode.FixedLenSequence, DType: structtensor.Float32, AllowMissing: true},
		"boxes":  {Kind: decode.FixedLenSequence, DType: structtensor.Float32, Shape: []int{4}, AllowMissing: true},
		"terms":  {Kind: decode.Ragged, DType: structtensor.String},
	},
}

// Cases are the DataView test cases: the recipe schema (whole and
// projected), a tf.Example-shaped and an ELWC-shaped schema, a proto3
// schema with enums, bools, bytes, maps and oneofs, and a recursive schema
// whose default projection cuts the recursion.
var Cases = []Case{
	{Name: "recipe", Message: "structtensor.testdata.recipe.Recipe", N: 64, Seed: 1},
	{Name: "recipe_projected", Message: "structtensor.testdata.recipe.Recipe", Paths: []string{"title", "ingredients.name", "steps.tools.electric", "ratings.user_embedding"}, N: 40, Seed: 2},
	{Name: "tfexample", Message: "structtensor.testdata.example.Example", N: 64, Seed: 3},
	{Name: "elwc", Message: "structtensor.testdata.example.ExampleListWithContext", N: 32, Seed: 4},
	{Name: "proto3", Message: "structtensor.testdata.proto3.Proto3Msg", N: 48, Seed: 5},
	{Name: "recursive", Message: "structtensor.testdata.recursive.Node", N: 32, Seed: 6},
	{Name: "features", Message: savedmodel.MessageExample, N: 48, Seed: 7, Example: exampleSpec},
	{Name: "sequence_features", Message: savedmodel.MessageSequenceExample, N: 32, Seed: 8, Example: sequenceExampleSpec},
}

type leaf struct {
	DType           string    `json:"dtype"`
	Values          any       `json:"values"`
	NestedRowSplits [][]int64 `json:"nested_row_splits"`
	// InnerUniform counts the innermost partitions that are uniform:
	// decode_fun (like tf.io.parse_example) makes them dimensions of the
	// values, so its RaggedTensor has the first len(NestedRowSplits) -
	// InnerUniform row splits.
	InnerUniform int `json:"inner_uniform"`
}

type caseFile struct {
	Message string          `json:"message"`
	Paths   []string        `json:"paths"`
	Records []string        `json:"records"`
	Leaves  map[string]leaf `json:"leaves"`
	// Digest is savedmodel.Digest of the DataView.
	Digest string `json:"digest"`
}

// Write writes cases to out, with the test schemas of descPath.
func Write(out, descPath string, cases []Case) error {
	d, err := copstest.LoadDescriptors(descPath)
	if err != nil {
		return err
	}
	for _, c := range cases {
		if err := writeCase(filepath.Join(out, c.Name), d, c); err != nil {
			return fmt.Errorf("case %s: %w", c.Name, err)
		}
	}
	return writeJSON(filepath.Join(out, "cases.json"), cases)
}

// decoder is what a case decodes with: a protobuf or a feature plan.
type decoder interface {
	Decode(records [][]byte, opts ...decode.DecodeOptions) (*structtensor.StructTensor, error)
	Spec() *structtensor.StructSpec
}

// exportExample exports the DataView of a tf.Example case and makes its
// records.
func exportExample(dir string, c Case) (decoder, [][]byte, error) {
	compile := decode.CompileExample
	if c.Message == savedmodel.MessageSequenceExample {
		compile = decode.CompileSequenceExample
	}
	plan, err := compile(c.Example)
	if err != nil {
		return nil, nil, err
	}
	if err := savedmodel.ExportExampleDataView(dir, plan); err != nil {
		return nil, nil, err
	}
	return plan, copstest.ExampleRecords(c.Example, c.N, c.Seed, copstest.ExampleOptions{Sequence: plan.IsSequence(), FiniteFloats: true}), nil
}

func writeCase(dir string, d *decode.Descriptors, c Case) error {
	if c.Example != nil {
		plan, records, err := exportExample(filepath.Join(dir, "dataview"), c)
		if err != nil {
			return err
		}
		return writeCaseFiles(dir, c, plan, records)
	}
	md, err := d.Message(c.Message)
	if err != nil {
		return err
	}
	plan, err := decode.Compile(d, c.Message, c.Paths...)
	if err != nil {
		return err
	}
	if err := savedmodel.ExportDataView(filepath.Join(dir, "dataview"), plan); err != nil {
		return err
	}
	records, err := copstest.Records(md, c.N, c.Seed, copstest.Options{})
	if err != nil {
		return err
	}
	return writeCaseFiles(dir, c, plan, records)
}

// writeCaseFiles writes a case's records, Go's decode of them, its
// Arrow and digest beside its exported DataView.
func writeCaseFiles(dir string, c Case, plan decoder, records [][]byte) error {
	st, err := plan.Decode(records)
	if err != nil {
		return err
	}
	digest, err := savedmodel.Digest(filepath.Join(dir, "dataview"))
	if err != nil {
		return err
	}
	if err := writeArrow(filepath.Join(dir, "arrow.ipc"), filepath.Join(dir, "dataview"), records); err != nil {
		return err
	}
	cf := caseFile{Message: c.Message, Paths: c.Paths, Leaves: map[string]leaf{}, Digest: digest}
	for _, r := range records {
		cf.Records = append(cf.Records, base64.StdEncoding.EncodeToString(r))
	}
	if err := leaves(st, plan.Spec(), nil, cf.Leaves); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "case.json"), cf)
}

// leaves adds every leaf of spec (the root's fields at path prefix) in
// full shape.
func leaves(st *structtensor.StructTensor, spec *structtensor.StructSpec, prefix []string, dst map[string]leaf) error {
	for _, f := range spec.Fields {
		path := append(append([]string(nil), prefix...), f.Name)
		if s, ok := f.Spec.(*structtensor.StructSpec); ok {
			if err := leaves(st, s, path, dst); err != nil {
				return err
			}
			continue
		}
		v, err := st.FieldValue(path...)
		if err != nil {
			return err
		}
		var l leaf
		var t *structtensor.Tensor
		switch x := v.(type) {
		case *structtensor.Tensor:
			t = x
		case *structtensor.Ragged:
			t = x.Values()
			for _, p := range x.Partitions() {
				l.NestedRowSplits = append(l.NestedRowSplits, p.RowSplits())
				if p.IsUniform() {
					l.InnerUniform++
				} else {
					l.InnerUniform = 0
				}
			}
		default:
			return fmt.Errorf("leaf %s is a %T", strings.Join(path, "."), v)
		}
		if l.NestedRowSplits == nil {
			l.NestedRowSplits = [][]int64{}
		}
		l.DType = t.DType().String()
		if t.DType() == structtensor.String {
			s := make([]string, t.Len())
			for i := range s {
				s[i] = base64.StdEncoding.EncodeToString(t.StringAt(i))
			}
			l.Values = s
		} else {
			l.Values = t.Data()
		}
		dst[strings.Join(path, ".")] = l
	}
	return nil
}

// writeArrow writes what Go's DataView gives for records as Arrow, the
// output of `structtensor dataview run --to arrow`: LoadDataView,
// DataView.Decode (in TensorFlow) and DataView.ToArrow, as an IPC stream
// of one record batch.
func writeArrow(path, dataview string, records [][]byte) error {
	dv, err := savedmodel.LoadDataView(dataview)
	if err != nil {
		return err
	}
	defer dv.Close()
	st, err := dv.Decode(records)
	if err != nil {
		return err
	}
	rec, err := dv.ToArrow(st)
	if err != nil {
		return err
	}
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := starrow.NewIPCWriter(f)
	if err := w.WriteRecord(rec); err != nil {
		f.Close()
		return err
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
