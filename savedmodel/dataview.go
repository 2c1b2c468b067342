package savedmodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	tensorpb "github.com/wamuir/graft/tensorflow/core/framework/tensor_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
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
	// FormatVersion is the version of the format this package writes and
	// loads: 3, the object-based SavedModel with the TensorRepresentation
	// assets. Earlier versions (1: a TF1-style graph without object graph
	// or checkpoint; 2: without the TensorRepresentation assets) are
	// refused with ErrOldFormat, which says how to re-export.
	FormatVersion = 3

	// Graph names.
	decodeOpName = "decode"
	assetOpName  = "dataview_asset"
)

// Sentinel errors; every error of this package wraps one of them or an
// error of tfbridge, cops or decode.
var (
	// ErrExists reports an export into a directory that is not empty.
	ErrExists = errors.New("savedmodel: directory exists and is not empty")
	// ErrFormat reports a directory that is not a DataView this package
	// can read: missing or unparsable files or metadata, an unknown
	// version, a file that is not a regular file inside the directory.
	ErrFormat = errors.New("savedmodel: not a DataView")
	// ErrOldFormat reports a DataView of an earlier format version.
	ErrOldFormat = errors.New("savedmodel: DataView of an old format")
	// ErrFingerprint reports a file whose SHA-256 differs from the one
	// the metadata records, or a DataView whose digest differs from the
	// one the caller pinned (LoadOptions.Digest).
	ErrFingerprint = errors.New("savedmodel: fingerprint mismatch")
	// ErrGraph reports a SavedModel that is not what the metadata's plan
	// exports: an op outside the DataView's, an init op, another plan,
	// other signatures, objects or checkpoint. Nothing of it has run.
	ErrGraph = errors.New("savedmodel: graph is not the DataView's")
	// ErrClosed reports use of a closed DataView.
	ErrClosed = errors.New("savedmodel: DataView is closed")
)

// Metadata is the content of assets/dataview.json: what a reader needs to
// interpret the outputs without TensorFlow, and what the loader checks
// the SavedModel against.
type Metadata struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Message is the full name of the decoded protobuf message.
	Message string `json:"message"`
	// Spec is the StructSpec of the decoded batch (structtensor.MarshalSpec).
	Spec json.RawMessage `json:"spec"`
	// Plan is the decode.Plan in its byte form (base64 in JSON), or for
	// a DataView of tf.Example records (Message "tensorflow.Example" or
	// "tensorflow.SequenceExample") the decode.ExamplePlan's.
	Plan []byte `json:"plan"`
	// Layout is, for a DataView of tf.Example records, the example decode
	// op's layout attribute (decode.ExamplePlan.MarshalLayout, base64 in
	// JSON), which a loader that cannot rebuild the export (Python's)
	// compares with the graph's as it compares the plan; absent for
	// protobuf messages.
	Layout []byte `json:"layout,omitempty"`
	// ExampleSpec is the feature spec (decode.ParseExampleSpec's JSON) of
	// a DataView of tf.Example records, which its plan was compiled
	// from; absent for protobuf messages.
	ExampleSpec json.RawMessage `json:"example_spec,omitempty"`
	// Threads is the decode op's thread bound (Options.Threads).
	Threads int `json:"threads"`
	// Signatures are the signature keys; Input the one input's key.
	Signatures []string `json:"signatures"`
	Input      string   `json:"input"`
	// Components are the signature outputs in graphst.Components order.
	Components []Component `json:"components"`
	// Leaves are decode_fun's outputs, in path order.
	Leaves []Leaf `json:"leaves"`
	// TensorFlowVersion is the TensorFlow the graph was built with.
	TensorFlowVersion string `json:"tensorflow_version"`
	// Fingerprint holds the SHA-256 of every other file.
	Fingerprint Fingerprint `json:"fingerprint"`
}

