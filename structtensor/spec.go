package structtensor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
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

func (s *TensorSpec) String() string {
	return fmt.Sprintf("TensorSpec(%v, %v)", s.Shape, s.DType)
}

func (s *RaggedSpec) String() string {
	return fmt.Sprintf("RaggedTensorSpec(%v, %v, ragged_rank=%d)", s.Shape, s.DType, s.RaggedRank)
}

func (s *StructSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "StructSpec(%v, {", s.Shape)
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %v", f.Name, f.Spec)
	}
	b.WriteString("})")
	return b.String()
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

// specJSON is the stable serialised form. Unknown dimensions are null.
type specJSON struct {
	Kind       string          `json:"kind"`
	DType      string          `json:"dtype,omitempty"`
	Shape      []*int          `json:"shape"`
	RaggedRank int             `json:"ragged_rank,omitempty"`
	Fields     []fieldSpecJSON `json:"fields,omitempty"`
}

type fieldSpecJSON struct {
	Name string          `json:"name"`
	Spec json.RawMessage `json:"spec"`
}

func shapeJSON(s Shape) []*int {
	out := make([]*int, len(s))
	for i, d := range s {
		if d >= 0 {
			d := d
			out[i] = &d
		}
	}
	return out
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
func (s *TensorSpec) MarshalJSON() ([]byte, error) {
	return json.Marshal(specJSON{Kind: "tensor", DType: s.DType.String(), Shape: shapeJSON(s.Shape)})
}

// MarshalJSON implements json.Marshaler:
// {"kind":"ragged","dtype":"string","shape":[null,null],"ragged_rank":1}.
func (s *RaggedSpec) MarshalJSON() ([]byte, error) {
	return json.Marshal(specJSON{Kind: "ragged", DType: s.DType.String(), Shape: shapeJSON(s.Shape), RaggedRank: s.RaggedRank})
}

// MarshalJSON implements json.Marshaler:
// {"kind":"struct","shape":[null],"fields":[{"name":"a","spec":{...}}]}.
func (s *StructSpec) MarshalJSON() ([]byte, error) {
	j := specJSON{Kind: "struct", Shape: shapeJSON(s.Shape), Fields: make([]fieldSpecJSON, len(s.Fields))}
	for i, f := range s.Fields {
		b, err := json.Marshal(f.Spec)
		if err != nil {
			return nil, err
		}
		j.Fields[i] = fieldSpecJSON{Name: f.Name, Spec: b}
	}
	return json.Marshal(j)
}

// MarshalSpec returns the stable JSON form of s.
func MarshalSpec(s Spec) ([]byte, error) { return json.Marshal(s) }

// UnmarshalSpec parses the JSON form written by MarshalSpec.
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
	return specFromJSON(j, b)
}

func specFromJSON(j specJSON, raw []byte) (Spec, error) {
	if j.Shape == nil {
		return nil, fmt.Errorf("%w: spec has no shape: %s", ErrSpec, raw)
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
			fs, err := UnmarshalSpec(f.Spec)
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
