package main

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/structtensor"
)

// The protogo decoder is the baseline a Go programmer would write without
// this project: dynamicpb unmarshals each record into a message, and a walk
// of the message appends every projected field to columns, producing the
// same StructTensor as the engine by the mapping table in decode's package doc.
//
// One adjustment keeps the comparison honest: Go maps do not remember wire
// order, while the engine emits map entries in wire order (a map is a list
// of {key, value} entries). The decoder therefore unmarshals with a copy of
// the schema whose map entry messages are plain nested messages, which
// protobuf's wire format makes equivalent: a map field is exactly a
// repeated entry message on the wire.

func init() {
	registerDecoder(decoder{
		name:    "protogo",
		order:   30,
		about:   "dynamicpb unmarshal per record, then a walk that appends every field to columns",
		prepare: prepareProtoGo,
	})
}

// plainMapsDescriptor returns md's counterpart in a copy of set whose map
// entry messages are ordinary messages, and the full names of those
// former map entries (whose key and value stay scalars of the entry, as
// the mapping table says for maps).
func plainMapsDescriptor(set *descriptorpb.FileDescriptorSet, md protoreflect.MessageDescriptor) (protoreflect.MessageDescriptor, map[protoreflect.FullName]bool, error) {
	set = proto.Clone(set).(*descriptorpb.FileDescriptorSet)
	entries := map[protoreflect.FullName]bool{}
	var clear func(prefix string, msgs []*descriptorpb.DescriptorProto)
	clear = func(prefix string, msgs []*descriptorpb.DescriptorProto) {
		for _, m := range msgs {
			name := prefix + "." + m.GetName()
			if m.GetOptions().GetMapEntry() {
				m.Options.MapEntry = nil
				entries[protoreflect.FullName(name)] = true
			}
			clear(name, m.NestedType)
		}
	}
	for _, f := range set.File {
		clear(f.GetPackage(), f.MessageType)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, nil, fmt.Errorf("protogo: rebuilding the schema with plain map entries: %w", err)
	}
	d, err := files.FindDescriptorByName(md.FullName())
	if err != nil {
		return nil, nil, fmt.Errorf("protogo: %w", err)
	}
	return d.(protoreflect.MessageDescriptor), entries, nil
}

func prepareProtoGo(env *env, ds *dataset) (decodeFunc, error) {
	md, entries, err := plainMapsDescriptor(env.schemas.set, ds.message)
	if err != nil {
		return nil, err
	}
	records := ds.records()
	return func() (*structtensor.StructTensor, error) { return decodeProtoGo(md, entries, records) }, nil
}

// decodeProtoGo decodes records of type md into a rank-1 StructTensor.
func decodeProtoGo(md protoreflect.MessageDescriptor, mapEntries map[protoreflect.FullName]bool, records [][]byte) (*structtensor.StructTensor, error) {
	root := newPGNode(md, mapEntries, map[protoreflect.FullName]bool{})
	msg := dynamicpb.NewMessage(md)
	for i, rec := range records {
		msg.Reset()
		if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(rec, msg); err != nil {
			return nil, fmt.Errorf("protogo: record %d: %w", i, err)
		}
		root.add(msg)
	}
	fields, err := root.build()
	if err != nil {
		return nil, err
	}
	return structtensor.NewStruct(len(records), fields...)
}

const (
	modeScalar   = iota // required, or proto3 implicit: one value per parent
	modeList            // repeated (and maps): a ragged list per parent
	modeOptional        // singular with presence: a list of 0 or 1 per parent
)

type pgNode struct {
	count  int // messages appended at this node
	fields []*pgField
}

type pgField struct {
	fd     protoreflect.FieldDescriptor
	mode   int
	splits []int64 // modeList and modeOptional
	child  *pgNode // message fields
	col    column  // scalar fields
}

func newPGNode(md protoreflect.MessageDescriptor, mapEntries, seen map[protoreflect.FullName]bool) *pgNode {
	seen[md.FullName()] = true
	defer delete(seen, md.FullName())
	n := &pgNode{}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		f := &pgField{fd: fd}
		switch {
		case mapEntries[md.FullName()]:
			f.mode = modeScalar // an entry always has its key and value
		case fd.Cardinality() == protoreflect.Required:
			f.mode = modeScalar
		case fd.IsList() || fd.IsMap():
			f.mode = modeList
		case fd.HasPresence():
			f.mode = modeOptional
		default:
			f.mode = modeScalar
		}
		if f.mode != modeScalar {
			f.splits = []int64{0}
		}
		if m := fd.Message(); m != nil {
			if seen[m.FullName()] {
				continue // recursion cut, as in the default projection
			}
			f.child = newPGNode(m, mapEntries, seen)
		} else {
			f.col = newColumn(fd.Kind())
		}
		n.fields = append(n.fields, f)
	}
	return n
}

