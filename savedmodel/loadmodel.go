package savedmodel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	attrpb "github.com/wamuir/graft/tensorflow/core/framework/attr_value_go_proto"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	nodepb "github.com/wamuir/graft/tensorflow/core/framework/node_def_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// ErrModel reports a directory Load refuses: not a SavedModel, a file
// that is not a regular file inside it or is over the size limit, a
// graph that runs an op outside what a served model may run, a
// signature naming tensors the graph lacks. Nothing of it has run.
var ErrModel = errors.New("savedmodel: refused SavedModel")

// initOpSignature is the signature_def key under which TF2 SavedModels
// name their init op.
const initOpSignature = "__saved_model_init_op"

// LoadedModel is a SavedModel loaded by Load: a TensorFlow session over
// its graph with its variables restored, and its signatures resolved to
// Go specs. It is safe for concurrent use; Close releases it.
type LoadedModel struct {
	mu     sync.RWMutex
	model  *tfbridge.SavedModel
	sigs   map[string]*modelSignature
	digest string
}

// modelSignature is a signature resolved against the loaded graph.
type modelSignature struct {
	inputs, outputs map[string]*signatureValue
}

// signatureValue is one input or output: its Go spec and the graph
// tensors holding it (one, or a composite's flat components).
type signatureValue struct {
	spec  structtensor.Spec
	comps []tfbridge.Output
}

