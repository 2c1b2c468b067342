package gostructs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	st "github.com/structtensor/structtensor-go/structtensor"
)

var (
	// ErrType marks a Go type with no StructTensor counterpart, or a value
	// whose dtype or shape does not fit the Go type it is read into.
	ErrType = errors.New("structtensor/gostructs: type mismatch")
	// ErrRange marks a value that does not fit the Go type it is read into
	// (an int32 outside int8, an optional value with two values).
	ErrRange = errors.New("structtensor/gostructs: value out of range")
)

const tagName = "structtensor"

// FromStructs returns rows as a rank-1 StructTensor: one row per element,
// one field per exported field of T (see the package doc for the mapping).
// T must be a struct type.
func FromStructs[T any](rows []T) (*st.StructTensor, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: FromStructs needs a slice of structs, got []%v", ErrType, typ)
	}
	b, err := newBuilder(typ, "")
	if err != nil {
		return nil, err
	}
	sb := b.(*structBuilder)
	rv := reflect.ValueOf(rows)
	for i := 0; i < rv.Len(); i++ {
		if err := sb.append(rv.Index(i)); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	v, err := sb.value()
	if err != nil {
		return nil, err
	}
	return v.(*st.StructTensor), nil
}

// structField is one converted field of a Go struct type.
type structField struct {
	name  string
	index []int
}

