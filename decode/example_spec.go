package decode

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/structtensor/structtensor-go/structtensor"
)

// FeatureKind is the kind of a Feature, after tf.io's feature classes.
type FeatureKind uint8

// Feature kinds.
const (
	// FixedLen is tf.io.FixedLenFeature: exactly as many values as Shape
	// holds in every record, Default when absent (absent without Default
	// is ErrFeatureMissing). Decodes to a dense [B, Shape...] Tensor.
	FixedLen FeatureKind = iota + 1
	// VarLen is tf.io.VarLenFeature: any number of values. Decodes to a
	// ragged [B, None] (TensorFlow gives the same values as a
	// SparseTensor).
	VarLen
	// Ragged is tf.io.RaggedFeature: the values of Key (ValueKey)
	// partitioned by Partitions, outermost first. Decodes to a ragged
	// [B, p1, ..., pk, None].
	Ragged
	// FixedLenSequence is tf.io.FixedLenSequenceFeature: a multiple of
	// Shape's values in a tf.Example, or one Shape of values per step in
	// a SequenceExample's feature list. Decodes to a ragged
	// [B, None, Shape...] (TensorFlow pads it to a dense tensor).
	FixedLenSequence
)

var featureKindNames = map[FeatureKind]string{
	FixedLen: "fixed_len", VarLen: "var_len", Ragged: "ragged", FixedLenSequence: "fixed_len_sequence",
}

func (k FeatureKind) String() string {
	if s, ok := featureKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("FeatureKind(%d)", uint8(k))
}

