package graphst

import (
	"context"
	"fmt"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// Run runs sess, fetching the components of v, and returns the concrete
// value: a *structtensor.StructTensor for a *Struct, a *structtensor.Tensor
// or *structtensor.Ragged for a Ragged. ctx acts as in
// tfbridge.Session.RunContext (its deadline is the run's timeout).
func Run(ctx context.Context, sess *tfbridge.Session, feeds map[tfbridge.Output]*tfbridge.Tensor, v Value) (structtensor.Value, error) {
	fetched, err := sess.RunContext(ctx, feeds, v.Components(), nil)
	if err != nil {
		return nil, err
	}
	// Each fetched tensor is released as soon as it is copied, so the
	// TensorFlow and Go copies of the whole output never coexist.
	return v.rebuild(fetched, true)
}

// Value rebuilds the concrete StructTensor from tensors fetched for
// s.Components(), in that order: what a caller that also hands the tensors
// on to TensorFlow, or fetches them with other outputs, would otherwise
// fetch twice. It copies what it keeps; the tensors remain the caller's.
func (s *Struct) Value(fetched []*tfbridge.Tensor) (*structtensor.StructTensor, error) {
	v, err := s.rebuild(fetched, false)
	if err != nil {
		return nil, err
	}
	return v.(*structtensor.StructTensor), nil
}

// Value rebuilds the concrete value from tensors fetched for
// r.Components(): a *structtensor.Ragged, or a *structtensor.Tensor when r
// has no row splits (or only partitions of known length). It copies what
// it keeps; the tensors remain the caller's.
func (r Ragged) Value(fetched []*tfbridge.Tensor) (structtensor.Value, error) {
	return r.rebuild(fetched, false)
}

func (s *Struct) rebuild(fetched []*tfbridge.Tensor, release bool) (structtensor.Value, error) {
	idx := s.indices()
	names := make([]string, len(idx))
	for i, j := range idx {
		names[i] = s.specs[j].Name()
	}
	vals, err := copyFetched(fetched, names, release)
	if err != nil {
		return nil, err
	}
	b := builder{vals: make(map[int]*structtensor.Tensor, len(idx)), specs: s.specs}
	for i, j := range idx {
		b.vals[j] = vals[i]
	}
	outer, err := b.partitions(s.outer, s.outerDims)
	if err != nil {
		return nil, err
	}
	return b.structValue(s.node, outer, -1)
}

func (r Ragged) rebuild(fetched []*tfbridge.Tensor, release bool) (structtensor.Value, error) {
	if r.spec == nil {
		closeAll(fetched, release)
		return nil, fmt.Errorf("%w: the zero Ragged (an op that failed?)", ErrSpec)
	}
	vals, err := copyFetched(fetched, r.names, release)
	if err != nil {
		return nil, err
	}
	k := len(r.rowSplits)
	parts := make([]*structtensor.RowPartition, k)
	for i := range parts {
		if parts[i], err = partition(vals[i], r.dims[i], r.names[i]); err != nil {
			return nil, err
		}
	}
	values := vals[k]
	if got, _ := tfbridge.DTypeOf(values.DType()); got != r.values.DType() {
		return nil, fmt.Errorf("%w: component %s is %v, want %v", tfbridge.ErrDType, r.names[k], values.DType(), r.values.DType())
	}
	if values.Rank() != len(r.valuesShape) || !values.Shape().IsCompatibleWith(r.valuesShape) {
		return nil, fmt.Errorf("%w: component %s has shape %v, want %v", tfbridge.ErrShape, r.names[k], values.Shape(), r.valuesShape)
	}
	if r.leaf != nil && r.leaf.binary && values.UTF8() {
		values = values.WithUTF8(false)
	}
	if k == 0 {
		return values, nil
	}
	v, err := structtensor.JoinOuterDims(parts, values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.names[k], err)
	}
	return v, nil
}

// copyFetched copies fetched[i], named names[i] in errors, into Go
// values; with release it closes each tensor once copied (and all on
// error).
func copyFetched(fetched []*tfbridge.Tensor, names []string, release bool) ([]*structtensor.Tensor, error) {
	if len(fetched) != len(names) {
		closeAll(fetched, release)
		return nil, fmt.Errorf("%w: %d tensors for %d components", tfbridge.ErrShape, len(fetched), len(names))
	}
	vals := make([]*structtensor.Tensor, len(fetched))
	var convErr error
	for i, t := range fetched {
		if convErr == nil {
			vals[i], convErr = t.Value()
			if convErr != nil {
				convErr = fmt.Errorf("fetching %s: %w", names[i], convErr)
			}
		}
		if release {
			t.Close()
		}
	}
	if convErr != nil {
		return nil, convErr
	}
	return vals, nil
}

func closeAll(fetched []*tfbridge.Tensor, release bool) {
	if release {
		for _, t := range fetched {
			t.Close()
		}
	}
}

// partition turns the row-splits component t (named name) into a
// partition; a dimension the spec knows (dim >= 0) becomes a uniform
// partition, as it was in the value fed or decoded.
func partition(t *structtensor.Tensor, dim int, name string) (*structtensor.RowPartition, error) {
	if t.DType() != structtensor.Int64 || t.Rank() != 1 {
		return nil, fmt.Errorf("%w: component %s is %v of shape %v, want int64 [N]", tfbridge.ErrShape, name, t.DType(), t.Shape())
	}
	p, err := structtensor.NewRowSplits(t.Int64s())
	if err != nil {
		return nil, fmt.Errorf("component %s: %w", name, err)
	}
	if dim < 0 {
		return p, nil
	}
	for r := 0; r < p.NumRows(); r++ {
		if p.RowLength(r) != dim {
			return nil, fmt.Errorf("%w: component %s: row %d has %d values, the spec's dimension is %d", tfbridge.ErrShape, name, r, p.RowLength(r), dim)
		}
	}
	if p, err = structtensor.NewUniformPartition(p.NumRows(), dim); err != nil {
		return nil, fmt.Errorf("component %s: %w", name, err)
	}
	return p, nil
}

// builder rebuilds concrete values from fetched components.
type builder struct {
	vals  map[int]*structtensor.Tensor
	specs []ComponentSpec
}

func (b *builder) partitions(idx, dims []int) ([]*structtensor.RowPartition, error) {
	parts := make([]*structtensor.RowPartition, len(idx))
	for i, j := range idx {
		p, err := partition(b.vals[j], dims[i], b.specs[j].Name())
		if err != nil {
			return nil, err
		}
		parts[i] = p
	}
	return parts, nil
}

func (b *builder) values(l *leafNode) (*structtensor.Tensor, error) {
	t := b.vals[l.values]
	c := b.specs[l.values]
	if t.DType() != l.dtype {
		return nil, fmt.Errorf("%w: component %s is %v, want %v", tfbridge.ErrDType, c.Name(), t.DType(), l.dtype)
	}
	if t.Rank() != len(c.Shape) || !t.Shape().IsCompatibleWith(c.Shape) {
		return nil, fmt.Errorf("%w: component %s has shape %v, want %v", tfbridge.ErrShape, c.Name(), t.Shape(), c.Shape)
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
		return nil, fmt.Errorf("%w: struct %s has no fields and no partitions, so its number of rows is unknown", tfbridge.ErrShape, pathOrRoot(n.path))
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