// Load loads the SavedModel in dir (tag "serve") with TensorFlow's C API,
// the loader TF Serving uses, after checks that apply to any SavedModel
// and run before anything of it does:
//
//   - files: saved_model.pb, and optionally fingerprint.pb, variables/,
//     assets/ and assets.extra/; regular files only (no symbolic links,
//     FIFOs or devices), each read without following links and at most
//     LoadOptions.MaxFileBytes, at most 4096 of them;
//   - a digest the caller pinned (LoadOptions.Digest; Digest computes it);
//   - saved_model.pb parses and has a meta graph tagged "serve"; asset
//     files it names are plain names present under assets/;
//   - ops: no op of the graph or of any function may read or write
//     files, reach the network or run code (an op denylist, see
//     refusedOps), except the checkpoint ops of the saver's restore and
//     save paths;
//   - every signature's tensors exist in the graph, and composite ones
//     are RaggedTensors this package can rebuild.
//
// TensorFlow then loads a private copy of the checked bytes, so a file
// swapped in dir after the check never runs. Unlike LoadDataView, Load
// cannot check what the graph computes: a DataView is rebuilt from its
// plan and compared, a general SavedModel has no description to compare
// with. So it cannot bound the memory or time a signature takes (a Fill
// of a huge shape, an endless While), nor vouch for variable values or
// init ops; pin a digest to load only a model someone vouched for.
func Load(dir string, opts ...LoadOptions) (*LoadedModel, error) {
	o, err := loadOpts(opts)
	if err != nil {
		return nil, err
	}
	files, digest, err := readDir(dir, modelLayout, o)
	if err != nil {
		return nil, err
	}
	if err := checkModel(files); err != nil {
		return nil, fmt.Errorf("load SavedModel %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "structtensor-savedmodel-")
	if err != nil {
		return nil, fmt.Errorf("load SavedModel: %w", err)
	}
	defer os.RemoveAll(tmp)
	copyDir := filepath.Join(tmp, "model")
	if err := objectgraph.WriteFiles(copyDir, files); err != nil {
		return nil, fmt.Errorf("load SavedModel: %w", err)
	}
	model, err := tfbridge.LoadSavedModel(copyDir, []string{Tag})
	if err != nil {
		return nil, fmt.Errorf("load SavedModel %s: %w", dir, err)
	}
	lm := &LoadedModel{model: model, sigs: map[string]*modelSignature{}, digest: digest}
	meta := &metapb.MetaGraphDef{}
	if err := proto.Unmarshal(model.MetaGraphDef, meta); err != nil {
		model.Close()
		return nil, fmt.Errorf("%w: %s: meta graph: %v", ErrModel, dir, err)
	}
	for key, def := range meta.GetSignatureDef() {
		if key == initOpSignature {
			continue // the init op TensorFlow's loader ran, not a signature
		}
		s := &modelSignature{}
		if s.inputs, err = resolveTensors(model.Graph, def.GetInputs()); err == nil {
			s.outputs, err = resolveTensors(model.Graph, def.GetOutputs())
		}
		if err != nil {
			model.Close()
			return nil, fmt.Errorf("%w: %s: signature %q: %v", ErrModel, dir, key, err)
		}
		lm.sigs[key] = s
	}
	return lm, nil
}

// refusedOps are ops a served model has no business running: they read
// or write files (whose names a graph can choose), reach other processes
// or run code. It is a denylist, so it bounds what a model can reach
// outside TensorFlow's memory, not what it computes.
var refusedOps = map[string]bool{
	// files
	"ReadFile": true, "WriteFile": true, "MatchingFiles": true, "ImmutableConst": true,
	"WholeFileReader": true, "WholeFileReaderV2": true, "TextLineReader": true, "TextLineReaderV2": true,
	"TFRecordReader": true, "TFRecordReaderV2": true, "FixedLengthRecordReader": true,
	"FixedLengthRecordReaderV2": true, "LMDBReader": true, "IdentityReader": true, "IdentityReaderV2": true,
	"TFRecordDataset": true, "TFRecordDatasetV2": true, "TextLineDataset": true, "FixedLengthRecordDataset": true,
	"FixedLengthRecordDatasetV2": true, "ExperimentalLMDBDataset": true, "LMDBDataset": true,
	"SaveDataset": true, "SaveDatasetV2": true, "LoadDataset": true, "SnapshotDataset": true, "SnapshotDatasetV2": true,
	"CacheDataset": true, "CacheDatasetV2": true, "ExperimentalCSVDataset": true, "CSVDataset": true, "CSVDatasetV2": true,
	"InitializeTableFromTextFile": true, "InitializeTableFromTextFileV2": true,
	"CreateSummaryFileWriter": true, "CreateSummaryDbWriter": true, "WriteSummary": true, "DebugIdentityV2": true,
	"DebugIdentityV3": true, "DecodeProtoV2": true, "EncodeProto": true, "PrintV2": true,
	// checkpoints (allowed on the saver's own paths)
	"Save": true, "SaveV2": true, "SaveSlices": true, "Restore": true, "RestoreV2": true, "RestoreSlice": true,
	"MergeV2Checkpoints": true,
	// code and other processes
	"PyFunc": true, "PyFuncStateless": true, "EagerPyFunc": true, "RemoteCall": true,
	"CollectiveReduce": true, "CollectiveReduceV2": true, "CollectiveGather": true, "CollectiveGatherV2": true,
	"CollectiveBcastSend": true, "CollectiveBcastRecv": true, "CollectiveBcastSendV2": true, "CollectiveBcastRecvV2": true,
	"RpcCall": true, "RpcClient": true, "RpcServer": true,
}

// checkpointOps may run on the saver's paths.
var checkpointOps = map[string]bool{
	"Save": true, "SaveV2": true, "SaveSlices": true, "Restore": true, "RestoreV2": true, "RestoreSlice": true,
	"MergeV2Checkpoints": true,
}

// checkModel checks saved_model.pb (see Load).
func checkModel(files map[string][]byte) error {
	var sm metapb.SavedModel
	if err := proto.Unmarshal(files[objectgraph.SavedModelFile], &sm); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrModel, objectgraph.SavedModelFile, err)
	}
	var mg *metapb.MetaGraphDef
	for _, m := range sm.GetMetaGraphs() {
		for _, t := range m.GetMetaInfoDef().GetTags() {
			if t == Tag && mg == nil {
				mg = m
			}
		}
	}
	if mg == nil {
		return fmt.Errorf("%w: no meta graph tagged %q", ErrModel, Tag)
	}
	for _, a := range mg.GetAssetFileDef() {
		name := a.GetFilename()
		if name == "" || name != filepath.Base(name) || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("%w: asset file name %q is not a plain name", ErrModel, name)
		}
		if _, ok := files[objectgraph.AssetsDir+"/"+name]; !ok {
			return fmt.Errorf("%w: asset %q is not under assets/", ErrModel, name)
		}
	}
	g := mg.GetGraphDef()
	lib := map[string]*fnpb.FunctionDef{}
	for _, f := range g.GetLibrary().GetFunction() {
		lib[f.GetSignature().GetName()] = f
	}
	// The saver's paths: the nodes its restore op and save tensor need,
	// and the functions they call.
	nodes := map[string]*nodepb.NodeDef{}
	for _, n := range g.GetNode() {
		nodes[n.GetName()] = n
	}
	saverNodes := map[string]bool{}
	saverFuncs := map[string]bool{}
	if sd := mg.GetSaverDef(); sd != nil {
		var stack []string
		for _, t := range []string{sd.GetRestoreOpName(), sd.GetSaveTensorName()} {
			if t != "" {
				stack = append(stack, nodeName(t))
			}
		}
		for len(stack) > 0 {
			name := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n := nodes[name]
			if n == nil || saverNodes[name] {
				continue
			}
			saverNodes[name] = true
			for _, in := range n.GetInput() {
				stack = append(stack, nodeName(in))
			}
			calledFunctions(n, lib, saverFuncs)
		}
	}
	// The functions any other node calls must not be saver-only.
	calledElsewhere := map[string]bool{}
	for _, n := range g.GetNode() {
		if refusedOps[n.GetOp()] && !(checkpointOps[n.GetOp()] && saverNodes[n.GetName()]) {
			return fmt.Errorf("%w: node %q runs op %s, which reads or writes files, reaches other processes or runs code", ErrModel, n.GetName(), n.GetOp())
		}
		if !saverNodes[n.GetName()] {
			calledFunctions(n, lib, calledElsewhere)
		}
	}
	for name := range calledElsewhere {
		saverFuncs[name] = false
	}
	for _, f := range g.GetLibrary().GetFunction() {
		for _, n := range f.GetNodeDef() {
			if refusedOps[n.GetOp()] && !(checkpointOps[n.GetOp()] && saverFuncs[f.GetSignature().GetName()]) {
				return fmt.Errorf("%w: function %s: node %q runs op %s, which reads or writes files, reaches other processes or runs code", ErrModel, f.GetSignature().GetName(), n.GetName(), n.GetOp())
			}
		}
	}
	return nil
}

