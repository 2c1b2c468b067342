package tfbridge

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/structtensor/structtensor-go/structtensor"
)

// ComponentKind says what a component tensor of a StructTensor holds.
type ComponentKind int

const (
	// RowSplits components are int64 row_splits of one row partition.
	RowSplits ComponentKind = iota
	// Values components are the flat values of one leaf field.
	Values
)

// ComponentSpec describes one component tensor of a StructSpec, in the
// order documented in the package comment.
type ComponentSpec struct {
	// Path is the field path of the struct or leaf the component belongs
	// to, names joined by "."; empty for the root struct.
	Path string
	// Kind is RowSplits or Values.
	Kind ComponentKind
	// Partition is the index of a RowSplits component among its owner's
	// own partitions (0 = outermost); 0 for Values.
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
	if c.Kind == RowSplits {
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
		n.parts = append(n.parts, l.add(ComponentSpec{Path: path, Kind: RowSplits, Partition: j, DType: structtensor.Int64, Shape: structtensor.Shape{structtensor.Unknown}}))
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
			n.parts = append(n.parts, l.add(ComponentSpec{Path: path, Kind: RowSplits, Partition: j, DType: structtensor.Int64, Shape: structtensor.Shape{structtensor.Unknown}}))
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
	n.values = l.add(ComponentSpec{Path: path, Kind: Values, DType: n.dtype, Shape: vshape})
	return n, nil
}

// Components returns the component tensors of a StructTensor of spec s, in
// the order documented in the package comment: the order of the outputs a
// decode op must produce, and of the components NewSymbolicStruct takes.
func Components(s *structtensor.StructSpec) ([]ComponentSpec, error) {
	var l layout
	if _, err := l.structLayout(s, "", 0); err != nil {
		return nil, err
	}
	return l.comps, nil
}

// Symbolic is a graph-plane value: a *SymbolicStruct or a *SymbolicTensor.
type Symbolic interface {
	// Spec returns the full-shape spec of the value.
	Spec() structtensor.Spec
	// Components returns the graph outputs that hold the value, in
	// component order.
	Components() []Output
}

// SymbolicStruct is a StructTensor in a graph: the outputs holding its
// components plus its StructSpec. Running it in a Session
// (Session.RunStruct) returns the concrete StructTensor.
type SymbolicStruct struct {
	outs      []Output // every component of the root, by index
	specs     []ComponentSpec
	outer     []int // partitions the struct inherits from its ancestors
	outerDims []int
	node      *structNode
}

// SymbolicTensor is a Tensor or Ragged field of a SymbolicStruct, in full
// shape (its ancestors' partitions included).
type SymbolicTensor struct {
	outs     []Output
	specs    []ComponentSpec
	parts    []int
	partDims []int
	values   int
	leaf     *leafNode
}

// NewSymbolicStruct wraps components (for instance a decode op's outputs)
// as a StructTensor of spec s. components must follow the order of
// Components(s): it checks their number, dtypes and, where the graph knows
// them, their ranks.
func NewSymbolicStruct(s *structtensor.StructSpec, components []Output) (*SymbolicStruct, error) {
	var l layout
	node, err := l.structLayout(s, "", 0)
	if err != nil {
		return nil, err
	}
	if len(components) != len(l.comps) {
		return nil, fmt.Errorf("%w: spec %v has %d components, got %d outputs", ErrShape, s, len(l.comps), len(components))
	}
	var g *Graph
	for i, o := range components {
		c := l.comps[i]
		if o.Op == nil {
			return nil, fmt.Errorf("%w: component %d (%s) has no operation", ErrGraph, i, c.Name())
		}
		if g == nil {
			g = o.Op.g
		} else if o.Op.g != g {
			return nil, fmt.Errorf("%w: component %d (%s) is in another graph", ErrGraph, i, c.Name())
		}
		want, _ := DTypeOf(c.DType)
		if got := o.DType(); got != want {
			return nil, fmt.Errorf("%w: component %d (%s) is %s %v, want %v", ErrDType, i, c.Name(), o.Name(), got, want)
		}
		shape, known, err := o.Shape()
		if err != nil {
			return nil, err
		}
		if known && (len(shape) != len(c.Shape) || !shape.IsCompatibleWith(c.Shape)) {
			return nil, fmt.Errorf("%w: component %d (%s) is %s of shape %v, want %v", ErrShape, i, c.Name(), o.Name(), shape, c.Shape)
		}
	}
	return &SymbolicStruct{outs: append([]Output(nil), components...), specs: l.comps, node: node}, nil
}

// PlaceholdersFromSpec adds one Placeholder per component of spec s to g,
// named name + "/" + ComponentSpec.Name(), and returns them as a
// SymbolicStruct; FeedStruct turns a concrete StructTensor into the feeds
// for them.
func PlaceholdersFromSpec(g *Graph, s *structtensor.StructSpec, name string) (*SymbolicStruct, error) {
	comps, err := Components(s)
	if err != nil {
		return nil, err
	}
	outs := make([]Output, len(comps))
	for i, c := range comps {
		dt, err := DTypeOf(c.DType)
		if err != nil {
			return nil, err
		}
		op, err := g.AddOperation(OpSpec{Type: "Placeholder", Name: name + "/" + c.Name(), Attrs: map[string]any{"dtype": dt, "shape": c.Shape}})
		if err != nil {
			return nil, err
		}
		outs[i] = op.Output(0)
	}
	return NewSymbolicStruct(s, outs)
}

// Spec returns the StructSpec as a structtensor.Spec. It is the struct's
// own and must not be modified.
func (s *SymbolicStruct) Spec() structtensor.Spec { return s.node.spec }

// StructSpec returns the StructSpec: the struct's own, which must not be
// modified (its fields describe the components the graph computes).
func (s *SymbolicStruct) StructSpec() *structtensor.StructSpec { return s.node.spec }

// Components returns the outputs holding the struct: inherited partitions
// first, then its own components in component order.
func (s *SymbolicStruct) Components() []Output {
	return pick(s.outs, append(append([]int(nil), s.outer...), s.node.indices(nil)...))
}

// ComponentSpecs describes Components() one for one.
func (s *SymbolicStruct) ComponentSpecs() []ComponentSpec {
	idx := append(append([]int(nil), s.outer...), s.node.indices(nil)...)
	out := make([]ComponentSpec, len(idx))
	for i, j := range idx {
		out[i] = s.specs[j]
	}
	return out
}

func pick(outs []Output, idx []int) []Output {
	r := make([]Output, len(idx))
	for i, j := range idx {
		r[i] = outs[j]
	}
	return r
}

func (n *structNode) indices(dst []int) []int {
	dst = append(dst, n.parts...)
	for _, f := range n.fields {
		if f.st != nil {
			dst = f.st.indices(dst)
		} else {
			dst = append(append(dst, f.leaf.parts...), f.leaf.values)
		}
	}
	return dst
}

// Field selects the field at path (names of nested struct fields, then the
// field). The result is in full shape: it carries the partitions of every
// struct above it, as structtensor's FieldValue does.
func (s *SymbolicStruct) Field(path ...string) (Symbolic, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: empty field path", structtensor.ErrNoField)
	}
	cur := s
	for i, name := range path {
		var f *fieldNode
		for k := range cur.node.fields {
			if cur.node.fields[k].name == name {
				f = &cur.node.fields[k]
				break
			}
		}
		if f == nil {
			names := make([]string, len(cur.node.fields))
			for k, fn := range cur.node.fields {
				names[k] = fn.name
			}
			return nil, fmt.Errorf("%w: %q (fields: %s)", structtensor.ErrNoField, strings.Join(path[:i+1], "."), strings.Join(names, ", "))
		}
		outer := append(append([]int(nil), cur.outer...), cur.node.parts...)
		outerDims := append(append([]int(nil), cur.outerDims...), cur.node.partDims...)
		if f.leaf != nil {
			if i != len(path)-1 {
				return nil, fmt.Errorf("%w: %q is not a struct", structtensor.ErrNoField, strings.Join(path[:i+1], "."))
			}
			return &SymbolicTensor{
				outs: s.outs, specs: s.specs, leaf: f.leaf, values: f.leaf.values,
				parts:    append(outer, f.leaf.parts...),
				partDims: append(outerDims, f.leaf.partDims...),
			}, nil
		}
		cur = &SymbolicStruct{outs: s.outs, specs: s.specs, outer: outer, outerDims: outerDims, node: f.st}
	}
	return cur, nil
}

