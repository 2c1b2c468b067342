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
	"path"
	"sort"
	"strings"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	nodepb "github.com/wamuir/graft/tensorflow/core/framework/node_def_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// DefaultMaxFileBytes is the default limit on the size of each file of a
// DataView (LoadOptions.MaxFileBytes).
const DefaultMaxFileBytes = 256 << 20

// allowedOps are the only ops a DataView's graph and functions hold.
var allowedOps = map[string]bool{
	cops.OpName: true, "Identity": true, "Cast": true, "PartitionedCall": true,
	"Placeholder": true, "Const": true, "NoOp": true,
	// The tf.Example DataView's decode op, whose outputs state their
	// shapes through EnsureShape (cops.DecodeExampleGraph).
	cops.ExampleOpName: true, "EnsureShape": true,
	// decode_fun's values of a leaf whose innermost partitions are
	// uniform, reshaped to its inner dimensions.
	"Reshape": true,
}

// LoadOptions configure Load, LoadDataView and ReadMetadata. The zero
// value is the default; like every configurable call of this module, the
// loaders take it as an optional trailing argument (at most one).
type LoadOptions struct {
	// Digest pins the DataView's digest (Digest, `structtensor dataview
	// inspect`), "sha256:<hex>": loading fails with ErrFingerprint unless
	// every file is the one the digest was taken of. The fingerprint
	// inside a DataView proves integrity only, since whoever edits the
	// files can recompute it; a digest the caller obtained from a trusted
	// source also proves that the DataView is the one that source vouched
	// for. Empty pins nothing.
	Digest string
	// MaxFileBytes limits each file's size; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
}

type loadOptions struct {
	digest   string
	maxBytes int64
}

func loadOpts(opts []LoadOptions) (loadOptions, error) {
	o := loadOptions{maxBytes: DefaultMaxFileBytes}
	given, err := optarg.One(opts, decode.ErrInput)
	if err != nil {
		return o, err
	}
	o.digest = given.Digest
	if given.MaxFileBytes != 0 {
		o.maxBytes = given.MaxFileBytes
	}
	return o, nil
}

// expectedFiles are the files of a DataView, by path.
var expectedFiles = map[string]bool{
	objectgraph.SavedModelFile:                                  true,
	"variables/variables.index":                                 true,
	"variables/variables.data-00000-of-00001":                   true,
	objectgraph.AssetsDir + "/" + MetadataFile:                  true,
	objectgraph.AssetsDir + "/" + TensorRepresentationsFile:     true,
	objectgraph.AssetsDir + "/" + TensorRepresentationsTextFile: true,
}

// requireFiles checks that files holds every file of a DataView. It runs
// after the metadata's version is known, so that a DataView of an older
// format, which lacks some, is refused as such (ErrOldFormat).
func requireFiles(files map[string][]byte) error {
	for _, name := range sortedNames(expectedFiles) {
		if _, ok := files[name]; !ok {
			return fmt.Errorf("%w: %s is missing", ErrFormat, name)
		}
	}
	return nil
}

func sortedNames(m map[string]bool) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// parseMetadata parses dataview.json and checks its format and version.
func parseMetadata(b []byte) (*Metadata, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, MetadataFile, err)
	}
	if head.Format != Format {
		return nil, fmt.Errorf("%w: %s: format %q, want %q", ErrFormat, MetadataFile, head.Format, Format)
	}
	if head.Version < FormatVersion {
		msg := head.Message
		if msg == "" {
			msg = "NAME"
		}
		return nil, fmt.Errorf("%w: version %d (this loader reads version %d: the object-based SavedModel TFX loads, with its TensorRepresentation assets); re-export it from its schema: structtensor dataview export --descriptor-set FILE --message %s [--path P]... -o NEWDIR", ErrOldFormat, head.Version, FormatVersion, msg)
	}
	if head.Version != FormatVersion {
		return nil, fmt.Errorf("%w: %s: version %d is newer than this loader's %d", ErrFormat, MetadataFile, head.Version, FormatVersion)
	}
	var m Metadata
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, MetadataFile, err)
	}
	if m.Fingerprint.Algorithm != "sha256" {
		return nil, fmt.Errorf("%w: %s: fingerprint algorithm %q", ErrFormat, MetadataFile, m.Fingerprint.Algorithm)
	}
	return &m, nil
}

