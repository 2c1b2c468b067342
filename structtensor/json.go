package structtensor

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax reports input that is not valid JSON (or not JSON lines).
var ErrSyntax = errors.New("structtensor: invalid JSON")

// JSON reading is a hand-written scanner that appends every scalar
// straight into the column builders of fromvalue.go: no encoding/json, no
// intermediate []any or map, one pass over the bytes. Inference and specs
// work exactly as in FromValue (the same builders decide), with JSON
// numbers read as json.Number would be by FromValue: an integer literal is
// int64 (uint64 past the int64 range, float64 past that), anything with a
// fraction or exponent is float64, and with a spec the literal is parsed
// straight into the spec's dtype (so int64 and uint64 stay exact and a
// float32 is rounded once). JSON null is an error. Inferred struct fields
// keep the order in which their keys first appear (FromValue, whose maps
// have no order, sorts them by name).
//
// Strings keep their bytes: invalid UTF-8 in the input is kept as is and
// the tensor is marked non-UTF-8.

// FromJSON reads one JSON value as FromValue would read the same value
// decoded by encoding/json with UseNumber. Errors name the line, the byte
// offset and the path.
func FromJSON(data []byte, spec ...Spec) (Value, error) {
	n, err := rootNode(spec, true)
	if err != nil {
		return nil, err
	}
	p := jsonParser{buf: data}
	p.skipSpace()
	if p.pos == len(p.buf) {
		return nil, p.locate(p.syntaxError("no JSON value"))
	}
	if e := p.value(n, 0); e != nil {
		return nil, p.locate(e)
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return nil, p.locate(p.syntaxError("data after the JSON value"))
	}
	v, err := n.value(true, 1, false)
	if err != nil {
		return nil, err
	}
	return checkSpec(v, spec)
}

// FromJSONLines reads JSON lines: one JSON value per line, each one row of
// the result (so records that are objects give a rank-1 StructTensor, and
// records of rank N a value of rank N+1). Blank lines are skipped. A spec,
// if given, is the spec of the whole result. Errors name the line, the
// byte offset and the path, whose first index is the record number.
func FromJSONLines(data []byte, spec ...Spec) (Value, error) {
	n, err := rootNode(spec, false)
	if err != nil {
		return nil, err
	}
	p := jsonParser{buf: data}
	nrec, e := p.records(n, 0)
	if e != nil {
		return nil, e
	}
	v, err := n.value(false, nrec, false)
	if err != nil {
		return nil, err
	}
	return checkSpec(v, spec)
}

// StructFromJSONLines is FromJSONLines for lines that are JSON objects,
// the common case of one record per line: it returns the rank-1
// StructTensor itself, and ErrInference if the lines hold other values.
func StructFromJSONLines(data []byte, spec ...Spec) (*StructTensor, error) {
	v, err := FromJSONLines(data, spec...)
	if err != nil {
		return nil, err
	}
	return asRecords(v)
}

// ReadStructJSONLines is StructFromJSONLines on everything r holds.
func ReadStructJSONLines(r io.Reader, spec ...Spec) (*StructTensor, error) {
	v, err := ReadJSONLines(r, spec...)
	if err != nil {
		return nil, err
	}
	return asRecords(v)
}

func asRecords(v Value) (*StructTensor, error) {
	s, ok := v.(*StructTensor)
	if !ok {
		return nil, fmt.Errorf("%w: the JSON lines hold %s values, not objects", ErrInference, v.Spec())
	}
	return s, nil
}

// records reads JSON lines into n and returns how many there were. first
// is the index of the first record, for messages.
func (p *jsonParser) records(n *node, first int) (int, *buildError) {
	nrec := 0
	for {
		p.skipSpace()
		if p.pos == len(p.buf) {
			return nrec, nil
		}
		if e := p.value(n, 0); e != nil {
			return 0, p.locate(e.atIndex(first + nrec))
		}
		for p.pos < len(p.buf) && (p.buf[p.pos] == ' ' || p.buf[p.pos] == '\t' || p.buf[p.pos] == '\r') {
			p.pos++
		}
		if p.pos < len(p.buf) && p.buf[p.pos] != '\n' {
			return 0, p.locate(p.syntaxError("expected a newline after record %d", first+nrec))
		}
		nrec++
	}
}

