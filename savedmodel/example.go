package savedmodel

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// Messages of the DataViews of tf.Example records.
const (
	MessageExample         = "tensorflow.Example"
	MessageSequenceExample = "tensorflow.SequenceExample"
)

// decoder is what a DataView decodes with: a protobuf plan (the proto
// decode op) or a tf.Example feature plan (the example decode op). The
// export is the same for both from the decode op's outputs on.
type decoder interface {
	spec() *structtensor.StructSpec
	decodeGraph(g *tfbridge.Graph, records tfbridge.Output, o cops.Options) (*graphst.Struct, error)
	message() string
	planBytes() ([]byte, error)
	// layoutBytes is Metadata.Layout: nil for protobuf plans.
	layoutBytes() []byte
	// exampleSpec is Metadata.ExampleSpec: nil for protobuf plans.
	exampleSpec() (json.RawMessage, error)
}

type protoDecoder struct{ plan *decode.Plan }

func (d protoDecoder) spec() *structtensor.StructSpec { return d.plan.Spec() }
func (d protoDecoder) decodeGraph(g *tfbridge.Graph, records tfbridge.Output, o cops.Options) (*graphst.Struct, error) {
	return cops.DecodeGraph(g, records, d.plan, o)
}
func (d protoDecoder) message() string                       { return d.plan.Message() }
func (d protoDecoder) planBytes() ([]byte, error)            { return d.plan.MarshalBinary() }
func (d protoDecoder) exampleSpec() (json.RawMessage, error) { return nil, nil }
func (d protoDecoder) layoutBytes() []byte                   { return nil }

type exampleDecoder struct {
	plan     *decode.ExamplePlan
	specJSON json.RawMessage
}

func (d exampleDecoder) spec() *structtensor.StructSpec { return d.plan.Spec() }
func (d exampleDecoder) decodeGraph(g *tfbridge.Graph, records tfbridge.Output, o cops.Options) (*graphst.Struct, error) {
	return cops.DecodeExampleGraph(g, records, d.plan, o)
}
func (d exampleDecoder) message() string {
	if d.plan.IsSequence() {
		return MessageSequenceExample
	}
	return MessageExample
}
func (d exampleDecoder) planBytes() ([]byte, error)            { return d.plan.MarshalBinary() }
func (d exampleDecoder) exampleSpec() (json.RawMessage, error) { return d.specJSON, nil }
func (d exampleDecoder) layoutBytes() []byte                   { return d.plan.MarshalLayout() }

// newExampleDecoder records plan's spec as JSON that decode.ParseExampleSpec
// reads back into the same plan (string defaults as JSON strings), and
// checks that it does: the loader rebuilds the DataView from that JSON.
func newExampleDecoder(plan *decode.ExamplePlan) (exampleDecoder, error) {
	spec := plan.ExampleSpec()
	for _, m := range []map[string]decode.Feature{spec.Features, spec.SequenceFeatures} {
		for name, f := range m {
			if b, ok := f.Default.([][]byte); ok {
				s := make([]string, len(b))
				for i, v := range b {
					s[i] = string(v)
				}
				f.Default = s
				m[name] = f
			}
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return exampleDecoder{}, fmt.Errorf("%w: the feature spec has no JSON form: %v", decode.ErrFeatureSpec, err)
	}
	d := exampleDecoder{plan: plan, specJSON: b}
	again, err := compileExampleJSON(b, plan.IsSequence())
	if err != nil {
		return exampleDecoder{}, err
	}
	want, _ := plan.MarshalBinary()
	got, _ := again.MarshalBinary()
	if !bytes.Equal(got, want) {
		return exampleDecoder{}, fmt.Errorf("%w: the feature spec's JSON form does not hold it (a string default that is not UTF-8?)", decode.ErrFeatureSpec)
	}
	return d, nil
}

func compileExampleJSON(b []byte, sequence bool) (*decode.ExamplePlan, error) {
	spec, err := decode.ParseExampleSpec(b)
	if err != nil {
		return nil, err
	}
	if sequence {
		return decode.CompileSequenceExample(spec)
	}
	return decode.CompileExample(spec)
}

// decoderOf makes the decoder a DataView's metadata describes.
func decoderOf(meta *Metadata) (decoder, error) {
	if meta.ExampleSpec == nil {
		plan, err := decode.UnmarshalPlan(meta.Plan)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: plan: %v", ErrFormat, MetadataFile, err)
		}
		return protoDecoder{plan}, nil
	}
	if meta.Message != MessageExample && meta.Message != MessageSequenceExample {
		return nil, fmt.Errorf("%w: %s: a feature spec for message %q (want %s or %s)", ErrFormat, MetadataFile, meta.Message, MessageExample, MessageSequenceExample)
	}
	plan, err := compileExampleJSON(meta.ExampleSpec, meta.Message == MessageSequenceExample)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: example_spec: %v", ErrFormat, MetadataFile, err)
	}
	d, err := newExampleDecoder(plan)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: example_spec: %v", ErrFormat, MetadataFile, err)
	}
	return d, nil
}

// ExportExampleDataView writes a DataView of tf.Example records (or
// tf.SequenceExample, as plan was compiled) to dir, which must not exist
// or be empty: the same SavedModel as ExportDataView's, over the example
// decode op (cops.DecodeExampleGraph). Its decode signature takes
// serialized records and returns the features as tf.io.parse_example
// shapes them (a dense tensor per FixedLen feature, row splits and values
// per other), so that it can replace parse_example in a serving graph;
// decode_fun returns one tensor or RaggedTensor per feature for TFX. The
// metadata records the feature spec (Metadata.ExampleSpec), from which
// LoadDataView rebuilds the export to check it.
func ExportExampleDataView(dir string, plan *decode.ExamplePlan, opts ...Options) error {
	o, err := optarg.One(opts, decode.ErrInput)
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	if err := checkEmpty(dir); err != nil {
		return err
	}
	d, err := newExampleDecoder(plan)
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	files, _, err := exportFiles(d, o.Threads)
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	if err := objectgraph.WriteFiles(dir, files); err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	return nil
}