// checked is a DataView whose files passed every check.
type checked struct {
	meta    *Metadata
	plan    *decode.Plan        // a protobuf DataView's
	example *decode.ExamplePlan // a tf.Example DataView's
	spec    *structtensor.StructSpec
	digest  string
}

// checkFiles checks the files of a DataView before anything of it runs:
// the pinned digest, the metadata, the fingerprint of every file, and
// that the SavedModel and checkpoint are exactly what the metadata's plan
// exports (the graph's ops, the plan attribute, the signatures, the
// objects and the checkpoint, with no init or main op). It needs the
// decode op registered (cops.Register), to rebuild the export.
func checkFiles(files map[string][]byte, digest string) (*checked, error) {
	meta, err := parseMetadata(files[objectgraph.AssetsDir+"/"+MetadataFile])
	if err != nil {
		return nil, err
	}
	if err := requireFiles(files); err != nil {
		return nil, err
	}
	for name := range expectedFiles {
		if name == objectgraph.AssetsDir+"/"+MetadataFile {
			continue
		}
		want, ok := meta.Fingerprint.Files[name]
		if !ok {
			return nil, fmt.Errorf("%w: %s: the fingerprint does not cover %s (it covers %s)", ErrFormat, MetadataFile, name, joinKeys(meta.Fingerprint.Files))
		}
		sum := sha256.Sum256(files[name])
		if got := hex.EncodeToString(sum[:]); got != want {
			return nil, fmt.Errorf("%w: %s has SHA-256 %s, the metadata records %s", ErrFingerprint, name, got, want)
		}
	}
	if len(meta.Fingerprint.Files) != len(expectedFiles)-1 {
		return nil, fmt.Errorf("%w: %s: the fingerprint lists files the DataView does not have (%s)", ErrFormat, MetadataFile, joinKeys(meta.Fingerprint.Files))
	}
	d, err := decoderOf(meta)
	if err != nil {
		return nil, err
	}
	if meta.Threads < 0 {
		return nil, fmt.Errorf("%w: %s: threads %d", ErrFormat, MetadataFile, meta.Threads)
	}
	want, wantMeta, err := exportFiles(d, meta.Threads)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the plan does not export: %v", ErrFormat, MetadataFile, err)
	}
	if err := sameMetadata(meta, wantMeta); err != nil {
		return nil, err
	}
	for _, name := range []string{"variables/variables.index", "variables/variables.data-00000-of-00001"} {
		if !bytes.Equal(files[name], want[name]) {
			return nil, fmt.Errorf("%w: %s is not the DataView's checkpoint", ErrGraph, name)
		}
	}
	for _, name := range []string{TensorRepresentationsFile, TensorRepresentationsTextFile} {
		if p := objectgraph.AssetsDir + "/" + name; !bytes.Equal(files[p], want[p]) {
			return nil, fmt.Errorf("%w: %s is not the TensorRepresentationGroup of the plan's leaves", ErrGraph, p)
		}
	}
	if err := sameSavedModel(files[objectgraph.SavedModelFile], want[objectgraph.SavedModelFile]); err != nil {
		return nil, err
	}
	s, err := structtensor.UnmarshalSpec(meta.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: spec: %v", ErrFormat, MetadataFile, err)
	}
	spec, ok := s.(*structtensor.StructSpec)
	if !ok || !d.spec().Equal(spec) {
		return nil, fmt.Errorf("%w: %s: the spec is not the plan's", ErrFormat, MetadataFile)
	}
	c := &checked{meta: meta, spec: spec, digest: digest}
	switch d := d.(type) {
	case protoDecoder:
		c.plan = d.plan
	case exampleDecoder:
		c.example = d.plan
	}
	return c, nil
}

