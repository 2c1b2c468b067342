package graphst_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/testenv"
	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	"google.golang.org/protobuf/encoding/protowire"
)

// exampleFeatureKeys are the features of the random records and the list
// each holds.
var exampleFeatureKeys = []struct {
	key   string
	dtype st.DType
}{{"age", st.Int64}, {"score", st.Float32}, {"tags", st.String}, {"ids", st.Int64}}

// randomExample writes a tensorflow.Example: each feature present or not,
// its list of 0-3 values, map entries in random order, a feature now and
// then written twice (the last counts), and now and then a feature with no
// list set.
func randomExample(rng *rand.Rand) []byte {
	var entries [][]byte
	for _, f := range exampleFeatureKeys {
		for range rng.IntN(3) { // 0, 1 or 2 entries of the key
			var feature []byte
			if rng.IntN(8) > 0 {
				var list []byte
				n := rng.IntN(4)
				for range n {
					switch f.dtype {
					case st.Int64:
						list = protowire.AppendTag(list, 1, protowire.VarintType)
						list = protowire.AppendVarint(list, uint64(int64(rng.IntN(100)-50)))
					case st.Float32:
						list = protowire.AppendTag(list, 1, protowire.Fixed32Type)
						list = protowire.AppendFixed32(list, math.Float32bits(float32(rng.IntN(64))/8))
					default:
						list = protowire.AppendTag(list, 1, protowire.BytesType)
						list = protowire.AppendString(list, []string{"", "a", "bc"}[rng.IntN(3)])
					}
				}
				field := map[st.DType]protowire.Number{st.Int64: 3, st.Float32: 2, st.String: 1}[f.dtype]
				feature = protowire.AppendTag(feature, field, protowire.BytesType)
				feature = protowire.AppendBytes(feature, list)
			}
			var entry []byte
			entry = protowire.AppendTag(entry, 1, protowire.BytesType)
			entry = protowire.AppendString(entry, f.key)
			entry = protowire.AppendTag(entry, 2, protowire.BytesType)
			entry = protowire.AppendBytes(entry, feature)
			entries = append(entries, entry)
		}
	}
	rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	var features []byte
	for _, e := range entries {
		features = protowire.AppendTag(features, 1, protowire.BytesType)
		features = protowire.AppendBytes(features, e)
	}
	var ex []byte
	if len(entries) > 0 || rng.IntN(2) == 0 {
		ex = protowire.AppendTag(ex, 1, protowire.BytesType)
		ex = protowire.AppendBytes(ex, features)
	}
	return ex
}

// exampleGraph decodes records fed to a placeholder generically, as
// tensorflow.Example (testdata/proto/example.proto is wire compatible).
func exampleGraph(t *testing.T, s *op.Scope) (tfbridge.Output, *graphst.Struct) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	d := must(decode.LoadDescriptorSet(b))
	plan := must(decode.Compile(d, "structtensor.testdata.example.Example", "features.feature.key",
		"features.feature.value.int64_list.value", "features.feature.value.float_list.value", "features.feature.value.bytes_list.value"))
	records := op.Placeholder(s, tfbridge.String, op.PlaceholderShape(op.ShapeOf(-1)))
	x, err := cops.DecodeGraph(s.Graph(), records, plan)
	if err != nil {
		t.Fatal(err)
	}
	return records, x
}

const parseExampleScript = `
import json, sys
import tensorflow as tf
c = json.load(open(sys.argv[1]))
records = [bytes.fromhex(r) for r in c["records"]]
dt = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}
spec = {f["key"]: tf.io.RaggedFeature(dt[f["dtype"]]) for f in c["features"]}
out = tf.io.parse_example(records, spec)
json.dump({k: v.to_list() for k, v in out.items()}, sys.stdout, default=lambda b: b.decode())
`

