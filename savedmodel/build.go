package savedmodel

import (
	"fmt"
	"sort"
	"strings"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	attrpb "github.com/wamuir/graft/tensorflow/core/framework/attr_value_go_proto"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	graphpb "github.com/wamuir/graft/tensorflow/core/framework/graph_go_proto"
	nodepb "github.com/wamuir/graft/tensorflow/core/framework/node_def_go_proto"
	opdefpb "github.com/wamuir/graft/tensorflow/core/framework/op_def_go_proto"
	tensorpb "github.com/wamuir/graft/tensorflow/core/framework/tensor_go_proto"
	shapepb "github.com/wamuir/graft/tensorflow/core/framework/tensor_shape_go_proto"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// Names of the functions and graph nodes of a DataView.
const (
	componentsFunction = "structtensor_dataview_components"
	decodeFunFunction  = "structtensor_dataview_decode_fun"
	// DecodeFun is the root object's child TFX's load_decoder calls.
	DecodeFun = "decode_fun"
)

// Leaf is one projected leaf of a DataView as decode_fun returns it.
type Leaf struct {
	// Path is the leaf's field path ("ingredients.name"), its key in
	// decode_fun's dict and its TFXIO column name.
	Path string `json:"path"`
	// DType is the element type decode_fun returns: the leaf's, except
	// uint8 for bool (see the package documentation).
	DType string `json:"dtype"`
	// RaggedRank is the number of row partitions (0: a dense tensor).
	RaggedRank int `json:"ragged_rank"`
	// Shape is the full shape, -1 at the batch and ragged dimensions.
	Shape structtensor.Shape `json:"shape"`
}

// built is a DataView's SavedModel before it is written.
type built struct {
	model  *objectgraph.Model
	comps  []Component
	leaves []Leaf
}

// build makes the SavedModel of plan: the function library, the root
// object with decode_fun and the decode/serving_default signatures.
func build(d decoder, threads int) (*built, error) {
	g := tfbridge.NewGraph()
	defer g.Close()
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: InputRecords,
		Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		return nil, err
	}
	sym, err := d.decodeGraph(g, ph.Output(0), cops.Options{Name: decodeOpName, Threads: threads})
	if err != nil {
		return nil, err
	}
	specs := sym.ComponentSpecs()
	outs := sym.Components()
	comps := make([]Component, len(specs))
	index := map[string]int{} // component key -> position in outs
	for i, c := range specs {
		comps[i] = Component{Key: c.Name(), Path: c.Path, Kind: kindName(c.Kind), Partition: c.Partition, DType: c.DType.String()}
		index[c.Name()] = i
	}

	// The components function: records -> every component, in sorted key
	// order (the order nest.flatten gives a dict of them).
	keys := make([]string, len(comps))
	for i, c := range comps {
		keys[i] = c.Key
	}
	sort.Strings(keys)
	sigOuts := make([]tfbridge.Output, len(keys))
	sigNames := make([]string, len(keys))
	sigDict := objectgraph.Dict{}
	position := map[string]int{} // component key -> components function output
	for i, k := range keys {
		j := index[k]
		sigOuts[i] = outs[j]
		sigNames[i] = fmt.Sprintf("output_%d", i)
		position[k] = i
		dt, err := tfbridge.DTypeOf(specs[j].DType)
		if err != nil {
			return nil, err
		}
		shape := structtensor.Shape{structtensor.Unknown}
		if len(specs[j].Shape) > 1 {
			shape = append(shape, specs[j].Shape[1:]...)
		}
		sigDict[k] = objectgraph.TensorSpec{Name: k, Shape: shape, DType: typespb.DataType(dt)}
	}
	fdBytes, err := g.ToFunctionDef(componentsFunction, []tfbridge.Output{ph.Output(0)}, sigOuts, sigNames)
	if err != nil {
		return nil, err
	}
	componentsFn := &fnpb.FunctionDef{}
	if err := proto.Unmarshal(fdBytes, componentsFn); err != nil {
		return nil, fmt.Errorf("FunctionDef: %w", err)
	}

	// decode_fun: records -> {leaf path: tensor or RaggedTensor}, calling
	// the components function and casting bools to uint8.
	leaves, leafOuts, err := leavesOf(sym, d.spec())
	if err != nil {
		return nil, err
	}
	decodeFn, decodeDict, err := decodeFunDef(componentsFn, leaves, leafOuts, position)
	if err != nil {
		return nil, err
	}

	gdBytes, err := g.ToGraphDef()
	if err != nil {
		return nil, err
	}
	body := &graphpb.GraphDef{}
	if err := proto.Unmarshal(gdBytes, body); err != nil {
		return nil, fmt.Errorf("GraphDef: %w", err)
	}
	graph := &graphpb.GraphDef{
		Node: []*nodepb.NodeDef{{Name: assetOpName, Op: "Const", Attr: map[string]*attrpb.AttrValue{
			"dtype": {Value: &attrpb.AttrValue_Type{Type: typespb.DataType_DT_STRING}},
			"value": {Value: &attrpb.AttrValue_Tensor{Tensor: stringScalarProto(MetadataFile)}},
		}}},
		Versions: body.Versions,
		Library:  &fnpb.FunctionDefLibrary{Function: []*fnpb.FunctionDef{componentsFn, decodeFn}},
	}
	records := objectgraph.TensorSpec{Name: InputRecords, Shape: structtensor.Shape{structtensor.Unknown}, DType: typespb.DataType_DT_STRING}
	sig := &objectgraph.Function{Name: componentsFunction, Inputs: []objectgraph.Arg{{Name: InputRecords, Spec: records}}, KeywordOnly: true, Output: sigDict}
	model := &objectgraph.Model{
		Tags: []string{Tag}, TensorFlowVersion: tfbridge.Version(), Graph: graph,
		Root: &objectgraph.Object{Children: []objectgraph.Child{{Name: DecodeFun, Object: &objectgraph.Object{Function: &objectgraph.Function{
			Name: decodeFunFunction, Inputs: []objectgraph.Arg{{Name: InputRecords, Spec: records}}, Output: decodeDict,
		}}}}},
		Signatures: map[string]*objectgraph.Function{SignatureDecode: sig, SignatureServingDefault: sig},
		AssetFileDefs: []*metapb.AssetFileDef{{
			TensorInfo: &metapb.TensorInfo{Encoding: &metapb.TensorInfo_Name{Name: assetOpName + ":0"}, Dtype: typespb.DataType_DT_STRING, TensorShape: &shapepb.TensorShapeProto{}},
			Filename:   MetadataFile,
		}},
	}
	return &built{model: model, comps: comps, leaves: leaves}, nil
}

