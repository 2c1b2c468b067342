package savedmodel

import (
	"fmt"
	"sort"

	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	typespb "github.com/wamuir/graft/tensorflow/core/framework/types_go_proto"
	pb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
)

// A StructTensor crosses a signature as Python's
// tf.experimental.StructuredTensor: an extension type whose spec,
// StructuredTensor.Spec, holds its fields' specs and a DynamicRaggedShape
// spec (row partitions and inner shape). TensorFlow flattens it to its
// fields in sorted name order, each in full shape (a RaggedTensor
// carries every partition from the root down), then its shape's row
// splits, outermost first, then its inner shape (an int64 vector of one
// element: the number of rows of a rank-1 struct, else the number of
// values of its innermost partition). So the flat list repeats
// partitions, which our layout (graphst.Components) stores once, and
// adds inner shapes, which it does not store.

// Where a TensorFlow flat component of a StructuredTensor comes from:
// one of our components, or an inner shape.
type flatComp struct {
	comp  int // index in graphst.Components(spec); -1 for an inner shape
	inner int // for an inner shape: the component whose last value it is (-1: the root's row count)
	spec  objectgraph.TensorSpec
}

// structLayout maps a StructSpec to StructuredTensor form.
type structLayout struct {
	comps  []graphst.ComponentSpec
	own    map[string][]int // path -> own row partitions, outermost first
	values map[string]int   // leaf path -> values component
	flat   []flatComp
}

// structuredSpec returns the StructuredTensor.Spec of s and, for each of
// its flat components, where it comes from.
func structuredSpec(s *structtensor.StructSpec) (objectgraph.Value, []flatComp, error) {
	if len(s.Shape) < 1 {
		return nil, nil, fmt.Errorf("a StructTensor of rank 0 (a signature takes or returns a batch, rank >= 1)")
	}
	comps, err := graphst.Components(s)
	if err != nil {
		return nil, nil, err
	}
	l := &structLayout{comps: comps, own: map[string][]int{}, values: map[string]int{}}
	for i, c := range comps {
		if c.Kind == graphst.RowSplitsComponent {
			l.own[c.Path] = append(l.own[c.Path], i)
		} else {
			l.values[c.Path] = i
		}
	}
	for _, p := range l.own {
		sort.Slice(p, func(a, b int) bool { return comps[p[a]].Partition < comps[p[b]].Partition })
	}
	v, err := l.structSpec(s, "", nil)
	if err != nil {
		return nil, nil, err
	}
	return v, l.flat, nil
}

var splitsSpec = objectgraph.TensorSpec{Shape: structtensor.Shape{structtensor.Unknown}, DType: typespb.DataType_DT_INT64}

