// Package kernel holds the typed inner loops of the ops package: gathers of
// rows and copies of row ranges over flat element slices. They work on
// plain slices (no structtensor types, no interfaces), are generic over the
// element type so that each instantiation is a tight typed loop, and never
// allocate per row: callers size the destination once.
//
// Bounds are the caller's job: every index and span passed here has been
// validated against the source, and a violation is a programming error
// (Go's own bounds checks turn it into a panic, never a silent read).
package kernel

// Span is the half-open range of rows [Lo, Hi).
type Span struct{ Lo, Hi int }

// Len returns the number of rows in s.
func (s Span) Len() int { return s.Hi - s.Lo }

// AppendSpan appends [lo, hi) to spans, extending the last span when the
// two are contiguous and dropping empty ranges, so that runs of adjacent
// rows become a single copy.
func AppendSpan(spans []Span, lo, hi int) []Span {
	if lo >= hi {
		return spans
	}
	if n := len(spans); n > 0 && spans[n-1].Hi == lo {
		spans[n-1].Hi = hi
		return spans
	}
	return append(spans, Span{lo, hi})
}

// TotalLen returns the number of rows the spans cover.
func TotalLen(spans []Span) int {
	n := 0
	for _, s := range spans {
		n += s.Hi - s.Lo
	}
	return n
}

// Gather copies rows idx of src into dst, where a row is inner consecutive
// elements: dst[k*inner:(k+1)*inner] = src[idx[k]*inner:(idx[k]+1)*inner].
// len(dst) must be len(idx)*inner.
func Gather[T any](dst, src []T, idx []int, inner int) {
	if inner == 1 {
		dst = dst[:len(idx)]
		for k, i := range idx {
			dst[k] = src[i]
		}
		return
	}
	o := 0
	for _, i := range idx {
		o += copy(dst[o:o+inner], src[i*inner:(i+1)*inner])
	}
}

// CopySpans copies the row ranges spans of src (rows of inner elements)
// into dst one after the other and returns the number of elements written.
func CopySpans[T any](dst, src []T, spans []Span, inner int) int {
	o := 0
	for _, s := range spans {
		from := src[s.Lo*inner : s.Hi*inner]
		if len(from) <= shortRow {
			to := dst[o : o+len(from)]
			for j := range from {
				to[j] = from[j]
			}
			o += len(from)
			continue
		}
		o += copy(dst[o:], from)
	}
	return o
}

// Concat returns the concatenation of parts in one new slice.
func Concat[T any](parts [][]T) []T {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]T, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Strings is a String column in Arrow layout: element i is
// Data[Offsets[i]:Offsets[i+1]]. Offsets[0] need not be 0.
type Strings struct {
	Data    []byte
	Offsets []int64
}

// GatherStrings returns rows idx of src, a row being inner consecutive
// strings, as a new column whose offsets start at 0. It makes exactly two
// allocations.
func GatherStrings(src Strings, idx []int, inner int) Strings {
	size := int64(0)
	for _, i := range idx {
		size += src.Offsets[(i+1)*inner] - src.Offsets[i*inner]
	}
	out := Strings{Data: make([]byte, 0, size), Offsets: make([]int64, 1, len(idx)*inner+1)}
	for _, i := range idx {
		lo, hi := i*inner, (i+1)*inner
		out = appendStringRange(out, src, lo, hi)
	}
	return out
}

// SpanStrings returns the row ranges spans of src (rows of inner strings)
// as a new column whose offsets start at 0.
func SpanStrings(src Strings, spans []Span, inner int) Strings {
	size, n := int64(0), 0
	for _, s := range spans {
		size += src.Offsets[s.Hi*inner] - src.Offsets[s.Lo*inner]
		n += (s.Hi - s.Lo) * inner
	}
	out := Strings{Data: make([]byte, 0, size), Offsets: make([]int64, 1, n+1)}
	for _, s := range spans {
		out = appendStringRange(out, src, s.Lo*inner, s.Hi*inner)
	}
	return out
}

// ConcatStrings returns the concatenation of columns as one new column.
func ConcatStrings(cols []Strings) Strings {
	size, n := int64(0), 0
	for _, c := range cols {
		size += c.Offsets[len(c.Offsets)-1] - c.Offsets[0]
		n += len(c.Offsets) - 1
	}
	out := Strings{Data: make([]byte, 0, size), Offsets: make([]int64, 1, n+1)}
	for _, c := range cols {
		out = appendStringRange(out, c, 0, len(c.Offsets)-1)
	}
	return out
}

// appendStringRange appends elements [lo, hi) of src to out: one copy of
// their bytes and a rebase of their offsets.
func appendStringRange(out Strings, src Strings, lo, hi int) Strings {
	base := src.Offsets[lo]
	shift := int64(len(out.Data)) - base
	out.Data = append(out.Data, src.Data[base:src.Offsets[hi]]...)
	for _, off := range src.Offsets[lo+1 : hi+1] {
		out.Offsets = append(out.Offsets, off+shift)
	}
	return out
}

// RaggedSplits writes to outSplits (len(idx)+1) the row splits of the
// ragged rows idx of a partition with the given splits, and to starts
// (len(idx)) the first value of each, and returns the number of values they
// hold. Each iteration's loads are independent of the previous ones, so
// the processor overlaps their cache misses.
func RaggedSplits(splits []int64, idx []int, outSplits, starts []int64) int {
	o := int64(0)
	outSplits[0] = 0
	starts = starts[:len(idx)]
	for k, i := range idx {
		lo := splits[i]
		starts[k] = lo
		o += splits[i+1] - lo
		outSplits[k+1] = o
	}
	return int(o)
}

// shortRow is the row length up to which rows are copied with a loop.
const shortRow = 16

// GatherRagged copies the ragged rows starting at starts (rows of inner
// elements) into dst at the offsets outSplits (both from RaggedSplits).
// Taking the destination offsets from outSplits rather than from a running
// sum keeps the copies independent of each other, which matters when the
// source rows are cache misses.
func GatherRagged[T any](dst, src []T, starts []int64, inner int, outSplits []int64) {
	for k, lo := range starts {
		from := int(lo) * inner
		d := int(outSplits[k]) * inner
		n := int(outSplits[k+1])*inner - d
		if n <= shortRow {
			// A short row is cheaper to move element by element than
			// through a call to memmove.
			s, t := src[from:from+n], dst[d:d+n]
			for j := range s {
				t[j] = s[j]
			}
			continue
		}
		copy(dst[d:d+n], src[from:from+n])
	}
}