// JSONLinesReader reads JSON lines in batches, each batch one Value of
// rank >= 1 as FromJSONLines returns it, so that input of any size is read
// in bounded memory. Each record must be on one line. Without a spec, the first batch is inferred and its
// spec (with the number of rows left unknown) is the spec of every later
// batch: a later record that does not fit it (a new field, a list where
// the first batch had only empty lists, which infer float32) is an error
// naming its line. Give a spec when the first records do not show every
// type.
type JSONLinesReader struct {
	r       *bufio.Reader
	spec    Spec
	buf     []byte
	line    int   // lines before the current batch
	offset  int64 // bytes before the current batch
	records int   // records before the current batch
	err     error // sticky
}

// NewJSONLinesReader returns a reader of the JSON lines in r. The spec, if
// given, is the spec of each batch (its dimension 0, the number of
// records, is best left Unknown).
func NewJSONLinesReader(r io.Reader, spec ...Spec) (*JSONLinesReader, error) {
	if len(spec) > 1 {
		return nil, fmt.Errorf("%w: %d specs given, want at most one", ErrSpec, len(spec))
	}
	jr := &JSONLinesReader{r: bufio.NewReaderSize(r, 1<<16)}
	if len(spec) == 1 {
		jr.spec = spec[0]
	}
	return jr, nil
}

// Spec returns the spec batches are read with: the one given, or the one
// inferred from the first batch (nil before it).
func (jr *JSONLinesReader) Spec() Spec { return jr.spec }