// MarkBinary marks the string leaves at paths (field names joined by
// ".") as binary: TensorFlow strings carry no UTF-8 mark, so a fetched
// string tensor is marked text when it is valid UTF-8, except at a binary
// leaf (a protobuf bytes field, say), which stays binary as the Go
// decoder marks it. It changes s and every value sharing its leaves.
func (s *SymbolicStruct) MarkBinary(paths ...string) error {
	for _, p := range paths {
		f, err := s.Field(strings.Split(p, ".")...)
		if err != nil {
			return err
		}
		leaf, ok := f.(*SymbolicTensor)
		if !ok || leaf.leaf.dtype != structtensor.String {
			return fmt.Errorf("%w: %q is not a string field", ErrDType, p)
		}
		leaf.leaf.binary = true
	}
	return nil
}

// Spec returns the field's full-shape spec.
func (t *SymbolicTensor) Spec() structtensor.Spec { return t.leaf.spec }

// Components returns the row splits of every partition, outermost first,
// then the flat values.
func (t *SymbolicTensor) Components() []Output {
	return pick(t.outs, append(append([]int(nil), t.parts...), t.values))
}

// Values returns the output holding the flat values.
func (t *SymbolicTensor) Values() Output { return t.outs[t.values] }

// RowSplits returns the outputs holding the row splits, outermost first.
func (t *SymbolicTensor) RowSplits() []Output { return pick(t.outs, t.parts) }

