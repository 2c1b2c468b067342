package stparquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A Parquet footer is a Thrift struct in the compact protocol, and
// arrow-go's Thrift decoder reserves room for as many elements as a list
// or map header claims before it reads one: a 62-byte footer whose row
// group list claimed millions of entries made a 1.6 KB file allocate 268
// MB (FuzzParquetFooter). checkFooter walks the footer's encoding first,
// without the schema and without allocating, and rejects any length,
// list, set or map that claims more than the bytes left after it could
// hold (every element takes at least one byte, a double eight): what
// arrow-go then reserves is bounded by the footer's own size.

// maxFooterNesting bounds the nesting of structs and containers in a
// footer (Parquet's own is under ten deep; a deeper one is corrupt).
const maxFooterNesting = 64

// Thrift compact protocol types (the low nibble of a field header or
// the element type of a container).
const (
	thriftTrue   = 1
	thriftFalse  = 2
	thriftByte   = 3
	thriftI16    = 4
	thriftI32    = 5
	thriftI64    = 6
	thriftDouble = 7
	thriftBinary = 8
	thriftList   = 9
	thriftSet    = 10
	thriftMap    = 11
	thriftStruct = 12
)

// errFooterEncoding says where a footer's Thrift encoding went wrong.
var errFooterEncoding = errors.New("footer encoding")

// readFooter reads the footer of the Parquet file in r's first size
// bytes, its length checked against size, and checks its encoding
// (checkFooter). An encrypted footer ("PARE") is left to arrow-go, which
// rejects it without the keys. It allocates at most the footer's length;
// arrow-go reads the footer again (a second read of a few kilobytes,
// against a decoder of its own that cannot be told to check first).
func readFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return nil // arrow-go names a file too small
	}
	var tail [8]byte
	if err := readFull(r, tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return nil
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return fmt.Errorf("footer: length %d past the %d-byte file", n, size)
	}
	footer := make([]byte, n)
	if err := readFull(r, footer, size-8-n); err != nil {
		return err
	}
	return checkFooter(footer)
}

// readFull reads len(p) bytes at off (a ReaderAt may say io.EOF with
// all of them, at the end of its input).
func readFull(r io.ReaderAt, p []byte, off int64) error {
	if n, err := r.ReadAt(p, off); n < len(p) {
		return fmt.Errorf("footer: %w", err)
	}
	return nil
}

// checkFooter walks b, a Thrift struct in the compact protocol, and
// returns an error naming the byte offset of the first length or
// container size that claims more than the bytes left, of a truncated
// value, or of nesting past maxFooterNesting. Bytes after the struct's
// end are not looked at (a reader ignores them).
func checkFooter(b []byte) error {
	w := thriftWalker{b: b}
	w.value(thriftStruct, 0)
	return w.err
}

// thriftWalker walks a compact-protocol encoding; err is its first error.
type thriftWalker struct {
	b   []byte
	at  int
	err error
}

func (w *thriftWalker) fail(at int, format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: byte %d of the footer: %s", errFooterEncoding, at, fmt.Sprintf(format, args...))
	}
}

func (w *thriftWalker) byte() byte {
	if w.at >= len(w.b) {
		w.fail(w.at, "truncated")
		return 0
	}
	c := w.b[w.at]
	w.at++
	return c
}

func (w *thriftWalker) varint() uint64 {
	v, n := binary.Uvarint(w.b[min(w.at, len(w.b)):])
	if n <= 0 {
		w.fail(w.at, "bad varint")
		return 0
	}
	w.at += n
	return v
}

// minBytes is the fewest bytes a value of type t takes, or 0 for a type
// the protocol does not have.
func minBytes(t byte) int {
	switch t {
	case thriftTrue, thriftFalse, thriftByte, thriftI16, thriftI32, thriftI64, thriftBinary,
		thriftList, thriftSet, thriftMap, thriftStruct:
		return 1
	case thriftDouble:
		return 8
	}
	return 0
}

// claim checks that n values of at least each (> 0) bytes each fit in
// what is left; start is where the claim was read.
func (w *thriftWalker) claim(start int, n uint64, each int, what string) bool {
	left := uint64(len(w.b) - min(w.at, len(w.b)))
	if n > left/uint64(each) {
		w.fail(start, "%s of %d claims more than the %d bytes left", what, n, left)
		return false
	}
	return true
}

// value walks one value of type t (a list's bool is one byte; a field's
// is in its header, and value is not called for it).
func (w *thriftWalker) value(t byte, depth int) {
	if w.err != nil {
		return
	}
	start := w.at
	if t >= thriftList && depth >= maxFooterNesting {
		w.fail(start, "nested deeper than %d", maxFooterNesting)
		return
	}
	switch t {
	case thriftTrue, thriftFalse, thriftByte:
		w.byte()
	case thriftI16, thriftI32, thriftI64:
		w.varint()
	case thriftDouble:
		if w.claim(start, 1, 8, "double") {
			w.at += 8
		}
	case thriftBinary:
		n := w.varint()
		if w.err == nil && w.claim(start, n, 1, "string") {
			w.at += int(n)
		}
	case thriftList, thriftSet:
		h := w.byte()
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			n = w.varint()
		}
		if w.err != nil || n == 0 {
			return
		}
		if minBytes(et) == 0 {
			w.fail(start, "list of unknown type %d", et)
			return
		}
		if !w.claim(start, n, minBytes(et), "list") {
			return
		}
		for range n {
			if w.value(et, depth+1); w.err != nil {
				return
			}
		}
	case thriftMap:
		n := w.varint()
		if w.err != nil || n == 0 {
			return
		}
		kv := w.byte()
		kt, vt := kv>>4, kv&0x0f
		if w.err == nil && (minBytes(kt) == 0 || minBytes(vt) == 0) {
			w.fail(start, "map of unknown types %d, %d", kt, vt)
		}
		if w.err != nil || !w.claim(start, n, minBytes(kt)+minBytes(vt), "map") {
			return
		}
		for range n {
			if w.value(kt, depth+1); w.err != nil {
				return
			}
			if w.value(vt, depth+1); w.err != nil {
				return
			}
		}
	case thriftStruct:
		for w.err == nil {
			at := w.at
			h := w.byte()
			if w.err != nil || h == 0 {
				return
			}
			ft := h & 0x0f
			if h>>4 == 0 {
				w.varint() // the field id, in full
			}
			switch {
			case ft == thriftTrue || ft == thriftFalse:
				// the value is the type
			case minBytes(ft) == 0:
				w.fail(at, "field of unknown type %d", ft)
			default:
				w.value(ft, depth+1)
			}
		}
	default:
		w.fail(start, "value of unknown type %d", t)
	}
}
