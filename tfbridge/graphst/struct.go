package graphst

import (
	"fmt"
	"strings"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// Value is a StructTensor value in a graph: a *Struct or a Ragged (a leaf).
// Run fetches one and returns the concrete structtensor.Value.
type Value interface {
	// Spec returns the full-shape spec of the value.
	Spec() structtensor.Spec
	// Components returns the graph outputs that hold the value, in
	// component order.
	Components() []tfbridge.Output
	// rebuild makes the concrete value from tensors fetched for
	// Components(); with release it closes each once copied.
	rebuild(fetched []*tfbridge.Tensor, release bool) (structtensor.Value, error)
}

// Struct is a StructTensor in a graph: the outputs holding its components
// plus its StructSpec. Run returns the concrete *structtensor.StructTensor.
type Struct struct {
	outs      []tfbridge.Output // every component of the root, by index
	specs     []ComponentSpec
	outer     []int // partitions the struct inherits from its ancestors
	outerDims []int
	node      *structNode
}

// NewStruct wraps components (for instance a decode op's outputs) as a
// StructTensor of spec s. components must follow the order of
// Components(s): it checks their number, dtypes and, where the graph knows
// them, their ranks.
func NewStruct(s *structtensor.StructSpec, components []tfbridge.Output) (*Struct, error) {
	var l layout
	node, err := l.structLayout(s, "", 0)
	if err != nil {
		return nil, err
	}
	if len(components) != len(l.comps) {
		return nil, fmt.Errorf("%w: spec %v has %d components, got %d outputs", tfbridge.ErrShape, s, len(l.comps), len(components))
	}
	var g *tfbridge.Graph
	for i, o := range components {
		c := l.comps[i]
		if o.Op == nil {
			return nil, fmt.Errorf("%w: component %d (%s) has no operation", tfbridge.ErrGraph, i, c.Name())
		}
		if g == nil {
			g = o.Op.Graph()
		} else if o.Op.Graph() != g {
			return nil, fmt.Errorf("%w: component %d (%s) is in another graph", tfbridge.ErrGraph, i, c.Name())
		}
		want, _ := tfbridge.DTypeOf(c.DType)
		if got := o.DType(); got != want {
			return nil, fmt.Errorf("%w: component %d (%s) is %s %v, want %v", tfbridge.ErrDType, i, c.Name(), o.Name(), got, want)
		}
		shape, known, err := o.Shape()
		if err != nil {
			return nil, err
		}
		if known && (len(shape) != len(c.Shape) || !shape.IsCompatibleWith(c.Shape)) {
			return nil, fmt.Errorf("%w: component %d (%s) is %s of shape %v, want %v", tfbridge.ErrShape, i, c.Name(), o.Name(), shape, c.Shape)
		}
	}
	return &Struct{outs: append([]tfbridge.Output(nil), components...), specs: l.comps, node: node}, nil
}

// Placeholders adds one Placeholder per component of spec s to g, named
// name + "/" + ComponentSpec.Name(), and returns them as a Struct; Feed
// turns a concrete StructTensor into the feeds for them.
func Placeholders(g *tfbridge.Graph, s *structtensor.StructSpec, name string) (*Struct, error) {
	comps, err := Components(s)
	if err != nil {
		return nil, err
	}
	outs := make([]tfbridge.Output, len(comps))
	for i, c := range comps {
		dt, err := tfbridge.DTypeOf(c.DType)
		if err != nil {
			return nil, err
		}
		op, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: name + "/" + c.Name(), Attrs: map[string]any{"dtype": dt, "shape": c.Shape}})
		if err != nil {
			return nil, err
		}
		outs[i] = op.Output(0)
	}
	return NewStruct(s, outs)
}

// Spec returns the StructSpec as a structtensor.Spec. It is the struct's
// own and must not be modified.
func (s *Struct) Spec() structtensor.Spec { return s.node.spec }

// StructSpec returns the StructSpec: the struct's own, which must not be
// modified (its fields describe the components the graph computes).
func (s *Struct) StructSpec() *structtensor.StructSpec { return s.node.spec }

