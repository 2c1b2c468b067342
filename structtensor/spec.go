package structtensor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Spec describes the type of a Value without its data: a *TensorSpec, a
// *RaggedSpec or a *StructSpec. Dimensions may be Unknown. Specs print
// like TensorFlow's TypeSpecs, compare with Equal and IsCompatibleWith, and
// serialise to a stable JSON form (MarshalSpec, UnmarshalSpec) used by
// DataView metadata.
type Spec interface {
	// String returns the TensorFlow-like form, e.g.
	// StructSpec([None], {a: TensorSpec([None], int64)}).
	String() string
	// Equal reports whether both specs are identical.
	Equal(Spec) bool
	// IsCompatibleWith reports whether both specs could describe the same
	// value: same kinds, dtypes, ranks and field names, and dimensions
	// that agree where both are known.
	IsCompatibleWith(Spec) bool
	// ValueShape returns the full shape the spec describes.
	ValueShape() Shape
	isSpec()
}

// TensorSpec describes a dense Tensor.
type TensorSpec struct {
	DType DType
	Shape Shape
}

// RaggedSpec describes a Ragged value: Shape is the full shape and
// RaggedRank the number of row partitions (dimensions 1..RaggedRank are
// partitioned; the rest are the flat values' dense inner dimensions).
type RaggedSpec struct {
	DType      DType
	Shape      Shape
	RaggedRank int
}

// StructSpec describes a StructTensor: its shape (known rank) and its
// fields in order, each with its full-shape spec (whose shape begins with
// the struct's shape).
type StructSpec struct {
	Shape  Shape
	Fields []FieldSpec
}

// FieldSpec is one named field of a StructSpec.
type FieldSpec struct {
	Name string
	Spec Spec
}

func (*TensorSpec) isSpec() {}
func (*RaggedSpec) isSpec() {}
func (*StructSpec) isSpec() {}

// ValueShape returns s.Shape.
func (s *TensorSpec) ValueShape() Shape { return s.Shape }

// ValueShape returns s.Shape.
func (s *RaggedSpec) ValueShape() Shape { return s.Shape }

// ValueShape returns s.Shape.
func (s *StructSpec) ValueShape() Shape { return s.Shape }

func (s *TensorSpec) String() string { return string(appendSpecString(nil, s)) }

func (s *RaggedSpec) String() string { return string(appendSpecString(nil, s)) }

func (s *StructSpec) String() string { return string(appendSpecString(nil, s)) }

// appendSpecString appends the TensorFlow-like form of s to b. Fields are
// appended in place, never printed on their own and copied, so the time is
// linear in the length of the text however deep the nesting.
func appendSpecString(b []byte, s Spec) []byte {
	switch x := s.(type) {
	case *TensorSpec:
		b = append(b, "TensorSpec("...)
		b = appendShape(b, x.Shape)
		b = append(b, ", "...)
		return append(append(b, x.DType.String()...), ')')
	case *RaggedSpec:
		b = append(b, "RaggedTensorSpec("...)
		b = appendShape(b, x.Shape)
		b = append(b, ", "...)
		b = append(b, x.DType.String()...)
		b = append(b, ", ragged_rank="...)
		return append(strconv.AppendInt(b, int64(x.RaggedRank), 10), ')')
	case *StructSpec:
		b = append(b, "StructSpec("...)
		b = appendShape(b, x.Shape)
		b = append(b, ", {"...)
		for i, f := range x.Fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(append(b, f.Name...), ": "...)
			b = appendSpecString(b, f.Spec)
		}
		return append(b, "})"...)
	case nil:
		return append(b, "<nil>"...)
	}
	return fmt.Appendf(b, "%v", s)
}

// appendShape appends Shape.String's form of s.
func appendShape(b []byte, s Shape) []byte {
	b = append(b, '[')
	for i, d := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		if d < 0 {
			b = append(b, "None"...)
		} else {
			b = strconv.AppendInt(b, int64(d), 10)
		}
	}
	return append(b, ']')
}

// Field returns the spec of the named field.
func (s *StructSpec) Field(name string) (Spec, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f.Spec, true
		}
	}
	return nil, false
}

// Equal reports whether o is a TensorSpec with the same dtype and shape.
func (s *TensorSpec) Equal(o Spec) bool {
	t, ok := o.(*TensorSpec)
	return ok && s.DType == t.DType && s.Shape.Equal(t.Shape)
}

// Equal reports whether o is a RaggedSpec with the same dtype, shape and
// ragged rank.
func (s *RaggedSpec) Equal(o Spec) bool {
	t, ok := o.(*RaggedSpec)
	return ok && s.DType == t.DType && s.RaggedRank == t.RaggedRank && s.Shape.Equal(t.Shape)
}