func (n *pgNode) add(m protoreflect.Message) {
	n.count++
	for _, f := range n.fields {
		switch f.mode {
		case modeScalar:
			f.addValue(m.Get(f.fd))
		case modeList:
			l := m.Get(f.fd).List()
			for i := 0; i < l.Len(); i++ {
				f.addValue(l.Get(i))
			}
			f.splits = append(f.splits, f.splits[len(f.splits)-1]+int64(l.Len()))
		case modeOptional:
			k := int64(0)
			if m.Has(f.fd) {
				f.addValue(m.Get(f.fd))
				k = 1
			}
			f.splits = append(f.splits, f.splits[len(f.splits)-1]+k)
		}
	}
}

func (f *pgField) addValue(v protoreflect.Value) {
	if f.child != nil {
		f.child.add(v.Message())
		return
	}
	f.col.add(v)
}

func (n *pgNode) build() ([]structtensor.Field, error) {
	out := make([]structtensor.Field, 0, len(n.fields))
	for _, f := range n.fields {
		name := string(f.fd.Name())
		var v structtensor.Value
		var err error
		switch {
		case f.child != nil:
			var fields []structtensor.Field
			if fields, err = f.child.build(); err != nil {
				return nil, err
			}
			if f.mode == modeScalar {
				v, err = structtensor.NewStruct(n.count, fields...)
			} else {
				var p *structtensor.RowPartition
				if p, err = structtensor.NewRowSplits(f.splits); err == nil {
					v, err = structtensor.NewPartitionedStruct(n.count, []*structtensor.RowPartition{p}, fields...)
				}
			}
		default:
			var t *structtensor.Tensor
			if t, err = f.col.tensor(); err != nil {
				break
			}
			if f.mode == modeScalar {
				v = t
			} else {
				v, err = structtensor.NewRaggedFromSplits(t, f.splits)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("protogo: field %s: %w", f.fd.FullName(), err)
		}
		out = append(out, structtensor.Field{Name: name, Value: v})
	}
	return out, nil
}

// column accumulates the values of one scalar field in the DType the
// mapping table gives its protobuf kind.
type column struct {
	kind protoreflect.Kind
	b    []bool
	i32  []int32
	i64  []int64
	u32  []uint32
	u64  []uint64
	f32  []float32
	f64  []float64
	str  []byte
	off  []int64
}

func newColumn(k protoreflect.Kind) column {
	c := column{kind: k}
	if k == protoreflect.StringKind || k == protoreflect.BytesKind {
		c.off = []int64{0}
	}
	return c
}

func (c *column) add(v protoreflect.Value) {
	switch c.kind {
	case protoreflect.BoolKind:
		c.b = append(c.b, v.Bool())
	case protoreflect.EnumKind:
		c.i32 = append(c.i32, int32(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		c.i32 = append(c.i32, int32(v.Int()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		c.i64 = append(c.i64, v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		c.u32 = append(c.u32, uint32(v.Uint()))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		c.u64 = append(c.u64, v.Uint())
	case protoreflect.FloatKind:
		c.f32 = append(c.f32, float32(v.Float()))
	case protoreflect.DoubleKind:
		c.f64 = append(c.f64, v.Float())
	case protoreflect.StringKind:
		c.str = append(c.str, v.String()...)
		c.off = append(c.off, int64(len(c.str)))
	case protoreflect.BytesKind:
		c.str = append(c.str, v.Bytes()...)
		c.off = append(c.off, int64(len(c.str)))
	}
}

func (c *column) tensor() (*structtensor.Tensor, error) {
	switch c.kind {
	case protoreflect.BoolKind:
		return structtensor.NewTensor(nil, c.b)
	case protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return structtensor.NewTensor(nil, c.i32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return structtensor.NewTensor(nil, c.i64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return structtensor.NewTensor(nil, c.u32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return structtensor.NewTensor(nil, c.u64)
	case protoreflect.FloatKind:
		return structtensor.NewTensor(nil, c.f32)
	case protoreflect.DoubleKind:
		return structtensor.NewTensor(nil, c.f64)
	case protoreflect.StringKind, protoreflect.BytesKind:
		return structtensor.NewStringTensor(nil, c.str, c.off, c.kind == protoreflect.StringKind)
	}
	return nil, fmt.Errorf("protogo: unsupported kind %v", c.kind)
}