// MarshalText gives the JSON name of the kind.
func (k FeatureKind) MarshalText() ([]byte, error) {
	if s, ok := featureKindNames[k]; ok {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("%w: unknown feature kind %d", ErrFeatureSpec, uint8(k))
}

// UnmarshalText reads a JSON name of a kind.
func (k *FeatureKind) UnmarshalText(b []byte) error {
	for kk, s := range featureKindNames {
		if s == string(b) {
			*k = kk
			return nil
		}
	}
	return fmt.Errorf("%w: unknown feature kind %q (want fixed_len, var_len, ragged or fixed_len_sequence)", ErrFeatureSpec, b)
}

// PartitionKind is the kind of a Ragged feature's partition, after
// tf.io.RaggedFeature's partition classes.
type PartitionKind uint8

// Partition kinds.
const (
	// RowSplits reads the row splits of each record from an int64 feature.
	RowSplits PartitionKind = iota + 1
	// RowLengths reads the row lengths of each record from an int64 feature.
	RowLengths
	// UniformRowLength cuts rows of Length values.
	UniformRowLength
	// ValueRowIds reads, from an int64 feature, the row of each item (a
	// non-decreasing list of one id >= 0 per item): a record has as many
	// rows as its largest id plus one, and none when the list is empty.
	ValueRowIds
	// RowStarts reads the start of each row from an int64 feature (0
	// first, non-decreasing, none past the record's items): the last row
	// ends at the record's last item.
	RowStarts
	// RowLimits reads the end of each row from an int64 feature (row
	// splits without their leading 0): the last limit is the record's
	// number of items.
	RowLimits
)

var partitionKindNames = map[PartitionKind]string{
	RowSplits: "row_splits", RowLengths: "row_lengths", UniformRowLength: "uniform_row_length",
	ValueRowIds: "value_rowids", RowStarts: "row_starts", RowLimits: "row_limits",
}

func (k PartitionKind) String() string {
	if s, ok := partitionKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("PartitionKind(%d)", uint8(k))
}

// MarshalText gives the JSON name of the kind.
func (k PartitionKind) MarshalText() ([]byte, error) {
	if s, ok := partitionKindNames[k]; ok {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("%w: unknown partition kind %d", ErrFeatureSpec, uint8(k))
}

// UnmarshalText reads a JSON name of a kind.
func (k *PartitionKind) UnmarshalText(b []byte) error {
	for kk, s := range partitionKindNames {
		if s == string(b) {
			*k = kk
			return nil
		}
	}
	return fmt.Errorf("%w: unknown partition kind %q (want row_splits, row_lengths, uniform_row_length, value_rowids, row_starts or row_limits)", ErrFeatureSpec, b)
}

// Partition is one partition of a Ragged feature. Each record's values
// are partitioned by the record's own partition features, innermost
// partition first, as tf.io.RaggedFeature partitions one example.
type Partition struct {
	Kind PartitionKind `json:"kind"`
	// Key is the int64 feature holding the splits, lengths, row ids,
	// starts or limits.
	Key string `json:"key,omitempty"`
	// Length is the row length of a UniformRowLength partition.
	Length int `json:"length,omitempty"`
}

// Feature is how one output field is read from a tf.Example (or from a
// SequenceExample's context or feature lists).
type Feature struct {
	Kind FeatureKind `json:"kind"`
	// Key is the feature's key in the record (the value key of a Ragged
	// feature); empty means the output field's name.
	Key string `json:"key,omitempty"`
	// DType is Int64, Float32 or String (the int64_list, float_list and
	// bytes_list of tf.train.Feature).
	DType structtensor.DType `json:"dtype"`
	// Shape is the shape of one record's values (FixedLen) or of one step
	// (FixedLenSequence); empty is a scalar.
	Shape []int `json:"shape,omitempty"`
	// Default is the value of an absent FixedLen feature: a []int64,
	// []float32 or []string (or [][]byte) holding the product of Shape
	// values, a single value of those types when Shape holds one, or nil
	// to make the feature required. In JSON, a number, a string, or
	// (nested) arrays of them, flattened in row-major order.
	Default any `json:"default,omitempty"`
	// AllowMissing lets a SequenceExample's FixedLenSequence feature list
	// be absent (zero steps); without it an absent list is
	// ErrFeatureMissing, as in tf.io.parse_sequence_example.
	AllowMissing bool `json:"allow_missing,omitempty"`
	// Partitions of a Ragged feature, outermost first.
	Partitions []Partition `json:"partitions,omitempty"`
}

// ExampleSpec maps output field names to features: the feature spec of
// tf.io.parse_example (Features) and tf.io.parse_sequence_example
// (Features for the context, SequenceFeatures for the feature lists).
// Output fields are ordered by name, context first.
type ExampleSpec struct {
	Features         map[string]Feature `json:"features,omitempty"`
	SequenceFeatures map[string]Feature `json:"sequence_features,omitempty"`
}

// ParseExampleSpec reads an ExampleSpec from its JSON form:
//
//	{"features": {
//	   "age":    {"kind": "fixed_len", "dtype": "int64", "default": -1},
//	   "emb":    {"kind": "fixed_len", "dtype": "float32", "shape": [4]},
//	   "tags":   {"kind": "var_len", "dtype": "string", "key": "query/tags"},
//	   "tokens": {"kind": "ragged", "dtype": "string",
//	              "partitions": [{"kind": "row_lengths", "key": "sentence_lengths"}]}},
//	 "sequence_features": {...}}
//
// Partition kinds are row_splits, row_lengths, value_rowids, row_starts
// and row_limits (each with the "key" of its int64 feature), and
// uniform_row_length (with a "length").
func ParseExampleSpec(b []byte) (*ExampleSpec, error) {
	var raw struct {
		Features         map[string]json.RawMessage `json:"features"`
		SequenceFeatures map[string]json.RawMessage `json:"sequence_features"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFeatureSpec, err)
	}
	spec := &ExampleSpec{}
	for _, sec := range []struct {
		raw map[string]json.RawMessage
		out *map[string]Feature
	}{{raw.Features, &spec.Features}, {raw.SequenceFeatures, &spec.SequenceFeatures}} {
		if sec.raw == nil {
			continue
		}
		*sec.out = make(map[string]Feature, len(sec.raw))
		for name, m := range sec.raw {
			f, err := parseFeatureJSON(m)
			if err != nil {
				return nil, fmt.Errorf("feature %q: %w", name, err)
			}
			(*sec.out)[name] = f
		}
	}
	return spec, nil
}

func parseFeatureJSON(m json.RawMessage) (Feature, error) {
	var f struct {
		Feature
		Default json.RawMessage `json:"default"`
	}
	dec := json.NewDecoder(strings.NewReader(string(m)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Feature{}, fmt.Errorf("%w: %v", ErrFeatureSpec, err)
	}
	out := f.Feature
	if len(f.Default) > 0 && string(f.Default) != "null" {
		var v any
		d := json.NewDecoder(strings.NewReader(string(f.Default)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return Feature{}, fmt.Errorf("%w: default: %v", ErrFeatureSpec, err)
		}
		var flat []any
		var walk func(any)
		walk = func(v any) {
			if l, ok := v.([]any); ok {
				for _, e := range l {
					walk(e)
				}
				return
			}
			flat = append(flat, v)
		}
		walk(v)
		switch out.DType {
		case structtensor.Int64:
			vals := make([]int64, len(flat))
			for i, e := range flat {
				n, ok := e.(json.Number)
				if !ok {
					return Feature{}, fmt.Errorf("%w: default: %v is not an int64", ErrFeatureSpec, e)
				}
				x, err := n.Int64()
				if err != nil {
					return Feature{}, fmt.Errorf("%w: default: %v", ErrFeatureSpec, err)
				}
				vals[i] = x
			}
			out.Default = vals
		case structtensor.Float32:
			vals := make([]float32, len(flat))
			for i, e := range flat {
				n, ok := e.(json.Number)
				if !ok {
					return Feature{}, fmt.Errorf("%w: default: %v is not a number", ErrFeatureSpec, e)
				}
				x, err := n.Float64()
				if err != nil {
					return Feature{}, fmt.Errorf("%w: default: %v", ErrFeatureSpec, err)
				}
				vals[i] = float32(x)
			}
			out.Default = vals
		case structtensor.String:
			vals := make([]string, len(flat))
			for i, e := range flat {
				s, ok := e.(string)
				if !ok {
					return Feature{}, fmt.Errorf("%w: default: %v is not a string", ErrFeatureSpec, e)
				}
				vals[i] = s
			}
			out.Default = vals
		default:
			return Feature{}, fmt.Errorf("%w: dtype %v (want int64, float32 or string)", ErrFeatureSpec, out.DType)
		}
	}
	return out, nil
}

// numElements is the product of a shape's dimensions.
func numElements(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("%w: shape %v has a negative dimension", ErrFeatureSpec, shape)
		}
		if d > 0 && n > math.MaxInt32/d {
			return 0, fmt.Errorf("%w: shape %v is too large", ErrFeatureSpec, shape)
		}
		n *= d
	}
	return n, nil
}

// defaultValues returns f.Default as []int64, []float32 or [][]byte of n
// values, or nil when there is none.
func (f *Feature) defaultValues(n int) (any, error) {
	if f.Default == nil {
		return nil, nil
	}
	var got int
	var out any
	switch v := f.Default.(type) {
	case int64:
		out, got = []int64{v}, 1
	case int:
		out, got = []int64{int64(v)}, 1
	case float32:
		out, got = []float32{v}, 1
	case float64:
		out, got = []float32{float32(v)}, 1
	case string:
		out, got = [][]byte{[]byte(v)}, 1
	case []byte:
		out, got = [][]byte{v}, 1
	case []int64:
		out, got = v, len(v)
	case []float32:
		out, got = v, len(v)
	case []string:
		b := make([][]byte, len(v))
		for i, s := range v {
			b[i] = []byte(s)
		}
		out, got = b, len(v)
	case [][]byte:
		out, got = v, len(v)
	default:
		return nil, fmt.Errorf("%w: default of type %T", ErrFeatureSpec, f.Default)
	}
	ok := false
	switch out.(type) {
	case []int64:
		ok = f.DType == structtensor.Int64
	case []float32:
		ok = f.DType == structtensor.Float32
	case [][]byte:
		ok = f.DType == structtensor.String
	}
	if !ok {
		return nil, fmt.Errorf("%w: default of type %T for dtype %v", ErrFeatureSpec, f.Default, f.DType)
	}
	if got != n {
		return nil, fmt.Errorf("%w: default has %d values, shape %v holds %d", ErrFeatureSpec, got, f.Shape, n)
	}
	return out, nil
}

// sortedNames returns the keys of m in order.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
