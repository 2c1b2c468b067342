package structtensor

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the column builders shared by FromValue (fromvalue.go,
// with the Go-value walker that drives them) and the JSON reader
// (json.go).
//
// A node builds one value position: the sequence of its occurrences (the
// top-level value, or one occurrence per element of the enclosing struct).
// Each occurrence is a leaf (a scalar or a struct element) nested in zero
// or more lists. The lists at nesting depth k+1 are the rows of levels[k];
// leaves append to one column (scalars) or to a structNode (struct
// elements), whose fields are nodes in turn. Everything is appended in one
// pass, straight into flat columns and row splits: there is no
// intermediate tree. Without a spec, a node starts empty and learns its
// depth, leaf kind and dtype from the first values it sees (widening int64
// to float64 when both occur, as TensorFlow does); with a spec, all of that
// is fixed up front and every value is checked against it.

// levelKind says what a list level becomes in the finished value.
type levelKind uint8

const (
	levelRagged  levelKind = iota // a RowPartition with row splits
	levelUniform                  // a uniform RowPartition of a fixed length
	levelDense                    // a dense dimension of the flat values
)

type level struct {
	kind   levelKind
	want   int     // required row length; -1 for ragged, or dense not yet known
	splits []int64 // ragged only: row splits so far, starting with 0
	count  int     // items in all rows so far
	rows   int     // rows so far
	start  int     // count when the current row began
}

type leafKind uint8

const (
	leafNone leafKind = iota
	leafScalar
	leafStruct
)

type node struct {
	fixed     bool // built from a spec: depth, leaf kind and dtype are fixed
	levels    []level
	leafDepth int // nesting depth of leaves; -1 until the first leaf
	kind      leafKind
	col       column
	st        *structNode
}

func newNode() *node { return &node{leafDepth: -1} }

// structNode builds the elements of a struct leaf, field by field.
type structNode struct {
	fixed  bool
	fields []*fieldNode
	index  map[string]int
	n      int // elements finished
	seen   int // fields seen in the current element
	// Keys usually come in the same order in every element, whatever the
	// order of the fields: first is the index of the field that came
	// first last time, each field's next the one that followed it, and
	// prev the field just seen, so that most lookups are one comparison.
	first, prev int
}

type fieldNode struct {
	name  string
	node  *node
	stamp int // n+1 of the last element that had this field
	next  int // index of the field that followed this one last time
}

func newStructNode(fixed bool) *structNode {
	return &structNode{fixed: fixed, index: map[string]int{}}
}

// buildError is an error found while building, with the path to the
// offending value. Steps are collected innermost first while the error
// unwinds through the walker, so the success path pays nothing for them.
type buildError struct {
	sentinel error
	msg      string
	steps    []pathStep // innermost first
	offset   int        // byte offset in JSON input, -1 if none
	loc      string     // JSON location ("line 3, byte 57"), set last
}

type pathStep struct {
	key   string
	index int
}

func newBuildError(sentinel error, format string, args ...any) *buildError {
	return &buildError{sentinel: sentinel, msg: fmt.Sprintf(format, args...), offset: -1}
}

func (e *buildError) atIndex(i int) *buildError {
	e.steps = append(e.steps, pathStep{index: i})
	return e
}

func (e *buildError) atKey(k string) *buildError {
	e.steps = append(e.steps, pathStep{key: k, index: -1})
	return e
}

func (e *buildError) Unwrap() error { return e.sentinel }

// Path returns the path of the offending value, outermost first, as it is
// printed in the message: [1].a[0].
func (e *buildError) path() []pathStep {
	p := make([]pathStep, len(e.steps))
	for i, s := range e.steps {
		p[len(p)-1-i] = s
	}
	return p
}

func renderSteps(steps []pathStep) string {
	var b strings.Builder
	for _, s := range steps {
		if s.index < 0 {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	return b.String()
}

// where describes the path: `field "a" at [1]` (the innermost field, the
// element holding it and, if the value is inside lists of that field, its
// position there), or `at [1][2]` when no field is involved.
func (e *buildError) where() string {
	p := e.path()
	k := -1
	for i, s := range p {
		if s.index < 0 {
			k = i
		}
	}
	if k < 0 {
		if len(p) == 0 {
			return ""
		}
		return "at " + renderSteps(p)
	}
	w := fmt.Sprintf("field %q", p[k].key)
	if k > 0 {
		w += " at " + renderSteps(p[:k])
	}
	if k+1 < len(p) {
		w += " element " + renderSteps(p[k+1:])
	}
	return w
}

func (e *buildError) Error() string {
	var b strings.Builder
	b.WriteString(e.sentinel.Error())
	b.WriteString(": ")
	if e.loc != "" {
		b.WriteString(e.loc)
		b.WriteString(": ")
	}
	if w := e.where(); w != "" {
		b.WriteString(w)
		b.WriteString(": ")
	}
	b.WriteString(e.msg)
	return b.String()
}

func (n *node) sentinel() error {
	if n.fixed {
		return ErrSpec
	}
	return ErrInference
}

func (n *node) fail(format string, args ...any) *buildError {
	return newBuildError(n.sentinel(), format, args...)
}

// leafName names what the node's leaves are, for messages.
func (n *node) leafName() string {
	switch n.kind {
	case leafStruct:
		return "struct"
	case leafScalar:
		if n.col.dtype != Invalid {
			return n.col.dtype.String()
		}
		return "scalar"
	}
	return "value"
}

// beginList opens a list at nesting depth d (0: the occurrence itself).
func (n *node) beginList(d int) *buildError {
	if n.leafDepth >= 0 && d >= n.leafDepth {
		if n.fixed {
			return n.fail("expected %s, got a list", n.leafName())
		}
		return n.fail("%s at depth %d vs list at depth %d (different ranks)", n.leafName(), n.leafDepth, d)
	}
	if d > 0 {
		n.levels[d-1].count++
	}
	if d == len(n.levels) {
		// Only reached without a spec. No earlier row of this level can
		// exist: it would have been a list (creating the level) or a leaf
		// (failing the check above).
		n.levels = append(n.levels, level{kind: levelRagged, want: -1, splits: []int64{0}})
	}
	lv := &n.levels[d]
	lv.start = lv.count
	return nil
}

// endList closes the list at depth d.
func (n *node) endList(d int) *buildError {
	lv := &n.levels[d]
	lv.rows++
	if lv.kind == levelRagged {
		lv.splits = push(lv.splits, int64(lv.count))
		return nil
	}
	length := lv.count - lv.start
	if lv.want < 0 {
		lv.want = length
	} else if length != lv.want {
		return n.fail("list of length %d, expected %d (dimension %d is uniform)", length, lv.want, d)
	}
	return nil
}

// leafAt accounts for one leaf of the given kind at depth d.
func (n *node) leafAt(d int, kind leafKind, what string) *buildError {
	if d != n.leafDepth || n.kind != kind {
		if err := n.firstLeaf(d, kind, what); err != nil {
			return err
		}
	}
	if d > 0 {
		n.levels[d-1].count++
	}
	return nil
}

func (n *node) firstLeaf(d int, kind leafKind, what string) *buildError {
	if n.leafDepth < 0 {
		if d < len(n.levels) {
			return n.fail("lists nested %d deep vs %s at depth %d (different ranks)", len(n.levels), what, d)
		}
		n.leafDepth, n.kind = d, kind
		if kind == leafStruct {
			n.st = newStructNode(false)
		}
		return nil
	}
	if d != n.leafDepth {
		if n.fixed {
			return n.fail("expected a list, got %s", what)
		}
		return n.fail("%s at depth %d vs %s at depth %d (different ranks)", n.leafName(), n.leafDepth, what, d)
	}
	return n.fail("%s vs %s", n.leafName(), what)
}

func (n *node) leafBool(d int, v bool) *buildError {
	if err := n.leafAt(d, leafScalar, "bool"); err != nil {
		return err
	}
	return n.col.appendBool(v)
}

func (n *node) leafInt64(d int, v int64) *buildError {
	if err := n.leafAt(d, leafScalar, "int64"); err != nil {
		return err
	}
	return n.col.appendInt64(v)
}

func (n *node) leafUint64(d int, v uint64) *buildError {
	if err := n.leafAt(d, leafScalar, "uint64"); err != nil {
		return err
	}
	return n.col.appendUint64(v)
}

func (n *node) leafFloat64(d int, v float64) *buildError {
	if err := n.leafAt(d, leafScalar, "float64"); err != nil {
		return err
	}
	return n.col.appendFloat64(v)
}

// leafTyped appends a Go int32, uint32 or float32, which without a spec
// keep their own dtype.
func (n *node) leafTyped(d int, dt DType, v any) *buildError {
	if err := n.leafAt(d, leafScalar, dt.String()); err != nil {
		return err
	}
	return n.col.appendTyped(dt, v)
}

func (n *node) leafString(d int, s []byte) *buildError {
	if err := n.leafAt(d, leafScalar, "string"); err != nil {
		return err
	}
	return n.col.appendString(s)
}

func (n *node) leafNumber(d int, text []byte, isFloat bool) *buildError {
	if err := n.leafAt(d, leafScalar, "number"); err != nil {
		return err
	}
	return n.col.appendNumber(text, isFloat)
}

func (n *node) beginStruct(d int) (*structNode, *buildError) {
	if err := n.leafAt(d, leafStruct, "struct"); err != nil {
		return nil, err
	}
	s := n.st
	s.prev, s.seen = -1, 0
	return s, nil
}

// field returns the field named key for the current element.
func (s *structNode) field(key []byte) (*fieldNode, *buildError) {
	var f *fieldNode
	hint := s.first
	if s.prev >= 0 {
		hint = s.fields[s.prev].next
	}
	i := hint
	if hint < len(s.fields) && s.fields[hint].name == string(key) {
		f = s.fields[hint]
	} else if j, ok := s.index[string(key)]; ok {
		f, i = s.fields[j], j
	} else {
		switch {
		case s.fixed:
			return nil, newBuildError(ErrSpec, "field %q is not in the spec (fields: %s)", key, strings.Join(s.names(), ", "))
		case s.n > 0:
			return nil, newBuildError(ErrInference, "field %q is missing from earlier elements", key)
		case !ValidFieldName(string(key)):
			return nil, newBuildError(ErrFieldName, "%q", key)
		}
		f = &fieldNode{name: string(key), node: newNode()}
		i = len(s.fields)
		s.index[f.name] = i
		s.fields = append(s.fields, f)
	}
	if i != hint {
		if s.prev >= 0 {
			s.fields[s.prev].next = i
		} else {
			s.first = i
		}
	}
	s.prev = i
	if f.stamp == s.n+1 {
		sent := ErrInference
		if s.fixed {
			sent = ErrSpec
		}
		return nil, newBuildError(sent, "field %q appears twice", key)
	}
	f.stamp = s.n + 1
	s.seen++
	return f, nil
}

// end finishes the current element: every field must have been present.
func (s *structNode) end() *buildError {
	if s.seen != len(s.fields) {
		for _, f := range s.fields {
			if f.stamp != s.n+1 {
				sent := ErrInference
				if s.fixed {
					sent = ErrSpec
				}
				return newBuildError(sent, "missing field %q", f.name)
			}
		}
	}
	s.n++
	return nil
}

func (s *structNode) names() []string {
	out := make([]string, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.name
	}
	return out
}

// value finishes the node. In rank-0 mode the node had exactly one
// occurrence, which is the value; otherwise the value has one row per
// occurrence (nocc of them). Inferred struct fields are put in name order
// if sortFields, else left in the order they first appeared.
func (n *node) value(rank0 bool, nocc int, sortFields bool) (Value, error) {
	levels := n.levels
	nrows := nocc
	if rank0 {
		if len(levels) == 0 {
			return n.scalarValue(sortFields)
		}
		nrows = levels[0].count
		levels = levels[1:]
	}
	rowsAt := func(i int) int { // rows of levels[i]
		if i == 0 {
			return nrows
		}
		return levels[i-1].count
	}
	m := nrows
	if len(levels) > 0 {
		m = levels[len(levels)-1].count
	}
	j := len(levels)
	for j > 0 && levels[j-1].kind == levelDense {
		j--
	}
	var leaf Value
	if n.kind == leafStruct {
		st, err := n.st.flatValue(m, sortFields)
		if err != nil {
			return nil, err
		}
		leaf = st
	} else {
		t, err := n.col.tensor(m)
		if err != nil {
			return nil, err
		}
		if j < len(levels) {
			shape := Shape{rowsAt(j)}
			for _, lv := range levels[j:] {
				shape = append(shape, max(lv.want, 0))
			}
			if t, err = t.Reshape(shape); err != nil {
				return nil, err
			}
		}
		leaf = t
	}
	parts := make([]*RowPartition, j)
	for i := range parts {
		var err error
		if lv := levels[i]; lv.kind == levelRagged {
			parts[i], err = NewRowSplits(lv.splits)
		} else {
			parts[i], err = NewUniformPartition(rowsAt(i), max(lv.want, 0))
		}
		if err != nil {
			return nil, err
		}
	}
	if t, ok := leaf.(*Tensor); ok && j > 0 {
		// Scalars under partitions are a Ragged even when every partition
		// is uniform (a RaggedSpec with known dimensions).
		return NewRagged(t, parts...)
	}
	return JoinOuterDims(parts, leaf)
}

func (n *node) scalarValue(sortFields bool) (Value, error) {
	if n.kind == leafStruct {
		fields, err := n.st.fieldValues(true, 1, sortFields)
		if err != nil {
			return nil, err
		}
		return NewScalarStruct(fields...)
	}
	t, err := n.col.tensor(1)
	if err != nil {
		return nil, err
	}
	return t.Reshape(Shape{})
}

// flatValue returns the rank-1 struct of the m elements built.
func (s *structNode) flatValue(m int, sortFields bool) (*StructTensor, error) {
	fields, err := s.fieldValues(false, m, sortFields)
	if err != nil {
		return nil, err
	}
	return NewStruct(m, fields...)
}

func (s *structNode) fieldValues(rank0 bool, nocc int, sortFields bool) ([]Field, error) {
	fs := s.fields
	if !s.fixed && sortFields {
		fs = append([]*fieldNode(nil), fs...)
		sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	}
	out := make([]Field, len(fs))
	for i, f := range fs {
		v, err := f.node.value(rank0, nocc, sortFields)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
		out[i] = Field{Name: f.name, Value: v}
	}
	return out, nil
}

// nodeFromSpec returns a node that accepts exactly the values spec
// describes. In rank-0 mode the node's single occurrence is the value; in
// flat mode each occurrence is one row of it (dimension 0 of spec counts
// occurrences).
func nodeFromSpec(spec Spec, rank0 bool) (*node, error) {
	if spec == nil {
		return nil, fmt.Errorf("%w: nil spec", ErrSpec)
	}
	shape := spec.ValueShape()
	start := 1
	if rank0 {
		start = 0
	} else if len(shape) == 0 {
		return nil, fmt.Errorf("%w: %v has rank 0 where rows are expected", ErrSpec, spec)
	}
	n := &node{fixed: true}
	for i := start; i < len(shape); i++ {
		dense := false
		switch s := spec.(type) {
		case *TensorSpec:
			dense = true
		case *RaggedSpec:
			dense = i == 0 || i > s.RaggedRank
		case *StructSpec:
			dense = i == 0
		}
		lv := level{kind: levelDense, want: shape[i]}
		if !dense {
			if shape[i] >= 0 {
				lv.kind = levelUniform
			} else {
				lv.kind, lv.splits = levelRagged, []int64{0}
			}
		}
		if shape[i] < Unknown {
			return nil, fmt.Errorf("%w: bad dimension %d in %v", ErrSpec, shape[i], spec)
		}
		n.levels = append(n.levels, lv)
	}
	n.leafDepth = len(n.levels)
	switch s := spec.(type) {
	case *TensorSpec, *RaggedSpec:
		var dt DType
		if t, ok := s.(*TensorSpec); ok {
			dt = t.DType
		} else {
			r := s.(*RaggedSpec)
			if r.RaggedRank < 1 || r.RaggedRank >= len(r.Shape) {
				return nil, fmt.Errorf("%w: ragged_rank %d for rank %d in %v", ErrSpec, r.RaggedRank, len(r.Shape), spec)
			}
			dt = r.DType
		}
		if !dt.Valid() {
			return nil, fmt.Errorf("%w: invalid dtype in %v", ErrSpec, spec)
		}
		n.kind = leafScalar
		n.col.setDType(dt)
		n.col.fixed = true
	case *StructSpec:
		n.kind = leafStruct
		n.st = newStructNode(true)
		r := len(shape)
		for _, f := range s.Fields {
			if !ValidFieldName(f.Name) {
				return nil, fmt.Errorf("%w: field name %q", ErrSpec, f.Name)
			}
			if _, dup := n.st.index[f.Name]; dup {
				return nil, fmt.Errorf("%w: field %q appears twice", ErrSpec, f.Name)
			}
			fs := f.Spec
			if r > 0 {
				if fs == nil || len(fs.ValueShape()) < r || !Shape(fs.ValueShape()[:r]).IsCompatibleWith(shape) {
					return nil, fmt.Errorf("%w: field %q: %v does not begin with the struct's shape %v", ErrSpec, f.Name, fs, shape)
				}
				var err error
				if fs, err = stripSpec(fs, r); err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
			}
			fn, err := nodeFromSpec(fs, r == 0)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			n.st.index[f.Name] = len(n.st.fields)
			n.st.fields = append(n.st.fields, &fieldNode{name: f.Name, node: fn})
		}
	default:
		return nil, fmt.Errorf("%w: unknown spec %T", ErrSpec, spec)
	}
	return n, nil
}

// stripSpec returns the spec of the flat value of a field whose full spec
// is s, in a struct of rank r >= 1: the r outer dimensions become one
// dimension of unknown size (one row per innermost struct element).
func stripSpec(s Spec, r int) (Spec, error) {
	shape := s.ValueShape()
	if len(shape) < r {
		return nil, fmt.Errorf("%w: %v has rank < %d", ErrSpec, s, r)
	}
	flat := append(Shape{Unknown}, shape[r:]...)
	switch x := s.(type) {
	case *TensorSpec:
		return &TensorSpec{DType: x.DType, Shape: flat}, nil
	case *RaggedSpec:
		rr := x.RaggedRank - (r - 1)
		switch {
		case rr < 0:
			return nil, fmt.Errorf("%w: %v: ragged_rank below the struct's rank %d", ErrSpec, s, r)
		case rr == 0:
			return &TensorSpec{DType: x.DType, Shape: flat}, nil
		}
		return &RaggedSpec{DType: x.DType, Shape: flat, RaggedRank: rr}, nil
	case *StructSpec:
		out := &StructSpec{Shape: flat, Fields: make([]FieldSpec, len(x.Fields))}
		for i, f := range x.Fields {
			if f.Spec == nil {
				return nil, fmt.Errorf("%w: field %q has no spec", ErrSpec, f.Name)
			}
			fs, err := stripSpec(f.Spec, r)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			out.Fields[i] = FieldSpec{Name: f.Name, Spec: fs}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown spec %T", ErrSpec, s)
}

func rootNode(spec []Spec, rank0 bool) (*node, error) {
	switch len(spec) {
	case 0:
		return newNode(), nil
	case 1:
		return nodeFromSpec(spec[0], rank0)
	}
	return nil, fmt.Errorf("%w: %d specs given, want at most one", ErrSpec, len(spec))
}

// checkSpec is the last guard that the built value has the spec asked for.
func checkSpec(v Value, spec []Spec) (Value, error) {
	if len(spec) == 1 && !spec[0].IsCompatibleWith(v.Spec()) {
		return nil, fmt.Errorf("%w: built %v, want %v", ErrSpec, v.Spec(), spec[0])
	}
	return v, nil
}

// column accumulates the scalars of one leaf position.
type column struct {
	dtype   DType
	fixed   bool
	bools   []bool
	i32     []int32
	i64     []int64
	u32     []uint32
	u64     []uint64
	f32     []float32
	f64     []float64
	sdata   []byte
	soffs   []int64
	notUTF8 bool
	neg     bool // an int64 value was negative (blocks widening to uint64)
}

func (c *column) setDType(d DType) {
	c.dtype = d
	if d == String && c.soffs == nil {
		c.soffs = []int64{0}
	}
}

func (c *column) sentinel() error {
	if c.fixed {
		return ErrSpec
	}
	return ErrInference
}

func (c *column) conflict(what string) *buildError {
	return newBuildError(c.sentinel(), "%v vs %s", c.dtype, what)
}

func (c *column) outOfRange(v any) *buildError {
	if text, ok := v.(string); ok && (c.dtype == Invalid || c.dtype == Float64 || c.dtype == Float32) {
		// A number literal beyond every numeric type (1e400).
		width := "float64"
		if c.dtype == Float32 {
			width = "float32"
		}
		return newBuildError(c.sentinel(), "number %s overflows %s (non-finite floats are written as the strings \"Infinity\", \"-Infinity\" and \"NaN\", read for a field a spec makes a float)", text, width)
	}
	return newBuildError(c.sentinel(), "%v out of range for %v", v, c.dtype)
}

func (c *column) appendBool(v bool) *buildError {
	switch c.dtype {
	case Bool:
	case Invalid:
		c.dtype = Bool
	default:
		return c.conflict("bool")
	}
	c.bools = push(c.bools, v)
	return nil
}

func (c *column) appendInt64(v int64) *buildError {
	switch c.dtype {
	case Int64:
		c.i64 = push(c.i64, v)
		c.neg = c.neg || v < 0
	case Float64:
		c.f64 = push(c.f64, float64(v))
	case Invalid:
		c.dtype = Int64
		c.i64 = push(c.i64, v)
		c.neg = v < 0
	case Uint64:
		if v < 0 {
			if c.fixed {
				return c.outOfRange(v)
			}
			return newBuildError(ErrInference, "uint64 vs negative int64 %d", v)
		}
		c.u64 = push(c.u64, uint64(v))
	case Int32:
		if !c.fixed {
			return c.conflict("int64")
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return c.outOfRange(v)
		}
		c.i32 = push(c.i32, int32(v))
	case Uint32:
		if !c.fixed {
			return c.conflict("int64")
		}
		if v < 0 || v > math.MaxUint32 {
			return c.outOfRange(v)
		}
		c.u32 = push(c.u32, uint32(v))
	case Float32:
		if !c.fixed {
			return c.conflict("int64")
		}
		c.f32 = push(c.f32, float32(v))
	default:
		return c.conflict("int64")
	}
	return nil
}

func (c *column) appendUint64(v uint64) *buildError {
	switch c.dtype {
	case Uint64:
		c.u64 = push(c.u64, v)
	case Invalid:
		c.dtype = Uint64
		c.u64 = push(c.u64, v)
	case Float64:
		c.f64 = push(c.f64, float64(v))
	case Int64:
		if v <= math.MaxInt64 {
			c.i64 = push(c.i64, int64(v))
			return nil
		}
		if c.fixed {
			return c.outOfRange(v)
		}
		if c.neg {
			return newBuildError(ErrInference, "int64 with negative values vs uint64 %d", v)
		}
		c.u64 = make([]uint64, len(c.i64), len(c.i64)+1)
		for i, x := range c.i64 {
			c.u64[i] = uint64(x)
		}
		c.i64, c.dtype = nil, Uint64
		c.u64 = push(c.u64, v)
	case Int32, Uint32, Float32:
		if !c.fixed {
			return c.conflict("uint64")
		}
		if v <= math.MaxInt64 {
			return c.appendInt64(int64(v))
		}
		if c.dtype == Float32 {
			c.f32 = push(c.f32, float32(v))
			return nil
		}
		return c.outOfRange(v)
	default:
		return c.conflict("uint64")
	}
	return nil
}

func (c *column) appendFloat64(v float64) *buildError {
	switch c.dtype {
	case Float64:
	case Invalid:
		c.dtype = Float64
	case Float32:
		if !c.fixed {
			return c.conflict("float64")
		}
		c.f32 = push(c.f32, float32(v))
		return nil
	case Int64, Uint64:
		if c.fixed {
			return c.conflict("float64")
		}
		c.widenToFloat64()
	default:
		return c.conflict("float64")
	}
	c.f64 = push(c.f64, v)
	return nil
}

func (c *column) widenToFloat64() {
	if c.dtype == Int64 {
		c.f64 = make([]float64, len(c.i64), len(c.i64)+1)
		for i, x := range c.i64 {
			c.f64[i] = float64(x)
		}
	} else {
		c.f64 = make([]float64, len(c.u64), len(c.u64)+1)
		for i, x := range c.u64 {
			c.f64[i] = float64(x)
		}
	}
	c.i64, c.u64, c.dtype = nil, nil, Float64
}

// appendTyped appends a Go int32, uint32 or float32 value.
func (c *column) appendTyped(dt DType, v any) *buildError {
	if c.dtype == Invalid {
		c.dtype = dt
	}
	if c.dtype == dt {
		switch x := v.(type) {
		case int32:
			c.i32 = push(c.i32, x)
		case uint32:
			c.u32 = push(c.u32, x)
		case float32:
			c.f32 = push(c.f32, x)
		}
		return nil
	}
	if !c.fixed {
		return c.conflict(dt.String())
	}
	switch x := v.(type) {
	case int32:
		return c.appendInt64(int64(x))
	case uint32:
		return c.appendInt64(int64(x))
	case float32:
		if c.dtype == Float64 {
			c.f64 = push(c.f64, float64(x))
			return nil
		}
	}
	return c.conflict(dt.String())
}

func (c *column) appendString(s []byte) *buildError {
	switch c.dtype {
	case String:
	case Invalid:
		c.setDType(String)
	case Float32, Float64:
		if c.fixed {
			if f, ok := specialFloat(s); ok {
				if c.dtype == Float32 {
					c.f32 = push(c.f32, float32(f))
				} else {
					c.f64 = push(c.f64, f)
				}
				return nil
			}
		}
		return c.conflict("string")
	default:
		return c.conflict("string")
	}
	if !c.notUTF8 && !utf8.Valid(s) {
		c.notUTF8 = true
	}
	c.sdata = pushBytes(c.sdata, s)
	c.soffs = push(c.soffs, int64(len(c.sdata)))
	return nil
}

// appendStringChecked is appendString for bytes whose UTF-8 validity the
// caller already knows.
func (c *column) appendStringChecked(s []byte, valid bool) *buildError {
	if c.dtype != String {
		return c.appendString(s)
	}
	c.notUTF8 = c.notUTF8 || !valid
	c.sdata = pushBytes(c.sdata, s)
	c.soffs = push(c.soffs, int64(len(c.sdata)))
	return nil
}

// specialFloat parses the strings ToJSON writes for non-finite floats.
func specialFloat(s []byte) (float64, bool) {
	switch string(s) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

// appendNumber appends a JSON number literal (text is valid JSON number
// syntax; isFloat when it has a fraction or an exponent), parsed straight
// into the column's dtype so that int64 and uint64 stay exact and float32
// is rounded once.
func (c *column) appendNumber(text []byte, isFloat bool) *buildError {
	switch c.dtype {
	case Float64:
		if !isFloat && len(text) < 16 {
			v, _ := parseSmallInt(text)
			c.f64 = push(c.f64, float64(v))
			return nil
		}
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			return c.outOfRange(string(text))
		}
		c.f64 = push(c.f64, f)
		return nil
	case Float32:
		if !c.fixed {
			return c.conflict("number")
		}
		f, err := strconv.ParseFloat(string(text), 32)
		if err != nil {
			return c.outOfRange(string(text))
		}
		c.f32 = push(c.f32, float32(f))
		return nil
	case Bool, String:
		return c.conflict("number")
	}
	// Integer dtypes, or nothing yet.
	if !isFloat {
		if len(text) < 19 {
			v, _ := parseSmallInt(text)
			return c.appendInt64(v)
		}
		if v, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return c.appendInt64(v)
		}
		if v, err := strconv.ParseUint(string(text), 10, 64); err == nil {
			return c.appendUint64(v)
		}
	}
	if c.fixed {
		if isFloat {
			return c.conflict("number " + string(text))
		}
		return c.outOfRange(string(text))
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return c.outOfRange(string(text))
	}
	return c.appendFloat64(f)
}

// parseSmallInt parses an integer literal of at most 18 digits (plus
// sign), which cannot overflow.
func parseSmallInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	var v int64
	for _, c := range b {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func (c *column) len() int {
	switch c.dtype {
	case Bool:
		return len(c.bools)
	case Int32:
		return len(c.i32)
	case Int64:
		return len(c.i64)
	case Uint32:
		return len(c.u32)
	case Uint64:
		return len(c.u64)
	case Float32:
		return len(c.f32)
	case Float64:
		return len(c.f64)
	case String:
		return len(c.soffs) - 1
	}
	return 0
}

// tensor returns the column as a vector of m values.
func (c *column) tensor(m int) (*Tensor, error) {
	if c.dtype == Invalid {
		// Only empty lists were seen: TensorFlow's default dtype.
		if m != 0 {
			return nil, fmt.Errorf("%w: internal: %d values of no type", ErrInference, m)
		}
		return EmptyTensor(Float32), nil
	}
	if c.len() != m {
		return nil, fmt.Errorf("%w: internal: column has %d values, want %d", ErrShape, c.len(), m)
	}
	switch c.dtype {
	case Bool:
		return NewTensor(nil, nonNil(c.bools))
	case Int32:
		return NewTensor(nil, nonNil(c.i32))
	case Int64:
		return NewTensor(nil, nonNil(c.i64))
	case Uint32:
		return NewTensor(nil, nonNil(c.u32))
	case Uint64:
		return NewTensor(nil, nonNil(c.u64))
	case Float32:
		return NewTensor(nil, nonNil(c.f32))
	case Float64:
		return NewTensor(nil, nonNil(c.f64))
	}
	return NewStringTensor(nil, c.sdata, c.soffs, !c.notUTF8)
}

// push appends v, doubling the capacity when it is full: append grows
// large slices by only 1.25x, which would copy a big column several times
// over while it is built.
func push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 32))
	}
	return append(s, v)
}

// pushBytes appends b to s, growing as push does.
func pushBytes(s, b []byte) []byte {
	if cap(s)-len(s) < len(b) {
		s = slices.Grow(s, max(len(s), len(b), 256))
	}
	return append(s, b...)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
