package savedmodel

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	opdefpb "github.com/wamuir/graft/tensorflow/core/framework/op_def_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	"google.golang.org/protobuf/proto"
)

// ErrExport reports a Model that cannot be exported: a signature whose
// outputs depend on a placeholder that is not one of its inputs or on a
// variable that is not in Model.Variables, a bad signature or variable
// name, a value whose shape or element type TensorFlow cannot express.
var ErrExport = errors.New("savedmodel: cannot export")

// Model is a graph a Go program built (with tfbridge or the op
// wrappers) and what to export of it: named signatures over its tensors,
// and the variables they read.
type Model struct {
	// Graph holds every operation the signatures compute. Export adds
	// to it only the few shape operations a StructTensor output needs
	// (the inner shapes of Python's StructuredTensor), under
	// "export_<signature>_<output>".
	Graph *tfbridge.Graph
	// Signatures are the model's entry points by key ("serving_default"
	// is the one serving tools call when none is named). A key is a
	// letter then letters, digits or underscores.
	Signatures map[string]*Signature
	// Variables are the resource variables the signatures may read
	// (NewVariable). Their values are saved in the checkpoint; a
	// signature reading one takes its handle as a captured input.
	Variables []*Variable
}

// Signature is one entry point: its inputs, which must be placeholders
// of Model.Graph, and its outputs, by key. Each is a Value: a tensor, a
// RaggedTensor or a StructTensor.
type Signature struct {
	Inputs  map[string]Value
	Outputs map[string]Value
}

// Value is a value of the graph a signature takes or returns: a dense
// tensor (Tensor), a RaggedTensor (Ragged) or a StructTensor (Struct).
type Value struct {
	kind valueKind
	outs []tfbridge.Output // the tensors holding it: TensorFlow's flat order, or a struct's components
	st   *structtensor.StructSpec
}

type valueKind int

const (
	tensorValue valueKind = iota + 1
	raggedValue
	structValue
)

// Tensor is a dense tensor. Its element type and rank must be known when
// the graph is built (a placeholder's shape attribute gives them).
func Tensor(o tfbridge.Output) Value {
	return Value{kind: tensorValue, outs: []tfbridge.Output{o}}
}

// Ragged is a RaggedTensor: r's flat values and the row splits of its
// ragged dimensions, outermost first (as TensorFlow's
// RaggedTensor.from_nested_row_splits takes them). Python sees a
// tf.RaggedTensor.
func Ragged(r graphst.Ragged) Value {
	return Value{kind: raggedValue, outs: append([]tfbridge.Output{r.Values()}, r.RowSplits()...)}
}

// Struct is a StructTensor, of rank 1 or more. Python sees a
// tf.experimental.StructuredTensor (its fields in name order); Load
// returns a *structtensor.StructTensor whose fields are in name order.
func Struct(s *graphst.Struct) Value {
	if s == nil {
		return Value{kind: structValue}
	}
	return Value{kind: structValue, outs: s.Components(), st: s.StructSpec()}
}

