package graphst

import (
	"fmt"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// levels maps every component of a root StructTensor to the "level" whose
// rows it is indexed by. Level 0 is the root's outer dimension; each row
// partition (a RowSplits component) splits the rows of its parent level
// into the rows of a new level; a Values component has one row per row of
// its level. Selecting rows of level 0 therefore selects, level by level,
// contiguous ranges of every other level: what every outer-dimension op
// below is built from.
type levels struct {
	parent []int // per component: the level its rows belong to
	child  []int // per RowSplits component: the level it creates; -1 for Values
	n      int   // number of levels
}

func levelsOf(spec *st.StructSpec) (*levels, error) {
	comps, err := Components(spec)
	if err != nil {
		return nil, err
	}
	if len(spec.Shape) == 0 {
		return nil, fmt.Errorf("%w: a scalar struct has no outer dimension", ErrRank)
	}
	l := &levels{n: 1}
	l.walkStruct(spec, 0, 0)
	if len(l.parent) != len(comps) {
		return nil, fmt.Errorf("%w: spec %v: %d components laid out, tfbridge has %d", ErrSpec, spec, len(l.parent), len(comps))
	}
	for i, c := range comps {
		if (c.Kind == RowSplitsComponent) != (l.child[i] >= 0) {
			return nil, fmt.Errorf("%w: spec %v: component %d (%s) laid out as the other kind", ErrSpec, spec, i, c.Name())
		}
	}
	return l, nil
}

func (l *levels) partition(parent int) int {
	l.parent = append(l.parent, parent)
	l.child = append(l.child, l.n)
	l.n++
	return l.n - 1
}

// walkStruct follows the component order (Components): a struct's own
// partitions, then its fields; a leaf's own partitions, then its values.
func (l *levels) walkStruct(s *st.StructSpec, level, parentParts int) {
	own := max(len(s.Shape)-1, 0) - parentParts
	for range own {
		level = l.partition(level)
	}
	parts := max(len(s.Shape)-1, 0)
	for _, f := range s.Fields {
		switch fs := f.Spec.(type) {
		case *st.StructSpec:
			l.walkStruct(fs, level, parts)
		case *st.RaggedSpec:
			lv := level
			for range fs.RaggedRank - parts {
				lv = l.partition(lv)
			}
			l.parent = append(l.parent, lv)
			l.child = append(l.child, -1)
		default:
			l.parent = append(l.parent, level)
			l.child = append(l.child, -1)
		}
	}
}

// withOuterDims returns a copy of spec whose full shape (and every
// field's) starts with dims instead of its first drop dimensions.
func withOuterDims(spec st.Spec, drop int, dims ...int) st.Spec {
	shape := func(s st.Shape) st.Shape {
		return append(append(st.Shape{}, dims...), s[drop:]...)
	}
	switch x := spec.(type) {
	case *st.TensorSpec:
		return &st.TensorSpec{DType: x.DType, Shape: shape(x.Shape)}
	case *st.RaggedSpec:
		return &st.RaggedSpec{DType: x.DType, Shape: shape(x.Shape), RaggedRank: x.RaggedRank - drop + len(dims)}
	case *st.StructSpec:
		out := &st.StructSpec{Shape: shape(x.Shape), Fields: make([]st.FieldSpec, len(x.Fields))}
		for i, f := range x.Fields {
			out.Fields[i] = st.FieldSpec{Name: f.Name, Spec: withOuterDims(f.Spec, drop, dims...)}
		}
		return out
	}
	return spec
}
