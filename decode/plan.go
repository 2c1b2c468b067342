package decode

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Plan flags (part of the byte form).
const (
	flagFillRequired      = 1
	flagAcceptInvalidUTF8 = 2
)

// planVersion is the version of the byte form written by MarshalBinary.
const planVersion = 1

// Plan is a compiled decoder for one message type and projection. It is
// immutable and safe for concurrent use.
type Plan struct {
	message  string
	flags    uint64
	maxDepth int
	columns  []structtensor.DType
	nparts   int
	nodes    []*planNode // nodes[0] is the root; children follow parents
	bytes    []byte
	native   *native.Plan
	// descs are the descriptors the plan was compiled from (nil after
	// UnmarshalPlan): Encode fills extensions from them.
	descs *Descriptors
	// recent remembers the memory of the last outputs, for Recycle (a
	// pointer: a Plan value may be copied).
	recent *recentOutputs
}

// planNode is one projected message at one path.
type planNode struct {
	path    string // projection path from the root ("" for the root)
	message string // full name of the message type (not serialised)
	fields  []*planField
	// desc is the message's descriptor when the plan was compiled here (not
	// serialised): errors name the fields outside the projection by it.
	desc protoreflect.MessageDescriptor

	// index maps each field's name to its position, shared by the
	// StructTensors of every batch (fieldIndex builds it once).
	indexOnce sync.Once
	index     map[string]int
	indexErr  error
}

// fieldIndex returns n's field index, checking once that the names are
// valid and distinct field names, as structtensor.NewStruct would for
// each batch.
func (n *planNode) fieldIndex() (map[string]int, error) {
	n.indexOnce.Do(func() {
		index := make(map[string]int, len(n.fields))
		for i, f := range n.fields {
			if !structtensor.ValidFieldName(f.name) {
				n.indexErr = fmt.Errorf("decode: node %q: %w: %q", n.path, structtensor.ErrFieldName, f.name)
				return
			}
			if _, dup := index[f.name]; dup {
				n.indexErr = fmt.Errorf("decode: node %q: %w: %q appears twice", n.path, structtensor.ErrFieldName, f.name)
				return
			}
			index[f.name] = i
		}
		n.index = index
	})
	return n.index, n.indexErr
}

// planField is one projected field of a node.
type planField struct {
	name      string
	number    int32
	kind      protoreflect.Kind // = FieldDescriptorProto.Type in the byte form
	mode      uint8
	utf8      bool
	oneof     int // 0: none
	column    int // scalar fields
	child     int // message and group fields
	partition int // modes optional and repeated
	defBits   uint64
	defStr    []byte
}

func (f *planField) isMessage() bool { return isMessageKind(f.kind) }

// Message returns the full name of the message the plan decodes.
func (p *Plan) Message() string { return p.message }

// Close frees the engine memory the plan keeps between decodes (the
// buffers of recent batches, kept for the next batch to reuse: up to 16,
// each of at most 64 MiB and 256 MiB in all, in C memory that the garbage
// collector does not see). Decodes after Close fail with ErrInput; the
// StructTensors already returned are Go memory and stay valid. Without
// Close the memory goes when the Plan is garbage collected.
func (p *Plan) Close() { p.native.Close() }

// MarshalBinary returns the plan's byte form (documented in package
// native), which the TensorFlow op carries as an attribute.
func (p *Plan) MarshalBinary() ([]byte, error) { return append([]byte(nil), p.bytes...), nil }

func (p *Plan) marshal() []byte {
	b := []byte("STPL")
	b = binary.AppendUvarint(b, planVersion)
	b = appendString(b, []byte(p.message))
	b = binary.AppendUvarint(b, p.flags)
	b = binary.AppendUvarint(b, uint64(p.maxDepth))
	b = binary.AppendUvarint(b, uint64(len(p.columns)))
	for _, d := range p.columns {
		b = binary.AppendUvarint(b, uint64(d))
	}
	b = binary.AppendUvarint(b, uint64(p.nparts))
	b = binary.AppendUvarint(b, uint64(len(p.nodes)))
	for _, n := range p.nodes {
		b = appendString(b, []byte(n.path))
		b = binary.AppendUvarint(b, uint64(len(n.fields)))
		for _, f := range n.fields {
			b = binary.AppendUvarint(b, uint64(f.number))
			b = appendString(b, []byte(f.name))
			b = binary.AppendUvarint(b, uint64(f.kind))
			b = binary.AppendUvarint(b, uint64(f.mode))
			var flags uint64
			if f.utf8 {
				flags |= 1
			}
			b = binary.AppendUvarint(b, flags)
			b = binary.AppendUvarint(b, uint64(f.oneof))
			if f.isMessage() {
				b = binary.AppendUvarint(b, uint64(f.child))
			} else {
				b = binary.AppendUvarint(b, uint64(f.column))
			}
			if f.mode >= modeOptional {
				b = binary.AppendUvarint(b, uint64(f.partition))
			} else {
				b = binary.AppendUvarint(b, 0)
				if !f.isMessage() {
					if kindDType(f.kind) == structtensor.String {
						b = appendString(b, f.defStr)
					} else {
						b = binary.AppendUvarint(b, f.defBits)
					}
				}
			}
		}
	}
	return b
}