// fieldsOf lists the exported, untagged-or-tagged fields of a struct type.
func fieldsOf(typ reflect.Type, path string) ([]structField, error) {
	var out []structField
	seen := map[string]string{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup(tagName); ok {
			if tag == "-" {
				continue
			}
			if t, _, _ := strings.Cut(tag, ","); t != "" {
				name = t
			}
		}
		if !st.ValidFieldName(name) {
			return nil, fmt.Errorf("%w: field %s: %q is not a valid StructTensor field name", ErrType, joinPath(path, f.Name), name)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: fields %s and %s are both named %q", ErrType, prev, f.Name, name)
		}
		seen[name] = f.Name
		out = append(out, structField{name: name, index: f.Index})
	}
	return out, nil
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// builder appends Go values of one type into columns.
type builder interface {
	append(v reflect.Value) error
	value() (st.Value, error)
}

var bytesType = reflect.TypeFor[[]byte]()

func newBuilder(typ reflect.Type, path string) (builder, error) {
	if typ == bytesType {
		return &stringBuilder{offsets: []int64{0}, utf8: false, bytes: true}, nil
	}
	switch typ.Kind() {
	case reflect.Bool:
		return &scalarBuilder[bool]{conv: func(v reflect.Value) bool { return v.Bool() }}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return &scalarBuilder[int32]{conv: func(v reflect.Value) int32 { return int32(v.Int()) }}, nil
	case reflect.Int, reflect.Int64:
		return &scalarBuilder[int64]{conv: func(v reflect.Value) int64 { return v.Int() }}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &scalarBuilder[uint32]{conv: func(v reflect.Value) uint32 { return uint32(v.Uint()) }}, nil
	case reflect.Uint, reflect.Uint64:
		return &scalarBuilder[uint64]{conv: func(v reflect.Value) uint64 { return v.Uint() }}, nil
	case reflect.Float32:
		return &scalarBuilder[float32]{conv: func(v reflect.Value) float32 { return float32(v.Float()) }}, nil
	case reflect.Float64:
		return &scalarBuilder[float64]{conv: func(v reflect.Value) float64 { return v.Float() }}, nil
	case reflect.String:
		return &stringBuilder{offsets: []int64{0}, utf8: true}, nil
	case reflect.Struct:
		fields, err := fieldsOf(typ, path)
		if err != nil {
			return nil, err
		}
		sb := &structBuilder{fields: fields, builders: make([]builder, len(fields))}
		for i, f := range fields {
			b, err := newBuilder(typ.FieldByIndex(f.index).Type, joinPath(path, f.name))
			if err != nil {
				return nil, err
			}
			sb.builders[i] = b
		}
		return sb, nil
	case reflect.Slice, reflect.Pointer:
		elem, err := newBuilder(typ.Elem(), path)
		if err != nil {
			return nil, err
		}
		return &listBuilder{elem: elem, splits: []int64{0}, uniform: -1, optional: typ.Kind() == reflect.Pointer}, nil
	case reflect.Array:
		elem, err := newBuilder(typ.Elem(), path)
		if err != nil {
			return nil, err
		}
		return &listBuilder{elem: elem, uniform: typ.Len()}, nil
	}
	return nil, fmt.Errorf("%w: field %s has Go type %v, which has no StructTensor counterpart", ErrType, pathName(path), typ)
}

func pathName(path string) string {
	if path == "" {
		return "(row)"
	}
	return path
}

type scalarBuilder[T bool | int32 | int64 | uint32 | uint64 | float32 | float64] struct {
	vals []T
	conv func(reflect.Value) T
}

func (b *scalarBuilder[T]) append(v reflect.Value) error {
	b.vals = append(b.vals, b.conv(v))
	return nil
}

func (b *scalarBuilder[T]) value() (st.Value, error) {
	if b.vals == nil {
		b.vals = []T{}
	}
	return st.NewTensor(nil, b.vals)
}

type stringBuilder struct {
	data    []byte
	offsets []int64
	utf8    bool
	bytes   bool
}

func (b *stringBuilder) append(v reflect.Value) error {
	if b.bytes {
		b.data = append(b.data, v.Bytes()...)
	} else {
		s := v.String()
		b.utf8 = b.utf8 && utf8.ValidString(s)
		b.data = append(b.data, s...)
	}
	b.offsets = append(b.offsets, int64(len(b.data)))
	return nil
}

func (b *stringBuilder) value() (st.Value, error) {
	return st.NewStringTensor(nil, b.data, b.offsets, b.utf8)
}

type structBuilder struct {
	fields   []structField
	builders []builder
	n        int
}

func (b *structBuilder) append(v reflect.Value) error {
	for i, f := range b.fields {
		if err := b.builders[i].append(v.FieldByIndex(f.index)); err != nil {
			return fmt.Errorf("field %q: %w", f.name, err)
		}
	}
	b.n++
	return nil
}

func (b *structBuilder) value() (st.Value, error) {
	fields := make([]st.Field, len(b.fields))
	for i, f := range b.fields {
		v, err := b.builders[i].value()
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
		fields[i] = st.Field{Name: f.name, Value: v}
	}
	return st.NewStruct(b.n, fields...)
}

// listBuilder builds a slice (ragged), pointer (0/1 ragged) or array
// (uniform) dimension.
type listBuilder struct {
	elem     builder
	splits   []int64
	uniform  int // array length, or -1
	optional bool
	n        int
	total    int64
}

func (b *listBuilder) append(v reflect.Value) error {
	b.n++
	if b.optional {
		if !v.IsNil() {
			if err := b.elem.append(v.Elem()); err != nil {
				return err
			}
			b.total++
		}
		b.splits = append(b.splits, b.total)
		return nil
	}
	for i := 0; i < v.Len(); i++ {
		if err := b.elem.append(v.Index(i)); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	b.total += int64(v.Len())
	if b.uniform < 0 {
		b.splits = append(b.splits, b.total)
	}
	return nil
}

func (b *listBuilder) value() (st.Value, error) {
	inner, err := b.elem.value()
	if err != nil {
		return nil, err
	}
	var p *st.RowPartition
	if b.uniform >= 0 {
		p, err = st.NewUniformPartition(b.n, b.uniform)
	} else {
		p, err = st.NewRowSplits(b.splits)
	}
	if err != nil {
		return nil, err
	}
	if inner.Rank() == 0 {
		return nil, fmt.Errorf("%w: list of scalars", ErrType)
	}
	return st.JoinOuterDims([]*st.RowPartition{p}, inner)
}