// TestExampleFeature selects each feature of random records from the
// generic decode and compares it with decode.ExamplePlan's Ragged feature
// (the value plane) and with TensorFlow's tf.io.parse_example of a
// RaggedFeature.
func TestExampleFeature(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var records [][]byte
	var hexes []string
	for range 40 {
		r := randomExample(rng)
		records = append(records, r)
		hexes = append(hexes, hex.EncodeToString(r))
	}
	s := op.NewScope()
	in, x := exampleGraph(t, s)
	spec := &decode.ExampleSpec{Features: map[string]decode.Feature{}}
	var features []map[string]string
	got := make([]graphst.Ragged, len(exampleFeatureKeys))
	for i, f := range exampleFeatureKeys {
		got[i] = graphst.ExampleFeature(s, x, f.key, f.dtype)
		spec.Features[f.key] = decode.Feature{Kind: decode.Ragged, DType: f.dtype}
		features = append(features, map[string]string{"key": f.key, "dtype": f.dtype.String()})
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := must(must(decode.CompileExample(spec)).Decode(records))
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	feeds := map[tfbridge.Output]*tfbridge.Tensor{in: must(tfbridge.NewTensor(must(st.NewTensor(st.Shape{len(records)}, bytesToStrings(records)))))}

	cfg, err := json.Marshal(map[string]any{"records": hexes, "features": features})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "examples.json")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	var tf map[string]any
	if out := testenv.RunPython(t, ".venv", parseExampleScript, path); json.Unmarshal(out, &tf) != nil {
		t.Fatalf("python output: %s", out)
	}
	for i, f := range exampleFeatureKeys {
		v := must(graphst.Run(t.Context(), sess, feeds, got[i]))
		w, _ := want.FieldValue(f.key)
		if !st.Equal(v, w) {
			t.Errorf("%s: graph %v\nExamplePlan %v", f.key, v, w)
		}
		b := must(json.Marshal(st.ToValue(v)))
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, tf[f.key]) {
			t.Errorf("%s: graph %s\nTensorFlow %v", f.key, b, tf[f.key])
		}
	}
}

// TestExampleFeatureErrors: a feature of another list kind is an error of
// the run (as in tf.io.parse_example and ExamplePlan); a spec without the
// Example layout or a dtype without a list are errors of the graph.
func TestExampleFeatureErrors(t *testing.T) {
	s := op.NewScope()
	in, x := exampleGraph(t, s)
	asFloat := graphst.ExampleFeature(s, x, "age", st.Float32)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	// A record with age an int64_list of one value, and an empty one.
	var list, feature, entry, features, record []byte
	list = protowire.AppendVarint(protowire.AppendTag(list, 1, protowire.VarintType), 7)
	feature = protowire.AppendBytes(protowire.AppendTag(feature, 3, protowire.BytesType), list)
	entry = protowire.AppendString(protowire.AppendTag(entry, 1, protowire.BytesType), "age")
	entry = protowire.AppendBytes(protowire.AppendTag(entry, 2, protowire.BytesType), feature)
	features = protowire.AppendBytes(protowire.AppendTag(features, 1, protowire.BytesType), entry)
	record = protowire.AppendBytes(protowire.AppendTag(record, 1, protowire.BytesType), features)
	feeds := map[tfbridge.Output]*tfbridge.Tensor{in: must(tfbridge.NewTensor(must(st.NewTensor(st.Shape{2}, []string{string(record), ""}))))}
	if _, err := graphst.Run(t.Context(), sess, feeds, asFloat); !errors.Is(err, tfbridge.ErrInvalidArgument) {
		t.Errorf("int64 feature read as float: %v", err)
	}

	for name, build := range map[string]func(s *op.Scope, x *graphst.Struct){
		"dtype without a list": func(s *op.Scope, x *graphst.Struct) { graphst.ExampleFeature(s, x, "age", st.Int32) },
		"not an Example": func(s *op.Scope, _ *graphst.Struct) {
			spec := &st.StructSpec{Shape: st.Shape{st.Unknown}, Fields: []st.FieldSpec{{Name: "features", Spec: &st.TensorSpec{DType: st.Int64, Shape: st.Shape{st.Unknown}}}}}
			graphst.ExampleFeature(s, must(graphst.Placeholders(s.Graph(), spec, "p")), "age", st.Int64)
		},
	} {
		s := op.NewScope()
		_, x := exampleGraph(t, s)
		build(s, x)
		if !errors.Is(s.Err(), graphst.ErrSpec) {
			t.Errorf("%s: %v", name, s.Err())
		}
	}
}

func bytesToStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