// calledFunctions adds to called every library function n calls through
// its attributes (a call's f, a conditional's branches, a loop's body),
// and the functions those call.
func calledFunctions(n *nodepb.NodeDef, lib map[string]*fnpb.FunctionDef, called map[string]bool) {
	var visit func(attrs map[string]*attrpb.AttrValue)
	add := func(name string) {
		if f, ok := lib[name]; ok && !called[name] {
			called[name] = true
			for _, m := range f.GetNodeDef() {
				visit(m.GetAttr())
			}
		}
	}
	visit = func(attrs map[string]*attrpb.AttrValue) {
		for _, a := range attrs {
			if fn := a.GetFunc(); fn != nil {
				add(fn.GetName())
			}
			for _, fn := range a.GetList().GetFunc() {
				add(fn.GetName())
			}
		}
	}
	if _, ok := lib[n.GetOp()]; ok {
		add(n.GetOp()) // a node may call a library function by its name
	}
	visit(n.GetAttr())
}

// nodeName returns the node of a tensor or control input name
// ("^a", "a:1" -> "a").
func nodeName(s string) string {
	s = strings.TrimPrefix(s, "^")
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	return s
}

// resolveTensors resolves a signature's TensorInfos against the loaded
// graph: plain tensors, and RaggedTensors given as composites.
func resolveTensors(g *tfbridge.Graph, infos map[string]*metapb.TensorInfo) (map[string]*signatureValue, error) {
	out := map[string]*signatureValue{}
	for key, info := range infos {
		switch enc := info.GetEncoding().(type) {
		case *metapb.TensorInfo_Name:
			o, err := g.OutputByName(enc.Name)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", key, err)
			}
			dt, err := tfbridge.DType(info.GetDtype()).StructDType()
			if err != nil {
				return nil, fmt.Errorf("%q: %v", key, err)
			}
			out[key] = &signatureValue{spec: &structtensor.TensorSpec{DType: dt, Shape: shapeOf(info)}, comps: []tfbridge.Output{o}}
		case *metapb.TensorInfo_CompositeTensor_:
			spec, err := compositeSpec(enc.CompositeTensor.GetTypeSpec())
			if err != nil {
				return nil, fmt.Errorf("%q: %v", key, err)
			}
			v := &signatureValue{spec: spec}
			for _, c := range enc.CompositeTensor.GetComponents() {
				o, err := g.OutputByName(c.GetName())
				if err != nil {
					return nil, fmt.Errorf("%q: %v", key, err)
				}
				v.comps = append(v.comps, o)
			}
			want := 0
			switch x := spec.(type) {
			case *structtensor.RaggedSpec:
				want = x.RaggedRank + 1
			case *structtensor.StructSpec:
				_, flat, err := structuredSpec(x)
				if err != nil {
					return nil, fmt.Errorf("%q: %v", key, err)
				}
				want = len(flat)
			}
			if len(v.comps) != want {
				return nil, fmt.Errorf("%q: a %v with %d components, want %d", key, spec, len(v.comps), want)
			}
			out[key] = v
		default:
			return nil, fmt.Errorf("%q: unsupported encoding %T", key, enc)
		}
	}
	return out, nil
}

