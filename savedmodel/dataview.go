package savedmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	shapepb "github.com/wamuir/graft/tensorflow/core/framework/tensor_shape_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// Names fixed by the DataView format.
const (
	// Tag is the MetaGraphDef tag a DataView is saved under.
	Tag = "serve"
	// SignatureDecode is the decoding signature; SignatureServingDefault
	// is the same signature under the key serving tools look for.
	SignatureDecode         = "decode"
	SignatureServingDefault = "serving_default"
	// InputRecords is the signatures' one input: a string vector of
	// serialized records.
	InputRecords = "records"
	// MetadataFile is the asset holding the Metadata, under assets/.
	MetadataFile = "dataview.json"
	// Format names the metadata format.
	Format = "structtensor.dataview"
	// FormatVersion is the version of the metadata this package writes.
	FormatVersion = 1

	// Graph names.
	recordsOpName = "records"
	decodeOpName  = "decode"
	outputsPrefix = "outputs/"
	assetOpName   = "dataview_asset"
)

// Sentinel errors; every error of this package wraps one of them or an
// error of tfbridge, cops or decode.
var (
	// ErrExists reports an export into a directory that is not empty.
	ErrExists = errors.New("savedmodel: directory exists and is not empty")
	// ErrFormat reports a directory that is not a DataView this package
	// can read: missing or unparsable metadata, an unknown version, a
	// signature that does not match the spec.
	ErrFormat = errors.New("savedmodel: not a DataView")
	// ErrFingerprint reports a saved_model.pb whose SHA-256 differs from
	// the one recorded at export.
	ErrFingerprint = errors.New("savedmodel: fingerprint mismatch")
	// ErrClosed reports use of a closed DataView.
	ErrClosed = errors.New("savedmodel: DataView is closed")
)

// Metadata is the content of assets/dataview.json: what a reader needs to
// interpret the signature outputs without TensorFlow, and to check that the
// model is the one exported.
type Metadata struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Message is the full name of the decoded protobuf message.
	Message string `json:"message"`
	// Spec is the StructSpec of the decoded batch (structtensor.MarshalSpec).
	Spec json.RawMessage `json:"spec"`
	// Plan is the decode.Plan in its byte form (base64 in JSON).
	Plan []byte `json:"plan"`
	// Signatures are the signature keys; Input the one input's key.
	Signatures []string `json:"signatures"`
	Input      string   `json:"input"`
	// Components are the signature outputs in tfbridge.Components order.
	Components []Component `json:"components"`
	// TensorFlowVersion is the TensorFlow the graph was built with.
	TensorFlowVersion string `json:"tensorflow_version"`
	// Fingerprint identifies the saved graph.
	Fingerprint Fingerprint `json:"fingerprint"`
}

// Component describes one signature output.
type Component struct {
	// Key is the signature output key (tfbridge.ComponentSpec.Name():
	// "ingredients/row_splits_0", "ingredients.name/values").
	Key string `json:"key"`
	// Path is the field path the component belongs to ("" for the root).
	Path string `json:"path"`
	// Kind is "row_splits" or "values".
	Kind string `json:"kind"`
	// Partition numbers a row_splits component among its owner's own
	// partitions (0 = outermost).
	Partition int `json:"partition,omitempty"`
	// DType is the element type ("int64" for row splits).
	DType string `json:"dtype"`
}

// Fingerprint is the content fingerprint of a DataView. TensorFlow's own
// fingerprint.pb holds hashes of a regularized graph computed by its C++
// runtime, which an exporter outside TensorFlow cannot reproduce, so a
// DataView records instead the SHA-256 of saved_model.pb: the graph (with
// the plan as an op attribute) and the signatures. LoadDataView refuses a
// model whose saved_model.pb no longer matches it.
type Fingerprint struct {
	Algorithm    string `json:"algorithm"` // "sha256"
	SavedModelPB string `json:"saved_model_pb"`
}

// Options configure ExportDataView.
type Options struct {
	// Threads bounds the engine threads per run of the decode op: 0 uses
	// every core, 1 decodes serially.
	Threads int
}