// Equal reports whether o is a StructSpec with the same shape and equal
// fields in the same order.
func (s *StructSpec) Equal(o Spec) bool {
	t, ok := o.(*StructSpec)
	if !ok || !s.Shape.Equal(t.Shape) || len(s.Fields) != len(t.Fields) {
		return false
	}
	for i := range s.Fields {
		if s.Fields[i].Name != t.Fields[i].Name || !s.Fields[i].Spec.Equal(t.Fields[i].Spec) {
			return false
		}
	}
	return true
}

// IsCompatibleWith reports whether o is a TensorSpec of the same dtype and
// a compatible shape.
func (s *TensorSpec) IsCompatibleWith(o Spec) bool {
	t, ok := o.(*TensorSpec)
	return ok && s.DType == t.DType && s.Shape.IsCompatibleWith(t.Shape)
}

// IsCompatibleWith reports whether o is a RaggedSpec of the same dtype and
// ragged rank and a compatible shape.
func (s *RaggedSpec) IsCompatibleWith(o Spec) bool {
	t, ok := o.(*RaggedSpec)
	return ok && s.DType == t.DType && s.RaggedRank == t.RaggedRank && s.Shape.IsCompatibleWith(t.Shape)
}

// IsCompatibleWith reports whether o is a StructSpec of compatible shape
// with the same field names in the same order and compatible field specs.
func (s *StructSpec) IsCompatibleWith(o Spec) bool {
	t, ok := o.(*StructSpec)
	if !ok || !s.Shape.IsCompatibleWith(t.Shape) || len(s.Fields) != len(t.Fields) {
		return false
	}
	for i := range s.Fields {
		if s.Fields[i].Name != t.Fields[i].Name || !s.Fields[i].Spec.IsCompatibleWith(t.Fields[i].Spec) {
			return false
		}
	}
	return true
}

// MaxSpecDepth bounds the nesting of structs in a spec's JSON form:
// MarshalSpec refuses a deeper spec with ErrSpec, so that everything it
// writes UnmarshalSpec reads (Go's JSON decoder, like most, accepts
// 10000 levels of JSON nesting, and each struct level takes three).
const MaxSpecDepth = 3000

// specJSON is the stable serialised form, decoded in one pass (fields
// hold their specs as trees, not raw text to parse again). Unknown
// dimensions are null.
type specJSON struct {
	Kind       string          `json:"kind"`
	DType      string          `json:"dtype,omitempty"`
	Shape      []*int          `json:"shape"`
	RaggedRank int             `json:"ragged_rank,omitempty"`
	Fields     []fieldSpecJSON `json:"fields,omitempty"`
}

type fieldSpecJSON struct {
	Name string    `json:"name"`
	Spec *specJSON `json:"spec"`
}

func shapeFromJSON(s []*int) Shape {
	out := make(Shape, len(s))
	for i, d := range s {
		out[i] = Unknown
		if d != nil {
			out[i] = *d
		}
	}
	return out
}

// MarshalJSON implements json.Marshaler:
// {"kind":"tensor","dtype":"int64","shape":[null,3]}.
func (s *TensorSpec) MarshalJSON() ([]byte, error) { return MarshalSpec(s) }

// MarshalJSON implements json.Marshaler:
// {"kind":"ragged","dtype":"string","shape":[null,null],"ragged_rank":1}.
func (s *RaggedSpec) MarshalJSON() ([]byte, error) { return MarshalSpec(s) }

// MarshalJSON implements json.Marshaler:
// {"kind":"struct","shape":[null],"fields":[{"name":"a","spec":{...}}]}.
func (s *StructSpec) MarshalJSON() ([]byte, error) { return MarshalSpec(s) }

// MarshalSpec returns the stable JSON form of s, in time linear in its
// length. A spec with structs nested deeper than MaxSpecDepth is refused.
func MarshalSpec(s Spec) ([]byte, error) {
	return appendSpecJSON(nil, s, 0)
}