// leafOutput locates a leaf in the components: its row splits (outermost
// first) and values, by component key.
type leafOutput struct {
	splits []string
	values string
	bool   bool
	// reshape, when set, is the shape decode_fun reshapes the values
	// component to: [-1, the leaf's inner dimensions], for a leaf whose
	// innermost partitions are uniform.
	reshape structtensor.Shape
}

// leavesOf lists the leaves of spec in sorted path order with the
// components that hold each.
func leavesOf(sym *graphst.Struct, spec *structtensor.StructSpec) ([]Leaf, []leafOutput, error) {
	keyOf := map[tfbridge.Output]string{}
	for i, o := range sym.Components() {
		keyOf[o] = sym.ComponentSpecs()[i].Name()
	}
	var leaves []Leaf
	var outs []leafOutput
	var walk func(s *structtensor.StructSpec, path []string) error
	walk = func(s *structtensor.StructSpec, path []string) error {
		for _, f := range s.Fields {
			p := append(append([]string(nil), path...), f.Name)
			if st, ok := f.Spec.(*structtensor.StructSpec); ok {
				if err := walk(st, p); err != nil {
					return err
				}
				continue
			}
			v, err := sym.Field(p...)
			if err != nil {
				return err
			}
			t, ok := v.(graphst.Ragged)
			if !ok {
				return fmt.Errorf("field %s is not a leaf", strings.Join(p, "."))
			}
			// The innermost run of uniform partitions becomes inner
			// dimensions of the values, as tf.io.parse_example shapes a
			// RaggedFeature's trailing UniformRowLength partitions and as
			// TFXIO takes them (known dimensions only below the ragged
			// ones: its TensorRepresentation is a uniform_row_length
			// partition per inner dimension). A uniform partition with a
			// ragged one below it stays row splits, of unknown length in
			// the leaf's shape.
			full := v.Spec().ValueShape()
			splits := t.RowSplits()
			kept := len(splits)
			for kept > 0 && full[kept] != structtensor.Unknown {
				kept--
			}
			lo := leafOutput{values: keyOf[t.Values()]}
			for _, rs := range splits[:kept] {
				lo.splits = append(lo.splits, keyOf[rs])
			}
			if kept < len(splits) {
				lo.reshape = append(structtensor.Shape{structtensor.Unknown}, full[1+kept:]...)
			}
			var dtype structtensor.DType
			switch x := f.Spec.(type) {
			case *structtensor.TensorSpec:
				dtype = x.DType
			case *structtensor.RaggedSpec:
				dtype = x.DType
			}
			lo.bool = dtype == structtensor.Bool
			name := dtype.String()
			if lo.bool {
				name = "uint8"
			}
			shape := structtensor.Shape{structtensor.Unknown}
			for range lo.splits {
				shape = append(shape, structtensor.Unknown)
			}
			shape = append(shape, full[1+kept:]...)
			leaves = append(leaves, Leaf{Path: strings.Join(p, "."), DType: name, RaggedRank: len(lo.splits), Shape: shape})
			outs = append(outs, lo)
		}
		return nil
	}
	if err := walk(spec, nil); err != nil {
		return nil, nil, err
	}
	order := make([]int, len(leaves))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return leaves[order[a]].Path < leaves[order[b]].Path })
	sl, so := make([]Leaf, len(leaves)), make([]leafOutput, len(leaves))
	for i, j := range order {
		sl[i], so[i] = leaves[j], outs[j]
	}
	return sl, so, nil
}

