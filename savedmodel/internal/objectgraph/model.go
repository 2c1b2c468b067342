package objectgraph

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/structtensor/structtensor-go/savedmodel/internal/bundle"
	"github.com/structtensor/structtensor-go/structtensor"
	attrpb "github.com/wamuir/graft/tensorflow/core/framework/attr_value_go_proto"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	nodepb "github.com/wamuir/graft/tensorflow/core/framework/node_def_go_proto"
	tensorpb "github.com/wamuir/graft/tensorflow/core/framework/tensor_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	versionspb "github.com/wamuir/graft/tensorflow/core/framework/versions_go_proto"
	pb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ErrModel reports a Model that cannot be written: a function missing
// from the library, a signature that does not match its FunctionDef, an
// object reached twice with different kinds.
var ErrModel = errors.New("objectgraph: invalid model")

// Files of a SavedModel directory.
const (
	SavedModelFile = "saved_model.pb"
	// VariablesPrefix is the checkpoint prefix, relative to the directory.
	VariablesPrefix = "variables/variables"
	AssetsDir       = "assets"
)

// Saver node names the writer adds to Model.Graph.
const (
	SaverFilenameNode = "saver_filename"
	SaverRestoreNode  = "saver/restore_all"
)

// Model is an object-based SavedModel with one MetaGraph.
type Model struct {
	// Tags of the MetaGraph ("serve").
	Tags []string
	// TensorFlowVersion is recorded in the MetaGraph's meta info.
	TensorFlowVersion string
	// Graph holds, in its library, the FunctionDef of every Function, and
	// its versions; any nodes it has (asset constants) are kept. The
	// writer adds to a copy of it the nodes TF1-style loaders (the C API,
	// TF Serving) run: one VarHandleOp per variable, the saver (restore
	// op and filename placeholder) and, per signature, its input
	// placeholders and a call of its function. Node names starting with
	// "saver", "variable/" or "signature/" are reserved for them.
	Graph *graphpb.GraphDef
	// Signatures are the signatures, by key: each becomes a
	// signature_def entry over the graph nodes above (for TF1-style
	// loaders) and a concrete function under the root's "signatures"
	// child (what tf.saved_model.load(...).signatures returns). Each must
	// be KeywordOnly and return a Dict.
	Signatures map[string]*Function
	// Root is the root object, what tf.saved_model.load returns.
	Root *Object
	// AssetFileDefs and Assets are the MetaGraph's asset_file_def
	// entries and the files under assets/ (name -> content).
	AssetFileDefs []*pb.AssetFileDef
	Assets        map[string][]byte
}

// Object is a node of the object graph: a plain (user) object with named
// children, a concrete function, or a variable.
type Object struct {
	Children []Child
	// At most one of Function and Variable is set; with neither the
	// object is a user object of identifier UserObject (default
	// "_generic_user_object", which loads as a tf.Module-like object).
	Function   *Function
	Variable   *Variable
	UserObject string
}

// Child is a named edge of the object graph (an attribute of the parent
// after loading).
type Child struct {
	Name   string
	Object *Object
}

// Function is a concrete function: a FunctionDef of Model.Graph's library
// with its structured inputs and outputs.
type Function struct {
	// Name is the FunctionDef's signature name.
	Name string
	// Inputs are the arguments, in order: their flat components
	// (Flatten of each Spec) are the FunctionDef's first inputs.
	Inputs []Arg
	// KeywordOnly makes the arguments keyword-only, as for signatures.
	KeywordOnly bool
	// Output is the structure the FunctionDef's flat outputs pack into
	// (Flatten(Output) lists them in order).
	Output Value
	// Captures are variable objects the function reads; the FunctionDef
	// takes their resource handles as its last inputs, in this order.
	Captures []*Object
}

// Arg is a named argument of a function: a TensorSpec, a
// RaggedTensorSpec or a TypeSpec (a composite tensor, passed as its flat
// components).
type Arg struct {
	Name string
	Spec Value
}

// spec returns the argument's spec, a TensorSpec named by the keyword.
func (a Arg) spec() Value {
	if t, ok := a.Spec.(TensorSpec); ok {
		t.Name = a.Name
		return t
	}
	return a.Spec
}