func appendString(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// planReader reads the byte form, remembering the first error with the
// byte offset at which it occurred.
type planReader struct {
	all []byte
	b   []byte
	err error
}

func (r *planReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: byte offset %d: %s", ErrPlan, len(r.all)-len(r.b), fmt.Sprintf(format, args...))
	}
}

func (r *planReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// index reads a count or an index that must be below limit.
func (r *planReader) index(what string, limit int) int {
	v := r.uvarint()
	if r.err == nil && v >= uint64(limit) {
		r.fail("%s %d out of range (limit %d)", what, v, limit)
		return 0
	}
	return int(v)
}

// count reads a number of entries that each take at least one byte, so a
// count larger than the bytes left is corrupt before anything is
// allocated for it.
func (r *planReader) count(what string) int {
	return r.index(what, len(r.b)+1)
}

func (r *planReader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.fail("truncated string")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// UnmarshalPlan parses the byte form written by MarshalBinary. It checks
// everything it reads (versions, counts against the bytes present, every
// index in range, kinds, modes and column types against the one kind to
// dtype table, names, no trailing bytes) and fails with ErrPlan naming the
// byte offset; the engine then validates the plan again (a tree of nodes,
// each column and partition used once), and its column types are checked
// against this package's.
func UnmarshalPlan(b []byte) (*Plan, error) {
	if len(b) < 4 || string(b[:4]) != "STPL" {
		return nil, fmt.Errorf("%w: bad magic", ErrPlan)
	}
	r := &planReader{all: b, b: b[4:]}
	if v := r.uvarint(); r.err == nil && v != planVersion {
		return nil, fmt.Errorf("%w: version %d (this package reads %d)", ErrPlan, v, planVersion)
	}
	p := &Plan{bytes: append([]byte(nil), b...), recent: new(recentOutputs)}
	p.message = r.str()
	if r.err == nil && !protoreflect.FullName(p.message).IsValid() {
		r.fail("message name %q is not a valid full name", p.message)
	}
	p.flags = r.uvarint()
	if r.err == nil && p.flags&^uint64(flagFillRequired|flagAcceptInvalidUTF8) != 0 {
		r.fail("unknown flags %#x", p.flags)
	}
	p.maxDepth = r.index("max depth", 10001)
	if r.err == nil && p.maxDepth < 1 {
		r.fail("max depth 0")
	}
	ncols := r.count("column count")
	for i := 0; i < ncols && r.err == nil; i++ {
		d := structtensor.DType(r.uvarint())
		if r.err == nil && !d.Valid() {
			r.fail("column %d: dtype %d", i, d)
		}
		p.columns = append(p.columns, d)
	}
	p.nparts = r.count("partition count")
	nnodes := r.count("node count")
	if r.err == nil && nnodes == 0 {
		r.fail("no nodes")
	}
	for i := 0; i < nnodes && r.err == nil; i++ {
		n := &planNode{path: r.str()}
		nf := r.count("field count")
		for j := 0; j < nf && r.err == nil; j++ {
			f := &planField{}
			f.number = int32(r.index("field number", int(protowireMaxField)+1))
			if r.err == nil && f.number < 1 {
				r.fail("field number 0")
			}
			f.name = r.str()
			if r.err == nil && !structtensor.ValidFieldName(f.name) {
				r.fail("field name %q", f.name)
			}
			f.kind = protoreflect.Kind(r.index("kind", len(kindDTypes)))
			if r.err == nil && !validKind(f.kind) {
				r.fail("field %q: kind %d", f.name, f.kind)
			}
			f.mode = uint8(r.index("mode", modeRepeated+1))
			flags := r.uvarint()
			if r.err == nil && flags&^1 != 0 {
				r.fail("field %q: unknown flags %#x", f.name, flags)
			}
			f.utf8 = flags&1 != 0
			f.oneof = r.index("oneof", protowireMaxField+1)
			if f.isMessage() {
				f.child = r.index("child node", nnodes)
				if r.err == nil && f.child <= i {
					r.fail("field %q: child node %d is not below node %d", f.name, f.child, i)
				}
			} else {
				f.column = r.index("column", ncols)
				if r.err == nil && p.columns[f.column] != kindDType(f.kind) {
					r.fail("field %q: column %d of %s for a %s field (want %s)", f.name, f.column, p.columns[f.column], f.kind, kindDType(f.kind))
				}
			}
			if f.mode >= modeOptional {
				f.partition = r.index("partition", p.nparts)
			} else {
				r.index("partition of a scalar field", 1)
				if !f.isMessage() {
					if kindDType(f.kind) == structtensor.String {
						f.defStr = []byte(r.str())
					} else {
						f.defBits = r.uvarint()
					}
				}
			}
			n.fields = append(n.fields, f)
		}
		p.nodes = append(p.nodes, n)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the plan", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	np, err := native.NewPlan(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlan, err)
	}
	p.native = np
	if err := p.checkEngine(); err != nil {
		return nil, err
	}
	return p, nil
}

// protowireMaxField is the largest protobuf field number.
const protowireMaxField = 1<<29 - 1

// checkEngine checks that the engine read the plan's columns and
// partitions as this package did: the same count, and for each column the
// dtype of kindDTypes (the engine allocates columns by its own copy of
// that table).
func (p *Plan) checkEngine() error {
	if n := p.native.NumColumns(); n != len(p.columns) {
		return fmt.Errorf("%w: the engine reads %d columns, the plan has %d", ErrPlan, n, len(p.columns))
	}
	if n := p.native.NumPartitions(); n != p.nparts {
		return fmt.Errorf("%w: the engine reads %d partitions, the plan has %d", ErrPlan, n, p.nparts)
	}
	for c, d := range p.columns {
		if e := structtensor.DType(p.native.ColumnDType(c)); e != d {
			return fmt.Errorf("%w: column %d: the engine's dtype is %s, the plan's %s", ErrPlan, c, e, d)
		}
	}
	return nil
}

// Spec returns the StructSpec of the decoded output, known before any
// data: a rank-1 struct of unknown length whose fields follow the mapping
// table (a scalar Tensor, a ragged list, or a nested struct).
func (p *Plan) Spec() *structtensor.StructSpec {
	return p.nodeSpec(0, 1)
}

func (p *Plan) nodeSpec(node, rank int) *structtensor.StructSpec {
	unknown := func(n int) structtensor.Shape {
		s := make(structtensor.Shape, n)
		for i := range s {
			s[i] = structtensor.Unknown
		}
		return s
	}
	s := &structtensor.StructSpec{Shape: unknown(rank)}
	for _, f := range p.nodes[node].fields {
		r := rank
		if f.mode >= modeOptional {
			r++
		}
		var fs structtensor.Spec
		switch {
		case f.isMessage():
			fs = p.nodeSpec(f.child, r)
		case r == 1:
			fs = &structtensor.TensorSpec{DType: p.columns[f.column], Shape: unknown(1)}
		default:
			fs = &structtensor.RaggedSpec{DType: p.columns[f.column], Shape: unknown(r), RaggedRank: r - 1}
		}
		s.Fields = append(s.Fields, structtensor.FieldSpec{Name: f.name, Spec: fs})
	}
	return s
}

// BinaryFields returns the paths (names joined by ".") of the projected
// bytes fields, whose values Decode marks binary (not UTF-8 text)
// whatever their content.
func (p *Plan) BinaryFields() []string {
	var paths []string
	var walk func(n int, prefix string)
	walk = func(n int, prefix string) {
		for _, f := range p.nodes[n].fields {
			path := prefix + f.name
			switch {
			case f.isMessage():
				walk(f.child, path+".")
			case f.kind == protoreflect.BytesKind:
				paths = append(paths, path)
			}
		}
	}
	walk(0, "")
	return paths
}

// String describes the plan: the message and the projected field paths.
func (p *Plan) String() string {
	var paths []string
	var walk func(n int)
	walk = func(n int) {
		for _, f := range p.nodes[n].fields {
			if f.isMessage() {
				walk(f.child)
			} else {
				path := f.name
				if p.nodes[n].path != "" {
					path = p.nodes[n].path + "." + f.name
				}
				paths = append(paths, path)
			}
		}
	}
	walk(0)
	return fmt.Sprintf("Plan(%s: %s)", p.message, strings.Join(paths, ", "))
}