func shapeOf(info *metapb.TensorInfo) structtensor.Shape {
	sp := info.GetTensorShape()
	if sp == nil || sp.GetUnknownRank() {
		return nil
	}
	s := make(structtensor.Shape, len(sp.GetDim()))
	for i, d := range sp.GetDim() {
		s[i] = int(d.GetSize())
		if d.GetSize() < 0 {
			s[i] = structtensor.Unknown
		}
	}
	return s
}

// compositeSpec returns the Go spec of a composite signature tensor: a
// RaggedTensorSpec, whose state is (shape, dtype, ragged_rank,
// row_splits_dtype).
func compositeSpec(ts *metapb.TypeSpecProto) (structtensor.Spec, error) {
	if ts.GetTypeSpecClass() == metapb.TypeSpecProto_EXTENSION_TYPE_SPEC && ts.GetTypeSpecClassName() == "tf.StructuredTensor.Spec" {
		return structuredFromProto(ts, 0)
	}
	if ts.GetTypeSpecClass() != metapb.TypeSpecProto_RAGGED_TENSOR_SPEC {
		return nil, fmt.Errorf("%w: a composite tensor of class %v (%s)", tfbridge.ErrUnimplemented, ts.GetTypeSpecClass(), ts.GetTypeSpecClassName())
	}
	state := ts.GetTypeState().GetTupleValue().GetValues()
	if len(state) != 4 {
		return nil, fmt.Errorf("a RaggedTensorSpec state of %d values", len(state))
	}
	shape := make(structtensor.Shape, len(state[0].GetTensorShapeValue().GetDim()))
	for i, d := range state[0].GetTensorShapeValue().GetDim() {
		shape[i] = max(int(d.GetSize()), structtensor.Unknown)
	}
	dt, err := tfbridge.DType(state[1].GetTensorDtypeValue()).StructDType()
	if err != nil {
		return nil, err
	}
	rank := int(state[2].GetInt64Value())
	if rank < 1 || rank >= len(shape) {
		return nil, fmt.Errorf("ragged rank %d of a rank-%d RaggedTensor", rank, len(shape))
	}
	if state[3].GetTensorDtypeValue() != typespb.DataType_DT_INT64 {
		return nil, fmt.Errorf("%w: row splits of type %v (int64 only)", tfbridge.ErrUnimplemented, state[3].GetTensorDtypeValue())
	}
	return &structtensor.RaggedSpec{DType: dt, Shape: shape, RaggedRank: rank}, nil
}