// RunStruct runs the session, fetching every component of s, and rebuilds
// the concrete StructTensor from them.
func (sess *Session) RunStruct(feeds map[Output]*Tensor, s *SymbolicStruct) (*structtensor.StructTensor, error) {
	return sess.RunStructContext(context.Background(), feeds, s)
}

// RunStructContext is RunStruct with a context, acting as in RunContext.
func (sess *Session) RunStructContext(ctx context.Context, feeds map[Output]*Tensor, s *SymbolicStruct) (*structtensor.StructTensor, error) {
	v, err := sess.RunSymbolicContext(ctx, feeds, s)
	if err != nil {
		return nil, err
	}
	return v.(*structtensor.StructTensor), nil
}

// RunSymbolic runs the session, fetching the components of v, and returns
// the concrete value: a *StructTensor for a *SymbolicStruct, a *Tensor or
// *Ragged for a *SymbolicTensor.
func (sess *Session) RunSymbolic(feeds map[Output]*Tensor, v Symbolic) (structtensor.Value, error) {
	return sess.RunSymbolicContext(context.Background(), feeds, v)
}

// RunSymbolicContext is RunSymbolic with a context, acting as in
// RunContext.
func (sess *Session) RunSymbolicContext(ctx context.Context, feeds map[Output]*Tensor, v Symbolic) (structtensor.Value, error) {
	idx, outs, err := componentIndices(v)
	if err != nil {
		return nil, err
	}
	fetched, err := sess.RunContext(ctx, feeds, pick(outs, idx), nil)
	if err != nil {
		return nil, err
	}
	// Each fetched tensor is released as soon as it is copied, so the
	// TensorFlow and Go copies of the whole output never coexist.
	return concreteValue(v, idx, outs, fetched, true)
}

// Value rebuilds the concrete StructTensor from tensors fetched for
// s.Components(), in that order (Session.Run(feeds, s.Components(), nil)
// returns them so): what a caller that also hands the tensors on to
// TensorFlow, or fetches them with other outputs, would otherwise fetch
// twice. It copies what it keeps; the tensors remain the caller's.
func (s *SymbolicStruct) Value(fetched []*Tensor) (*structtensor.StructTensor, error) {
	idx, outs, err := componentIndices(s)
	if err != nil {
		return nil, err
	}
	v, err := concreteValue(s, idx, outs, fetched, false)
	if err != nil {
		return nil, err
	}
	return v.(*structtensor.StructTensor), nil
}

// componentIndices returns the component indices that hold v, in the
// order of v.Components(), and the outputs they index.
func componentIndices(v Symbolic) ([]int, []Output, error) {
	switch x := v.(type) {
	case *SymbolicStruct:
		return append(append([]int(nil), x.outer...), x.node.indices(nil)...), x.outs, nil
	case *SymbolicTensor:
		return append(append([]int(nil), x.parts...), x.values), x.outs, nil
	}
	return nil, nil, fmt.Errorf("%w: symbolic value %T", ErrGraph, v)
}

