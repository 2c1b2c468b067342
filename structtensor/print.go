package structtensor

import (
	"math"
	"strconv"
	"strings"
)

// printEdge is how many items String shows at each end of a dimension
// longer than 2*printEdge, with "..." between them, as NumPy and
// TensorFlow summarise large arrays.
const printEdge = 3

// String formats t on one line with its shape and dtype:
//
//	Tensor([[1, 2, 3], [4, 5, 6]], shape=[2, 3], dtype=int64)
//
// Dimensions longer than six show their first and last three items around
// "...". Strings are quoted, with non-printable bytes escaped.
func (t *Tensor) String() string {
	var b strings.Builder
	b.WriteString("Tensor(")
	writeDense(&b, t, 0, t.shape)
	b.WriteString(", shape=")
	b.WriteString(t.shape.String())
	b.WriteString(", dtype=")
	b.WriteString(t.dtype.String())
	b.WriteByte(')')
	return b.String()
}

// String formats r on one line with its shape and dtype:
//
//	Ragged([[1, 2], [], [3]], shape=[3, None], dtype=int64)
//
// Long rows are shortened as in Tensor.String.
func (r *Ragged) String() string {
	var b strings.Builder
	b.WriteString("Ragged(")
	writeList(&b, r.NumRows(), func(i int) { writeRaggedRow(&b, r, 0, i) })
	b.WriteString(", shape=")
	b.WriteString(r.Shape().String())
	b.WriteString(", dtype=")
	b.WriteString(r.DType().String())
	b.WriteByte(')')
	return b.String()
}

// String formats st on several lines, as TensorFlow prints a
// StructuredTensor: its shape, then each field with its full-shape value,
// nested structs indented:
//
//	StructTensor(shape=[2], fields={
//	  a: Tensor([1, 2], shape=[2], dtype=int64)
//	  b: Ragged([["x"], []], shape=[2, None], dtype=string)
//	})
func (st *StructTensor) String() string {
	var b strings.Builder
	writeStruct(&b, st, "")
	return b.String()
}

func writeStruct(b *strings.Builder, st *StructTensor, indent string) {
	b.WriteString("StructTensor(shape=")
	b.WriteString(st.Shape().String())
	b.WriteString(", fields={")
	if len(st.fields) == 0 {
		b.WriteString("})")
		return
	}
	b.WriteByte('\n')
	for _, f := range st.fields {
		b.WriteString(indent)
		b.WriteString("  ")
		b.WriteString(f.Name)
		b.WriteString(": ")
		v, err := JoinOuterDims(st.partitions, f.Value)
		if err != nil {
			// Construction checked the nesting; show the flat value.
			v = f.Value
		}
		if s, ok := v.(*StructTensor); ok {
			writeStruct(b, s, indent+"  ")
		} else {
			b.WriteString(v.(interface{ String() string }).String())
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent)
	b.WriteString("})")
}

// writeList writes [item(0), ..., item(n-1)], eliding the middle of long
// lists.
func writeList(b *strings.Builder, n int, item func(i int)) {
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if n > 2*printEdge && i == printEdge {
			b.WriteString(", ...")
			i = n - printEdge
		}
		if i > 0 {
			b.WriteString(", ")
		}
		item(i)
	}
	b.WriteByte(']')
}

// writeDense writes the block of t of the given shape that starts at flat
// element start.
func writeDense(b *strings.Builder, t *Tensor, start int, shape Shape) {
	if len(shape) == 0 {
		writeElem(b, t, start)
		return
	}
	size := Shape(shape[1:]).NumElements()
	writeList(b, shape[0], func(i int) { writeDense(b, t, start+i*size, shape[1:]) })
}

// writeRaggedRow writes row i of partition level of r.
func writeRaggedRow(b *strings.Builder, r *Ragged, level, i int) {
	p := r.partitions[level]
	lo, hi := p.RowStart(i), p.RowLimit(i)
	if level+1 < len(r.partitions) {
		writeList(b, hi-lo, func(j int) { writeRaggedRow(b, r, level+1, lo+j) })
		return
	}
	inner := r.values.shape[1:]
	size := inner.NumElements()
	writeList(b, hi-lo, func(j int) { writeDense(b, r.values, (lo+j)*size, inner) })
}

func writeElem(b *strings.Builder, t *Tensor, i int) {
	switch v := t.data.(type) {
	case []bool:
		b.WriteString(strconv.FormatBool(v[i]))
	case []int32:
		b.WriteString(strconv.FormatInt(int64(v[i]), 10))
	case []int64:
		b.WriteString(strconv.FormatInt(v[i], 10))
	case []uint32:
		b.WriteString(strconv.FormatUint(uint64(v[i]), 10))
	case []uint64:
		b.WriteString(strconv.FormatUint(v[i], 10))
	case []float32:
		writeFloat(b, float64(v[i]), 32)
	case []float64:
		writeFloat(b, v[i], 64)
	default:
		b.WriteString(strconv.Quote(string(t.StringAt(i))))
	}
}

func writeFloat(b *strings.Builder, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		b.WriteString("nan")
	case math.IsInf(f, 1):
		b.WriteString("inf")
	case math.IsInf(f, -1):
		b.WriteString("-inf")
	default:
		b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
}