// structuredFromProto returns the StructSpec of a StructuredTensor.Spec
// (fields in name order; dimensions after the first unknown).
func structuredFromProto(ts *metapb.TypeSpecProto, depth int) (*structtensor.StructSpec, error) {
	if depth > 64 {
		return nil, fmt.Errorf("StructuredTensor specs nested more than 64 deep")
	}
	state := map[string]*metapb.StructuredValue{}
	for _, kv := range ts.GetTypeState().GetTupleValue().GetValues() {
		pair := kv.GetTupleValue().GetValues()
		if len(pair) != 2 {
			return nil, fmt.Errorf("a StructuredTensor.Spec state entry of %d values", len(pair))
		}
		state[pair[0].GetStringValue()] = pair[1]
	}
	shape := state["_ragged_shape"].GetTypeSpecValue()
	if shape.GetTypeSpecClassName() != "tf.DynamicRaggedShape.Spec" {
		return nil, fmt.Errorf("a StructuredTensor.Spec without a DynamicRaggedShape.Spec")
	}
	var partitions, inner int
	for _, kv := range shape.GetTypeState().GetTupleValue().GetValues() {
		pair := kv.GetTupleValue().GetValues()
		if len(pair) != 2 {
			return nil, fmt.Errorf("a DynamicRaggedShape.Spec state entry of %d values", len(pair))
		}
		switch pair[0].GetStringValue() {
		case "_row_partitions":
			partitions = len(pair[1].GetTupleValue().GetValues())
		case "_static_inner_shape":
			inner = len(pair[1].GetTensorShapeValue().GetDim())
		}
	}
	if inner != 1 {
		return nil, fmt.Errorf("%w: a StructuredTensor with %d inner dimensions (1 only)", tfbridge.ErrUnimplemented, inner)
	}
	spec := &structtensor.StructSpec{Shape: structtensor.Shape{structtensor.Unknown}}
	for range partitions {
		spec.Shape = append(spec.Shape, structtensor.Unknown)
	}
	fields := state["_fields"].GetDictValue().GetFields()
	for _, name := range sortedKeys(fields) {
		f := fields[name]
		var fs structtensor.Spec
		switch {
		case f.GetTensorSpecValue() != nil:
			t := f.GetTensorSpecValue()
			dt, err := tfbridge.DType(t.GetDtype()).StructDType()
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", name, err)
			}
			sh := make(structtensor.Shape, len(t.GetShape().GetDim()))
			for i, d := range t.GetShape().GetDim() {
				sh[i] = max(int(d.GetSize()), structtensor.Unknown)
			}
			if len(sh) > 0 {
				sh[0] = structtensor.Unknown
			}
			fs = &structtensor.TensorSpec{DType: dt, Shape: sh}
		case f.GetTypeSpecValue() != nil:
			var err error
			if f.GetTypeSpecValue().GetTypeSpecClass() == metapb.TypeSpecProto_EXTENSION_TYPE_SPEC {
				fs, err = structuredFromProto(f.GetTypeSpecValue(), depth+1)
			} else {
				fs, err = compositeSpec(f.GetTypeSpecValue())
			}
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", name, err)
			}
			if r, ok := fs.(*structtensor.RaggedSpec); ok {
				r.Shape[0] = structtensor.Unknown
			}
		default:
			return nil, fmt.Errorf("field %q: unsupported spec", name)
		}
		spec.Fields = append(spec.Fields, structtensor.FieldSpec{Name: name, Spec: fs})
	}
	if _, err := graphst.Components(spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// Digest returns the model's digest (see LoadOptions.Digest).
func (m *LoadedModel) Digest() string { return m.digest }

// SignatureKeys returns the signature keys, sorted.
func (m *LoadedModel) SignatureKeys() []string { return sortedKeys(m.sigs) }

// Signature returns the specs of signature key's inputs and outputs.
func (m *LoadedModel) Signature(key string) (inputs, outputs map[string]structtensor.Spec, err error) {
	s, ok := m.sigs[key]
	if !ok {
		return nil, nil, fmt.Errorf("%w: signature %q (the model has %q)", tfbridge.ErrNotFound, key, m.SignatureKeys())
	}
	inputs, outputs = map[string]structtensor.Spec{}, map[string]structtensor.Spec{}
	for k, v := range s.inputs {
		inputs[k] = v.spec
	}
	for k, v := range s.outputs {
		outputs[k] = v.spec
	}
	return inputs, outputs, nil
}

// Run runs signature key on inputs (a *structtensor.Tensor or
// *structtensor.Ragged per input key, every key given) and returns every
// output by key.
func (m *LoadedModel) Run(ctx context.Context, key string, inputs map[string]structtensor.Value) (map[string]structtensor.Value, error) {
	s, ok := m.sigs[key]
	if !ok {
		return nil, fmt.Errorf("%w: signature %q (the model has %q)", tfbridge.ErrNotFound, key, m.SignatureKeys())
	}
	feeds := map[tfbridge.Output]*tfbridge.Tensor{}
	defer func() {
		for _, t := range feeds {
			t.Close()
		}
	}()
	for k, sv := range s.inputs {
		v, ok := inputs[k]
		if !ok {
			return nil, fmt.Errorf("%w: signature %q: input %q is missing", tfbridge.ErrInvalidArgument, key, k)
		}
		if ss, ok := sv.spec.(*structtensor.StructSpec); ok {
			x, ok := v.(*structtensor.StructTensor)
			if !ok {
				return nil, fmt.Errorf("%w: signature %q: input %q is a %T, the signature takes a StructTensor", tfbridge.ErrInvalidArgument, key, k, v)
			}
			if err := feedStructured(feeds, ss, sv.comps, x); err != nil {
				return nil, fmt.Errorf("%w: signature %q: input %q: %v", tfbridge.ErrInvalidArgument, key, k, err)
			}
			continue
		}
		var parts []*structtensor.Tensor
		switch x := v.(type) {
		case *structtensor.Tensor:
			parts = []*structtensor.Tensor{x}
		case *structtensor.Ragged:
			parts = append(parts, x.Values())
			for _, p := range x.Partitions() {
				rs, err := structtensor.NewTensor(structtensor.Shape{len(p.RowSplits())}, p.RowSplits())
				if err != nil {
					return nil, err
				}
				parts = append(parts, rs)
			}
		default:
			return nil, fmt.Errorf("%w: signature %q: input %q is a %T", tfbridge.ErrInvalidArgument, key, k, v)
		}
		if len(parts) != len(sv.comps) || !v.Spec().IsCompatibleWith(sv.spec) {
			return nil, fmt.Errorf("%w: signature %q: input %q is %v, the signature takes %v", tfbridge.ErrInvalidArgument, key, k, v.Spec(), sv.spec)
		}
		for i, p := range parts {
			t, err := tfbridge.NewTensor(p)
			if err != nil {
				return nil, fmt.Errorf("signature %q: input %q: %w", key, k, err)
			}
			feeds[sv.comps[i]] = t
		}
	}
	if len(inputs) != len(s.inputs) {
		return nil, fmt.Errorf("%w: signature %q takes %q, got %d inputs", tfbridge.ErrInvalidArgument, key, sortedKeys(s.inputs), len(inputs))
	}
	outKeys := sortedKeys(s.outputs)
	var fetches []tfbridge.Output
	for _, k := range outKeys {
		fetches = append(fetches, s.outputs[k].comps...)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.model == nil {
		return nil, fmt.Errorf("%w: SavedModel", tfbridge.ErrClosed)
	}
	res, err := m.model.Session.RunContext(ctx, feeds, fetches, nil)
	if err != nil {
		return nil, fmt.Errorf("signature %q: %w", key, err)
	}
	defer func() {
		for _, t := range res {
			t.Close()
		}
	}()
	out := map[string]structtensor.Value{}
	at := 0
	for _, k := range outKeys {
		n := len(s.outputs[k].comps)
		fetched := res[at : at+n]
		at += n
		if ss, ok := s.outputs[k].spec.(*structtensor.StructSpec); ok {
			st, err := fetchedStructured(ss, s.outputs[k].comps, fetched)
			if err != nil {
				return nil, fmt.Errorf("signature %q: output %q: %w", key, k, err)
			}
			out[k] = st
			continue
		}
		parts := make([]*structtensor.Tensor, n)
		for i, t := range fetched {
			if parts[i], err = t.Value(); err != nil {
				return nil, fmt.Errorf("signature %q: output %q: %w", key, k, err)
			}
		}
		if _, ragged := s.outputs[k].spec.(*structtensor.RaggedSpec); !ragged {
			out[k] = parts[0]
			continue
		}
		splits := make([][]int64, n-1)
		for i, p := range parts[1:] {
			splits[i] = p.Int64s()
		}
		r, err := structtensor.NewRaggedFromSplits(parts[0], splits...)
		if err != nil {
			return nil, fmt.Errorf("signature %q: output %q: %w", key, k, err)
		}
		out[k] = r
	}
	return out, nil
}

// feedStructured adds to feeds the flat components of x, a StructTensor
// input of spec ss whose flat components are the placeholders comps
// (TensorFlow's order, see structuredSpec).
func feedStructured(feeds map[tfbridge.Output]*tfbridge.Tensor, ss *structtensor.StructSpec, comps []tfbridge.Output, x *structtensor.StructTensor) error {
	_, flat, err := structuredSpec(ss)
	if err != nil {
		return err
	}
	ours, first := ourComponents(ss, flat, comps)
	sym, err := graphst.NewStruct(ss, ours)
	if err != nil {
		return err
	}
	fs, err := graphst.Feed(sym, x)
	if err != nil {
		return err
	}
	for o, t := range fs {
		feeds[o] = t
	}
	for j, f := range flat {
		switch {
		case f.comp >= 0:
			feeds[comps[j]] = fs[comps[first[f.comp]]]
		case f.inner < 0:
			t, err := int64Vector(int64(x.NumRows()))
			if err != nil {
				return err
			}
			feeds[comps[j]] = t
		default:
			v, err := fs[comps[first[f.inner]]].Value()
			if err != nil {
				return err
			}
			splits := v.Int64s()
			t, err := int64Vector(splits[len(splits)-1])
			if err != nil {
				return err
			}
			feeds[comps[j]] = t
		}
	}
	return nil
}

func int64Vector(v int64) (*tfbridge.Tensor, error) {
	x, err := structtensor.NewTensor(structtensor.Shape{1}, []int64{v})
	if err != nil {
		return nil, err
	}
	return tfbridge.NewTensor(x)
}

// ourComponents returns, for each component of ss (graphst.Components
// order), the flat component holding it (its first occurrence), and
// the flat position of each.
func ourComponents(ss *structtensor.StructSpec, flat []flatComp, comps []tfbridge.Output) ([]tfbridge.Output, map[int]int) {
	first := map[int]int{}
	for j, f := range flat {
		if _, seen := first[f.comp]; f.comp >= 0 && !seen {
			first[f.comp] = j
		}
	}
	ours := make([]tfbridge.Output, len(first))
	for c, j := range first {
		ours[c] = comps[j]
	}
	return ours, first
}

// fetchedStructured rebuilds a StructTensor output of spec ss from its
// fetched flat components.
func fetchedStructured(ss *structtensor.StructSpec, comps []tfbridge.Output, fetched []*tfbridge.Tensor) (*structtensor.StructTensor, error) {
	_, flat, err := structuredSpec(ss)
	if err != nil {
		return nil, err
	}
	ours, first := ourComponents(ss, flat, comps)
	sym, err := graphst.NewStruct(ss, ours)
	if err != nil {
		return nil, err
	}
	ts := make([]*tfbridge.Tensor, len(ours))
	for c, j := range first {
		ts[c] = fetched[j]
	}
	return sym.Value(ts)
}

// Close releases the session and graph.
func (m *LoadedModel) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return nil
	}
	err := m.model.Close()
	m.model = nil
	return err
}
