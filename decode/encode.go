package decode

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// Messages returns one message of the plan's type per row of s, a rank-1
// StructTensor shaped as p decodes (its Spec, or a projection of it):
// the inverse of Decode. Fields that s lacks stay unset, so a projected
// value gives messages with only the projected fields. The messages are
// dynamicpb messages the caller owns; nothing in them shares s's storage.
//
// A value that does not fit the message (a field of another dtype or
// shape, an optional field with two values) is an ErrValue error naming
// the row and the field path. Encoding needs the descriptors the plan was
// compiled from: a plan read back by UnmarshalPlan has none, and fails
// with ErrInput.
func (p *Plan) Messages(s *st.StructTensor) ([]proto.Message, error) {
	if p.descs == nil || p.nodes[0].desc == nil {
		return nil, fmt.Errorf("%w: the plan has no descriptors to encode with (compile it instead of UnmarshalPlan)", ErrInput)
	}
	if s == nil || s.Rank() != 1 {
		return nil, fmt.Errorf("%w: want a rank-1 StructTensor", ErrValue)
	}
	e := encoder{p.descs}
	out := make([]proto.Message, s.NumRows())
	for i := range out {
		msg := dynamicpb.NewMessage(p.nodes[0].desc)
		if err := e.fill(msg, s, i, ""); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out[i] = msg
	}
	return out, nil
}

// Encode serializes each row of s as one protobuf record (see Messages):
// decoding the records with p gives s back, for a value p decoded. The
// encoding is deterministic (map entries sorted by key) and allows
// missing required fields, which a projection may leave out.
func (p *Plan) Encode(s *st.StructTensor) ([][]byte, error) {
	msgs, err := p.Messages(s)
	if err != nil {
		return nil, err
	}
	opts := proto.MarshalOptions{AllowPartial: true, Deterministic: true}
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		if out[i], err = opts.Marshal(m); err != nil {
			return nil, fmt.Errorf("row %d: %w: %v", i, ErrValue, err)
		}
	}
	return out, nil
}

// EncodeTFRecord writes each row of s to w as one record of a TFRecord
// stream (see Encode), with the tfrecord options given (compression).
// It does not close w.
func (p *Plan) EncodeTFRecord(w io.Writer, s *st.StructTensor, opts ...tfrecord.Options) error {
	records, err := p.Encode(s)
	if err != nil {
		return err
	}
	tw := tfrecord.NewWriter(w, opts...)
	for _, r := range records {
		if err := tw.Write(r); err != nil {
			return err
		}
	}
	return tw.Close()
}

// encoder fills messages from rows; desc gives the extensions to fill.
type encoder struct{ desc *Descriptors }

// fill sets the fields of msg from row i of s, a rank-1 struct of flat
// fields shaped by the decode mapping. Fields absent from s (projected
// away) stay unset.
func (c encoder) fill(msg protoreflect.Message, s *st.StructTensor, i int, path string) error {
	md := msg.Descriptor()
	fields := md.Fields()
	for k := 0; k < fields.Len(); k++ {
		if err := c.fillField(msg, fields.Get(k), nil, s, i, path); err != nil {
			return err
		}
	}
	for _, xd := range c.desc.Extensions(md) {
		if err := c.fillField(msg, xd, dynamicpb.NewExtensionType(xd), s, i, path); err != nil {
			return err
		}
	}
	return nil
}