// spec returns the Go spec and the object-graph spec (what Python sees)
// of v, checking its tensors.
func (v Value) specs(key string) (structtensor.Spec, objectgraph.Value, error) {
	if len(v.outs) == 0 {
		return nil, nil, fmt.Errorf("%w: %q: an empty Value", ErrExport, key)
	}
	for _, o := range v.outs {
		if o.Op == nil {
			return nil, nil, fmt.Errorf("%w: %q: a zero Output (did a scope record an error?)", ErrExport, key)
		}
	}
	switch v.kind {
	case tensorValue:
		shape, dt, err := outputSpec(v.outs[0])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %v", ErrExport, key, err)
		}
		sd, err := tfbridge.DType(dt).StructDType()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %v", ErrExport, key, err)
		}
		return &structtensor.TensorSpec{DType: sd, Shape: shape},
			objectgraph.TensorSpec{Name: key, Shape: shape, DType: dt}, nil
	case structValue:
		if v.st == nil {
			return nil, nil, fmt.Errorf("%w: %q: a nil StructTensor", ErrExport, key)
		}
		sv, _, err := structuredSpec(v.st)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %v", ErrExport, key, err)
		}
		return v.st, sv, nil
	case raggedValue:
		inner, dt, err := outputSpec(v.outs[0])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: values: %v", ErrExport, key, err)
		}
		if len(inner) == 0 {
			return nil, nil, fmt.Errorf("%w: %q: the flat values of a RaggedTensor are a scalar", ErrExport, key)
		}
		k := len(v.outs) - 1
		if k < 1 {
			return nil, nil, fmt.Errorf("%w: %q: a RaggedTensor needs at least one row splits tensor", ErrExport, key)
		}
		for i, s := range v.outs[1:] {
			shape, sdt, err := outputSpec(s)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %q: row splits %d: %v", ErrExport, key, i, err)
			}
			if sdt != typespb.DataType_DT_INT64 || len(shape) != 1 {
				return nil, nil, fmt.Errorf("%w: %q: row splits %d are %v of shape %v, want an int64 vector", ErrExport, key, i, sdt, shape)
			}
		}
		full := structtensor.Shape{}
		for range k + 1 {
			full = append(full, structtensor.Unknown)
		}
		full = append(full, inner[1:]...)
		sd, err := tfbridge.DType(dt).StructDType()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %v", ErrExport, key, err)
		}
		return &structtensor.RaggedSpec{DType: sd, Shape: full, RaggedRank: k},
			objectgraph.RaggedTensorSpec{Shape: full, DType: dt, RaggedRank: k, RowSplitsDType: typespb.DataType_DT_INT64}, nil
	}
	return nil, nil, fmt.Errorf("%w: %q: a zero Value", ErrExport, key)
}

// outputSpec returns the graph's shape (rank known) and element type of o.
// flatPlan is how a Value crosses a function boundary: the distinct
// graph tensors it passes (function arguments or results) and, for each
// of TensorFlow's flat components, the index of its tensor among them
// (-1: an argument the function ignores, a StructuredTensor's repeated
// partition or inner shape).
type flatPlan struct {
	outs []tfbridge.Output
	pos  []int
}

// plan returns the flat plan of v. For a StructTensor output, s adds the
// inner shapes TensorFlow's StructuredTensor carries (nil for an input:
// they are ignored arguments).
func (v Value) plan(s *op.Scope) (flatPlan, error) {
	if v.kind != structValue {
		p := flatPlan{outs: v.outs}
		for i := range v.outs {
			p.pos = append(p.pos, i)
		}
		return p, nil
	}
	_, flat, err := structuredSpec(v.st)
	if err != nil {
		return flatPlan{}, err
	}
	comps, err := graphst.Components(v.st)
	if err != nil {
		return flatPlan{}, err
	}
	if len(comps) == 0 || len(comps) != len(v.outs) {
		return flatPlan{}, fmt.Errorf("a StructTensor of %d components for a spec of %d (one with no fields has no row count)", len(v.outs), len(comps))
	}
	p := flatPlan{outs: append([]tfbridge.Output(nil), v.outs...)}
	used := map[int]bool{}
	for _, f := range flat {
		switch {
		case f.comp >= 0 && (s != nil || !used[f.comp]):
			used[f.comp] = true
			p.pos = append(p.pos, f.comp)
		case s == nil:
			p.pos = append(p.pos, -1)
		default:
			p.pos = append(p.pos, len(p.outs))
			p.outs = append(p.outs, innerShape(s, v.outs, comps[0].Kind, f.inner))
		}
	}
	if s != nil {
		return p, s.Err()
	}
	return p, nil
}

// innerShape adds the inner shape of a StructuredTensor level: the last
// value of the row splits outs[splits] as a vector of one element, or
// for splits < 0 the number of rows of the root struct.
func innerShape(s *op.Scope, outs []tfbridge.Output, first graphst.ComponentKind, splits int) tfbridge.Output {
	one := op.Constant(s, []int64{1})
	if splits >= 0 {
		return op.StridedSlice(s, outs[splits], op.Constant(s, []int64{-1}), op.Constant(s, []int64{0}), one, op.StridedSliceEndMask(1))
	}
	// The root's rows: its first component is its outermost partition's
	// row splits or, without partitions, a field's values with one row
	// per record.
	if first == graphst.RowSplitsComponent {
		return op.Reshape(s, op.Sub(s, op.Size(s, outs[0], op.SizeOutType(tfbridge.Int64)), op.Constant(s, int64(1))), one)
	}
	return op.Slice(s, op.Shape(s, outs[0], op.ShapeOutType(tfbridge.Int64)), op.Constant(s, []int64{0}), one)
}