// sameMetadata checks the fields of meta that describe the export against
// the ones the plan gives.
func sameMetadata(meta, want *Metadata) error {
	a, b := *meta, *want
	a.Fingerprint, b.Fingerprint = Fingerprint{}, Fingerprint{}
	a.TensorFlowVersion, b.TensorFlowVersion = "", ""
	a.Spec, b.Spec = nil, nil // compared as specs, after the graph
	ja, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFormat, MetadataFile, err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFormat, MetadataFile, err)
	}
	if bytes.Equal(ja, jb) {
		return nil
	}
	what := "its spec, components or leaves"
	switch {
	case a.Message != b.Message:
		what = fmt.Sprintf("the message (%q, the plan decodes %q)", a.Message, b.Message)
	case strings.Join(a.Signatures, ",") != strings.Join(b.Signatures, ",") || a.Input != b.Input:
		what = fmt.Sprintf("the signatures (%q input %q, want %q input %q)", a.Signatures, a.Input, b.Signatures, b.Input)
	}
	return fmt.Errorf("%w: %s: %s differ from what its plan exports", ErrGraph, MetadataFile, what)
}

// sameSavedModel checks that got is the SavedModel want is, up to what
// TensorFlow versions vary: the meta graph's TensorFlow version and op
// list, the graph's versions, and internal attributes ("_"-prefixed)
// of nodes and functions. First every op is checked against the
// allowlist, so that a foreign op is named in the error.
func sameSavedModel(got, want []byte) error {
	var g, w metapb.SavedModel
	if err := proto.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFormat, objectgraph.SavedModelFile, err)
	}
	if err := proto.Unmarshal(want, &w); err != nil {
		return fmt.Errorf("savedmodel: rebuilt SavedModel: %v", err)
	}
	for _, mg := range g.MetaGraphs {
		for _, n := range mg.GetGraphDef().GetNode() {
			if !allowedOps[n.GetOp()] {
				return fmt.Errorf("%w: node %q runs op %s, not a DataView op", ErrGraph, n.GetName(), n.GetOp())
			}
		}
		for _, f := range mg.GetGraphDef().GetLibrary().GetFunction() {
			for _, n := range f.GetNodeDef() {
				if !allowedOps[n.GetOp()] {
					return fmt.Errorf("%w: function %s: node %q runs op %s, not a DataView op", ErrGraph, f.GetSignature().GetName(), n.GetName(), n.GetOp())
				}
			}
		}
		if len(mg.GetCollectionDef()) > 0 {
			return fmt.Errorf("%w: the meta graph has collections (%d), such as a main or init op", ErrGraph, len(mg.GetCollectionDef()))
		}
	}
	normalize(&g)
	normalize(&w)
	if len(g.MetaGraphs) != 1 {
		return fmt.Errorf("%w: %d meta graphs, want 1", ErrGraph, len(g.MetaGraphs))
	}
	gm, wm := g.MetaGraphs[0], w.MetaGraphs[0]
	parts := []struct {
		what string
		a, b proto.Message
	}{
		{"meta info", gm.MetaInfoDef, wm.MetaInfoDef},
		{"saver", gm.SaverDef, wm.SaverDef},
		{"object graph", gm.ObjectGraphDef, wm.ObjectGraphDef},
		{"graph", gm.GraphDef, wm.GraphDef},
	}
	for _, p := range parts {
		if !proto.Equal(p.a, p.b) {
			return fmt.Errorf("%w: its %s differs from what its plan exports", ErrGraph, p.what)
		}
	}
	if len(gm.SignatureDef) != len(wm.SignatureDef) {
		return fmt.Errorf("%w: %d signatures, want %d", ErrGraph, len(gm.SignatureDef), len(wm.SignatureDef))
	}
	for k, s := range wm.SignatureDef {
		if !proto.Equal(gm.SignatureDef[k], s) {
			return fmt.Errorf("%w: signature %q differs from what its plan exports", ErrGraph, k)
		}
	}
	if len(gm.AssetFileDef) != len(wm.AssetFileDef) {
		return fmt.Errorf("%w: %d assets, want %d", ErrGraph, len(gm.AssetFileDef), len(wm.AssetFileDef))
	}
	for i := range wm.AssetFileDef {
		if !proto.Equal(gm.AssetFileDef[i], wm.AssetFileDef[i]) {
			return fmt.Errorf("%w: asset %d differs from what its plan exports", ErrGraph, i)
		}
	}
	if !proto.Equal(&g, &w) {
		return fmt.Errorf("%w: %s differs from what its plan exports", ErrGraph, objectgraph.SavedModelFile)
	}
	return nil
}

