package savedmodel_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
	attrpb "github.com/wamuir/graft/tensorflow/core/framework/attr_value_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
)

func compileExampleCase(t testing.TB, c copstest.ExampleCase) *decode.ExamplePlan {
	t.Helper()
	compile := decode.CompileExample
	if c.Sequence {
		compile = decode.CompileSequenceExample
	}
	plan, err := compile(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestExampleDataView exports DataViews of random feature specs (every
// kind, dtype and partition; string defaults; tf.Example and
// SequenceExample), loads each with LoadDataView (its checks rebuild the
// export from the metadata's feature spec; TensorFlow's C API loader
// loads it) and decodes random records: equal to decode.ExamplePlan.Decode,
// and laid out as Arrow (DataView.ToArrow).
func TestExampleDataView(t *testing.T) {
	for _, seq := range []bool{false, true} {
		for i, c := range copstest.ExampleCases(31, 6, copstest.ExampleOptions{Sequence: seq, MaxRecords: 20}) {
			finiteDefaults(c.Spec)
			plan := compileExampleCase(t, c)
			dir := filepath.Join(t.TempDir(), "dv")
			if err := savedmodel.ExportExampleDataView(dir, plan); err != nil {
				t.Fatalf("sequence %v case %d: %v", seq, i, err)
			}
			dv, err := savedmodel.LoadDataView(dir)
			if err != nil {
				t.Fatalf("sequence %v case %d: %v", seq, i, err)
			}
			if dv.ExamplePlan() == nil || dv.Plan() != nil || !dv.Spec().Equal(plan.Spec()) {
				t.Fatalf("sequence %v case %d: loaded spec %v, want %v", seq, i, dv.Spec(), plan.Spec())
			}
			want, err := plan.Decode(c.Records)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dv.Decode(c.Records)
			if err != nil {
				t.Fatalf("sequence %v case %d: %v", seq, i, err)
			}
			if !structtensor.Equal(got, want) {
				t.Errorf("sequence %v case %d: DataView %v\nplan.Decode %v", seq, i, got, want)
			}
			// Every spec has TFXIO's Arrow layout (its values compared
			// with TFXIO's by TestTFX).
			rec, err := dv.ToArrow(got)
			if err != nil {
				t.Fatalf("sequence %v case %d: ToArrow: %v", seq, i, err)
			}
			if int(rec.NumRows()) != len(c.Records) || int(rec.NumCols()) != len(plan.Spec().Fields) {
				t.Errorf("sequence %v case %d: Arrow %d rows, %d columns", seq, i, rec.NumRows(), rec.NumCols())
			}
			rec.Release()
			dv.Close()
		}
	}
}

// TestExampleDataViewRefusesEditedSpec edits the feature spec in the
// metadata (so the fingerprint, which does not cover the metadata, still
// holds): the loader rebuilds another export than the files and refuses.
func TestExampleDataViewRefusesEditedSpec(t *testing.T) {
	spec, err := decode.ParseExampleSpec([]byte(`{"features": {"age": {"kind": "fixed_len", "dtype": "int64", "default": -1}, "tags": {"kind": "var_len", "dtype": "string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := decode.CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dv")
	if err := savedmodel.ExportExampleDataView(dir, plan); err != nil {
		t.Fatal(err)
	}
	metaPath := filepath.Join(dir, "assets", savedmodel.MetadataFile)
	b, err := os.ReadFile(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	meta["example_spec"].(map[string]any)["features"].(map[string]any)["age"].(map[string]any)["default"] = []int{7}
	edited, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metaPath, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := savedmodel.LoadDataView(dir); !errors.Is(err, savedmodel.ErrGraph) && !errors.Is(err, savedmodel.ErrFormat) {
		t.Errorf("err = %v, want ErrGraph or ErrFormat", err)
	}
}

// finiteDefaults replaces defaults JSON cannot hold (NaN, infinities,
// strings that are not UTF-8), which ExportExampleDataView refuses
// (TestExampleDataViewRefusesNonFiniteDefault).
func finiteDefaults(spec *decode.ExampleSpec) {
	for _, m := range []map[string]decode.Feature{spec.Features, spec.SequenceFeatures} {
		for name, f := range m {
			if d, ok := f.Default.([][]byte); ok {
				for i, v := range d {
					d[i] = []byte(strings.ToValidUTF8(string(v), "?"))
				}
			}
			if d, ok := f.Default.([]float32); ok {
				for i, v := range d {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						d[i] = 0
					}
				}
				m[name] = f
			}
		}
	}
}

// TestExampleDataViewRefusesNonFiniteDefault: the metadata's feature
// spec is JSON, which has no NaN or infinity; such a default is refused
// at export rather than written as something else.
func TestExampleDataViewRefusesNonFiniteDefault(t *testing.T) {
	plan, err := decode.CompileExample(&decode.ExampleSpec{Features: map[string]decode.Feature{
		"x": {Kind: decode.FixedLen, DType: structtensor.Float32, Default: float32(math.Inf(1))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := savedmodel.ExportExampleDataView(filepath.Join(t.TempDir(), "dv"), plan); !errors.Is(err, decode.ErrFeatureSpec) {
		t.Errorf("err = %v, want ErrFeatureSpec", err)
	}
}

// TestExampleDataViewRefusesEditedLayout edits the example decode op's
// layout attribute in the graph (its kernel reads it as it reads the
// plan), then the layout in the metadata, each time with the fingerprint
// recomputed: the loader refuses both.
func TestExampleDataViewRefusesEditedLayout(t *testing.T) {
	spec, err := decode.ParseExampleSpec([]byte(`{"features": {"ids": {"kind": "var_len", "dtype": "int64"}, "emb": {"kind": "fixed_len", "dtype": "float32", "shape": [2]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := decode.CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(t *testing.T, dir string)
	}{
		{"layout attribute", func(t *testing.T, dir string) {
			editSavedModel(t, dir, func(mg *metapb.MetaGraphDef) {
				n := 0
				for _, f := range mg.GetGraphDef().GetLibrary().GetFunction() {
					for _, node := range f.GetNodeDef() {
						if node.GetOp() == cops.ExampleOpName {
							node.Attr["layout"] = &attrpb.AttrValue{Value: &attrpb.AttrValue_S{S: append(node.Attr["layout"].GetS(), 0)}}
							n++
						}
					}
				}
				if n != 1 {
					t.Fatalf("%d example decode ops", n)
				}
			})
			editMeta(t, dir, nil)
		}},
		{"layout in the metadata", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) { m["layout"] = "U1RFTAEA" }) // "STEL", version 1, no fields
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dv")
			if err := savedmodel.ExportExampleDataView(dir, plan); err != nil {
				t.Fatal(err)
			}
			c.edit(t, dir)
			if _, err := savedmodel.LoadDataView(dir); !errors.Is(err, savedmodel.ErrGraph) {
				t.Errorf("err = %v, want ErrGraph", err)
			}
		})
	}
}