func outputSpec(o tfbridge.Output) (structtensor.Shape, typespb.DataType, error) {
	shape, known, err := o.Shape()
	if err != nil {
		return nil, 0, err
	}
	if !known {
		return nil, 0, fmt.Errorf("%s has a shape of unknown rank; give its placeholder a shape", o.Name())
	}
	dt := typespb.DataType(o.DType())
	if dt == typespb.DataType_DT_RESOURCE || dt == typespb.DataType_DT_VARIANT {
		return nil, 0, fmt.Errorf("%s is a %v tensor, which a signature cannot carry", o.Name(), dt)
	}
	return shape, dt, nil
}

// Variable is a resource variable of a graph: a VarHandleOp whose value
// Export saves in the checkpoint, and an initializer that assigns that
// value when the graph runs in a Go session.
type Variable struct {
	// Name is the variable's name, "/"-separated parts each a letter or
	// underscore then letters, digits or underscores ("dense/kernel").
	// Python reaches the loaded variable as an attribute path
	// (loaded.dense.kernel); it names the checkpoint key.
	Name string
	// Value is the initial value, the one saved.
	Value *structtensor.Tensor
	// Trainable marks the variable trainable for Python.
	Trainable bool

	handle tfbridge.Output
	init   *tfbridge.Operation
}

// NewVariable adds a resource variable called name, of value's element
// type and shape, to the scope's graph: a VarHandleOp and an
// AssignVariableOp of a constant holding value (Initializer). Errors are
// recorded in the scope, as its op wrappers do.
func NewVariable(s *op.Scope, name string, value *structtensor.Tensor) *Variable {
	v := &Variable{Name: name, Value: value, Trainable: true}
	if s.Err() != nil {
		return v
	}
	if err := checkVariableName(name); err != nil {
		s.UpdateErr("NewVariable", err)
		return v
	}
	if value == nil {
		s.UpdateErr("NewVariable", fmt.Errorf("%w: variable %q: nil value", ErrExport, name))
		return v
	}
	dt, err := tfbridge.DTypeOf(value.DType())
	if err != nil {
		s.UpdateErr("NewVariable", err)
		return v
	}
	dims := make([]int64, len(value.Shape()))
	for i, d := range value.Shape() {
		dims[i] = int64(d)
	}
	vs := s.SubScope(strings.ReplaceAll(name, "/", "_"))
	v.handle = op.VarHandleOp(vs, dt, op.ShapeOf(dims...), op.VarHandleOpSharedName(name))
	v.init = op.AssignVariableOp(vs, v.handle, op.Constant(vs, value))
	return v
}

// Handle returns the variable's resource handle (the VarHandleOp's
// output), what ReadVariableOp and AssignVariableOp take.
func (v *Variable) Handle() tfbridge.Output { return v.handle }

// Initializer returns the operation that assigns Value to the variable;
// run it (as a target) once per session before reading the variable.
func (v *Variable) Initializer() *tfbridge.Operation { return v.init }

// Read adds a ReadVariableOp of the variable to the scope.
func (v *Variable) Read(s *op.Scope) tfbridge.Output {
	if v.handle.Op == nil {
		s.UpdateErr("Variable.Read", fmt.Errorf("%w: variable %q has no handle", ErrExport, v.Name))
		return tfbridge.Output{}
	}
	dt, err := tfbridge.DTypeOf(v.Value.DType())
	if err != nil {
		s.UpdateErr("Variable.Read", err)
		return tfbridge.Output{}
	}
	return op.ReadVariableOp(s, v.handle, dt)
}

var (
	identifier   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	signatureKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
)

