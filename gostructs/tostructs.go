package gostructs

import (
	"fmt"
	"reflect"
	"strings"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// ToStructs returns one T (a struct type) per row of s, a rank-1
// StructTensor: the inverse of FromStructs. Every field of T must be
// present in s (fields of s that T lacks are ignored) with a dtype and
// shape that fit its Go type; narrow integer types are range checked.
// Empty lists and absent optional values become nil. The result is the
// caller's: strings and slices are copies, never views of s's storage.
func ToStructs[T any](s *st.StructTensor) ([]T, error) {
	var rows []T
	if err := toStructs(s, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

func toStructs(s *st.StructTensor, out any) error {
	pv := reflect.ValueOf(out)
	if pv.Elem().Type().Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%w: ToStructs needs a struct type, got %v", ErrType, pv.Elem().Type().Elem())
	}
	if s == nil || s.Rank() != 1 {
		shape := st.Shape(nil)
		if s != nil {
			shape = s.Shape()
		}
		return fmt.Errorf("%w: ToStructs needs a rank-1 StructTensor, got shape %v", ErrType, shape)
	}
	typ := pv.Elem().Type().Elem()
	r, err := newReader(typ, s, "")
	if err != nil {
		return err
	}
	rows := reflect.MakeSlice(pv.Elem().Type(), s.NumRows(), s.NumRows())
	for i := 0; i < s.NumRows(); i++ {
		if err := r.set(rows.Index(i), i); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	pv.Elem().Set(rows)
	return nil
}

// reader fills a Go value from row i of a value of rank >= 1.
type reader interface {
	set(dst reflect.Value, i int) error
}

func newReader(typ reflect.Type, v st.Value, path string) (reader, error) {
	mismatch := func() error {
		return fmt.Errorf("%w: field %s: a %v of shape %v does not fit Go type %v", ErrType, pathName(path), kindOf(v), v.Shape(), typ)
	}
	if typ == bytesType {
		t, ok := v.(*st.Tensor)
		if !ok || t.Rank() != 1 || t.DType() != st.String {
			return nil, mismatch()
		}
		return bytesReader{t}, nil
	}
	switch typ.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		t, ok := v.(*st.Tensor)
		if !ok || t.Rank() != 1 || !fits(t.DType(), typ.Kind()) {
			return nil, mismatch()
		}
		return scalarReader{t: t, path: path}, nil
	case reflect.Struct:
		s, ok := v.(*st.StructTensor)
		if !ok || s.Rank() != 1 {
			return nil, mismatch()
		}
		fields, err := fieldsOf(typ, path)
		if err != nil {
			return nil, err
		}
		r := structReader{fields: fields, readers: make([]reader, len(fields))}
		for k, f := range fields {
			fv, ok := s.Field(f.name)
			if !ok {
				return nil, fmt.Errorf("%w: field %s: no such field in the StructTensor (fields: %s)", ErrType,
					joinPath(path, f.name), strings.Join(s.FieldNames(), ", "))
			}
			if r.readers[k], err = newReader(typ.FieldByIndex(f.index).Type, fv, joinPath(path, f.name)); err != nil {
				return nil, err
			}
		}
		return r, nil
	case reflect.Slice, reflect.Pointer, reflect.Array:
		if v.Rank() < 2 {
			return nil, mismatch()
		}
		parts, inner, err := st.SplitOuterDims(v, 2)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", pathName(path), err)
		}
		elem, err := newReader(typ.Elem(), inner, path)
		if err != nil {
			return nil, err
		}
		return listReader{typ: typ, p: parts[0], elem: elem, path: path}, nil
	}
	return nil, fmt.Errorf("%w: field %s has Go type %v, which has no StructTensor counterpart", ErrType, pathName(path), typ)
}

func kindOf(v st.Value) string {
	switch x := v.(type) {
	case *st.Tensor:
		return x.DType().String() + " tensor"
	case *st.Ragged:
		return x.DType().String() + " ragged"
	}
	return "struct"
}

// fits reports whether dtype d reads into Go kind k without a change of
// kind (integer widths are range-checked per value).
func fits(d st.DType, k reflect.Kind) bool {
	switch k {
	case reflect.Bool:
		return d == st.Bool
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int, reflect.Int64:
		return d == st.Int32 || d == st.Int64
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint, reflect.Uint64:
		return d == st.Uint32 || d == st.Uint64
	case reflect.Float32, reflect.Float64:
		return d == st.Float32 || d == st.Float64
	case reflect.String:
		return d == st.String
	}
	return false
}

type scalarReader struct {
	t    *st.Tensor
	path string
}

func (r scalarReader) set(dst reflect.Value, i int) error {
	switch r.t.DType() {
	case st.Bool:
		dst.SetBool(r.t.Bools()[i])
	case st.Int32, st.Int64:
		var x int64
		if r.t.DType() == st.Int32 {
			x = int64(r.t.Int32s()[i])
		} else {
			x = r.t.Int64s()[i]
		}
		if dst.OverflowInt(x) {
			return fmt.Errorf("%w: field %s: %d does not fit %v", ErrRange, pathName(r.path), x, dst.Type())
		}
		dst.SetInt(x)
	case st.Uint32, st.Uint64:
		var x uint64
		if r.t.DType() == st.Uint32 {
			x = uint64(r.t.Uint32s()[i])
		} else {
			x = r.t.Uint64s()[i]
		}
		if dst.OverflowUint(x) {
			return fmt.Errorf("%w: field %s: %d does not fit %v", ErrRange, pathName(r.path), x, dst.Type())
		}
		dst.SetUint(x)
	case st.Float32:
		dst.SetFloat(float64(r.t.Float32s()[i]))
	case st.Float64:
		dst.SetFloat(r.t.Float64s()[i])
	case st.String:
		dst.SetString(string(r.t.StringAt(i)))
	}
	return nil
}

type bytesReader struct{ t *st.Tensor }

func (r bytesReader) set(dst reflect.Value, i int) error {
	if b := r.t.StringAt(i); len(b) > 0 {
		dst.SetBytes(append([]byte(nil), b...))
	}
	return nil
}

type structReader struct {
	fields  []structField
	readers []reader
}

func (r structReader) set(dst reflect.Value, i int) error {
	for k, f := range r.fields {
		if err := r.readers[k].set(dst.FieldByIndex(f.index), i); err != nil {
			return err
		}
	}
	return nil
}

type listReader struct {
	typ  reflect.Type
	p    *st.RowPartition
	elem reader
	path string
}

func (r listReader) set(dst reflect.Value, i int) error {
	start, n := r.p.RowStart(i), r.p.RowLength(i)
	switch r.typ.Kind() {
	case reflect.Pointer:
		switch n {
		case 0:
			return nil
		case 1:
			e := reflect.New(r.typ.Elem())
			if err := r.elem.set(e.Elem(), start); err != nil {
				return err
			}
			dst.Set(e)
			return nil
		}
		return fmt.Errorf("%w: field %s: optional value holds %d values", ErrRange, pathName(r.path), n)
	case reflect.Array:
		if n != r.typ.Len() {
			return fmt.Errorf("%w: field %s: %d values for %v", ErrRange, pathName(r.path), n, r.typ)
		}
	default:
		if n == 0 {
			return nil
		}
		dst.Set(reflect.MakeSlice(r.typ, n, n))
	}
	for k := 0; k < n; k++ {
		if err := r.elem.set(dst.Index(k), start+k); err != nil {
			return fmt.Errorf("[%d]: %w", k, err)
		}
	}
	return nil
}
