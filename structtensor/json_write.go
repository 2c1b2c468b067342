package structtensor

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// The JSON writer: the inverse of the reader in json.go.

// ToJSON returns v as one JSON value, the inverse of FromJSON: structs are
// objects with their fields in order, dimensions are arrays, int64 and
// uint64 are written exactly, floats in the shortest form that reads back
// to the same value (always with a '.' or an exponent, so that they read
// back as floats), and the non-finite floats as the strings "NaN",
// "Infinity" and "-Infinity" (FromJSON reads those back when a spec says
// the field is a float). A string that is not valid UTF-8 is written as
// its standard base64 encoding, which reads back as that text, not as the
// original bytes.
func ToJSON(v Value) ([]byte, error) {
	var w jsonWriter
	if err := w.value(v); err != nil {
		return nil, err
	}
	return w.buf, nil
}

// WriteJSON writes ToJSON(v) to out.
func WriteJSON(out io.Writer, v Value) error {
	b, err := ToJSON(v)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// ToJSONLines returns the rows of v (rank >= 1) as JSON lines, one row per
// line, each ending with a newline: the inverse of FromJSONLines.
func ToJSONLines(v Value) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteJSONLines(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteJSONLines writes the rows of v (rank >= 1) to out, one JSON value
// per line.
func WriteJSONLines(out io.Writer, v Value) error {
	if v.Rank() == 0 {
		return fmt.Errorf("%w: JSON lines need a value of rank >= 1, not a scalar", ErrShape)
	}
	var w jsonWriter
	for i := 0; i < v.NumRows(); i++ {
		if err := w.row(v, i); err != nil {
			return err
		}
		w.buf = append(w.buf, '\n')
		if len(w.buf) >= 1<<16 {
			if _, err := out.Write(w.buf); err != nil {
				return err
			}
			w.buf = w.buf[:0]
		}
	}
	_, err := out.Write(w.buf)
	return err
}

type jsonWriter struct {
	buf []byte
}

func (w *jsonWriter) value(v Value) error {
	if v == nil {
		return fmt.Errorf("%w: nil value", ErrShape)
	}
	if v.Rank() == 0 {
		switch x := v.(type) {
		case *Tensor:
			w.elem(x, 0)
			return nil
		case *StructTensor:
			w.buf = append(w.buf, '{')
			for i, f := range x.fields {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				w.buf = append(w.buf, '"')
				w.buf = append(w.buf, f.Name...)
				w.buf = append(w.buf, '"', ':')
				if err := w.value(f.Value); err != nil {
					return err
				}
			}
			w.buf = append(w.buf, '}')
			return nil
		}
		return fmt.Errorf("%w: unknown value type %T", ErrShape, v)
	}
	w.buf = append(w.buf, '[')
	for i := 0; i < v.NumRows(); i++ {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		if err := w.row(v, i); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, ']')
	return nil
}

// row writes row i of v (rank >= 1).
func (w *jsonWriter) row(v Value, i int) error {
	switch x := v.(type) {
	case *Tensor:
		w.block(x, i*x.innerSize(), x.shape[1:])
	case *Ragged:
		w.nested(x.partitions, i, x.values, nil)
	case *StructTensor:
		w.nested(x.partitions, i, nil, x)
	default:
		return fmt.Errorf("%w: unknown value type %T", ErrShape, v)
	}
	return nil
}

// block writes the dense block of t at flat offset off with the given
// shape.
func (w *jsonWriter) block(t *Tensor, off int, shape Shape) {
	if len(shape) == 0 {
		w.elem(t, off)
		return
	}
	w.buf = append(w.buf, '[')
	inner := Shape(shape[1:]).NumElements()
	for i := 0; i < shape[0]; i++ {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.block(t, off+i*inner, shape[1:])
	}
	w.buf = append(w.buf, ']')
}

// nested writes row i of partitions applied to flat values t (a Tensor)
// or to the elements of st.
func (w *jsonWriter) nested(parts []*RowPartition, i int, t *Tensor, st *StructTensor) {
	if len(parts) == 0 {
		if t != nil {
			w.block(t, i*t.innerSize(), t.shape[1:])
		} else {
			w.structElem(st, i)
		}
		return
	}
	p := parts[0]
	w.buf = append(w.buf, '[')
	for j, end := p.RowStart(i), p.RowLimit(i); j < end; j++ {
		if j > p.RowStart(i) {
			w.buf = append(w.buf, ',')
		}
		w.nested(parts[1:], j, t, st)
	}
	w.buf = append(w.buf, ']')
}

// structElem writes flat element j of st as an object.
func (w *jsonWriter) structElem(st *StructTensor, j int) {
	w.buf = append(w.buf, '{')
	for k, f := range st.fields {
		if k > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, f.Name...)
		w.buf = append(w.buf, '"', ':')
		w.row(f.Value, j)
	}
	w.buf = append(w.buf, '}')
}

func (w *jsonWriter) elem(t *Tensor, i int) {
	switch v := t.data.(type) {
	case []bool:
		w.buf = strconv.AppendBool(w.buf, v[i])
	case []int32:
		w.buf = strconv.AppendInt(w.buf, int64(v[i]), 10)
	case []int64:
		w.buf = strconv.AppendInt(w.buf, v[i], 10)
	case []uint32:
		w.buf = strconv.AppendUint(w.buf, uint64(v[i]), 10)
	case []uint64:
		w.buf = strconv.AppendUint(w.buf, v[i], 10)
	case []float32:
		w.float(float64(v[i]), 32)
	case []float64:
		w.float(v[i], 64)
	default:
		w.string(t.StringAt(i))
	}
}

func (w *jsonWriter) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		w.buf = append(w.buf, `"NaN"`...)
		return
	case math.IsInf(f, 1):
		w.buf = append(w.buf, `"Infinity"`...)
		return
	case math.IsInf(f, -1):
		w.buf = append(w.buf, `"-Infinity"`...)
		return
	}
	// Plain decimals between 1e-6 and 1e21, exponents outside, as
	// encoding/json and JavaScript write numbers.
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(w.buf)
	w.buf = strconv.AppendFloat(w.buf, f, format, -1, bits)
	if bytes.IndexAny(w.buf[start:], ".e") < 0 {
		w.buf = append(w.buf, '.', '0')
	}
}

const hexDigits = "0123456789abcdef"

func (w *jsonWriter) string(s []byte) {
	if !utf8.Valid(s) {
		w.buf = append(w.buf, '"')
		w.buf = base64.StdEncoding.AppendEncode(w.buf, s)
		w.buf = append(w.buf, '"')
		return
	}
	w.buf = append(w.buf, '"')
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.buf = append(w.buf, s[last:i]...)
		switch c {
		case '"', '\\':
			w.buf = append(w.buf, '\\', c)
		case '\n':
			w.buf = append(w.buf, '\\', 'n')
		case '\r':
			w.buf = append(w.buf, '\\', 'r')
		case '\t':
			w.buf = append(w.buf, '\\', 't')
		default:
			w.buf = append(w.buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		last = i + 1
	}
	w.buf = append(w.buf, s[last:]...)
	w.buf = append(w.buf, '"')
}