func (l *structLayout) structSpec(s *structtensor.StructSpec, path string, inherited []int) (objectgraph.Value, error) {
	parts := append(append([]int(nil), inherited...), l.own[path]...)
	if len(parts) != len(s.Shape)-1 {
		return nil, fmt.Errorf("struct %s: %d partitions for rank %d", pathOrRoot(path), len(parts), len(s.Shape))
	}
	start := len(l.flat)
	fields := objectgraph.Dict{}
	names := make([]string, len(s.Fields))
	byName := map[string]structtensor.Spec{}
	for i, f := range s.Fields {
		names[i] = f.Name
		byName[f.Name] = f.Spec
	}
	sort.Strings(names)
	for _, name := range names {
		fp := name
		if path != "" {
			fp = path + "." + name
		}
		switch fs := byName[name].(type) {
		case *structtensor.StructSpec:
			v, err := l.structSpec(fs, fp, parts)
			if err != nil {
				return nil, err
			}
			fields[name] = v
		default:
			leafParts := append(append([]int(nil), parts...), l.own[fp]...)
			vi, ok := l.values[fp]
			if !ok {
				return nil, fmt.Errorf("leaf %s has no values component", fp)
			}
			dt, err := tfbridge.DTypeOf(l.comps[vi].DType)
			if err != nil {
				return nil, err
			}
			full := append(structtensor.Shape(nil), fs.ValueShape()...)
			vals := objectgraph.TensorSpec{Shape: l.comps[vi].Shape, DType: typespb.DataType(dt)}
			if len(leafParts) == 0 {
				fields[name] = objectgraph.TensorSpec{Shape: full, DType: typespb.DataType(dt)}
				l.flat = append(l.flat, flatComp{comp: vi, spec: vals})
				continue
			}
			for i := 1; i <= len(leafParts) && i < len(full); i++ {
				full[i] = structtensor.Unknown
			}
			vals.Shape = append(structtensor.Shape{structtensor.Unknown}, full[len(leafParts)+1:]...)
			fields[name] = objectgraph.RaggedTensorSpec{Shape: full, DType: typespb.DataType(dt), RaggedRank: len(leafParts), RowSplitsDType: typespb.DataType_DT_INT64}
			l.flat = append(l.flat, flatComp{comp: vi, spec: vals})
			for _, p := range leafParts {
				l.flat = append(l.flat, flatComp{comp: p, spec: splitsSpec})
			}
		}
	}
	// The DynamicRaggedShape: one RowPartitionSpec per partition
	// (nrows, nvals, uniform_row_length, dtype: all unknown but the
	// dtype), then the inner shape.
	var rps objectgraph.Tuple
	unknown := objectgraph.Shape(structtensor.Shape{structtensor.Unknown})
	for _, p := range parts {
		l.flat = append(l.flat, flatComp{comp: p, spec: splitsSpec})
		rps = append(rps, objectgraph.TypeSpec{
			Class: pb.TypeSpecProto_ROW_PARTITION_SPEC, ClassName: "RowPartitionSpec",
			State:      objectgraph.Tuple{unknown, unknown, unknown, objectgraph.DType(typespb.DataType_DT_INT64)},
			Components: []objectgraph.TensorSpec{splitsSpec},
		})
	}
	if rps == nil {
		rps = objectgraph.Tuple{}
	}
	inner := flatComp{comp: -1, inner: -1, spec: objectgraph.TensorSpec{Shape: structtensor.Shape{1}, DType: typespb.DataType_DT_INT64}}
	staticInner := structtensor.Shape{s.Shape[0]}
	if len(parts) > 0 {
		inner.inner = parts[len(parts)-1]
		staticInner = structtensor.Shape{structtensor.Unknown}
	}
	l.flat = append(l.flat, inner)
	var shapeComps []objectgraph.TensorSpec
	for range parts {
		shapeComps = append(shapeComps, splitsSpec)
	}
	shapeComps = append(shapeComps, inner.spec)
	ragged := objectgraph.TypeSpec{
		Class: pb.TypeSpecProto_EXTENSION_TYPE_SPEC, ClassName: "tf.DynamicRaggedShape.Spec",
		State: objectgraph.Tuple{
			objectgraph.Tuple{objectgraph.String("_row_partitions"), rps},
			objectgraph.Tuple{objectgraph.String("_inner_shape"), inner.spec},
			objectgraph.Tuple{objectgraph.String("_static_inner_shape"), objectgraph.Shape(staticInner)},
		},
		Components: shapeComps,
	}
	var mine []objectgraph.TensorSpec
	for _, f := range l.flat[start:] {
		mine = append(mine, f.spec)
	}
	return objectgraph.TypeSpec{
		Class: pb.TypeSpecProto_EXTENSION_TYPE_SPEC, ClassName: "tf.StructuredTensor.Spec",
		State: objectgraph.Tuple{
			objectgraph.Tuple{objectgraph.String("_fields"), fields},
			objectgraph.Tuple{objectgraph.String("_ragged_shape"), ragged},
		},
		Components: mine,
	}, nil
}

func pathOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}
