package decode

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestExampleSpecFromSchemaTFMD reads a schema.pbtxt that
// tensorflow_metadata writes and checks the spec against the tf.io
// feature spec tfx-bsl makes of the same schema (.venv-tfx).
func TestExampleSpecFromSchemaTFMD(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tfx-bsl")
	}
	python := testenv.Python(t, ".venv-tfx")
	path := filepath.Join(t.TempDir(), "schema.pbtxt")
	cmd := exec.Command(python, filepath.Join(testenv.ModuleRoot(t), "decode", "testdata", "example", "schema_tfmd.py"), path)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("schema_tfmd.py: %v", err)
	}
	var want map[string]struct {
		Kind    string `json:"kind"`
		DType   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Key     string `json:"key"`
		Default bool   `json:"default"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ExampleSpecFromSchema(text)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Feature{}
	for name, f := range spec.Features {
		got[keyOf(name, f)] = f
	}
	seq := map[string]Feature{}
	for name, f := range spec.SequenceFeatures {
		seq[keyOf(name, f)] = f
	}
	if len(got)+len(seq) != len(want) {
		t.Errorf("%d features and %d feature lists, tfx-bsl has %d: %v", len(got), len(seq), len(want), spec)
	}
	for name, w := range want {
		var f Feature
		var ok bool
		if w.Kind == "sequence" {
			f, ok = seq[w.Key]
			w.Kind = "var_len"
		} else {
			f, ok = got[name]
		}
		if !ok {
			t.Errorf("%s: absent from the spec", name)
			continue
		}
		if f.Kind.String() != w.Kind || f.DType.String() != w.DType || (w.Kind == "fixed_len" && !reflect.DeepEqual(f.Shape, w.Shape)) ||
			(f.Default != nil) != w.Default {
			t.Errorf("%s: got %+v, tfx-bsl %+v", name, f, w)
		}
	}
	if _, err := CompileSequenceExample(spec); err != nil {
		t.Errorf("the spec does not compile: %v", err)
	}
}

func keyOf(name string, f Feature) string {
	if f.Key != "" {
		return f.Key
	}
	return name
}

func TestExampleSpecFromSchema(t *testing.T) {
	const schema = `
default_environment: "TRAINING"
default_environment: "SERVING"
feature { name: "label" type: INT presence { min_fraction: 1 } shape { } not_in_environment: "SERVING" }
feature { name: "only_eval" type: FLOAT in_environment: "EVAL" }
feature { name: "x" type: FLOAT value_count { min: 1 max: 3 } float_domain { min: 0 } }
feature { name: "2d" type: BYTES presence { min_fraction: 1 } shape { dim { size: 2 } dim { size: 2 } } }
`
	tests := []struct {
		env  string
		want map[string]Feature
	}{
		{"", map[string]Feature{
			"label":     {Kind: FixedLen, DType: structtensor.Int64, Shape: []int{}},
			"only_eval": {Kind: VarLen, DType: structtensor.Float32},
			"x":         {Kind: VarLen, DType: structtensor.Float32},
			"f2d":       {Kind: FixedLen, DType: structtensor.String, Key: "2d", Shape: []int{2, 2}},
		}},
		{"SERVING", map[string]Feature{
			"x":   {Kind: VarLen, DType: structtensor.Float32},
			"f2d": {Kind: FixedLen, DType: structtensor.String, Key: "2d", Shape: []int{2, 2}},
		}},
		{"EVAL", map[string]Feature{
			"only_eval": {Kind: VarLen, DType: structtensor.Float32},
		}},
		{"TRAINING", map[string]Feature{
			"label": {Kind: FixedLen, DType: structtensor.Int64, Shape: []int{}},
			"x":     {Kind: VarLen, DType: structtensor.Float32},
			"f2d":   {Kind: FixedLen, DType: structtensor.String, Key: "2d", Shape: []int{2, 2}},
		}},
	}
	for _, tt := range tests {
		spec, err := ExampleSpecFromSchema([]byte(schema), SchemaOptions{Environment: tt.env})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(spec.Features, tt.want) || spec.SequenceFeatures != nil {
			t.Errorf("environment %q: got %+v, want %+v", tt.env, spec, tt.want)
		}
	}
}

func TestExampleSpecFromSchemaErrors(t *testing.T) {
	for _, schema := range []string{
		`feature { name: "a" type: INT shape { } }`,                                // shape, not always present
		`feature { name: "a" type: INT presence { min_fraction: 0.5 } shape { } }`, // the same
		`feature { name: "a" }`,                                                    // no type
		`feature { name: "a" type: INT } feature { name: "a" type: FLOAT }`,
		`sparse_feature { name: "s" index_feature { name: "i" } value_feature { name: "v" } }`,
		`feature { name: "s" type: STRUCT struct_domain { feature { name: "t" type: STRUCT } } }`,
		`feature { name: "a" type: NOT_A_TYPE }`,
		`feature { name: "a" type: INT presence { min_fraction: 1 } shape { dim { size: -1 } } }`,
		`feature {`,
	} {
		if _, err := ExampleSpecFromSchema([]byte(schema)); !errors.Is(err, ErrFeatureSpec) {
			t.Errorf("%s: got %v, want ErrFeatureSpec", schema, err)
		}
	}
}

func FuzzExampleSpecFromSchema(f *testing.F) {
	f.Add([]byte(`feature { name: "a" type: INT presence { min_fraction: 1 } shape { dim { size: 2 } } }`))
	f.Add([]byte(`feature { name: "s" type: STRUCT struct_domain { feature { name: "t" type: BYTES } } } default_environment: "X"`))
	f.Add([]byte(`feature { name: "v" type: INT } feature { name: "n" type: INT } tensor_representation_group { key: "" value { tensor_representation { key: "t" value { ragged_tensor { feature_path { step: "v" } partition { row_length: "n" } partition { uniform_row_length: 2 } } } } } }`))
	f.Fuzz(func(t *testing.T, text []byte) {
		spec, err := ExampleSpecFromSchema(text)
		if err != nil {
			if !errors.Is(err, ErrFeatureSpec) {
				t.Fatalf("error is not ErrFeatureSpec: %v", err)
			}
			return
		}
		if len(spec.SequenceFeatures) > 0 {
			_, err = CompileSequenceExample(spec)
		} else {
			_, err = CompileExample(spec)
		}
		if err != nil && !errors.Is(err, ErrFeatureSpec) {
			t.Fatalf("a schema's spec does not compile: %v", err)
		}
	})
}

func TestInferExampleSpec(t *testing.T) {
	i64 := func(v ...int64) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
	}
	f32 := func(v ...float32) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: v}}}
	}
	str := func(v ...string) *tfexample.Feature {
		b := make([][]byte, len(v))
		for i := range v {
			b[i] = []byte(v[i])
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: b}}}
	}
	marshal := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ex := func(m map[string]*tfexample.Feature) []byte {
		return marshal(&tfexample.Example{Features: &tfexample.Features{Feature: m}})
	}
	records := [][]byte{
		ex(map[string]*tfexample.Feature{"age": i64(30), "emb": f32(1, 2), "tags": str("a"), "opt": i64(1), "x-y": f32(1), "none": {}}),
		ex(map[string]*tfexample.Feature{"age": i64(40), "emb": f32(3, 4), "tags": str("b", "c"), "x-y": f32(2)}),
	}
	spec, err := InferExampleSpec(records, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Feature{
		"age":  {Kind: FixedLen, DType: structtensor.Int64, Shape: []int{1}},
		"emb":  {Kind: FixedLen, DType: structtensor.Float32, Shape: []int{2}},
		"tags": {Kind: VarLen, DType: structtensor.String},
		"opt":  {Kind: VarLen, DType: structtensor.Int64},
		"x_y":  {Kind: FixedLen, DType: structtensor.Float32, Shape: []int{1}, Key: "x-y"},
	}
	if !reflect.DeepEqual(spec.Features, want) {
		t.Errorf("got %+v, want %+v", spec.Features, want)
	}
	plan, err := CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Decode(records); err != nil {
		t.Errorf("the sample does not decode by the spec inferred from it: %v", err)
	}

	seq := func(ctx map[string]*tfexample.Feature, lists map[string][]*tfexample.Feature) []byte {
		fl := map[string]*tfexample.FeatureList{}
		for k, v := range lists {
			fl[k] = &tfexample.FeatureList{Feature: v}
		}
		return marshal(&tfexample.SequenceExample{Context: &tfexample.Features{Feature: ctx}, FeatureLists: &tfexample.FeatureLists{FeatureList: fl}})
	}
	records = [][]byte{
		seq(map[string]*tfexample.Feature{"user": i64(1), "item": i64(5)},
			map[string][]*tfexample.Feature{"item": {i64(1), i64(2)}, "tok": {str("a", "b"), str()}, "w": {f32(1, 2)}}),
		seq(map[string]*tfexample.Feature{"user": i64(2), "item": i64(6)},
			map[string][]*tfexample.Feature{"item": {i64(3)}, "tok": {str("c")}}),
	}
	spec, err = InferExampleSpec(records, true)
	if err != nil {
		t.Fatal(err)
	}
	wantSeq := map[string]Feature{
		"item_list": {Kind: FixedLenSequence, DType: structtensor.Int64, Shape: []int{1}, Key: "item"},
		"tok":       {Kind: VarLen, DType: structtensor.String},
		"w":         {Kind: FixedLenSequence, DType: structtensor.Float32, Shape: []int{2}, AllowMissing: true},
	}
	if !reflect.DeepEqual(spec.SequenceFeatures, wantSeq) || len(spec.Features) != 2 {
		t.Errorf("got %+v / %+v, want sequence features %+v", spec.Features, spec.SequenceFeatures, wantSeq)
	}
	plan, err = CompileSequenceExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Decode(records); err != nil {
		t.Errorf("the sample does not decode by the spec inferred from it: %v", err)
	}

	bad := [][]byte{ex(map[string]*tfexample.Feature{"a": i64(1)}), ex(map[string]*tfexample.Feature{"a": f32(1)})}
	var re *RecordError
	if _, err := InferExampleSpec(bad, false); !errors.Is(err, ErrFeatureType) || !errors.As(err, &re) || re.Record != 1 {
		t.Errorf("mixed kinds: got %v, want ErrFeatureType in record 1", err)
	}
	if _, err := InferExampleSpec([][]byte{{0xff}}, false); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed record: got %v, want ErrMalformed", err)
	}
}

// TestExampleSpecFromSchemaTensorRepresentations: a schema's default
// tensor_representation_group makes a field per representation, named by
// its key, as TFXIO's parser config does; features it reads or is named
// after are left out, the others inferred as without a group.
func TestExampleSpecFromSchemaTensorRepresentations(t *testing.T) {
	const schema = `
feature { name: "age" type: INT }
feature { name: "emb" type: FLOAT }
feature { name: "tokens" type: BYTES }
feature { name: "token_lengths" type: INT }
feature { name: "price" type: FLOAT }
feature { name: "embedding" type: BYTES }
tensor_representation_group {
  key: ""
  value {
    tensor_representation { key: "age" value { dense_tensor { column_name: "age" default_value { int_value: -1 } } } }
    tensor_representation { key: "embedding" value { dense_tensor { column_name: "emb" shape { dim { size: 2 } } default_value { float_value: 0.5 } } } }
    tensor_representation { key: "query terms" value { ragged_tensor { feature_path { step: "tokens" } partition { row_length: "token_lengths" } partition { uniform_row_length: 2 } } } }
    tensor_representation { key: "p" value { varlen_sparse_tensor { column_name: "price" } } }
  }
}
tensor_representation_group { key: "other" value { tensor_representation { key: "x" value { sparse_tensor { value_column_name: "price" } } } } }
`
	spec, err := ExampleSpecFromSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Feature{
		"age":         {Kind: FixedLen, DType: structtensor.Int64, Shape: []int{}, Default: []int64{-1}},
		"embedding":   {Kind: FixedLen, DType: structtensor.Float32, Key: "emb", Shape: []int{2}, Default: []float32{0.5, 0.5}},
		"query_terms": {Kind: Ragged, DType: structtensor.String, Key: "tokens", Partitions: []Partition{{Kind: RowLengths, Key: "token_lengths"}, {Kind: UniformRowLength, Length: 2}}},
		"p":           {Kind: VarLen, DType: structtensor.Float32, Key: "price"},
	}
	if !reflect.DeepEqual(spec.Features, want) || spec.SequenceFeatures != nil {
		t.Errorf("got %+v\nwant %+v", spec.Features, want)
	}
	if _, err := CompileExample(spec); err != nil {
		t.Error(err)
	}
}

// TestExampleSpecFromSchemaRepresentationErrors: a representation the
// decode op cannot follow is an error naming it.
func TestExampleSpecFromSchemaRepresentationErrors(t *testing.T) {
	for rep, says := range map[string]string{
		`sparse_tensor { index_column_names: "i" value_column_name: "v" dense_shape { dim { size: 9 } } }`: "sparse_tensor is not supported",
		`ragged_tensor { feature_path { step: "v" } row_partition_dtype: INT32 }`:                          "INT32",
		`ragged_tensor { feature_path { step: "s" step: "v" } }`:                                           "2 steps",
		`ragged_tensor { feature_path { step: "v" } partition { row_length: "f" } }`:                       "not INT",
		`ragged_tensor { feature_path { step: "v" } partition { } }`:                                       "no kind",
		`ragged_tensor { feature_path { step: "v" } partition { uniform_row_length: 0 } }`:                 "uniform_row_length 0",
		`dense_tensor { column_name: "missing" }`:                                                          `feature "missing"`,
		`dense_tensor { column_name: "f" default_value { int_value: 1 } }`:                                 "int_value",
		`dense_tensor { column_name: "f" default_value { } }`:                                              "no value",
		`dense_tensor { column_name: "s" }`:                                                                "STRUCT",
		`dense_tensor { column_name: "f" } varlen_sparse_tensor { column_name: "f" }`:                      "both",
		``: "no kind",
	} {
		schema := `feature { name: "v" type: INT } feature { name: "i" type: INT } feature { name: "f" type: FLOAT }
feature { name: "s" type: STRUCT struct_domain { feature { name: "v" type: INT } } }
tensor_representation_group { key: "" value { tensor_representation { key: "t" value { ` + rep + ` } } } }`
		_, err := ExampleSpecFromSchema([]byte(schema))
		if !errors.Is(err, ErrFeatureSpec) || !strings.Contains(err.Error(), `tensor representation "t"`) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: got %v, want ErrFeatureSpec naming the representation and saying %q", rep, err, says)
		}
	}
}