func appendSpecJSON(b []byte, s Spec, depth int) ([]byte, error) {
	if depth > MaxSpecDepth {
		return nil, fmt.Errorf("%w: structs nested deeper than %d (MaxSpecDepth) have no JSON form", ErrSpec, MaxSpecDepth)
	}
	appendHead := func(kind string, dtype DType, shape Shape) {
		b = append(b, `{"kind":"`...)
		b = append(b, kind...)
		b = append(b, '"')
		if kind != "struct" {
			b = append(b, `,"dtype":`...)
			b = strconv.AppendQuote(b, dtype.String())
		}
		b = append(b, `,"shape":[`...)
		for i, d := range shape {
			if i > 0 {
				b = append(b, ',')
			}
			if d < 0 {
				b = append(b, "null"...)
			} else {
				b = strconv.AppendInt(b, int64(d), 10)
			}
		}
		b = append(b, ']')
	}
	switch x := s.(type) {
	case *TensorSpec:
		appendHead("tensor", x.DType, x.Shape)
	case *RaggedSpec:
		appendHead("ragged", x.DType, x.Shape)
		if x.RaggedRank != 0 {
			b = append(b, `,"ragged_rank":`...)
			b = strconv.AppendInt(b, int64(x.RaggedRank), 10)
		}
	case *StructSpec:
		appendHead("struct", 0, x.Shape)
		if len(x.Fields) > 0 {
			b = append(b, `,"fields":[`...)
			for i, f := range x.Fields {
				if i > 0 {
					b = append(b, ',')
				}
				name, err := json.Marshal(f.Name)
				if err != nil {
					return nil, err
				}
				b = append(b, `{"name":`...)
				b = append(b, name...)
				b = append(b, `,"spec":`...)
				if b, err = appendSpecJSON(b, f.Spec, depth+1); err != nil {
					return nil, err
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
	default:
		return nil, fmt.Errorf("%w: no JSON form for %T", ErrSpec, s)
	}
	return append(b, '}'), nil
}

// UnmarshalSpec parses the JSON form written by MarshalSpec, in one pass.
func UnmarshalSpec(b []byte) (Spec, error) {
	var j specJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the spec", ErrSpec)
	}
	return specFromJSON(&j)
}

func specFromJSON(j *specJSON) (Spec, error) {
	if j == nil {
		return nil, fmt.Errorf("%w: a field's spec is null", ErrSpec)
	}
	if j.Shape == nil {
		return nil, fmt.Errorf("%w: a %q spec has no shape", ErrSpec, j.Kind)
	}
	for i, d := range j.Shape {
		if d != nil && *d < 0 {
			return nil, fmt.Errorf("%w: dimension %d is %d (unknown dimensions are null)", ErrSpec, i, *d)
		}
	}
	shape := shapeFromJSON(j.Shape)
	if j.Kind != "struct" && len(j.Fields) > 0 {
		return nil, fmt.Errorf("%w: a %s spec has fields", ErrSpec, j.Kind)
	}
	if j.Kind != "ragged" && j.RaggedRank != 0 {
		return nil, fmt.Errorf("%w: a %s spec has a ragged_rank", ErrSpec, j.Kind)
	}
	switch j.Kind {
	case "tensor", "ragged":
		d, err := ParseDType(j.DType)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSpec, err)
		}
		if j.Kind == "tensor" {
			return &TensorSpec{DType: d, Shape: shape}, nil
		}
		if j.RaggedRank < 1 || j.RaggedRank >= len(shape) {
			return nil, fmt.Errorf("%w: ragged_rank %d for rank %d", ErrSpec, j.RaggedRank, len(shape))
		}
		return &RaggedSpec{DType: d, Shape: shape, RaggedRank: j.RaggedRank}, nil
	case "struct":
		if j.DType != "" {
			return nil, fmt.Errorf("%w: a struct spec has a dtype", ErrSpec)
		}
		s := &StructSpec{Shape: shape, Fields: make([]FieldSpec, len(j.Fields))}
		seen := make(map[string]bool, len(j.Fields))
		for i, f := range j.Fields {
			if !ValidFieldName(f.Name) {
				return nil, fmt.Errorf("%w: field name %q", ErrSpec, f.Name)
			}
			if seen[f.Name] {
				return nil, fmt.Errorf("%w: field %q appears twice", ErrSpec, f.Name)
			}
			seen[f.Name] = true
			fs, err := specFromJSON(f.Spec)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			// A field's full shape begins with the struct's shape.
			fshape := fs.ValueShape()
			if len(fshape) < len(shape) || !Shape(fshape[:len(shape)]).IsCompatibleWith(shape) {
				return nil, fmt.Errorf("%w: field %q has shape %v, which does not begin with the struct's shape %v", ErrSpec, f.Name, fshape, shape)
			}
			s.Fields[i] = FieldSpec{Name: f.Name, Spec: fs}
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: unknown spec kind %q", ErrSpec, j.Kind)
}

// WithRows returns s with dimension 0, which every field of a struct of
// rank >= 1 shares, n (Unknown for any number): the spec of a batch of n
// of the rows s describes. s is not modified; a rank-0 spec is returned
// as it is.
func WithRows(s Spec, n int) Spec {
	rows := func(sh Shape) Shape {
		sh = sh.clone()
		if len(sh) > 0 {
			sh[0] = n
		}
		return sh
	}
	switch x := s.(type) {
	case *TensorSpec:
		return &TensorSpec{DType: x.DType, Shape: rows(x.Shape)}
	case *RaggedSpec:
		return &RaggedSpec{DType: x.DType, Shape: rows(x.Shape), RaggedRank: x.RaggedRank}
	case *StructSpec:
		out := &StructSpec{Shape: rows(x.Shape), Fields: make([]FieldSpec, len(x.Fields))}
		for i, f := range x.Fields {
			out.Fields[i] = FieldSpec{Name: f.Name, Spec: WithRows(f.Spec, n)}
		}
		return out
	}
	return s
}

// AnyRows is WithRows(s, Unknown): the spec of a batch of any number of
// the rows s describes (what NewJSONLinesReader wants of a spec).
func AnyRows(s Spec) Spec { return WithRows(s, Unknown) }