func checkVariableName(name string) error {
	for _, part := range strings.Split(name, "/") {
		if !identifier.MatchString(part) {
			return fmt.Errorf("%w: variable name %q: each \"/\"-separated part must be a letter or underscore then letters, digits or underscores", ErrExport, name)
		}
	}
	if strings.HasPrefix(name, "signatures/") || name == "signatures" {
		return fmt.Errorf("%w: variable name %q: \"signatures\" is the loaded model's signature map", ErrExport, name)
	}
	return nil
}

// Export writes m to dir, which must not exist or be empty, as an
// object-based SavedModel (package documentation): each signature a
// function of the graph's operations between its inputs and outputs,
// every variable's value in the checkpoint. TensorFlow's C API loader
// (TF Serving), Python's tf.saved_model.load and Load read it.
func Export(dir string, m *Model) error {
	if err := checkEmpty(dir); err != nil {
		return err
	}
	files, err := exportModelFiles(m)
	if err != nil {
		return fmt.Errorf("export SavedModel: %w", err)
	}
	if err := objectgraph.WriteFiles(dir, files); err != nil {
		return fmt.Errorf("export SavedModel: %w", err)
	}
	return nil
}

// exportModelFiles returns the files of the SavedModel of m, by path.
func exportModelFiles(m *Model) (map[string][]byte, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("%w: no graph", ErrExport)
	}
	if len(m.Signatures) == 0 {
		return nil, fmt.Errorf("%w: no signatures", ErrExport)
	}
	gdBytes, err := m.Graph.ToGraphDef()
	if err != nil {
		return nil, err
	}
	gd := &graphpb.GraphDef{}
	if err := proto.Unmarshal(gdBytes, gd); err != nil {
		return nil, fmt.Errorf("GraphDef: %w", err)
	}
	root, handles, err := variableObjects(m)
	if err != nil {
		return nil, err
	}
	graph := &graphpb.GraphDef{Versions: gd.Versions, Library: &fnpb.FunctionDefLibrary{}}
	// Functions the graph calls (its own library) go with it.
	graph.Library.Function = append(graph.Library.Function, gd.GetLibrary().GetFunction()...)
	graph.Library.Gradient = append(graph.Library.Gradient, gd.GetLibrary().GetGradient()...)
	keys := make([]string, 0, len(m.Signatures))
	for k := range m.Signatures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sigs := map[string]*objectgraph.Function{}
	for _, k := range keys {
		f, fd, err := signatureFunction(m, k, handles)
		if err != nil {
			return nil, err
		}
		graph.Library.Function = append(graph.Library.Function, fd)
		sigs[k] = f
	}
	return objectgraph.Files(&objectgraph.Model{
		Tags: []string{Tag}, TensorFlowVersion: tfbridge.Version(), Graph: graph, Root: root, Signatures: sigs,
	})
}

// variableObjects returns the root object with every variable as a
// child, nested by the parts of its name, and the variable object of
// each handle operation.
func variableObjects(m *Model) (*objectgraph.Object, map[*tfbridge.Operation]*objectgraph.Object, error) {
	root := &objectgraph.Object{}
	handles := map[*tfbridge.Operation]*objectgraph.Object{}
	for _, v := range m.Variables {
		if v == nil || v.handle.Op == nil || v.Value == nil {
			return nil, nil, fmt.Errorf("%w: a variable not made by NewVariable, or whose scope recorded an error", ErrExport)
		}
		if err := checkVariableName(v.Name); err != nil {
			return nil, nil, err
		}
		if v.handle.Op.Graph() != m.Graph {
			return nil, nil, fmt.Errorf("%w: variable %q is in another graph", ErrExport, v.Name)
		}
		if _, dup := handles[v.handle.Op]; dup {
			return nil, nil, fmt.Errorf("%w: variable %q is listed twice", ErrExport, v.Name)
		}
		parts := strings.Split(v.Name, "/")
		parent := root
		for i, p := range parts {
			var child *objectgraph.Object
			for _, c := range parent.Children {
				if c.Name == p {
					child = c.Object
				}
			}
			last := i == len(parts)-1
			switch {
			case child == nil && last:
				child = &objectgraph.Object{Variable: &objectgraph.Variable{Name: v.Name, Value: v.Value, Trainable: v.Trainable}}
				parent.Children = append(parent.Children, objectgraph.Child{Name: p, Object: child})
			case child == nil:
				child = &objectgraph.Object{}
				parent.Children = append(parent.Children, objectgraph.Child{Name: p, Object: child})
			case last || child.Variable != nil:
				return nil, nil, fmt.Errorf("%w: variable %q: %q is both a variable and a parent of another", ErrExport, v.Name, strings.Join(parts[:i+1], "/"))
			}
			parent = child
		}
		handles[v.handle.Op] = parent
	}
	return root, handles, nil
}