// Variable is a resource variable whose value the checkpoint holds.
type Variable struct {
	// Name is the variable's name ("dense/kernel").
	Name  string
	Value *structtensor.Tensor
	// Trainable marks the variable trainable.
	Trainable bool
}

// Files returns the files of the SavedModel of m, by slash-separated path
// relative to the directory.
func Files(m *Model) (map[string][]byte, error) {
	w := &writer{m: m, ids: map[*Object]int32{}}
	if err := w.walk(); err != nil {
		return nil, err
	}
	saved, trackable, tensors, err := w.graphs()
	if err != nil {
		return nil, err
	}
	ckptGraph, err := proto.MarshalOptions{Deterministic: true}.Marshal(trackable)
	if err != nil {
		return nil, fmt.Errorf("objectgraph: checkpoint object graph: %w", err)
	}
	og, err := structtensor.NewTensor(structtensor.Shape{}, [][]byte{ckptGraph})
	if err != nil {
		return nil, err
	}
	tensors[bundle.ObjectGraphKey] = og
	index, data, err := bundle.Encode(tensors)
	if err != nil {
		return nil, err
	}
	graph, saver, sigDefs, err := w.tf1Graph()
	if err != nil {
		return nil, err
	}
	mg := &pb.MetaGraphDef{
		MetaInfoDef: &pb.MetaGraphDef_MetaInfoDef{
			Tags: m.Tags, TensorflowVersion: m.TensorFlowVersion,
		},
		GraphDef:       graph,
		SaverDef:       saver,
		SignatureDef:   sigDefs,
		AssetFileDef:   m.AssetFileDefs,
		ObjectGraphDef: saved,
	}
	sm, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.SavedModel{SavedModelSchemaVersion: 1, MetaGraphs: []*pb.MetaGraphDef{mg}})
	if err != nil {
		return nil, fmt.Errorf("objectgraph: SavedModel: %w", err)
	}
	files := map[string][]byte{
		SavedModelFile:                    sm,
		bundle.IndexFile(VariablesPrefix): index,
		bundle.DataFile(VariablesPrefix):  data,
	}
	for name, b := range m.Assets {
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return nil, fmt.Errorf("%w: asset name %q", ErrModel, name)
		}
		files[AssetsDir+"/"+name] = b
	}
	return files, nil
}

// Write writes the SavedModel of m to dir, which must not exist or be
// empty (WriteFiles of Files(m)).
func Write(dir string, m *Model) error {
	files, err := Files(m)
	if err != nil {
		return err
	}
	return WriteFiles(dir, files)
}

// WriteFiles writes files (slash-separated path relative to dir ->
// content) to dir, which must not exist or be empty. saved_model.pb is
// written last, so an interrupted write never looks like a SavedModel.
func WriteFiles(dir string, files map[string][]byte) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("objectgraph: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("objectgraph: %s exists and is not empty", dir)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if n != SavedModelFile {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := files[SavedModelFile]; ok {
		names = append(names, SavedModelFile)
	}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("objectgraph: %w", err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("objectgraph: %w", err)
		}
	}
	return nil
}

type writer struct {
	m     *Model
	nodes []*Object
	ids   map[*Object]int32
	paths []string // checkpoint path of each node, escaped
	sigs  *Object
}