// Read reads the next batch of up to max records (max >= 1). At the end
// of the input it returns nil and io.EOF. Errors name the line, the byte
// offset in the whole input and the record's index in the whole input;
// after an error every Read returns it again.
func (jr *JSONLinesReader) Read(max int) (Value, error) {
	if jr.err != nil {
		return nil, jr.err
	}
	if max < 1 {
		return nil, fmt.Errorf("%w: batch of %d records", ErrShape, max)
	}
	jr.buf = jr.buf[:0]
	lines, nrec := 0, 0
	for nrec < max {
		start := len(jr.buf)
		var err error
		for {
			var chunk []byte
			chunk, err = jr.r.ReadSlice('\n')
			jr.buf = append(jr.buf, chunk...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if len(jr.buf) > start {
			lines++
			// JSON's spaces only: a line of other white space (a
			// vertical tab) is a record, which fails as FromJSONLines
			// fails on it, not a blank line to drop.
			if len(bytes.Trim(jr.buf[start:], jsonSpace)) > 0 {
				nrec++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			jr.err = err
			return nil, err
		}
	}
	if nrec == 0 {
		jr.err = io.EOF
		return nil, io.EOF
	}
	v, err := jr.parse()
	if err != nil {
		jr.err = err
		return nil, err
	}
	jr.line += lines
	jr.offset += int64(len(jr.buf))
	jr.records += nrec
	return v, nil
}

// ReadInferred is Read with the batch's spec inferred from its own
// records alone, whatever spec the reader has (which it neither uses nor
// sets). A caller that finds every batch inferring one spec knows that
// FromJSONLines of the whole input infers it too, where batches read
// with the first batch's spec may hold values the whole input would
// type otherwise (integers in lists that were all empty in the first
// batch read as float32).
func (jr *JSONLinesReader) ReadInferred(max int) (Value, error) {
	spec := jr.spec
	jr.spec = nil
	defer func() { jr.spec = spec }()
	return jr.Read(max)
}

func (jr *JSONLinesReader) parse() (Value, error) {
	var spec []Spec
	if jr.spec != nil {
		spec = append(spec, jr.spec)
	}
	n, err := rootNode(spec, false)
	if err != nil {
		return nil, err
	}
	p := jsonParser{buf: jr.buf, baseLine: jr.line, baseOffset: jr.offset}
	nrec, e := p.records(n, jr.records)
	if e != nil {
		return nil, e
	}
	v, err := n.value(false, nrec, false)
	if err != nil {
		return nil, err
	}
	if jr.spec == nil {
		jr.spec = AnyRows(v.Spec())
		return v, nil
	}
	return checkSpec(v, spec)
}

// ReadJSON is FromJSON on everything r holds.
func ReadJSON(r io.Reader, spec ...Spec) (Value, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return FromJSON(b, spec...)
}

// ReadJSONLines is FromJSONLines on everything r holds.
func ReadJSONLines(r io.Reader, spec ...Spec) (Value, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return FromJSONLines(b, spec...)
}

type jsonParser struct {
	buf     []byte
	pos     int
	scratch []byte // unescaped strings
	depth   int
	// Where buf starts in a longer input (JSONLinesReader), for messages.
	baseLine   int
	baseOffset int64
}

// maxJSONDepth bounds nesting so that hostile input cannot exhaust the
// stack.
const maxJSONDepth = 10000

func (p *jsonParser) syntaxError(format string, args ...any) *buildError {
	e := newBuildError(ErrSyntax, format, args...)
	e.offset = p.pos
	return e
}

// locate records where in the input the error is, as a line number and a
// byte offset, computed only now that it is needed.
func (p *jsonParser) locate(e *buildError) *buildError {
	off := e.offset
	if off < 0 || off > len(p.buf) {
		off = p.pos
	}
	line := p.baseLine + 1 + bytes.Count(p.buf[:off], []byte{'\n'})
	e.loc = fmt.Sprintf("line %d, byte offset %d", line, p.baseOffset+int64(off))
	return e
}

func at(e *buildError, off int) *buildError {
	if e.offset < 0 {
		e.offset = off
	}
	return e
}

// jsonSpace is the white space JSON allows between tokens.
const jsonSpace = " \n\t\r"

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\n', '\t', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value reads one JSON value (p.pos at its first byte, after spaces) into
// n at depth d.
func (p *jsonParser) value(n *node, d int) *buildError {
	if p.pos >= len(p.buf) {
		return p.syntaxError("unexpected end of input")
	}
	start := p.pos
	switch c := p.buf[p.pos]; c {
	case '{':
		return p.object(n, d)
	case '[':
		return p.array(n, d)
	case '"':
		s, valid, e := p.str()
		if e != nil {
			return e
		}
		if e := n.leafAt(d, leafScalar, "string"); e != nil {
			return at(e, start)
		}
		if e := n.col.appendStringChecked(s, valid); e != nil {
			return at(e, start)
		}
		return nil
	case 't', 'f':
		v := c == 't'
		lit := "false"
		if v {
			lit = "true"
		}
		if !bytes.HasPrefix(p.buf[p.pos:], []byte(lit)) {
			return p.syntaxError("invalid literal")
		}
		p.pos += len(lit)
		if e := n.leafBool(d, v); e != nil {
			return at(e, start)
		}
		return nil
	case 'n':
		if bytes.HasPrefix(p.buf[p.pos:], []byte("null")) {
			return at(n.fail("null is not supported (a StructTensor has no missing values)"), start)
		}
		return p.syntaxError("invalid literal")
	default:
		text, isFloat, e := p.number()
		if e != nil {
			return e
		}
		if e := n.leafNumber(d, text, isFloat); e != nil {
			return at(e, start)
		}
		return nil
	}
}

func (p *jsonParser) array(n *node, d int) *buildError {
	start := p.pos
	if e := p.nest(); e != nil {
		return e
	}
	if e := n.beginList(d); e != nil {
		return at(e, start)
	}
	if !p.open(']') {
		for i := 0; ; i++ {
			if e := p.value(n, d+1); e != nil {
				return e.atIndex(i)
			}
			if done, e := p.separator(']', "a list"); done || e != nil {
				if e != nil {
					return e
				}
				break
			}
		}
	}
	p.depth--
	if e := n.endList(d); e != nil {
		return at(e, start)
	}
	return nil
}

func (p *jsonParser) object(n *node, d int) *buildError {
	start := p.pos
	if e := p.nest(); e != nil {
		return e
	}
	s, e := n.beginStruct(d)
	if e != nil {
		return at(e, start)
	}
	if !p.open('}') {
		for {
			if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
				return p.syntaxError("expected a field name in quotes")
			}
			keyStart := p.pos
			key, _, e := p.str()
			if e != nil {
				return e
			}
			f, e := s.field(key)
			if e != nil {
				return at(e, keyStart)
			}
			p.skipSpace()
			if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
				return p.syntaxError("expected : after field name")
			}
			p.pos++
			p.skipSpace()
			if e := p.value(f.node, 0); e != nil {
				return e.atKey(f.name)
			}
			if done, e := p.separator('}', "an object"); done || e != nil {
				if e != nil {
					return e
				}
				break
			}
		}
	}
	p.depth--
	if e := s.end(); e != nil {
		return at(e, start)
	}
	return nil
}

// nest counts one more level of lists and objects, which array and object
// undo on the way out; it bounds the nesting of hostile input.
func (p *jsonParser) nest() *buildError {
	if p.depth++; p.depth > maxJSONDepth {
		return p.syntaxError("nested too deep")
	}
	return nil
}

// open reads the opening byte of a list or object (p.pos at it) and the
// space after it, and reports whether closing follows at once: an empty
// container, closing read too.
func (p *jsonParser) open(closing byte) (empty bool) {
	p.pos++
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == closing {
		p.pos++
		return true
	}
	return false
}

// separator reads what follows an element of a list or object (in):
// the closing byte, and done, or a comma and the space after it.
func (p *jsonParser) separator(closing byte, in string) (done bool, e *buildError) {
	p.skipSpace()
	if p.pos >= len(p.buf) {
		return false, p.syntaxError("unexpected end of input in %s", in)
	}
	c := p.buf[p.pos]
	p.pos++
	if c == closing {
		return true, nil
	}
	if c != ',' {
		p.pos--
		return false, p.syntaxError("expected , or %c in %s, got %q", closing, in, c)
	}
	p.skipSpace()
	return false, nil
}

// strPlain marks the bytes a string can hold without a closer look: not
// the quote, the backslash, control characters, or non-ASCII.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainWord reports whether none of the eight bytes of x is a quote, a
// backslash, a control character or non-ASCII (the strPlain test, in
// parallel: a byte b is below n exactly when b-n borrows into its high
// bit while b itself has it clear).
func plainWord(x uint64) bool {
	hasLess := func(x uint64, n uint64) uint64 { return (x - ones*n) & ^x & highs }
	special := x & highs                 // non-ASCII
	special |= hasLess(x, 0x20)          // control characters
	special |= hasLess(x^(ones*'"'), 1)  // quote
	special |= hasLess(x^(ones*'\\'), 1) // backslash
	return special == 0
}

// str reads a JSON string (p.pos at its opening quote) and returns its
// bytes, which alias the input or p.scratch until the next call, and
// whether they are valid UTF-8.
func (p *jsonParser) str() ([]byte, bool, *buildError) {
	b := p.buf
	i := p.pos + 1
	// Eight bytes at a time while none of them needs a closer look.
	for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && strPlain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		s := b[p.pos+1 : i]
		p.pos = i + 1
		return s, true, nil
	}
	return p.strSlow(i)
}