// concreteValue rebuilds v from fetched[i], the value of component idx[i];
// with release it closes each tensor once copied (and all on error).
func concreteValue(v Symbolic, idx []int, outs []Output, fetched []*Tensor, release bool) (structtensor.Value, error) {
	if len(fetched) != len(idx) {
		return nil, fmt.Errorf("%w: %d tensors for %d components", ErrShape, len(fetched), len(idx))
	}
	vals := make(map[int]*structtensor.Tensor, len(idx))
	var convErr error
	for i, t := range fetched {
		if convErr == nil {
			vals[idx[i]], convErr = t.Value()
			if convErr != nil {
				convErr = fmt.Errorf("fetching %s: %w", outs[idx[i]].Name(), convErr)
			}
		}
		if release {
			t.Close()
		}
	}
	if convErr != nil {
		return nil, convErr
	}
	switch x := v.(type) {
	case *SymbolicStruct:
		b := builder{vals: vals, specs: x.specs}
		outer, err := b.partitions(x.outer, x.outerDims)
		if err != nil {
			return nil, err
		}
		return b.structValue(x.node, outer, -1)
	case *SymbolicTensor:
		b := builder{vals: vals, specs: x.specs}
		parts, err := b.partitions(x.parts, x.partDims)
		if err != nil {
			return nil, err
		}
		values, err := b.values(x.leaf)
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			return values, nil
		}
		r, err := structtensor.JoinOuterDims(parts, values)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", x.leaf.path, err)
		}
		return r, nil
	}
	panic("unreachable")
}

// builder rebuilds concrete values from fetched components.
type builder struct {
	vals  map[int]*structtensor.Tensor
	specs []ComponentSpec
}

// partitions turns row-splits components into partitions; a dimension the
// spec knows becomes a uniform partition, as it was in the value fed or
// decoded.
func (b *builder) partitions(idx, dims []int) ([]*structtensor.RowPartition, error) {
	parts := make([]*structtensor.RowPartition, len(idx))
	for i, j := range idx {
		t := b.vals[j]
		name := b.specs[j].Name()
		if t.DType() != structtensor.Int64 || t.Rank() != 1 {
			return nil, fmt.Errorf("%w: component %s is %v of shape %v, want int64 [N]", ErrShape, name, t.DType(), t.Shape())
		}
		p, err := structtensor.NewRowSplits(t.Int64s())
		if err != nil {
			return nil, fmt.Errorf("component %s: %w", name, err)
		}
		if k := dims[i]; k >= 0 {
			for r := 0; r < p.NumRows(); r++ {
				if p.RowLength(r) != k {
					return nil, fmt.Errorf("%w: component %s: row %d has %d values, the spec's dimension is %d", ErrShape, name, r, p.RowLength(r), k)
				}
			}
			if p, err = structtensor.NewUniformPartition(p.NumRows(), k); err != nil {
				return nil, fmt.Errorf("component %s: %w", name, err)
			}
		}
		parts[i] = p
	}
	return parts, nil
}

func (b *builder) values(l *leafNode) (*structtensor.Tensor, error) {
	t := b.vals[l.values]
	c := b.specs[l.values]
	if t.DType() != l.dtype {
		return nil, fmt.Errorf("%w: component %s is %v, want %v", ErrDType, c.Name(), t.DType(), l.dtype)
	}
	if t.Rank() != len(c.Shape) || !t.Shape().IsCompatibleWith(c.Shape) {
		return nil, fmt.Errorf("%w: component %s has shape %v, want %v", ErrShape, c.Name(), t.Shape(), c.Shape)
	}
	if l.binary && t.UTF8() {
		t = t.WithUTF8(false)
	}
	return t, nil
}

// structValue rebuilds struct node n under the partitions outer it
// inherits; rows is the number of rows its parent expects (-1: unknown).
func (b *builder) structValue(n *structNode, outer []*structtensor.RowPartition, rows int) (*structtensor.StructTensor, error) {
	own, err := b.partitions(n.parts, n.partDims)
	if err != nil {
		return nil, err
	}
	all := append(append([]*structtensor.RowPartition(nil), outer...), own...)
	scalar := len(n.spec.Shape) == 0
	nrows, flatRows := rows, rows
	if len(all) > 0 {
		nrows, flatRows = all[0].NumRows(), all[len(all)-1].NumValues()
	}
	if scalar {
		flatRows = -1
	}
	fields := make([]structtensor.Field, len(n.fields))
	for i, f := range n.fields {
		var v structtensor.Value
		if f.st != nil {
			v, err = b.structValue(f.st, nil, flatRows)
		} else {
			v, err = b.leafValue(f.leaf)
		}
		if err != nil {
			return nil, err
		}
		if !scalar && flatRows < 0 {
			flatRows, nrows = v.NumRows(), v.NumRows()
		}
		fields[i] = structtensor.Field{Name: f.name, Value: v}
	}
	var st *structtensor.StructTensor
	switch {
	case scalar:
		st, err = structtensor.NewScalarStruct(fields...)
	case nrows < 0:
		return nil, fmt.Errorf("%w: struct %s has no fields and no partitions, so its number of rows is unknown", ErrShape, pathOrRoot(n.path))
	default:
		st, err = structtensor.NewPartitionedStruct(nrows, all, fields...)
	}
	if err != nil {
		return nil, fmt.Errorf("struct %s: %w", pathOrRoot(n.path), err)
	}
	return st, nil
}