// signatureFunction returns the concrete function of signature key and
// its FunctionDef: the operations between the signature's input
// placeholders (and the variables' handles) and its outputs. Arguments
// are the inputs in key order, each as its flat components, then the
// handles of the variables the function reads; results the outputs in
// key order, each as its flat components.
func signatureFunction(m *Model, key string, handles map[*tfbridge.Operation]*objectgraph.Object) (*objectgraph.Function, *fnpb.FunctionDef, error) {
	sig := m.Signatures[key]
	if !signatureKey.MatchString(key) {
		return nil, nil, fmt.Errorf("%w: signature key %q: a letter then letters, digits or underscores", ErrExport, key)
	}
	if sig == nil || len(sig.Outputs) == 0 {
		return nil, nil, fmt.Errorf("%w: signature %q has no outputs", ErrExport, key)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: signature %q: %s", ErrExport, key, fmt.Sprintf(format, args...))
	}
	f := &objectgraph.Function{Name: "signature_" + key, KeywordOnly: true}
	var ins []tfbridge.Output
	var inPlans []flatPlan
	fed := map[tfbridge.Output]string{}
	for _, name := range sortedKeys(sig.Inputs) {
		if !signatureKey.MatchString(name) {
			return nil, nil, fail("input key %q: a letter then letters, digits or underscores", name)
		}
		v := sig.Inputs[name]
		_, spec, err := v.specs(name)
		if err != nil {
			return nil, nil, fail("input %v", err)
		}
		for _, o := range v.outs {
			if o.Op.Graph() != m.Graph || o.Op.Type() != "Placeholder" {
				return nil, nil, fail("input %q: %s is not a placeholder of the model's graph", name, o.Name())
			}
			if prev, dup := fed[o]; dup {
				return nil, nil, fail("inputs %q and %q share the placeholder %s", prev, name, o.Name())
			}
			fed[o] = name
		}
		p, err := v.plan(nil)
		if err != nil {
			return nil, nil, fail("input %q: %v", name, err)
		}
		ins = append(ins, p.outs...)
		inPlans = append(inPlans, p)
		f.Inputs = append(f.Inputs, objectgraph.Arg{Name: name, Spec: spec})
	}
	out := objectgraph.Dict{}
	// Results: the distinct tensors of every output, and for each flat
	// result its index among them.
	var outs []tfbridge.Output
	var results []int
	index := map[tfbridge.Output]int{}
	for _, name := range sortedKeys(sig.Outputs) {
		v := sig.Outputs[name]
		_, spec, err := v.specs(name)
		if err != nil {
			return nil, nil, fail("output %v", err)
		}
		for _, o := range v.outs {
			if o.Op.Graph() != m.Graph {
				return nil, nil, fail("output %q: %s is in another graph", name, o.Name())
			}
		}
		p, err := v.plan(op.NewScopeWithGraph(m.Graph).SubScope("export_" + key + "_" + name))
		if err != nil {
			return nil, nil, fail("output %q: %v", name, err)
		}
		for _, k := range p.pos {
			o := p.outs[k]
			j, ok := index[o]
			if !ok {
				j = len(outs)
				index[o] = j
				outs = append(outs, o)
			}
			results = append(results, j)
		}
		out[name] = spec
	}
	f.Output = out

	stops := append([]tfbridge.Output(nil), ins...)
	for h := range handles {
		stops = append(stops, h.Output(0))
	}
	body := tfbridge.Subgraph(stops, outs)
	captured := map[*tfbridge.Operation]bool{}
	for _, o := range body {
		switch o.Type() {
		case "Placeholder", "PlaceholderWithDefault":
			return nil, nil, fail("its outputs depend on the placeholder %q, which is not one of its inputs", o.Name())
		case "VarHandleOp":
			return nil, nil, fail("its outputs read the variable %q, which is not in Model.Variables", o.Name())
		}
		for _, in := range o.Inputs() {
			if _, ok := handles[in.Op]; ok {
				captured[in.Op] = true
			}
		}
	}
	for _, o := range outs {
		if _, ok := handles[o.Op]; ok {
			return nil, nil, fail("an output is a variable's handle")
		}
	}
	nIn := len(ins)
	// Captures in Model.Variables order, so the export is deterministic.
	for _, v := range m.Variables {
		if captured[v.handle.Op] {
			ins = append(ins, v.handle)
			f.Captures = append(f.Captures, handles[v.handle.Op])
		}
	}
	names := make([]string, len(outs))
	for i := range names {
		names[i] = fmt.Sprintf("result_%d", i)
	}
	b, err := m.Graph.SubgraphToFunctionDef(f.Name, body, ins, outs, names)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	fd := &fnpb.FunctionDef{}
	if err := proto.Unmarshal(b, fd); err != nil {
		return nil, nil, fmt.Errorf("FunctionDef: %w", err)
	}
	if err := flattenFunction(fd, inPlans, nIn, results); err != nil {
		return nil, nil, fail("%v", err)
	}
	return f, fd, nil
}

