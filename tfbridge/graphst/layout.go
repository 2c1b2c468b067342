package graphst

import (
	"fmt"
	"strconv"

	"github.com/structtensor/structtensor-go/structtensor"
)

// ComponentKind says what a component tensor of a StructTensor holds.
type ComponentKind int

const (
	// RowSplitsComponent is the int64 row_splits of one row partition.
	RowSplitsComponent ComponentKind = iota
	// ValuesComponent is the flat values of one leaf field.
	ValuesComponent
)

// ComponentSpec describes one component tensor of a StructSpec, in the
// order documented in the package comment.
type ComponentSpec struct {
	// Path is the field path of the struct or leaf the component belongs
	// to, names joined by "."; empty for the root struct.
	Path string
	// Kind is RowSplitsComponent or ValuesComponent.
	Kind ComponentKind
	// Partition is the index of a row-splits component among its owner's
	// own partitions (0 = outermost); 0 for values.
	Partition int
	// DType is Int64 for row splits, the leaf's dtype for values.
	DType structtensor.DType
	// Shape is the component's shape: [Unknown] for row splits; for values
	// [Unknown or a known row count, inner dims...] (the full shape of a
	// leaf of a scalar struct).
	Shape structtensor.Shape
}

// Name returns a stable name for the component: "<path>/row_splits_<i>" or
// "<path>/values", without "<path>/" for the root. Names are valid
// TensorFlow operation names.
func (c ComponentSpec) Name() string {
	var s string
	if c.Kind == RowSplitsComponent {
		s = "row_splits_" + strconv.Itoa(c.Partition)
	} else {
		s = "values"
	}
	if c.Path == "" {
		return s
	}
	return c.Path + "/" + s
}

// structNode is one struct level in stored form: its own partitions (the
// ones its parent does not already have) and its fields, each stored with
// one row per structure of this level's innermost dimension.
type structNode struct {
	spec     *structtensor.StructSpec // full-shape spec
	path     string
	parts    []int // component indices of the own partitions' row splits
	partDims []int // the spec's size for each own partition's dimension
	fields   []fieldNode
}

type fieldNode struct {
	name string
	st   *structNode
	leaf *leafNode
}

// leafNode is a Tensor or Ragged field in stored form.
type leafNode struct {
	spec     structtensor.Spec // full-shape spec
	path     string
	dtype    structtensor.DType
	parts    []int
	partDims []int
	values   int
	// binary marks a string leaf whose values are bytes whatever their
	// content (MarkBinary); others are marked text when valid UTF-8.
	binary bool
}

// layout walks a spec in component order, assigning component indices.
type layout struct{ comps []ComponentSpec }

func (l *layout) add(c ComponentSpec) int {
	l.comps = append(l.comps, c)
	return len(l.comps) - 1
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func pathOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// partitionsOf is the number of partitions of a rank-r struct's shape.
func partitionsOf(rank int) int { return max(rank-1, 0) }

// structLayout lays out a struct of full spec s whose parent has
// parentParts partitions (0 at the root).
func (l *layout) structLayout(s *structtensor.StructSpec, path string, parentParts int) (*structNode, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: %s: nil StructSpec", structtensor.ErrSpec, pathOrRoot(path))
	}
	rank := len(s.Shape)
	own := partitionsOf(rank) - parentParts
	if own < 0 || (parentParts > 0 && rank <= parentParts) {
		return nil, fmt.Errorf("%w: %s: a rank-%d struct inside a struct with %d partitions", structtensor.ErrSpec, pathOrRoot(path), rank, parentParts)
	}
	n := &structNode{spec: s, path: path}
	for j := 0; j < own; j++ {
		n.parts = append(n.parts, l.add(ComponentSpec{Path: path, Kind: RowSplitsComponent, Partition: j, DType: structtensor.Int64, Shape: structtensor.Shape{structtensor.Unknown}}))
		n.partDims = append(n.partDims, s.Shape[parentParts+1+j])
	}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		fp := joinPath(path, f.Name)
		if !structtensor.ValidFieldName(f.Name) || seen[f.Name] {
			return nil, fmt.Errorf("%w: %s: bad or repeated field name %q", structtensor.ErrSpec, pathOrRoot(path), f.Name)
		}
		seen[f.Name] = true
		fn := fieldNode{name: f.Name}
		var err error
		switch fs := f.Spec.(type) {
		case *structtensor.StructSpec:
			fn.st, err = l.structLayout(fs, fp, partitionsOf(rank))
		case *structtensor.TensorSpec, *structtensor.RaggedSpec:
			fn.leaf, err = l.leafLayout(fs, fp, rank)
		default:
			err = fmt.Errorf("%w: %s: unsupported spec %T", structtensor.ErrSpec, fp, f.Spec)
		}
		if err != nil {
			return nil, err
		}
		n.fields = append(n.fields, fn)
	}
	return n, nil
}

// leafLayout lays out a Tensor or Ragged field of a rank-structRank struct.
func (l *layout) leafLayout(s structtensor.Spec, path string, structRank int) (*leafNode, error) {
	p := partitionsOf(structRank)
	shape := s.ValueShape()
	if len(shape) < structRank {
		return nil, fmt.Errorf("%w: %s: rank-%d field of a rank-%d struct", structtensor.ErrSpec, path, len(shape), structRank)
	}
	n := &leafNode{spec: s, path: path}
	var inner structtensor.Shape // the values' dims after the first
	switch x := s.(type) {
	case *structtensor.TensorSpec:
		n.dtype = x.DType
		if structRank == 0 {
			n.values = -1 // set below with the full shape
			break
		}
		inner = shape[structRank:]
	case *structtensor.RaggedSpec:
		n.dtype = x.DType
		own := x.RaggedRank - p
		if own < 0 || x.RaggedRank >= len(shape) {
			return nil, fmt.Errorf("%w: %s: ragged_rank %d of shape %v in a struct with %d partitions", structtensor.ErrSpec, path, x.RaggedRank, shape, p)
		}
		for j := 0; j < own; j++ {
			n.parts = append(n.parts, l.add(ComponentSpec{Path: path, Kind: RowSplitsComponent, Partition: j, DType: structtensor.Int64, Shape: structtensor.Shape{structtensor.Unknown}}))
			n.partDims = append(n.partDims, shape[p+1+j])
		}
		inner = shape[x.RaggedRank+1:]
	}
	if !n.dtype.Valid() {
		return nil, fmt.Errorf("%w: %s: invalid dtype %v", structtensor.ErrSpec, path, n.dtype)
	}
	var vshape structtensor.Shape
	if _, dense := s.(*structtensor.TensorSpec); dense && structRank == 0 {
		vshape = append(structtensor.Shape{}, shape...)
	} else {
		rows := structtensor.Unknown
		if len(n.parts) == 0 {
			// Without own partitions the values have one row per
			// structure; known when the struct's dims all are.
			rows = structtensor.Shape(shape[:max(structRank, 1)]).NumElements()
		}
		vshape = append(structtensor.Shape{rows}, inner...)
	}
	n.values = l.add(ComponentSpec{Path: path, Kind: ValuesComponent, DType: n.dtype, Shape: vshape})
	return n, nil
}

// Components returns the component tensors of a StructTensor of spec s, in
// the order documented in the package comment: the order of the outputs a
// decode op must produce, and of the components NewStruct takes.
func Components(s *structtensor.StructSpec) ([]ComponentSpec, error) {
	var l layout
	if _, err := l.structLayout(s, "", 0); err != nil {
		return nil, err
	}
	return l.comps, nil
}