// ExportDataView writes a SavedModel DataView of plan to dir: a graph that
// feeds the signature input "records" (string [None]) into the decode op
// and returns its component tensors, under the tag "serve" with the
// signatures "decode" and "serving_default", plus assets/dataview.json
// (Metadata) and an empty variables/ directory (the DataView has no
// variables; TensorFlow then restores none). dir must not exist or be
// empty.
func ExportDataView(dir string, plan *decode.Plan, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkEmpty(dir); err != nil {
		return err
	}
	g := tfbridge.NewGraph()
	defer g.Close()
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: recordsOpName,
		Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	sym, err := cops.DecodeGraph(g, ph.Output(0), plan, cops.Options{Name: decodeOpName, Threads: o.Threads})
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	if _, err := g.AddOperation(tfbridge.OpSpec{Type: "Const", Name: assetOpName,
		Attrs: map[string]any{"dtype": structtensor.String, "value": mustScalar(MetadataFile)}}); err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	specs := sym.ComponentSpecs()
	outs := sym.Components()
	sig := &metapb.SignatureDef{
		MethodName: "tensorflow/serving/predict",
		Inputs:     map[string]*metapb.TensorInfo{InputRecords: tensorInfo(ph.Output(0).Name(), typespb.DataType_DT_STRING)},
		Outputs:    map[string]*metapb.TensorInfo{},
	}
	comps := make([]Component, len(specs))
	for i, c := range specs {
		// An Identity per component gives each a stable graph name.
		id, err := g.AddOperation(tfbridge.OpSpec{Type: "Identity", Name: outputsPrefix + c.Name(), Input: []tfbridge.Input{outs[i]}})
		if err != nil {
			return fmt.Errorf("export DataView: component %s: %w", c.Name(), err)
		}
		dt, err := tfbridge.DTypeOf(c.DType)
		if err != nil {
			return fmt.Errorf("export DataView: component %s: %w", c.Name(), err)
		}
		sig.Outputs[c.Name()] = tensorInfo(id.Output(0).Name(), typespb.DataType(dt))
		comps[i] = Component{Key: c.Name(), Path: c.Path, Kind: kindName(c.Kind), Partition: c.Partition, DType: c.DType.String()}
	}
	gdBytes, err := g.ToGraphDef()
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	gd := &graphpb.GraphDef{}
	if err := proto.Unmarshal(gdBytes, gd); err != nil {
		return fmt.Errorf("export DataView: GraphDef: %w", err)
	}
	mg := &metapb.MetaGraphDef{
		MetaInfoDef: &metapb.MetaGraphDef_MetaInfoDef{
			Tags:              []string{Tag},
			TensorflowVersion: tfbridge.Version(),
		},
		GraphDef:     gd,
		SignatureDef: map[string]*metapb.SignatureDef{SignatureDecode: sig, SignatureServingDefault: sig},
		AssetFileDef: []*metapb.AssetFileDef{{
			TensorInfo: &metapb.TensorInfo{Encoding: &metapb.TensorInfo_Name{Name: assetOpName + ":0"}, Dtype: typespb.DataType_DT_STRING, TensorShape: &shapepb.TensorShapeProto{}},
			Filename:   MetadataFile,
		}},
	}
	smBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(&metapb.SavedModel{SavedModelSchemaVersion: 1, MetaGraphs: []*metapb.MetaGraphDef{mg}})
	if err != nil {
		return fmt.Errorf("export DataView: SavedModel: %w", err)
	}
	planBytes, err := plan.MarshalBinary()
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	specJSON, err := structtensor.MarshalSpec(plan.Spec())
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	sum := sha256.Sum256(smBytes)
	meta := Metadata{
		Format: Format, Version: FormatVersion, Message: plan.Message(), Spec: specJSON, Plan: planBytes,
		Signatures: []string{SignatureDecode, SignatureServingDefault}, Input: InputRecords, Components: comps,
		TensorFlowVersion: tfbridge.Version(),
		Fingerprint:       Fingerprint{Algorithm: "sha256", SavedModelPB: hex.EncodeToString(sum[:])},
	}
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("export DataView: metadata: %w", err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "variables"), filepath.Join(dir, "assets")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("export DataView: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "assets", MetadataFile), append(metaJSON, '\n'), 0o644); err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	// saved_model.pb last: a directory without it is no SavedModel, so an
	// interrupted export is never mistaken for a complete one.
	if err := os.WriteFile(filepath.Join(dir, "saved_model.pb"), smBytes, 0o644); err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	return nil
}

func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%w: %s", ErrExists, dir)
	}
	return nil
}

func mustScalar(s string) *structtensor.Tensor {
	t, err := structtensor.NewTensor(structtensor.Shape{}, []string{s})
	if err != nil {
		panic(err) // a one-element string tensor cannot fail
	}
	return t
}

func tensorInfo(name string, dt typespb.DataType) *metapb.TensorInfo {
	return &metapb.TensorInfo{
		Encoding:    &metapb.TensorInfo_Name{Name: name},
		Dtype:       dt,
		TensorShape: &shapepb.TensorShapeProto{Dim: []*shapepb.TensorShapeProto_Dim{{Size: -1}}},
	}
}

func kindName(k tfbridge.ComponentKind) string {
	if k == tfbridge.RowSplits {
		return "row_splits"
	}
	return "values"
}

// ReadMetadata reads and checks the metadata of the DataView in dir: its
// format and version, and the fingerprint of saved_model.pb.
func ReadMetadata(dir string) (*Metadata, error) {
	b, err := os.ReadFile(filepath.Join(dir, "assets", MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, dir, err)
	}
	var m Metadata
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, MetadataFile, err)
	}
	if m.Format != Format || m.Version != FormatVersion {
		return nil, fmt.Errorf("%w: %s: format %q version %d (want %q version %d)", ErrFormat, MetadataFile, m.Format, m.Version, Format, FormatVersion)
	}
	sm, err := os.ReadFile(filepath.Join(dir, "saved_model.pb"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, dir, err)
	}
	if m.Fingerprint.Algorithm != "sha256" {
		return nil, fmt.Errorf("%w: %s: fingerprint algorithm %q", ErrFormat, MetadataFile, m.Fingerprint.Algorithm)
	}
	sum := sha256.Sum256(sm)
	if got := hex.EncodeToString(sum[:]); got != m.Fingerprint.SavedModelPB {
		return nil, fmt.Errorf("%w: %s: saved_model.pb has SHA-256 %s, the metadata records %s", ErrFingerprint, dir, got, m.Fingerprint.SavedModelPB)
	}
	return &m, nil
}