// flattenFunction rewrites fd, built over distinct tensors, to take and
// return TensorFlow's flat components: each input plan's positions (an
// ignored int64 argument where the plan has -1), then the nIn.. captured
// arguments; results[j] is the distinct result the j-th flat output is.
func flattenFunction(fd *fnpb.FunctionDef, inPlans []flatPlan, nIn int, results []int) error {
	sig := fd.GetSignature()
	old := sig.GetInputArg()
	if len(old) < nIn {
		return fmt.Errorf("the function has %d arguments, want at least %d", len(old), nIn)
	}
	var args []*opdefpb.OpDef_ArgDef
	oldIndex := []int{} // new argument -> old argument, -1 when new
	offset := 0
	for _, p := range inPlans {
		for _, k := range p.pos {
			if k < 0 {
				args = append(args, &opdefpb.OpDef_ArgDef{Name: fmt.Sprintf("ignored_%d", len(args)), Type: typespb.DataType_DT_INT64})
				oldIndex = append(oldIndex, -1)
				continue
			}
			args = append(args, old[offset+k])
			oldIndex = append(oldIndex, offset+k)
		}
		offset += len(p.outs)
	}
	for k := nIn; k < len(old); k++ {
		args = append(args, old[k])
		oldIndex = append(oldIndex, k)
	}
	argAttr := map[uint32]*fnpb.FunctionDef_ArgAttrs{}
	unique := map[uint32]uint32{}
	for i, k := range oldIndex {
		if k < 0 {
			continue
		}
		if a, ok := fd.ArgAttr[uint32(k)]; ok {
			argAttr[uint32(i)] = a
		}
		if u, ok := fd.ResourceArgUniqueId[uint32(k)]; ok {
			unique[uint32(i)] = u
		}
	}
	sig.InputArg, fd.ArgAttr, fd.ResourceArgUniqueId = args, argAttr, unique
	if len(fd.ArgAttr) == 0 {
		fd.ArgAttr = nil
	}
	if len(fd.ResourceArgUniqueId) == 0 {
		fd.ResourceArgUniqueId = nil
	}

	oldOut := sig.GetOutputArg()
	ret := map[string]string{}
	var outArgs []*opdefpb.OpDef_ArgDef
	for j, k := range results {
		if k >= len(oldOut) {
			return fmt.Errorf("result %d of %d", k, len(oldOut))
		}
		name := fmt.Sprintf("output_%d", j)
		outArgs = append(outArgs, &opdefpb.OpDef_ArgDef{Name: name, Type: oldOut[k].GetType()})
		ret[name] = fd.Ret[oldOut[k].GetName()]
	}
	sig.OutputArg, fd.Ret = outArgs, ret
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