// Component describes one signature output.
type Component struct {
	// Key is the signature output key (graphst.ComponentSpec.Name():
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

// Fingerprint is the content fingerprint of the files of a DataView
// other than its metadata: the SHA-256 of each, by slash-separated path.
// It detects corruption and accidental edits (integrity); anyone can
// recompute it, so it is no proof of origin (see LoadOptions.Digest).
type Fingerprint struct {
	Algorithm string            `json:"algorithm"` // "sha256"
	Files     map[string]string `json:"files"`
}

// Options configure ExportDataView, an optional trailing argument (at most
// one); the zero value is the default.
type Options struct {
	// Threads bounds the engine threads per run of the decode op: 0 uses
	// every core, 1 decodes serially.
	Threads int
}

// ExportDataView writes a DataView of plan to dir, which must not exist
// or be empty: an object-based SavedModel (package documentation) with the
// decode_fun function TFX loads, the signatures "decode" and
// "serving_default", its checkpoint and assets/dataview.json.
func ExportDataView(dir string, plan *decode.Plan, opts ...Options) error {
	o, err := optarg.One(opts, decode.ErrInput)
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	if err := checkEmpty(dir); err != nil {
		return err
	}
	files, _, err := exportFiles(protoDecoder{plan}, o.Threads)
	if err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	if err := objectgraph.WriteFiles(dir, files); err != nil {
		return fmt.Errorf("export DataView: %w", err)
	}
	return nil
}

// exportFiles returns every file of the DataView of a decoder, by path,
// and its metadata. The result depends only on the decoder's plan, the
// thread bound and the TensorFlow version: LoadDataView rebuilds it to
// check a DataView.
func exportFiles(d decoder, threads int) (map[string][]byte, *Metadata, error) {
	b, err := build(d, threads)
	if err != nil {
		return nil, nil, err
	}
	files, err := objectgraph.Files(b.model)
	if err != nil {
		return nil, nil, err
	}
	planBytes, err := d.planBytes()
	if err != nil {
		return nil, nil, err
	}
	specJSON, err := structtensor.MarshalSpec(d.spec())
	if err != nil {
		return nil, nil, err
	}
	exampleSpec, err := d.exampleSpec()
	if err != nil {
		return nil, nil, err
	}
	meta := &Metadata{
		Format: Format, Version: FormatVersion, Message: d.message(), Spec: specJSON, Plan: planBytes, Layout: d.layoutBytes(), ExampleSpec: exampleSpec,
		Threads: threads, Signatures: []string{SignatureDecode, SignatureServingDefault}, Input: InputRecords,
		Components: b.comps, Leaves: b.leaves, TensorFlowVersion: tfbridge.Version(),
		Fingerprint: Fingerprint{Algorithm: "sha256", Files: map[string]string{}},
	}
	tr, trText := TensorRepresentations(b.leaves)
	files[objectgraph.AssetsDir+"/"+TensorRepresentationsFile] = tr
	files[objectgraph.AssetsDir+"/"+TensorRepresentationsTextFile] = trText
	for name, content := range files {
		sum := sha256.Sum256(content)
		meta.Fingerprint.Files[name] = hex.EncodeToString(sum[:])
	}
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("metadata: %w", err)
	}
	files[objectgraph.AssetsDir+"/"+MetadataFile] = append(metaJSON, '\n')
	return files, meta, nil
}

// digestOf is the digest of a DataView's files: the SHA-256 of the sorted
// list of "<path>\x00<SHA-256 of the file>\n", metadata included.
func digestOf(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(h, "%s\x00%x\n", n, sum)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func kindName(k graphst.ComponentKind) string {
	if k == graphst.RowSplitsComponent {
		return "row_splits"
	}
	return "values"
}

func stringScalarProto(s string) *tensorpb.TensorProto {
	return &tensorpb.TensorProto{Dtype: typespb.DataType_DT_STRING, TensorShape: objectgraph.ShapeProto(structtensor.Shape{}), StringVal: [][]byte{[]byte(s)}}
}

func joinKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