func (c encoder) fillField(msg protoreflect.Message, fd protoreflect.FieldDescriptor, xt protoreflect.ExtensionType, s *st.StructTensor, i int, path string) error {
	name := OutputName(fd)
	v, ok := s.Field(name)
	if !ok {
		return nil
	}
	fpath := name
	if path != "" {
		fpath = path + "." + name
	}
	if xt != nil {
		// Messages take extensions by their type descriptor, for Set as
		// for Mutable (lists, maps, submessages).
		fd = xt.TypeDescriptor()
	}
	set := func(val protoreflect.Value) { msg.Set(fd, val) }
	list := fd.IsList() || fd.IsMap() || (fd.HasPresence() && fd.Cardinality() != protoreflect.Required && !containing(fd).IsMapEntry())
	if !list {
		val, err := c.element(msg, fd, v, i, fpath)
		if err != nil {
			return err
		}
		set(val)
		return nil
	}
	if v.Rank() < 2 {
		return fmt.Errorf("%w: field %s: a list field needs rank >= 2 per message, got shape %v", ErrValue, fpath, v.Shape())
	}
	parts, inner, err := st.SplitOuterDims(v, 2)
	if err != nil {
		return fmt.Errorf("%w: field %s: %v", ErrValue, fpath, err)
	}
	p := parts[0]
	start, limit := p.RowStart(i), p.RowLimit(i)
	switch {
	case fd.IsMap():
		entries, ok := inner.(*st.StructTensor)
		if !ok {
			return fmt.Errorf("%w: field %s: a map is a list of {key, value} structs", ErrValue, fpath)
		}
		kf, vf := fd.MapKey(), fd.MapValue()
		kv, ok1 := entries.Field(OutputName(kf))
		vv, ok2 := entries.Field(OutputName(vf))
		if !ok1 || !ok2 {
			return fmt.Errorf("%w: field %s: map entries need key and value fields", ErrValue, fpath)
		}
		m := msg.Mutable(fd).Map()
		for k := start; k < limit; k++ {
			key, err := scalar(kf, kv, k, fpath+".key")
			if err != nil {
				return err
			}
			var val protoreflect.Value
			if vf.Message() != nil {
				sub, ok := vv.(*st.StructTensor)
				if !ok {
					return fmt.Errorf("%w: field %s.value: want a struct", ErrValue, fpath)
				}
				nm := m.NewValue()
				if err := c.fill(nm.Message(), sub, k, fpath+".value"); err != nil {
					return err
				}
				val = nm
			} else if val, err = scalar(vf, vv, k, fpath+".value"); err != nil {
				return err
			}
			m.Set(key.MapKey(), val)
		}
	case fd.IsList():
		l := msg.Mutable(fd).List()
		sub, isStruct := inner.(*st.StructTensor)
		if fd.Message() != nil && !isStruct {
			return fmt.Errorf("%w: field %s: a repeated message needs a struct, got %v", ErrValue, fpath, inner.Spec())
		}
		for k := start; k < limit; k++ {
			if fd.Message() != nil {
				nm := l.NewElement()
				if err := c.fill(nm.Message(), sub, k, fpath); err != nil {
					return err
				}
				l.Append(nm)
				continue
			}
			val, err := scalar(fd, inner, k, fpath)
			if err != nil {
				return err
			}
			l.Append(val)
		}
	default: // presence: 0 or 1 values
		switch limit - start {
		case 0:
		case 1:
			val, err := c.element(msg, fd, inner, start, fpath)
			if err != nil {
				return err
			}
			set(val)
		default:
			return fmt.Errorf("%w: field %s: an optional field holds %d values", ErrValue, fpath, limit-start)
		}
	}
	return nil
}

func containing(fd protoreflect.FieldDescriptor) protoreflect.MessageDescriptor {
	return fd.ContainingMessage()
}

// element returns the value of a singular field from row k of v: a new
// message filled from a struct, or a scalar.
func (c encoder) element(msg protoreflect.Message, fd protoreflect.FieldDescriptor, v st.Value, k int, path string) (protoreflect.Value, error) {
	if fd.Message() == nil {
		return scalar(fd, v, k, path)
	}
	sub, ok := v.(*st.StructTensor)
	if !ok || sub.Rank() != 1 {
		return protoreflect.Value{}, fmt.Errorf("%w: field %s: a message field needs a struct, got %v", ErrValue, path, v.Spec())
	}
	nm := dynamicpb.NewMessage(fd.Message())
	if err := c.fill(nm, sub, k, path); err != nil {
		return protoreflect.Value{}, err
	}
	return protoreflect.ValueOfMessage(nm), nil
}

// scalar returns element k of the rank-1 tensor v as a value of fd's kind.
func scalar(fd protoreflect.FieldDescriptor, v st.Value, k int, path string) (protoreflect.Value, error) {
	t, ok := v.(*st.Tensor)
	if !ok || t.Rank() != 1 {
		return protoreflect.Value{}, fmt.Errorf("%w: field %s: want one %v per element, got %v", ErrValue, path, fd.Kind(), v.Spec())
	}
	bad := func() (protoreflect.Value, error) {
		return protoreflect.Value{}, fmt.Errorf("%w: field %s: dtype %v does not hold a protobuf %v", ErrValue, path, t.DType(), fd.Kind())
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if t.DType() != st.Bool {
			return bad()
		}
		return protoreflect.ValueOfBool(t.Bools()[k]), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if t.DType() != st.Int32 {
			return bad()
		}
		return protoreflect.ValueOfInt32(t.Int32s()[k]), nil
	case protoreflect.EnumKind:
		if t.DType() != st.Int32 {
			return bad()
		}
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(t.Int32s()[k])), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if t.DType() != st.Int64 {
			return bad()
		}
		return protoreflect.ValueOfInt64(t.Int64s()[k]), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if t.DType() != st.Uint32 {
			return bad()
		}
		return protoreflect.ValueOfUint32(t.Uint32s()[k]), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if t.DType() != st.Uint64 {
			return bad()
		}
		return protoreflect.ValueOfUint64(t.Uint64s()[k]), nil
	case protoreflect.FloatKind:
		if t.DType() != st.Float32 {
			return bad()
		}
		return protoreflect.ValueOfFloat32(t.Float32s()[k]), nil
	case protoreflect.DoubleKind:
		if t.DType() != st.Float64 {
			return bad()
		}
		return protoreflect.ValueOfFloat64(t.Float64s()[k]), nil
	case protoreflect.StringKind:
		if t.DType() != st.String {
			return bad()
		}
		return protoreflect.ValueOfString(string(t.StringAt(k))), nil
	case protoreflect.BytesKind:
		if t.DType() != st.String {
			return bad()
		}
		return protoreflect.ValueOfBytes(append([]byte(nil), t.StringAt(k)...)), nil
	}
	return bad()
}
