package starrow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// checkedStream sits between an IPC stream and arrow-go's reader. arrow-go
// trusts the lengths a message header claims (a vector of fields, a body
// length, a decompressed size) and allocates them before looking at the
// data, so a few corrupt bytes can ask for terabytes and kill the process,
// which no recover can catch. checkedStream reads each message itself, in
// chunks (so a truncated stream fails before a large allocation), verifies
// the flatbuffer metadata's offsets and vector lengths against the bytes
// actually present and bounds decompressed sizes, and only then passes the
// message on.
type checkedStream struct {
	r         io.Reader
	pending   bytes.Reader // verified bytes not yet handed out
	msg       int          // index of the next message
	pos       int64        // stream offset of the next message
	maxBuffer int64
	err       error
}

const (
	maxMetadataBytes = 64 << 20
	// zeroWidthRows bounds the length of arrays with no data buffers (the
	// only ones whose length the body size does not bound).
	zeroWidthRows = 1 << 24
	maxNesting    = 64
)

func (c *checkedStream) Read(p []byte) (int, error) {
	if c.pending.Len() == 0 && c.err == nil {
		c.err = c.next()
	}
	if c.pending.Len() > 0 {
		return c.pending.Read(p)
	}
	return 0, c.err
}

// next reads, verifies and queues one message (or the end of stream).
func (c *checkedStream) next() error {
	var out bytes.Buffer
	var word [4]byte
	if _, err := io.ReadFull(c.r, word[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return c.fail("message length", err)
	}
	out.Write(word[:])
	n := binary.LittleEndian.Uint32(word[:])
	if n == 0xFFFFFFFF {
		if _, err := io.ReadFull(c.r, word[:]); err != nil {
			return c.fail("message length", err)
		}
		out.Write(word[:])
		n = binary.LittleEndian.Uint32(word[:])
	}
	if n == 0 { // end of stream
		c.pending.Reset(out.Bytes())
		return nil
	}
	if n > maxMetadataBytes || n < 4 {
		return c.fail("", fmt.Errorf("metadata length %d", n))
	}
	if _, err := io.CopyN(&out, c.r, int64(n)); err != nil {
		return c.fail("message metadata", err)
	}
	meta := out.Bytes()[out.Len()-int(n):]
	body, err := verifyMessage(meta)
	if err != nil {
		return c.fail("message metadata", err)
	}
	start := out.Len()
	if _, err := io.CopyN(&out, c.r, body.length); err != nil {
		return c.fail("message body", err)
	}
	if err := body.check(out.Bytes()[start:], c.maxBuffer); err != nil {
		return c.fail("message body", err)
	}
	c.pos += int64(out.Len())
	c.msg++
	c.pending.Reset(out.Bytes())
	return nil
}

func (c *checkedStream) fail(what string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if what != "" {
		return fmt.Errorf("%w: arrow ipc message %d at byte %d: %s: %w", ErrInvalid, c.msg, c.pos, what, err)
	}
	return fmt.Errorf("%w: arrow ipc message %d at byte %d: %w", ErrInvalid, c.msg, c.pos, err)
}

// fbuf reads a flatbuffer with bounds checks; every accessor reports
// failure instead of reading out of range.
type fbuf []byte

var errFlatbuffer = errors.New("flatbuffer offset out of range")

func (b fbuf) u32(pos int) (int, error) {
	if pos < 0 || pos+4 > len(b) {
		return 0, errFlatbuffer
	}
	return int(binary.LittleEndian.Uint32(b[pos:])), nil
}

// field returns the absolute position of field i of the table at t, or 0
// when the field is absent.
func (b fbuf) field(t, i int) (int, error) {
	if t < 0 || t+4 > len(b) {
		return 0, errFlatbuffer
	}
	vt := t - int(int32(binary.LittleEndian.Uint32(b[t:])))
	if vt < 0 || vt+4 > len(b) {
		return 0, errFlatbuffer
	}
	vsize := int(binary.LittleEndian.Uint16(b[vt:]))
	if vt+vsize > len(b) {
		return 0, errFlatbuffer
	}
	// Present when the field's slot starts inside the vtable, as the
	// flatbuffers runtime decides (an odd vtable size still counts).
	off := 4 + 2*i
	if off >= vsize {
		return 0, nil
	}
	if vt+off+2 > len(b) {
		return 0, errFlatbuffer
	}
	fo := int(binary.LittleEndian.Uint16(b[vt+off:]))
	if fo == 0 {
		return 0, nil
	}
	if t+fo >= len(b) {
		return 0, errFlatbuffer
	}
	return t + fo, nil
}

// ref follows the uoffset stored at field i of table t to a table, vector
// or string; 0 when absent.
func (b fbuf) ref(t, i int) (int, error) {
	p, err := b.field(t, i)
	if err != nil || p == 0 {
		return 0, err
	}
	o, err := b.u32(p)
	if err != nil {
		return 0, err
	}
	if o == 0 || p+o >= len(b) {
		return 0, errFlatbuffer
	}
	return p + o, nil
}

// vector returns the element count and first element position of the
// vector at field i of table t, checking that elem-byte elements fit.
func (b fbuf) vector(t, i, elem int) (n, first int, err error) {
	v, err := b.ref(t, i)
	if err != nil || v == 0 {
		return 0, 0, err
	}
	n, err = b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if n > (len(b)-v-4)/elem {
		return 0, 0, fmt.Errorf("vector of %d elements in %d bytes", n, len(b)-v-4)
	}
	return n, v + 4, nil
}

// tables checks a vector of tables at field i of t, calling f on each.
func (b fbuf) tables(t, i int, f func(int) error) error {
	n, first, err := b.vector(t, i, 4)
	if err != nil {
		return err
	}
	for k := 0; k < n; k++ {
		o, err := b.u32(first + 4*k)
		if err != nil {
			return err
		}
		if err := f(first + 4*k + o); err != nil {
			return err
		}
	}
	return nil
}

func (b fbuf) i64(t, i int) (int64, error) {
	p, err := b.field(t, i)
	if err != nil || p == 0 {
		return 0, err
	}
	if p+8 > len(b) {
		return 0, errFlatbuffer
	}
	return int64(binary.LittleEndian.Uint64(b[p:])), nil
}

func (b fbuf) u8(t, i int) (byte, error) {
	p, err := b.field(t, i)
	if err != nil || p == 0 {
		return 0, err
	}
	return b[p], nil
}

// bodyLayout is what a record batch message says about its body.
type bodyLayout struct {
	length     int64
	compressed bool
	buffers    [][2]int64 // offset, length
}

// verifyMessage checks the Message flatbuffer (format/Message.fbs):
// Message{version, header_type, header, bodyLength, custom_metadata}.
func verifyMessage(meta []byte) (*bodyLayout, error) {
	b := fbuf(meta)
	root, err := b.u32(0)
	if err != nil {
		return nil, err
	}
	if err := b.keyValues(root, 4); err != nil {
		return nil, err
	}
	length, err := b.i64(root, 3)
	if err != nil {
		return nil, err
	}
	if length < 0 || length%8 != 0 && length > 1<<50 {
		return nil, fmt.Errorf("body length %d", length)
	}
	layout := &bodyLayout{length: length}
	kind, err := b.u8(root, 1)
	if err != nil {
		return nil, err
	}
	header, err := b.ref(root, 2)
	if err != nil {
		return nil, err
	}
	if header == 0 {
		return layout, nil
	}
	switch kind {
	case 1: // Schema{endianness, fields, custom_metadata, features}
		if err := b.tables(header, 1, func(f int) error { return b.arrowField(f, 0) }); err != nil {
			return nil, err
		}
		if err := b.keyValues(header, 2); err != nil {
			return nil, err
		}
		_, _, err = b.vector(header, 3, 8)
		return layout, err
	case 2: // DictionaryBatch{id, data, isDelta}
		data, err := b.ref(header, 1)
		if err != nil || data == 0 {
			return layout, err
		}
		return layout, b.recordBatch(data, layout)
	case 3: // RecordBatch
		return layout, b.recordBatch(header, layout)
	}
	return nil, fmt.Errorf("unsupported message type %d", kind)
}

// keyValues checks a vector of KeyValue{key, value} string tables.
func (b fbuf) keyValues(t, i int) error {
	return b.tables(t, i, func(kv int) error {
		for f := 0; f < 2; f++ {
			if _, _, err := b.vector(kv, f, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// arrowField checks Field{name, nullable, type_type, type, dictionary,
// children, custom_metadata}, recursively, with a nesting bound that also
// stops offset cycles.
func (b fbuf) arrowField(f, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("fields nested deeper than %d", maxNesting)
	}
	if _, _, err := b.vector(f, 0, 1); err != nil {
		return err
	}
	typ, err := b.u8(f, 2)
	if err != nil {
		return err
	}
	tt, err := b.ref(f, 3)
	if err != nil {
		return err
	}
	if typ == 14 && tt != 0 { // Union{mode, typeIds}
		if _, _, err := b.vector(tt, 1, 4); err != nil {
			return err
		}
	}
	dict, err := b.ref(f, 4)
	if err != nil {
		return err
	}
	if dict != 0 { // DictionaryEncoding{id, indexType, isOrdered, kind}
		if _, err := b.ref(dict, 1); err != nil {
			return err
		}
	}
	if err := b.tables(f, 5, func(c int) error { return b.arrowField(c, depth+1) }); err != nil {
		return err
	}
	return b.keyValues(f, 6)
}

// recordBatch checks RecordBatch{length, nodes, buffers, compression,
// variadicBufferCounts} and notes the body layout.
func (b fbuf) recordBatch(t int, layout *bodyLayout) error {
	rows, err := b.i64(t, 0)
	if err != nil {
		return err
	}
	n, first, err := b.vector(t, 1, 16) // FieldNode{length, null_count}
	if err != nil {
		return err
	}
	limit := max(zeroWidthRows, 8*layout.length+64)
	if rows < 0 || rows > limit {
		return fmt.Errorf("batch of %d rows in a body of %d bytes", rows, layout.length)
	}
	for k := 0; k < n; k++ {
		l := int64(binary.LittleEndian.Uint64(b[first+16*k:]))
		if l < 0 || l > limit {
			return fmt.Errorf("array node %d of %d rows in a body of %d bytes", k, l, layout.length)
		}
	}
	nb, first, err := b.vector(t, 2, 16) // Buffer{offset, length}
	if err != nil {
		return err
	}
	for k := 0; k < nb; k++ {
		off := int64(binary.LittleEndian.Uint64(b[first+16*k:]))
		l := int64(binary.LittleEndian.Uint64(b[first+16*k+8:]))
		if off < 0 || l < 0 || off > layout.length || l > layout.length-off {
			return fmt.Errorf("buffer %d [%d, +%d) outside a body of %d bytes", k, off, l, layout.length)
		}
		layout.buffers = append(layout.buffers, [2]int64{off, l})
	}
	comp, err := b.ref(t, 3)
	if err != nil {
		return err
	}
	layout.compressed = comp != 0
	_, _, err = b.vector(t, 4, 8)
	return err
}

// check bounds the decompressed size each compressed buffer claims (its
// first 8 bytes; -1 means stored uncompressed).
func (l *bodyLayout) check(body []byte, maxBuffer int64) error {
	if !l.compressed {
		return nil
	}
	for k, buf := range l.buffers {
		if buf[1] == 0 {
			continue
		}
		if buf[1] < 8 {
			return fmt.Errorf("compressed buffer %d of %d bytes has no length prefix", k, buf[1])
		}
		size := int64(binary.LittleEndian.Uint64(body[buf[0]:]))
		if size != -1 && (size < 0 || size > maxBuffer) {
			return fmt.Errorf("compressed buffer %d claims %d bytes (limit %d, FromArrowOptions.MaxIPCBufferBytes)", k, size, maxBuffer)
		}
	}
	return nil
}

// ValidateIPC checks the framing and metadata of an encapsulated Arrow IPC
// stream (or a lone schema message, as Parquet files store it under the
// ARROW:schema key) without trusting any length it claims: offsets and
// vector lengths must fit the bytes present, nesting is bounded, and a
// compressed buffer may not claim more than maxBufferBytes (0: 4 GiB).
// Readers that hand such bytes to arrow-go, which allocates what headers
// claim, call it first.
func ValidateIPC(data []byte, maxBufferBytes int64) error {
	if maxBufferBytes <= 0 {
		maxBufferBytes = 4 << 30
	}
	c := &checkedStream{r: bytes.NewReader(data), maxBuffer: maxBufferBytes}
	for {
		err := c.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