func (p *jsonParser) strSlow(i int) ([]byte, bool, *buildError) {
	b := p.buf
	out := append(p.scratch[:0], b[p.pos+1:i]...)
	ascii := true
	for {
		if i >= len(b) {
			p.pos = i
			return nil, false, p.syntaxError("unterminated string")
		}
		c := b[i]
		switch {
		case c == '"':
			p.pos = i + 1
			p.scratch = out
			return out, ascii || utf8.Valid(out), nil
		case c < 0x20:
			p.pos = i
			return nil, false, p.syntaxError("control character %#02x in a string", c)
		case c >= 0x80:
			ascii = false
			out = append(out, c)
			i++
		case c != '\\':
			out = append(out, c)
			i++
		default:
			if i+1 >= len(b) {
				p.pos = i
				return nil, false, p.syntaxError("unterminated string")
			}
			i++
			switch e := b[i]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b, i+1)
				if !ok {
					p.pos = i - 1
					return nil, false, p.syntaxError("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						r2, ok = hex4(b, i+3)
					}
					if ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				p.pos = i - 1
				return nil, false, p.syntaxError("invalid escape %q", []byte{'\\', e})
			}
			i++
		}
	}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number scans a JSON number and returns its text and whether it has a
// fraction or an exponent.
func (p *jsonParser) number() ([]byte, bool, *buildError) {
	b := p.buf
	start := p.pos
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		if i == start {
			if bytes.HasPrefix(b[i:], []byte("\xef\xbb\xbf")) {
				return nil, false, p.syntaxError("a UTF-8 byte order mark (BOM), which JSON text must not hold: remove it")
			}
			if b[i] >= 0x80 {
				r, _ := utf8.DecodeRune(b[i:])
				return nil, false, p.syntaxError("unexpected %q (byte %#02x) where a value should start", r, b[i])
			}
			return nil, false, p.syntaxError("unexpected %q", b[i])
		}
		p.pos = i
		return nil, false, p.syntaxError("invalid number")
	}
	isFloat := false
	if i < len(b) && b[i] == '.' {
		isFloat = true
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			p.pos = i
			return nil, false, p.syntaxError("invalid number: no digits after the decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isFloat = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			p.pos = i
			return nil, false, p.syntaxError("invalid number: no digits in the exponent")
		}
	}
	p.pos = i
	return b[start:i], isFloat, nil
}