// walk numbers the objects breadth first from the root (the root is node
// 0), as TensorFlow's saver does, and names each by its first path.
func (w *writer) walk() error {
	if w.m.Root == nil {
		return fmt.Errorf("%w: no root object", ErrModel)
	}
	root := w.m.Root
	if len(w.m.Signatures) > 0 {
		for _, c := range root.Children {
			if c.Name == "signatures" {
				return fmt.Errorf("%w: the root has a child named \"signatures\" and Signatures are set", ErrModel)
			}
		}
		keys := make([]string, 0, len(w.m.Signatures))
		for k := range w.m.Signatures {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.sigs = &Object{UserObject: "signature_map"}
		for _, k := range keys {
			f := w.m.Signatures[k]
			if !f.KeywordOnly {
				return fmt.Errorf("%w: signature %q: not keyword-only", ErrModel, k)
			}
			if _, ok := f.Output.(Dict); !ok {
				return fmt.Errorf("%w: signature %q: returns a %T, want a Dict", ErrModel, k, f.Output)
			}
			w.sigs.Children = append(w.sigs.Children, Child{Name: k, Object: &Object{Function: f}})
		}
		root = &Object{Children: append(append([]Child(nil), root.Children...), Child{Name: "signatures", Object: w.sigs}),
			Function: root.Function, Variable: root.Variable, UserObject: root.UserObject}
		w.m = shallowWithRoot(w.m, root)
	}
	w.add(root, "")
	for i := 0; i < len(w.nodes); i++ {
		o := w.nodes[i]
		if o.Function != nil && o.Variable != nil {
			return fmt.Errorf("%w: object %s is both a function and a variable", ErrModel, w.name(i))
		}
		seen := map[string]bool{}
		for _, c := range o.Children {
			if c.Object == nil || c.Name == "" || seen[c.Name] {
				return fmt.Errorf("%w: object %s: nil, unnamed or repeated child %q", ErrModel, w.name(i), c.Name)
			}
			seen[c.Name] = true
			w.add(c.Object, joinCheckpointPath(w.paths[i], c.Name))
		}
		if o.Function != nil {
			for _, v := range o.Function.Captures {
				if v == nil || v.Variable == nil {
					return fmt.Errorf("%w: function %s captures an object that is not a variable", ErrModel, o.Function.Name)
				}
				if _, ok := w.ids[v]; !ok {
					return fmt.Errorf("%w: function %s captures a variable not reachable from the root", ErrModel, o.Function.Name)
				}
			}
		}
	}
	return nil
}

func shallowWithRoot(m *Model, root *Object) *Model {
	c := *m
	c.Root = root
	return &c
}

func (w *writer) add(o *Object, path string) {
	if _, ok := w.ids[o]; ok {
		return
	}
	w.ids[o] = int32(len(w.nodes))
	w.nodes = append(w.nodes, o)
	w.paths = append(w.paths, path)
}

func (w *writer) name(i int) string {
	if w.paths[i] == "" {
		return "(root)"
	}
	return w.paths[i]
}

// joinCheckpointPath appends a child's name to a checkpoint path, escaped
// as TensorFlow's object-based saver escapes local names ("." doubled,
// "/" as ".S"), so that keys match the ones TensorFlow derives.
func joinCheckpointPath(parent, name string) string {
	esc := strings.ReplaceAll(strings.ReplaceAll(name, ".", ".."), "/", ".S")
	if parent == "" {
		return esc
	}
	return parent + "/" + esc
}

// VariableKey is the checkpoint key of the value of the variable object
// at path (the escaped child names from the root, "/"-joined).
func variableKey(path string) string { return path + "/.ATTRIBUTES/VARIABLE_VALUE" }

func (w *writer) graphs() (*pb.SavedObjectGraph, *pb.TrackableObjectGraph, map[string]*structtensor.Tensor, error) {
	lib := map[string]*fnpb.FunctionDef{}
	for _, f := range w.m.Graph.GetLibrary().GetFunction() {
		lib[f.GetSignature().GetName()] = f
	}
	saved := &pb.SavedObjectGraph{ConcreteFunctions: map[string]*pb.SavedConcreteFunction{}}
	trackable := &pb.TrackableObjectGraph{}
	tensors := map[string]*structtensor.Tensor{}
	hasValues := make([]bool, len(w.nodes))
	// Children come after their parent in BFS order, so a reverse pass
	// sees every child's flag before its parent's.
	for i := len(w.nodes) - 1; i >= 0; i-- {
		o := w.nodes[i]
		hasValues[i] = o.Variable != nil
		for _, c := range o.Children {
			if j := w.ids[c.Object]; int(j) > i && hasValues[j] {
				hasValues[i] = true
			}
		}
	}
	for i, o := range w.nodes {
		so := &pb.SavedObject{}
		to := &pb.TrackableObjectGraph_TrackableObject{HasCheckpointValues: wrapperspb.Bool(hasValues[i])}
		for _, c := range o.Children {
			ref := w.ids[c.Object]
			so.Children = append(so.Children, &pb.TrackableObjectGraph_TrackableObject_ObjectReference{NodeId: ref, LocalName: c.Name})
			to.Children = append(to.Children, &pb.TrackableObjectGraph_TrackableObject_ObjectReference{NodeId: ref, LocalName: c.Name})
		}
		switch {
		case o.Function != nil:
			f := o.Function
			if err := w.checkFunction(f, lib[f.Name]); err != nil {
				return nil, nil, nil, err
			}
			kw := make([]string, len(f.Inputs))
			var args Tuple
			kwargs := Dict{}
			for k, in := range f.Inputs {
				kw[k] = in.Name
				if f.KeywordOnly {
					kwargs[in.Name] = in.spec()
				} else {
					args = append(args, in.spec())
				}
			}
			if args == nil {
				args = Tuple{}
			}
			so.Kind = &pb.SavedObject_BareConcreteFunction{BareConcreteFunction: &pb.SavedBareConcreteFunction{
				ConcreteFunctionName: f.Name, ArgumentKeywords: kw, AllowedPositionalArguments: int64(len(f.Inputs)),
			}}
			out := f.Output
			if out == nil {
				out = None{}
			}
			cf := &pb.SavedConcreteFunction{
				CanonicalizedInputSignature: Tuple{args, kwargs}.proto(),
				OutputSignature:             out.proto(),
			}
			for _, v := range f.Captures {
				cf.BoundInputs = append(cf.BoundInputs, w.ids[v])
			}
			if prev, ok := saved.ConcreteFunctions[f.Name]; ok && !proto.Equal(prev, cf) {
				return nil, nil, nil, fmt.Errorf("%w: function %s is used with two different signatures", ErrModel, f.Name)
			}
			saved.ConcreteFunctions[f.Name] = cf
		case o.Variable != nil:
			v := o.Variable
			if v.Value == nil {
				return nil, nil, nil, fmt.Errorf("%w: variable %s has no value", ErrModel, w.name(i))
			}
			dt, ok := dataType[v.Value.DType()]
			if !ok {
				return nil, nil, nil, fmt.Errorf("%w: variable %s: element type %v", ErrModel, w.name(i), v.Value.DType())
			}
			so.Kind = &pb.SavedObject_Variable{Variable: &pb.SavedVariable{
				Dtype: dt, Shape: ShapeProto(v.Value.Shape()), Trainable: v.Trainable, Name: v.Name,
			}}
			key := variableKey(w.paths[i])
			to.Attributes = []*pb.TrackableObjectGraph_TrackableObject_SerializedTensor{{
				Name: "VARIABLE_VALUE", FullName: v.Name, CheckpointKey: key,
			}}
			tensors[key] = v.Value
		default:
			id := o.UserObject
			if id == "" {
				id = "_generic_user_object"
			}
			so.Kind = &pb.SavedObject_UserObject{UserObject: &pb.SavedUserObject{
				Identifier: id, Version: &versionspb.VersionDef{Producer: 1, MinConsumer: 1},
			}}
		}
		saved.Nodes = append(saved.Nodes, so)
		trackable.Nodes = append(trackable.Nodes, to)
	}
	return saved, trackable, tensors, nil
}

var dataType = map[structtensor.DType]typespb.DataType{
	structtensor.Bool: typespb.DataType_DT_BOOL, structtensor.Int32: typespb.DataType_DT_INT32,
	structtensor.Int64: typespb.DataType_DT_INT64, structtensor.Uint32: typespb.DataType_DT_UINT32,
	structtensor.Uint64: typespb.DataType_DT_UINT64, structtensor.Float32: typespb.DataType_DT_FLOAT,
	structtensor.Float64: typespb.DataType_DT_DOUBLE, structtensor.String: typespb.DataType_DT_STRING,
}

// checkFunction checks f against its FunctionDef: inputs (then one
// resource input per capture) and flat outputs, in number and type.
func (w *writer) checkFunction(f *Function, def *fnpb.FunctionDef) error {
	if def == nil {
		return fmt.Errorf("%w: function %q is not in the graph's library", ErrModel, f.Name)
	}
	if f.Output != nil {
		if err := checkValue(f.Output); err != nil {
			return fmt.Errorf("%w: function %s: output %v", ErrModel, f.Name, err)
		}
	}
	var flatIn []TensorSpec
	for _, in := range f.Inputs {
		if in.Spec == nil {
			return fmt.Errorf("%w: function %s: input %q has no spec", ErrModel, f.Name, in.Name)
		}
		if err := checkValue(in.Spec); err != nil {
			return fmt.Errorf("%w: function %s: input %q: %v", ErrModel, f.Name, in.Name, err)
		}
		flatIn = append(flatIn, Flatten(in.Spec)...)
	}
	ins := def.GetSignature().GetInputArg()
	if len(ins) != len(flatIn)+len(f.Captures) {
		return fmt.Errorf("%w: function %s: the FunctionDef has %d inputs, want %d argument components and %d captures", ErrModel, f.Name, len(ins), len(flatIn), len(f.Captures))
	}
	for k, in := range flatIn {
		if ins[k].GetType() != in.DType {
			return fmt.Errorf("%w: function %s: input %d is %v in the FunctionDef, %v in the signature", ErrModel, f.Name, k, ins[k].GetType(), in.DType)
		}
	}
	for k := range f.Captures {
		if t := ins[len(flatIn)+k].GetType(); t != typespb.DataType_DT_RESOURCE {
			return fmt.Errorf("%w: function %s: capture %d is a %v input, want a resource", ErrModel, f.Name, k, t)
		}
	}
	flat := Flatten(f.Output)
	outs := def.GetSignature().GetOutputArg()
	if len(outs) != len(flat) {
		return fmt.Errorf("%w: function %s: the FunctionDef has %d outputs, its output structure %d tensors", ErrModel, f.Name, len(outs), len(flat))
	}
	for k, o := range outs {
		if o.GetType() != flat[k].DType {
			return fmt.Errorf("%w: function %s: output %d is %v in the FunctionDef, %v in the output structure", ErrModel, f.Name, k, o.GetType(), flat[k].DType)
		}
	}
	return nil
}

// tf1Graph returns a copy of the graph with the nodes TF1-style loaders
// run, the SaverDef and the SignatureDefs naming them. TensorFlow's
// TF1-style loader runs the restore op, feeding the checkpoint prefix to
// the filename placeholder, whenever variables/variables.index exists;
// it then runs signatures by feeding their placeholders and fetching the
// outputs of their call nodes.
func (w *writer) tf1Graph() (*graphpb.GraphDef, *pb.SaverDef, map[string]*pb.SignatureDef, error) {
	g := proto.Clone(w.m.Graph).(*graphpb.GraphDef)
	for _, n := range g.Node {
		if strings.HasPrefix(n.Name, "saver") || strings.HasPrefix(n.Name, "variable/") || strings.HasPrefix(n.Name, "signature/") {
			return nil, nil, nil, fmt.Errorf("%w: the graph has a node %q, a reserved name", ErrModel, n.Name)
		}
	}
	typeAttr := func(t typespb.DataType) *attrpb.AttrValue {
		return &attrpb.AttrValue{Value: &attrpb.AttrValue_Type{Type: t}}
	}
	typeList := func(t []typespb.DataType) *attrpb.AttrValue {
		return &attrpb.AttrValue{Value: &attrpb.AttrValue_List{List: &attrpb.AttrValue_ListValue{Type: t}}}
	}
	shapeAttr := func(s structtensor.Shape) *attrpb.AttrValue {
		return &attrpb.AttrValue{Value: &attrpb.AttrValue_Shape{Shape: ShapeProto(s)}}
	}
	g.Node = append(g.Node, &nodepb.NodeDef{Name: SaverFilenameNode, Op: "Placeholder", Attr: map[string]*attrpb.AttrValue{
		"dtype": typeAttr(typespb.DataType_DT_STRING), "shape": shapeAttr(structtensor.Shape{}),
	}})
	// One VarHandleOp per variable, restored from the checkpoint.
	handle := map[*Object]string{}
	var names, slices [][]byte
	var types []typespb.DataType
	var handles []string
	for i, o := range w.nodes {
		v := o.Variable
		if v == nil {
			continue
		}
		h := fmt.Sprintf("variable/%d", i)
		handle[o] = h
		dt := dataType[v.Value.DType()]
		g.Node = append(g.Node, &nodepb.NodeDef{Name: h, Op: "VarHandleOp", Attr: map[string]*attrpb.AttrValue{
			"dtype": typeAttr(dt), "shape": shapeAttr(v.Value.Shape()),
			"shared_name": {Value: &attrpb.AttrValue_S{S: []byte(h)}},
		}})
		names = append(names, []byte(variableKey(w.paths[i])))
		slices = append(slices, []byte{})
		types = append(types, dt)
		handles = append(handles, h)
	}
	restore := &nodepb.NodeDef{Name: SaverRestoreNode, Op: "NoOp", Input: []string{"^" + SaverFilenameNode}}
	if len(names) > 0 {
		strConst := func(name string, vals [][]byte) *nodepb.NodeDef {
			return &nodepb.NodeDef{Name: name, Op: "Const", Attr: map[string]*attrpb.AttrValue{
				"dtype": typeAttr(typespb.DataType_DT_STRING),
				"value": {Value: &attrpb.AttrValue_Tensor{Tensor: &tensorpb.TensorProto{
					Dtype: typespb.DataType_DT_STRING, TensorShape: ShapeProto(structtensor.Shape{len(vals)}), StringVal: vals,
				}}},
			}}
		}
		g.Node = append(g.Node, strConst("saver/tensor_names", names), strConst("saver/shape_and_slices", slices),
			&nodepb.NodeDef{Name: "saver/RestoreV2", Op: "RestoreV2",
				Input: []string{SaverFilenameNode, "saver/tensor_names", "saver/shape_and_slices"},
				Attr:  map[string]*attrpb.AttrValue{"dtypes": typeList(types)}})
		restore.Input = nil
		for k, h := range handles {
			name := fmt.Sprintf("saver/assign_%d", k)
			g.Node = append(g.Node, &nodepb.NodeDef{Name: name, Op: "AssignVariableOp",
				Input: []string{h, fmt.Sprintf("saver/RestoreV2:%d", k)},
				Attr:  map[string]*attrpb.AttrValue{"dtype": typeAttr(types[k])}})
			restore.Input = append(restore.Input, "^"+name)
		}
	}
	g.Node = append(g.Node, restore)

	lib := map[string]*fnpb.FunctionDef{}
	for _, f := range g.GetLibrary().GetFunction() {
		lib[f.GetSignature().GetName()] = f
	}
	keys := make([]string, 0, len(w.m.Signatures))
	for k := range w.m.Signatures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	defs := map[string]*pb.SignatureDef{}
	for _, k := range keys {
		f := w.m.Signatures[k]
		if !validNodeName(k) {
			return nil, nil, nil, fmt.Errorf("%w: signature key %q cannot name graph nodes", ErrModel, k)
		}
		def := &pb.SignatureDef{MethodName: "tensorflow/serving/predict", Inputs: map[string]*pb.TensorInfo{}, Outputs: map[string]*pb.TensorInfo{}}
		call := &nodepb.NodeDef{Name: "signature/" + k + "/call", Op: "PartitionedCall", Attr: map[string]*attrpb.AttrValue{
			"f": {Value: &attrpb.AttrValue_Func{Func: &attrpb.NameAttrList{Name: f.Name}}},
		}}
		var tin, tout []typespb.DataType
		for _, in := range f.Inputs {
			if !validNodeName(in.Name) {
				return nil, nil, nil, fmt.Errorf("%w: signature %q: input %q cannot name a graph node", ErrModel, k, in.Name)
			}
			ph := "signature/" + k + "/" + in.Name
			if ts, isTensor := in.Spec.(TensorSpec); isTensor {
				g.Node = append(g.Node, &nodepb.NodeDef{Name: ph, Op: "Placeholder", Attr: map[string]*attrpb.AttrValue{
					"dtype": typeAttr(ts.DType), "shape": shapeAttr(ts.Shape),
				}})
				call.Input = append(call.Input, ph)
				tin = append(tin, ts.DType)
				def.Inputs[in.Name] = tensorInfo(ph+":0", ts)
				continue
			}
			// A composite input: one placeholder per component.
			tsv, isType := in.Spec.proto().Kind.(*pb.StructuredValue_TypeSpecValue)
			if !isType {
				return nil, nil, nil, fmt.Errorf("%w: signature %q: input %q is neither a tensor nor a composite tensor", ErrModel, k, in.Name)
			}
			var infos []*pb.TensorInfo
			for j, c := range Flatten(in.Spec) {
				name := fmt.Sprintf("%s/%d", ph, j)
				g.Node = append(g.Node, &nodepb.NodeDef{Name: name, Op: "Placeholder", Attr: map[string]*attrpb.AttrValue{
					"dtype": typeAttr(c.DType), "shape": shapeAttr(c.Shape),
				}})
				call.Input = append(call.Input, name)
				tin = append(tin, c.DType)
				infos = append(infos, tensorInfo(name+":0", c))
			}
			def.Inputs[in.Name] = &pb.TensorInfo{Encoding: &pb.TensorInfo_CompositeTensor_{CompositeTensor: &pb.TensorInfo_CompositeTensor{
				TypeSpec: tsv.TypeSpecValue, Components: infos,
			}}}
		}
		for _, c := range f.Captures {
			call.Input = append(call.Input, handle[c])
			tin = append(tin, typespb.DataType_DT_RESOURCE)
		}
		if len(f.Captures) > 0 || lib[f.Name].GetSignature().GetIsStateful() {
			call.Op = "StatefulPartitionedCall"
		}
		flat := 0
		out := f.Output.(Dict)
		outKeys := make([]string, 0, len(out))
		for key := range out {
			outKeys = append(outKeys, key)
		}
		sort.Strings(outKeys)
		for _, key := range outKeys {
			v := out[key]
			comps := Flatten(v)
			infos := make([]*pb.TensorInfo, len(comps))
			for j, c := range comps {
				infos[j] = tensorInfo(fmt.Sprintf("%s:%d", call.Name, flat), c)
				tout = append(tout, c.DType)
				flat++
			}
			if ts, isTensor := v.(TensorSpec); isTensor {
				def.Outputs[key] = tensorInfo(infos[0].GetName(), ts)
				continue
			}
			tsv, isType := v.proto().Kind.(*pb.StructuredValue_TypeSpecValue)
			if !isType {
				return nil, nil, nil, fmt.Errorf("%w: signature %q: output %q is neither a tensor nor a composite tensor", ErrModel, k, key)
			}
			def.Outputs[key] = &pb.TensorInfo{Encoding: &pb.TensorInfo_CompositeTensor_{CompositeTensor: &pb.TensorInfo_CompositeTensor{
				TypeSpec: tsv.TypeSpecValue, Components: infos,
			}}}
		}
		call.Attr["Tin"] = typeList(tin)
		call.Attr["Tout"] = typeList(tout)
		g.Node = append(g.Node, call)
		defs[k] = def
	}
	return g, &pb.SaverDef{
		FilenameTensorName: SaverFilenameNode + ":0",
		RestoreOpName:      SaverRestoreNode,
		Version:            pb.SaverDef_V2,
	}, defs, nil
}

func tensorInfo(name string, s TensorSpec) *pb.TensorInfo {
	return &pb.TensorInfo{Encoding: &pb.TensorInfo_Name{Name: name}, Dtype: s.DType, TensorShape: ShapeProto(s.Shape)}
}

// validNodeName reports whether s can be a part of a graph node name.
func validNodeName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || (i > 0 && (c == '_' || c == '-'))
		if !ok {
			return false
		}
	}
	return true
}