func (b *builder) leafValue(l *leafNode) (structtensor.Value, error) {
	parts, err := b.partitions(l.parts, l.partDims)
	if err != nil {
		return nil, err
	}
	values, err := b.values(l)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return values, nil
	}
	r, err := structtensor.NewRagged(values, parts...)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", l.path, err)
	}
	return r, nil
}

// FeedStruct returns the feeds that give the placeholders ph (from
// PlaceholdersFromSpec) the value st, whose spec must be compatible with
// theirs. The caller owns the tensors (Close them after Run, or leave them
// to the garbage collector).
func FeedStruct(ph *SymbolicStruct, st *structtensor.StructTensor) (map[Output]*Tensor, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: nil StructTensor", structtensor.ErrSpec)
	}
	if !st.Spec().IsCompatibleWith(ph.Spec()) {
		return nil, fmt.Errorf("%w: value %v does not fit placeholders %v", structtensor.ErrSpec, st.Spec(), ph.Spec())
	}
	feeds := map[Output]*Tensor{}
	f := feeder{outs: ph.outs, specs: ph.specs, feeds: feeds}
	parts := append(append([]int(nil), ph.outer...), ph.node.parts...)
	err := f.partitions(parts, st.Partitions())
	if err == nil {
		err = f.fields(ph.node, st)
	}
	if err != nil {
		for _, t := range feeds {
			t.Close()
		}
		return nil, err
	}
	return feeds, nil
}

type feeder struct {
	outs  []Output
	specs []ComponentSpec
	feeds map[Output]*Tensor
}

func (f *feeder) put(i int, v *structtensor.Tensor) error {
	t, err := NewTensor(v)
	if err != nil {
		return fmt.Errorf("component %s: %w", f.specs[i].Name(), err)
	}
	f.feeds[f.outs[i]] = t
	return nil
}

func (f *feeder) partitions(idx []int, parts []*structtensor.RowPartition) error {
	if len(idx) != len(parts) {
		return fmt.Errorf("%w: %d partitions for %d placeholders", structtensor.ErrSpec, len(parts), len(idx))
	}
	for k, i := range idx {
		splits := parts[k].RowSplits()
		v, err := structtensor.NewTensor(structtensor.Shape{len(splits)}, splits)
		if err != nil {
			return err
		}
		if err := f.put(i, v); err != nil {
			return err
		}
	}
	return nil
}

func (f *feeder) fields(n *structNode, st *structtensor.StructTensor) error {
	stored := st.Fields()
	for k, fn := range n.fields {
		v := stored[k].Value
		if fn.st != nil {
			sub, ok := v.(*structtensor.StructTensor)
			if !ok {
				return fmt.Errorf("%w: field %s is %T, want a struct", structtensor.ErrSpec, fn.st.path, v)
			}
			if err := f.partitions(fn.st.parts, sub.Partitions()); err != nil {
				return fmt.Errorf("field %s: %w", fn.st.path, err)
			}
			if err := f.fields(fn.st, sub); err != nil {
				return err
			}
			continue
		}
		var values *structtensor.Tensor
		var parts []*structtensor.RowPartition
		switch x := v.(type) {
		case *structtensor.Tensor:
			values = x
		case *structtensor.Ragged:
			values, parts = x.Values(), x.Partitions()
		default:
			return fmt.Errorf("%w: field %s is %T, want a tensor", structtensor.ErrSpec, fn.leaf.path, v)
		}
		if err := f.partitions(fn.leaf.parts, parts); err != nil {
			return fmt.Errorf("field %s: %w", fn.leaf.path, err)
		}
		if err := f.put(fn.leaf.values, values); err != nil {
			return err
		}
	}
	return nil
}