// Components returns the outputs holding the struct: inherited partitions
// first, then its own components in component order.
func (s *Struct) Components() []tfbridge.Output { return pick(s.outs, s.indices()) }

// ComponentSpecs describes Components() one for one.
func (s *Struct) ComponentSpecs() []ComponentSpec {
	idx := s.indices()
	out := make([]ComponentSpec, len(idx))
	for i, j := range idx {
		out[i] = s.specs[j]
	}
	return out
}

// indices returns the component indices holding s, in the order of
// Components().
func (s *Struct) indices() []int {
	return s.node.indices(append([]int(nil), s.outer...))
}

func pick(outs []tfbridge.Output, idx []int) []tfbridge.Output {
	r := make([]tfbridge.Output, len(idx))
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
// field): a *Struct, or a Ragged for a leaf. The result is in full shape:
// it carries the partitions of every struct above it, as structtensor's
// FieldValue does.
func (s *Struct) Field(path ...string) (Value, error) {
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
			return s.leafRagged(f.leaf, append(outer, f.leaf.parts...), append(outerDims, f.leaf.partDims...)), nil
		}
		cur = &Struct{outs: s.outs, specs: s.specs, outer: outer, outerDims: outerDims, node: f.st}
	}
	return cur, nil
}

// leafRagged is the leaf l of s's root, carrying the partitions parts.
func (s *Struct) leafRagged(l *leafNode, parts, dims []int) Ragged {
	names := make([]string, 0, len(parts)+1)
	for _, j := range parts {
		names = append(names, s.specs[j].Name())
	}
	return Ragged{
		rowSplits:   pick(s.outs, parts),
		values:      s.outs[l.values],
		spec:        l.spec,
		dims:        dims,
		valuesShape: s.specs[l.values].Shape,
		names:       append(names, s.specs[l.values].Name()),
		leaf:        l,
	}
}

// MarkBinary marks the string leaves at paths (field names joined by
// ".") as binary: TensorFlow strings carry no UTF-8 mark, so a fetched
// string tensor is marked text when it is valid UTF-8, except at a binary
// leaf (a protobuf bytes field, say), which stays binary as the Go
// decoder marks it. It changes s and every value sharing its leaves.
func (s *Struct) MarkBinary(paths ...string) error {
	for _, p := range paths {
		f, err := s.Field(strings.Split(p, ".")...)
		if err != nil {
			return err
		}
		leaf, ok := f.(Ragged)
		if !ok || leaf.leaf.dtype != structtensor.String {
			return fmt.Errorf("%w: %q is not a string field", tfbridge.ErrDType, p)
		}
		leaf.leaf.binary = true
	}
	return nil
}

// Feed returns the feeds that give the placeholders ph (from Placeholders)
// the value x, whose spec must be compatible with theirs. The caller owns
// the tensors (Close them after the run, or leave them to the garbage
// collector).
func Feed(ph *Struct, x *structtensor.StructTensor) (map[tfbridge.Output]*tfbridge.Tensor, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil StructTensor", structtensor.ErrSpec)
	}
	if !x.Spec().IsCompatibleWith(ph.Spec()) {
		return nil, fmt.Errorf("%w: value %v does not fit placeholders %v", structtensor.ErrSpec, x.Spec(), ph.Spec())
	}
	feeds := map[tfbridge.Output]*tfbridge.Tensor{}
	f := feeder{outs: ph.outs, specs: ph.specs, feeds: feeds}
	parts := append(append([]int(nil), ph.outer...), ph.node.parts...)
	err := f.partitions(parts, x.Partitions())
	if err == nil {
		err = f.fields(ph.node, x)
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
	outs  []tfbridge.Output
	specs []ComponentSpec
	feeds map[tfbridge.Output]*tfbridge.Tensor
}

func (f *feeder) put(i int, v *structtensor.Tensor) error {
	t, err := tfbridge.NewTensor(v)
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

func (f *feeder) fields(n *structNode, x *structtensor.StructTensor) error {
	stored := x.Fields()
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