// normalize clears what TensorFlow versions vary in a SavedModel.
func normalize(sm *metapb.SavedModel) {
	for _, mg := range sm.MetaGraphs {
		if mi := mg.MetaInfoDef; mi != nil {
			mi.TensorflowVersion, mi.TensorflowGitVersion, mi.StrippedOpList = "", "", nil
		}
		gd := mg.GetGraphDef()
		if gd == nil {
			continue
		}
		gd.Versions = nil
		stripNodes(gd.Node)
		for _, f := range gd.GetLibrary().GetFunction() {
			normalizeFunction(f)
		}
	}
}

func normalizeFunction(f *fnpb.FunctionDef) {
	stripNodes(f.NodeDef)
	for k := range f.Attr {
		if strings.HasPrefix(k, "_") {
			delete(f.Attr, k)
		}
	}
	for i, a := range f.ArgAttr {
		for k := range a.GetAttr() {
			if strings.HasPrefix(k, "_") {
				delete(a.Attr, k)
			}
		}
		if len(a.GetAttr()) == 0 {
			delete(f.ArgAttr, i)
		}
	}
}

func stripNodes(nodes []*nodepb.NodeDef) {
	for _, n := range nodes {
		for k := range n.Attr {
			if strings.HasPrefix(k, "_") {
				delete(n.Attr, k)
			}
		}
		n.ExperimentalDebugInfo = nil
	}
}

// ReadMetadata reads the metadata of the DataView in dir after the same
// file checks as LoadDataView (regular files only, size limit, pinned
// digest, fingerprint), without TensorFlow: the graph is not checked.
func ReadMetadata(dir string, opts ...LoadOptions) (*Metadata, error) {
	o, err := loadOpts(opts)
	if err != nil {
		return nil, err
	}
	files, _, err := readDir(dir, dataViewLayout, o)
	if err != nil {
		return nil, err
	}
	m, err := parseMetadata(files[objectgraph.AssetsDir+"/"+MetadataFile])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := requireFiles(files); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for name, want := range m.Fingerprint.Files {
		b, ok := files[path.Clean(name)]
		if !ok {
			return nil, fmt.Errorf("%w: %s: the fingerprint names %s, which is absent", ErrFormat, dir, name)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			return nil, fmt.Errorf("%w: %s: %s has SHA-256 %s, the metadata records %s", ErrFingerprint, dir, name, got, want)
		}
	}
	return m, nil
}

// Digest returns the digest of the DataView or SavedModel in dir, the
// value LoadOptions.Digest pins: "sha256:" and the SHA-256 of the sorted list of
// its files' paths and SHA-256s, metadata included. It reads the files
// as Load does.
func Digest(dir string) (string, error) {
	_, digest, err := readDir(dir, modelLayout, loadOptions{maxBytes: DefaultMaxFileBytes})
	return digest, err
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