var leafDType = map[string]typespb.DataType{
	"bool": typespb.DataType_DT_BOOL, "uint8": typespb.DataType_DT_UINT8, "int32": typespb.DataType_DT_INT32,
	"int64": typespb.DataType_DT_INT64, "uint32": typespb.DataType_DT_UINT32, "uint64": typespb.DataType_DT_UINT64,
	"float32": typespb.DataType_DT_FLOAT, "float64": typespb.DataType_DT_DOUBLE, "string": typespb.DataType_DT_STRING,
}

// decodeFunDef returns the FunctionDef of decode_fun, a call of the
// components function whose outputs it rearranges leaf by leaf (values,
// then row splits outermost first: a RaggedTensor's flat components),
// casting bool values to uint8, and its output structure.
func decodeFunDef(components *fnpb.FunctionDef, leaves []Leaf, outs []leafOutput, position map[string]int) (*fnpb.FunctionDef, objectgraph.Dict, error) {
	call := &nodepb.NodeDef{Name: "components", Op: "PartitionedCall", Input: []string{InputRecords}, Attr: map[string]*attrpb.AttrValue{
		"f":    {Value: &attrpb.AttrValue_Func{Func: &attrpb.NameAttrList{Name: components.GetSignature().GetName()}}},
		"Tin":  typeListAttr([]typespb.DataType{typespb.DataType_DT_STRING}),
		"Tout": typeListAttr(argTypes(components.GetSignature().GetOutputArg())),
	}}
	fd := &fnpb.FunctionDef{
		Signature: &opdefpb.OpDef{Name: decodeFunFunction, InputArg: []*opdefpb.OpDef_ArgDef{{Name: InputRecords, Type: typespb.DataType_DT_STRING}}},
		NodeDef:   []*nodepb.NodeDef{call},
		Ret:       map[string]string{},
	}
	dict := objectgraph.Dict{}
	ret := func(src string, dt typespb.DataType) {
		name := fmt.Sprintf("output_%d", len(fd.Signature.OutputArg))
		fd.Signature.OutputArg = append(fd.Signature.OutputArg, &opdefpb.OpDef_ArgDef{Name: name, Type: dt})
		fd.Ret[name] = src
	}
	for i, l := range leaves {
		o := outs[i]
		dt := leafDType[l.DType]
		src := fmt.Sprintf("components:output:%d", position[o.values])
		if o.bool {
			cast := &nodepb.NodeDef{Name: fmt.Sprintf("cast_%d", i), Op: "Cast", Input: []string{src}, Attr: map[string]*attrpb.AttrValue{
				"SrcT": {Value: &attrpb.AttrValue_Type{Type: typespb.DataType_DT_BOOL}},
				"DstT": {Value: &attrpb.AttrValue_Type{Type: typespb.DataType_DT_UINT8}},
			}}
			fd.NodeDef = append(fd.NodeDef, cast)
			src = cast.Name + ":y:0"
		}
		if o.reshape != nil {
			dims := make([]int64, len(o.reshape))
			for j, d := range o.reshape {
				dims[j] = int64(d)
			}
			shape := &nodepb.NodeDef{Name: fmt.Sprintf("shape_%d", i), Op: "Const", Attr: map[string]*attrpb.AttrValue{
				"dtype": {Value: &attrpb.AttrValue_Type{Type: typespb.DataType_DT_INT64}},
				"value": {Value: &attrpb.AttrValue_Tensor{Tensor: &tensorpb.TensorProto{
					Dtype: typespb.DataType_DT_INT64, TensorShape: objectgraph.ShapeProto(structtensor.Shape{len(dims)}), Int64Val: dims,
				}}},
			}}
			reshape := &nodepb.NodeDef{Name: fmt.Sprintf("reshape_%d", i), Op: "Reshape", Input: []string{src, shape.Name + ":output:0"}, Attr: map[string]*attrpb.AttrValue{
				"T":      {Value: &attrpb.AttrValue_Type{Type: dt}},
				"Tshape": {Value: &attrpb.AttrValue_Type{Type: typespb.DataType_DT_INT64}},
			}}
			fd.NodeDef = append(fd.NodeDef, shape, reshape)
			src = reshape.Name + ":output:0"
		}
		ret(src, dt)
		for _, s := range o.splits {
			ret(fmt.Sprintf("components:output:%d", position[s]), typespb.DataType_DT_INT64)
		}
		if l.RaggedRank == 0 {
			dict[l.Path] = objectgraph.TensorSpec{Name: l.Path, Shape: l.Shape, DType: dt}
		} else {
			dict[l.Path] = objectgraph.RaggedTensorSpec{Shape: l.Shape, DType: dt, RaggedRank: l.RaggedRank, RowSplitsDType: typespb.DataType_DT_INT64}
		}
	}
	return fd, dict, nil
}

func argTypes(args []*opdefpb.OpDef_ArgDef) []typespb.DataType {
	out := make([]typespb.DataType, len(args))
	for i, a := range args {
		out[i] = a.GetType()
	}
	return out
}

func typeListAttr(t []typespb.DataType) *attrpb.AttrValue {
	return &attrpb.AttrValue{Value: &attrpb.AttrValue_List{List: &attrpb.AttrValue_ListValue{Type: t}}}
}
