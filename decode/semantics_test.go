package decode

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/structtensor/structtensor-go/structtensor"
)

// wire builds records by hand, so that tests can send what canonical
// marshalling never produces: repeated singular fields, split
// submessages, mixed packed and unpacked runs, unknown groups, bad bytes.
type wire []byte

func (w wire) varint(num protowire.Number, v uint64) wire {
	b := protowire.AppendTag(w, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (w wire) bytes(num protowire.Number, s []byte) wire {
	b := protowire.AppendTag(w, num, protowire.BytesType)
	return protowire.AppendBytes(b, s)
}

func (w wire) str(num protowire.Number, s string) wire { return w.bytes(num, []byte(s)) }

func (w wire) fixed32(num protowire.Number, v uint32) wire {
	b := protowire.AppendTag(w, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func (w wire) group(num protowire.Number, body wire) wire {
	b := protowire.AppendTag(w, num, protowire.StartGroupType)
	b = append(b, body...)
	return protowire.AppendTag(b, num, protowire.EndGroupType)
}

func (w wire) raw(b ...byte) wire { return append(w, b...) }

// wireRecords is records as Plan.Decode takes them.
func wireRecords(records []wire) [][]byte {
	out := make([][]byte, len(records))
	for i, r := range records {
		out[i] = r
	}
	return out
}

func packedVarints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// allScalarsRequired is the wire form of every required field of
// AllScalars, so that a record of it decodes.
func allScalarsRequired() wire {
	var w wire
	for n := protowire.Number(21); n <= 36; n++ {
		switch n {
		case 27, 29, 31: // fixed32, sfixed32, float
			w = w.fixed32(n, 0)
		case 28, 30, 32: // fixed64, sfixed64, double
			w = protowire.AppendFixed64(protowire.AppendTag(w, n, protowire.Fixed64Type), 0)
		case 34, 35:
			w = w.str(n, "")
		default:
			w = w.varint(n, 0)
		}
	}
	return w
}

const (
	p3Msg     = "structtensor.testdata.proto3.Proto3Msg"
	allScalar = "structtensor.testdata.scalars.AllScalars"
	nodeMsg   = "structtensor.testdata.recursive.Node"
)

func TestSemantics(t *testing.T) {
	d := testDescriptors(t)
	sub := func(fields wire) []byte { return fields }
	tests := []struct {
		name    string
		message string
		paths   []string
		records []wire
		want    any
		// noReference is set where protobuf's in-memory form cannot show
		// what the columns keep (duplicate map keys).
		noReference bool
	}{{
		name:    "last scalar wins",
		message: p3Msg, paths: []string{"i32", "text", "opt_i32"},
		records: []wire{wire{}.varint(1, 1).str(8, "a").varint(11, 5).varint(1, 2).str(8, "bb").varint(11, 6)},
		want:    []any{map[string]any{"i32": int32(2), "text": "bb", "opt_i32": []any{int32(6)}}},
	}, {
		name:    "zero-length record reads defaults",
		message: p3Msg, paths: []string{"i32", "text", "opt_i32", "sub", "words"},
		records: []wire{{}},
		want:    []any{map[string]any{"i32": int32(0), "text": "", "opt_i32": []any{}, "sub": []any{}, "words": []any{}}},
	}, {
		name:    "singular submessages merge",
		message: p3Msg, paths: []string{"sub"},
		records: []wire{wire{}.bytes(20, sub(wire{}.varint(1, 7).varint(3, 1))).varint(1, 9).bytes(20, sub(wire{}.str(2, "x").varint(3, 2)))},
		want: []any{map[string]any{"sub": []any{map[string]any{
			"id": int64(7), "label": "x", "codes": []any{int32(1), int32(2)}}}}},
	}, {
		// The walker skips the check for a value to replace when a field's
		// row splits lag (it has not occurred since an earlier element),
		// and resolves one- and two-byte tags by table; a second occurrence
		// in the same element must still replace, an overlong tag still
		// name its field.
		name:    "sparse singular fields replace within an element; two-byte and overlong tags",
		message: p3Msg, paths: []string{"i32", "opt_i32", "opt_text", "sub", "packed_i64"},
		records: []wire{
			{},
			wire{}.varint(11, 5).str(12, "a").bytes(20, sub(wire{}.varint(1, 1))).varint(11, 6).raw(0x88, 0x00, 3).
				bytes(20, sub(wire{}.str(2, "x"))).str(12, "b").varint(22, 4).bytes(22, packedVarints(5)),
			wire{}.varint(11, 7),
		},
		want: []any{
			map[string]any{"i32": int32(0), "opt_i32": []any{}, "opt_text": []any{}, "sub": []any{}, "packed_i64": []any{}},
			map[string]any{"i32": int32(3), "opt_i32": []any{int32(6)}, "opt_text": []any{"b"},
				"sub": []any{map[string]any{"id": int64(1), "label": "x", "codes": []any{}}}, "packed_i64": []any{int64(4), int64(5)}},
			map[string]any{"i32": int32(0), "opt_i32": []any{int32(7)}, "opt_text": []any{}, "sub": []any{}, "packed_i64": []any{}},
		},
	}, {
		name:    "packed and unpacked runs of one field concatenate",
		message: p3Msg, paths: []string{"packed_i64", "fixed"},
		records: []wire{wire{}.varint(22, 1).bytes(22, packedVarints(2, 3)).varint(22, 4).
			bytes(25, []byte{5, 0, 0, 0, 6, 0, 0, 0}).fixed32(25, 7)},
		want: []any{map[string]any{"packed_i64": []any{int64(1), int64(2), int64(3), int64(4)}, "fixed": []any{uint32(5), uint32(6), uint32(7)}}},
	}, {
		// Three-byte tags miss the tag tables: the general path finds the
		// field and tells its packed form from its own wire type.
		name:    "packed and unpacked runs under overlong tags",
		message: p3Msg, paths: []string{"packed_i64", "fixed"},
		records: []wire{wire{}.raw(0xb0, 0x81, 0x00, 1).raw(0xb2, 0x81, 0x00, 2).raw(packedVarints(2, 3)...).
			raw(0xca, 0x81, 0x00, 8, 5, 0, 0, 0, 6, 0, 0, 0).raw(0xcd, 0x81, 0x00, 7, 0, 0, 0)},
		want: []any{map[string]any{"packed_i64": []any{int64(1), int64(2), int64(3)}, "fixed": []any{uint32(5), uint32(6), uint32(7)}}},
	}, {
		name:    "a oneof keeps its last member",
		message: p3Msg, paths: []string{"choice_int", "choice_text", "choice_sub"},
		records: []wire{
			wire{}.varint(14, 5).str(15, "t"),
			wire{}.bytes(16, sub(wire{}.varint(1, 1).varint(3, 4))).varint(14, 3).bytes(16, sub(wire{}.str(2, "z"))),
			wire{}.bytes(16, sub(wire{}.varint(1, 1))).bytes(16, sub(wire{}.str(2, "m"))),
		},
		want: []any{
			map[string]any{"choice_int": []any{}, "choice_text": []any{"t"}, "choice_sub": []any{}},
			map[string]any{"choice_int": []any{}, "choice_text": []any{}, "choice_sub": []any{map[string]any{"id": int64(0), "label": "z", "codes": []any{}}}},
			map[string]any{"choice_int": []any{}, "choice_text": []any{}, "choice_sub": []any{map[string]any{"id": int64(1), "label": "m", "codes": []any{}}}},
		},
	}, {
		name:    "a oneof switch drops a message member whose defaults are still to be filled",
		message: p3Msg, paths: []string{"choice_int", "choice_sub.id", "choice_sub.label"},
		records: []wire{
			wire{}.bytes(16, sub(wire{}.varint(1, 1))),
			wire{}.bytes(16, sub(wire{}.varint(1, 2))).varint(14, 3),
			wire{}.bytes(16, sub(wire{}.str(2, "l"))),
		},
		want: []any{
			map[string]any{"choice_int": []any{}, "choice_sub": []any{map[string]any{"id": int64(1), "label": ""}}},
			map[string]any{"choice_int": []any{int64(3)}, "choice_sub": []any{}},
			map[string]any{"choice_int": []any{}, "choice_sub": []any{map[string]any{"id": int64(0), "label": "l"}}},
		},
	}, {
		name:    "unknown fields and unknown groups are skipped",
		message: p3Msg, paths: []string{"i32"},
		records: []wire{wire{}.varint(100, 1).group(101, wire{}.varint(1, 2).group(3, wire{}.str(4, "x"))).
			fixed32(102, 9).str(103, "skip").varint(1, 42).raw(0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8)}, // field 101 fixed64
		want: []any{map[string]any{"i32": int32(42)}},
	}, {
		name:    "map entries in wire order, duplicates kept, absent key and value read as defaults",
		message: p3Msg, paths: []string{"counts"},
		records: []wire{wire{}.bytes(17, sub(wire{}.str(1, "b").varint(2, 1))).bytes(17, sub(wire{}.str(1, "a"))).
			bytes(17, sub(wire{}.str(1, "b").varint(2, 3))).bytes(17, nil)},
		want: []any{map[string]any{"counts": []any{
			map[string]any{"key": "b", "value": int64(1)},
			map[string]any{"key": "a", "value": int64(0)},
			map[string]any{"key": "b", "value": int64(3)},
			map[string]any{"key": "", "value": int64(0)},
		}}},
		noReference: true,
	}, {
		name:    "map with message values: an absent value is an empty message",
		message: p3Msg, paths: []string{"subs_by_id.key", "subs_by_id.value.id"},
		records: []wire{wire{}.bytes(18, sub(wire{}.varint(1, 4))).bytes(18, sub(wire{}.varint(1, 5).bytes(2, sub(wire{}.varint(1, 50)))))},
		want: []any{map[string]any{"subs_by_id": []any{
			map[string]any{"key": int32(4), "value": map[string]any{"id": int64(0)}},
			map[string]any{"key": int32(5), "value": map[string]any{"id": int64(50)}},
		}}},
	}, {
		name:    "groups, sint zigzag, negative int32 as 10-byte varint, enum",
		message: allScalar, paths: []string{"o_sint32", "o_sint64", "o_int32", "o_enum", "optgroup", "repgroup.id"},
		records: []wire{allScalarsRequired().varint(5, protowire.EncodeZigZag(-3)).varint(6, protowire.EncodeZigZag(-4)).
			varint(1, uint64(math.MaxUint64)).varint(16, uint64(0xFFFFFFFFFFFFFFFD)).
			group(90, wire{}.varint(91, 8)).group(93, wire{}.varint(94, 1)).group(93, wire{}.varint(94, 2)).group(90, wire{}.str(92, "g"))},
		want: []any{map[string]any{
			"o_sint32": []any{int32(-3)}, "o_sint64": []any{int64(-4)}, "o_int32": []any{int32(-1)}, "o_enum": []any{int32(-3)},
			"optgroup": []any{map[string]any{"g_int": []any{int32(8)}, "g_str": []any{"g"}}},
			"repgroup": []any{map[string]any{"id": int64(1)}, map[string]any{"id": int64(2)}},
		}},
	}, {
		name:    "unpacked-declared repeated field sent packed; bool from any nonzero varint",
		message: allScalar, paths: []string{"u_int32", "u_bool", "p_bool"},
		records: []wire{allScalarsRequired().bytes(41, packedVarints(1, 2)).varint(41, 3).varint(53, 7).bytes(73, packedVarints(0, 2))},
		want:    []any{map[string]any{"u_int32": []any{int32(1), int32(2), int32(3)}, "u_bool": []any{true}, "p_bool": []any{false, true}}},
	}, {
		name:    "extensions by path",
		message: allScalar, paths: []string{"(structtensor.testdata.ext.ext_int64)", "(structtensor.testdata.ext.Holder.nested_ext)", "(structtensor.testdata.ext.ext_inner).id"},
		records: []wire{allScalarsRequired().varint(1000, 11).bytes(1002, sub(wire{}.varint(1, 12)))},
		want: []any{map[string]any{
			"structtensor_testdata_ext_ext_int64":         []any{int64(11)},
			"structtensor_testdata_ext_Holder_nested_ext": []any{},
			"structtensor_testdata_ext_ext_inner":         []any{map[string]any{"id": []any{int64(12)}}},
		}},
	}, {
		name:    "explicit paths go below the recursion cut",
		message: nodeMsg, paths: []string{"left.left.value", "children.name"},
		records: []wire{wire{}.bytes(4, sub(wire{}.bytes(4, sub(wire{}.varint(1, 3))))).bytes(3, sub(wire{}.str(2, "c")))},
		want: []any{map[string]any{
			"left":     []any{map[string]any{"left": []any{map[string]any{"value": []any{int64(3)}}}}},
			"children": []any{map[string]any{"name": []any{"c"}}},
		}},
	}, {
		name:    "editions presence and delimited messages",
		message: "structtensor.testdata.editions.EdMsg", paths: []string{"explicit_int", "implicit_int", "required_int", "expanded", "delimited"},
		records: []wire{wire{}.varint(5, 9).varint(6, 1).bytes(6, packedVarints(2)).group(8, wire{}.varint(1, 3))},
		want: []any{map[string]any{
			"explicit_int": []any{}, "implicit_int": int32(0), "required_int": int64(9),
			"expanded": []any{int32(1), int32(2)}, "delimited": []any{map[string]any{"a": []any{int32(3)}, "b": []any{}}},
		}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := Compile(d, tc.message, tc.paths...)
			if err != nil {
				t.Fatal(err)
			}
			records := wireRecords(tc.records)
			st, err := plan.Decode(records)
			if err != nil {
				t.Fatal(err)
			}
			got := structtensor.ToValue(st)
			if ok, why := sameValue(tc.want, got); !ok {
				t.Fatalf("got %v\nwant %v\n%s", got, tc.want, why)
			}
			if tc.noReference {
				return
			}
			// The same non-canonical bytes through the full projection
			// must match protobuf's own parse (merge semantics included).
			full, err := Compile(d, tc.message)
			if err != nil {
				t.Fatal(err)
			}
			st, err = full.Decode(records)
			if err != nil {
				t.Fatal(err)
			}
			md, _ := d.Message(tc.message)
			if ok, why := sameValue(refRecords(t, md, records), structtensor.ToValue(st)); !ok {
				t.Fatalf("full projection differs from the reference: %s", why)
			}
			// And among other records: the splits and defaults of fields
			// absent from a stretch of elements are written in bulk at the
			// field's next occurrence, which merges, oneof switches and
			// reopened submessages must not disturb.
			batch := append(append([][]byte(nil), records...), records...)
			if _, err := full.Decode([][]byte{{}}); err == nil {
				// No required fields: empty records between.
				batch = append(append(append([][]byte{{}}, records...), []byte{}), records...)
			}
			for _, threads := range []int{1, 2} {
				st, err = full.Decode(batch, DecodeOptions{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				if ok, why := sameValue(refRecords(t, md, batch), structtensor.ToValue(st)); !ok {
					t.Fatalf("among other records on %d threads: differs from the reference: %s", threads, why)
				}
			}
		})
	}
}

func TestRequired(t *testing.T) {
	d := testDescriptors(t)
	rec := allScalarsRequired()
	// Drop r_int64 (field 22, the second field written).
	var missing wire
	for b := []byte(rec); len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num != 22 {
			missing = append(missing, b[:n+m]...)
		}
		b = b[n+m:]
	}
	plan, err := Compile(d, allScalar, "r_int64", "r_enum", "r_string")
	if err != nil {
		t.Fatal(err)
	}
	_, err = plan.Decode([][]byte{rec, missing})
	var re *RecordError
	if !errors.Is(err, ErrRequired) || !errors.As(err, &re) || re.Record != 1 || !strings.Contains(err.Error(), `"r_int64"`) {
		t.Fatalf("err = %v, want ErrRequired for record 1 naming r_int64", err)
	}
	fill, err := CompileOptions{FillRequired: true}.Compile(d, allScalar, "r_int64", "r_enum", "r_string")
	if err != nil {
		t.Fatal(err)
	}
	st, err := fill.Decode([][]byte{missing, {}})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"r_int64": int64(0), "r_enum": int32(0), "r_string": ""},
		map[string]any{"r_int64": int64(0), "r_enum": int32(0), "r_string": ""},
	}
	if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
		t.Fatal(why)
	}
}

// TestRequiredInSubmessages: a required field missing from a message
// nested three deep (descriptor.proto's UninterpretedOption.NamePart, in
// FileOptions, in FileDescriptorProto) is named by its path, at the byte
// where the field holding the incomplete message starts, whether that
// message ends with its parents or before more of their fields.
func TestRequiredInSubmessages(t *testing.T) {
	md := descriptorpb.File_google_protobuf_descriptor_proto.Messages().ByName("FileDescriptorProto")
	d, err := FromMessage(md)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(d, string(md.FullName()), "options.uninterpreted_option.name.name_part",
		"options.uninterpreted_option.name.is_extension", "options.uninterpreted_option.identifier_value", "name")
	if err != nil {
		t.Fatal(err)
	}
	// FileDescriptorProto: name = 1, options = 8; FileOptions:
	// uninterpreted_option = 999; UninterpretedOption: name = 2,
	// identifier_value = 3; NamePart: name_part = 1, is_extension = 2.
	part := func(complete bool) wire {
		w := wire{}.str(1, "x")
		if complete {
			w = w.varint(2, 1)
		}
		return w
	}
	option := func(parts ...wire) wire {
		var w wire
		for _, p := range parts {
			w = w.bytes(2, p)
		}
		return w
	}
	file := func(opt wire, after bool) wire {
		w := wire{}.str(1, "f.proto").bytes(8, wire{}.bytes(999, opt))
		if after {
			w = w.str(1, "g.proto")
		}
		return w
	}
	good := file(option(part(true), part(true)), false)
	tests := []struct {
		name   string
		record wire
		offset int64
	}{
		// name (9 bytes), options' tag and length (2), the option's (3):
		// the first NamePart's field starts at byte 14.
		{"ends with its parents", file(option(part(false)), false), 14},
		{"before a sibling", file(option(part(false), part(true)), false), 14},
		{"after a sibling, before the parent's next field", file(append(option(part(true), part(false)), wire{}.str(3, "v")...), true), 14 + 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := refUnmarshal(md, tc.record); err == nil {
				t.Fatal("protobuf accepts the record")
			}
			_, err := plan.Decode(wireRecords([]wire{good, tc.record, good}))
			var re *RecordError
			if !errors.Is(err, ErrRequired) || !errors.As(err, &re) || re.Record != 1 || re.Offset != tc.offset ||
				!strings.Contains(re.Detail, `"options.uninterpreted_option.name.is_extension"`) {
				t.Fatalf("err = %v, want ErrRequired in record 1 at byte %d naming options.uninterpreted_option.name.is_extension", err, tc.offset)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	d := testDescriptors(t)
	deep := func(n int) wire {
		w := wire{}.varint(1, 1)
		for i := 0; i < n; i++ {
			w = wire{}.bytes(4, w)
		}
		return w
	}
	tests := []struct {
		name    string
		message string
		opts    CompileOptions
		paths   []string
		records []wire
		err     error
		record  int64
		offset  int64
		path    string
	}{
		{"truncated varint", p3Msg, CompileOptions{}, nil, []wire{{}, wire{}.varint(2, 1).raw(0x08, 0x80)}, ErrMalformed, 1, 2, `truncated varint at field "i32"`},
		{"overlong varint", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)}, ErrMalformed, 0, 0, `overlong varint (more than 10 bytes or over 64 bits) at field "i32"`},
		{"varint over 64 bits", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02)}, ErrMalformed, 0, 0, `overlong varint`},
		{"overlong tag", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)}, ErrMalformed, 0, 0, `overlong tag varint`},
		{"a field outside the projection is named", p3Msg, CompileOptions{}, []string{"text"}, []wire{wire{}.raw(0x08, 0x80)}, ErrMalformed, 0, 0, `truncated varint in skipped field at field "i32" (number 1, not projected)`},
		{"truncated tag", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x80)}, ErrMalformed, 0, 0, "top level"},
		{"varint longer than 10 bytes", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)}, ErrMalformed, 0, 0, `"i64"`},
		{"length past the end", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x42, 5, 'a', 'b')}, ErrMalformed, 0, 0, `"text"`},
		{"length past the end of the enclosing message", p3Msg, CompileOptions{}, nil, []wire{wire{}.bytes(20, []byte{0x12, 9, 'x'})}, ErrMalformed, 0, 3, `"sub.label"`},
		{"packed fixed run not a multiple of 4", p3Msg, CompileOptions{}, nil, []wire{wire{}.bytes(25, []byte{1, 2, 3})}, ErrMalformed, 0, 0, `"fixed"`},
		{"wrong wire type", p3Msg, CompileOptions{}, nil, []wire{wire{}.bytes(1, nil)}, ErrWireType, 0, 0, `"i32"`},
		{"string sent as varint", p3Msg, CompileOptions{}, nil, []wire{wire{}.varint(8, 1)}, ErrWireType, 0, 0, `"text"`},
		{"field number 0", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x00, 0x01)}, ErrMalformed, 0, 0, "top level"},
		{"wire type 7", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x0f)}, ErrMalformed, 0, 0, "top level"},
		{"unterminated group", allScalar, CompileOptions{}, nil, []wire{allScalarsRequired().raw(0xd3, 0x05)}, ErrMalformed, 0, 80, "optgroup"},
		{"mismatched end group", allScalar, CompileOptions{}, nil, []wire{allScalarsRequired().raw(0xd3, 0x05, 0xec, 0x05)}, ErrMalformed, 0, 80, "optgroup"},
		{"stray end group", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0x0c)}, ErrMalformed, 0, 0, "top level"},
		{"stray end group in a submessage", p3Msg, CompileOptions{}, nil, []wire{wire{}.varint(1, 1).bytes(20, wire{}.varint(1, 2).raw(0x0c))}, ErrMalformed, 0, 7, `"sub"`},
		{"unterminated unknown group", p3Msg, CompileOptions{}, nil, []wire{wire{}.raw(0xa3, 0x06, 0x08, 0x01)}, ErrMalformed, 0, 0, `field number 100 of "" (not in the schema)`},
		{"recursion past the default limit", nodeMsg, CompileOptions{}, []string{strings.Repeat("left.", 101) + "value"}, []wire{deep(101)}, ErrDepth, 0, 238, `"left`},
		{"recursion past a set limit", nodeMsg, CompileOptions{MaxDepth: 3}, []string{"left.left.left.left.value"}, []wire{deep(2), deep(4)}, ErrDepth, 1, 6, `"left`},
		// An unknown group nests one deeper than the message holding it:
		// at the limit's depth, that is past it; one above, record 0
		// decodes and the error is record 1's.
		{"unknown group past a set limit", nodeMsg, CompileOptions{MaxDepth: 2}, []string{"left.left.value"}, []wire{wire{}.bytes(4, wire{}.bytes(4, wire{}.raw(0xa3, 0x06, 0xa4, 0x06)))}, ErrDepth, 0, 4, `left.left`},
		{"unknown group within a set limit", nodeMsg, CompileOptions{MaxDepth: 3}, []string{"left.left.value"}, []wire{wire{}.bytes(4, wire{}.bytes(4, wire{}.raw(0xa3, 0x06, 0xa4, 0x06))), wire{}.raw(0x08)}, ErrMalformed, 1, 0, ``},
		{"invalid UTF-8 in a proto3 string", p3Msg, CompileOptions{}, nil, []wire{wire{}.str(24, "ok").str(24, "\xff")}, ErrUTF8, 0, 5, `"words"`},
		{"invalid UTF-8 in a map key", p3Msg, CompileOptions{}, nil, []wire{wire{}.bytes(17, wire{}.str(1, "\xc0\x80"))}, ErrUTF8, 0, 3, `"counts.key"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := tc.opts.Compile(d, tc.message, tc.paths...)
			if err != nil {
				t.Fatal(err)
			}
			records := wireRecords(tc.records)
			st, err := plan.Decode(records)
			if st != nil {
				t.Errorf("partial output returned with the error")
			}
			var re *RecordError
			if !errors.Is(err, tc.err) || !errors.As(err, &re) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if re.Record != tc.record || re.Offset != tc.offset || !strings.Contains(re.Detail, tc.path) {
				t.Fatalf("err = %v, want record %d, byte %d, path %s", err, tc.record, tc.offset, tc.path)
			}
			// The reference agrees the record is bad, except where we are
			// stricter than protobuf (a known field with another wire type
			// is an unknown field to protobuf).
			md, _ := d.Message(tc.message)
			if _, rerr := refUnmarshal(md, records[tc.record]); rerr == nil && tc.err != ErrWireType && tc.err != ErrDepth {
				t.Errorf("protobuf accepts the record that we reject")
			}
		})
	}
}

func TestAcceptInvalidUTF8(t *testing.T) {
	d := testDescriptors(t)
	plan, err := CompileOptions{AcceptInvalidUTF8: true}.Compile(d, p3Msg, "words")
	if err != nil {
		t.Fatal(err)
	}
	st, err := plan.Decode([][]byte{wire{}.str(24, "\xff")})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := st.FieldValue("words")
	r := v.(*structtensor.Ragged)
	if r.Values().UTF8() || string(r.Values().StringAt(0)) != "\xff" {
		t.Fatalf("got %q utf8=%v", r.Values().StringAt(0), r.Values().UTF8())
	}
	// Two values that are each invalid but together "é": the column is
	// not text.
	w := wire{}.str(24, "\xc3").str(24, "\xa9")
	st, err = plan.Decode([][]byte{w})
	if err != nil {
		t.Fatal(err)
	}
	v, _ = st.FieldValue("words")
	if vals := v.(*structtensor.Ragged).Values(); vals.UTF8() || vals.Len() != 2 {
		t.Fatalf("values %q and %q marked UTF-8 (%d values)", vals.StringAt(0), vals.StringAt(1), vals.Len())
	}
	// proto2 strings are not validated at all.
	p2, err := Compile(d, allScalar, "o_string")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Decode([][]byte{allScalarsRequired().str(14, "\xff")}); err != nil {
		t.Fatal(err)
	}
}

func TestCompileErrors(t *testing.T) {
	d := testDescriptors(t)
	tests := []struct {
		message string
		path    string
		err     error
		want    string
	}{
		{"structtensor.testdata.recipe.Recipe", "stepz", ErrPath, "title, ingredients, ratings, steps, servings, tags"},
		{"structtensor.testdata.recipe.Recipe", "steps.tools.nam", ErrPath, `no field "nam" in structtensor.testdata.recipe.Tool (fields: name, electric)`},
		{"structtensor.testdata.recipe.Recipe", "title.x", ErrPath, `"title" is not a message field`},
		{"structtensor.testdata.recipe.Recipe", "steps..name", ErrPath, "empty step"},
		{allScalar, "(structtensor.testdata.ext.nope)", ErrPath, "(structtensor.testdata.ext.ext_int64)"},
		{allScalar, "(unclosed", ErrPath, "unclosed"},
		{"no.such.Message", "", ErrDescriptor, "not found"},
	}
	for _, tc := range tests {
		var paths []string
		if tc.path != "" {
			paths = append(paths, tc.path)
		}
		_, err := Compile(d, tc.message, paths...)
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%s, %q) = %v, want %v containing %q", tc.message, tc.path, err, tc.err, tc.want)
		}
	}
}

func TestThreadsAndContiguousMatchSerial(t *testing.T) {
	d := testDescriptors(t)
	for _, ds := range benchDatasets(t, 256) {
		plan, err := Compile(d, ds.message)
		if err != nil {
			t.Fatal(err)
		}
		serial, err := plan.Decode(ds.records, DecodeOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		parallel, err := plan.Decode(ds.records, DecodeOptions{Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(serial, parallel) {
			t.Errorf("%s: 4 threads differ from serial", ds.name)
		}
		var data []byte
		offsets := []int64{0}
		for _, r := range ds.records {
			data = append(data, r...)
			offsets = append(offsets, int64(len(data)))
		}
		contiguous, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(serial, contiguous) {
			t.Errorf("%s: contiguous differs from serial", ds.name)
		}
		// The first bad record is reported, whatever the threading.
		bad := append([][]byte(nil), ds.records...)
		bad[len(bad)/3] = []byte{0x80}
		bad[len(bad)*2/3] = []byte{0x80}
		_, e1 := plan.Decode(bad, DecodeOptions{Threads: 1})
		_, e4 := plan.Decode(bad, DecodeOptions{Threads: 4})
		var r1, r4 *RecordError
		if !errors.As(e1, &r1) || !errors.As(e4, &r4) || r1.Record != int64(len(bad)/3) || *r1 != *r4 {
			t.Errorf("%s: errors differ: serial %v, parallel %v", ds.name, e1, e4)
		}
	}
}

func TestContiguousBadOffsets(t *testing.T) {
	d := testDescriptors(t)
	plan, err := Compile(d, p3Msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, offsets := range [][]int64{{}, {0, 5}, {2, 1}, {-1, 0}} {
		if _, err := plan.DecodeContiguous([]byte{1, 2}, offsets); !errors.Is(err, ErrInput) {
			t.Errorf("offsets %v: err = %v, want ErrInput", offsets, err)
		}
	}
	st, err := plan.DecodeContiguous(nil, []int64{0, 0, 0})
	if err != nil || st.NumRows() != 2 {
		t.Fatalf("two empty records: %v, %v", st, err)
	}
}

func TestCancel(t *testing.T) {
	d := testDescriptors(t)
	plan, err := Compile(d, p3Msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	records := make([][]byte, 1000)
	_, err = plan.DecodeContext(ctx, records)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	d := testDescriptors(t)
	for _, name := range testMessages {
		plan, err := CompileOptions{FillRequired: true, MaxDepth: 7}.Compile(d, name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := plan.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalPlan(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !back.Spec().Equal(plan.Spec()) || back.String() != plan.String() || back.maxDepth != 7 || back.flags != plan.flags {
			t.Fatalf("%s: round trip changed the plan:\n%v\n%v", name, plan, back)
		}
		// MarshalBinary returns the parsed bytes as they were: re-encode
		// what was parsed instead.
		if b2 := back.marshal(); string(b2) != string(b) {
			t.Fatalf("%s: the parsed plan re-encodes differently:\n%x\n%x", name, b, b2)
		}
	}
	for _, bad := range [][]byte{nil, []byte("STPL"), []byte("XXXX\x01"), []byte("STPL\x02")} {
		if _, err := UnmarshalPlan(bad); !errors.Is(err, ErrPlan) {
			t.Errorf("UnmarshalPlan(%q) = %v, want ErrPlan", bad, err)
		}
	}
}

// TestFromMessage compiles a plan from a message compiled into the
// program (descriptor.proto's FileDescriptorProto, which is recursive) and
// decodes the test schemas' own file descriptors with it.
func TestFromMessage(t *testing.T) {
	md := descriptorpb.File_google_protobuf_descriptor_proto.Messages().ByName("FileDescriptorProto")
	d, err := FromMessage(md)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(d, string(md.FullName()))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../testdata/proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	var records [][]byte
	for _, f := range set.File {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, b)
	}
	st, err := plan.Decode(records)
	if err != nil {
		t.Fatal(err)
	}
	testDescriptors(t)
	if ok, why := sameValue(refRecords(t, md, records), structtensor.ToValue(st)); !ok {
		t.Fatal(why)
	}
}

func TestProjection(t *testing.T) {
	d := testDescriptors(t)
	tests := []struct {
		opts    CompileOptions
		message string
		paths   []string
		want    string
	}{
		// Recursion is cut where Node would repeat on its own path; Leaf
		// is kept, and its back-reference to Node cut.
		{CompileOptions{}, nodeMsg, nil, "Plan(structtensor.testdata.recursive.Node: value, name, leaf.tag)"},
		{CompileOptions{MaxProjectionDepth: 1}, "structtensor.testdata.recipe.Recipe", nil,
			"Plan(structtensor.testdata.recipe.Recipe: title, ingredients.name, ingredients.amount, ingredients.unit, ratings.user, ratings.rating, ratings.user_embedding, steps.instruction, steps.minutes, servings, tags)"},
		// A path ending at a message selects everything below it.
		{CompileOptions{}, "structtensor.testdata.recipe.Recipe", []string{"steps.tools", "title"},
			"Plan(structtensor.testdata.recipe.Recipe: title, steps.tools.name, steps.tools.electric)"},
		{CompileOptions{}, p3Msg, []string{"counts.value", "subs_by_id.key"},
			"Plan(structtensor.testdata.proto3.Proto3Msg: counts.value, subs_by_id.key)"},
		{CompileOptions{}, allScalar, []string{"OptGroup.g_int"},
			"Plan(structtensor.testdata.scalars.AllScalars: optgroup.g_int)"},
	}
	for _, tc := range tests {
		p, err := tc.opts.Compile(d, tc.message, tc.paths...)
		if err != nil {
			t.Fatal(err)
		}
		if p.String() != tc.want {
			t.Errorf("Compile(%s, %q) =\n%s\nwant\n%s", tc.message, tc.paths, p, tc.want)
		}
	}
}

// TestUnmarshalPlanChecks corrupts one part of a valid plan at a time and
// checks that the Go parser names what is wrong before the engine sees
// the plan.
func TestUnmarshalPlanChecks(t *testing.T) {
	plan := &Plan{message: "pkg.M", maxDepth: 5, columns: []structtensor.DType{structtensor.Int64}, nparts: 1,
		nodes: []*planNode{{fields: []*planField{
			{name: "x", number: 1, kind: protoreflect.Int64Kind, mode: modeRepeated, column: 0, partition: 0},
		}}}}
	good := plan.marshal()
	if _, err := UnmarshalPlan(good); err != nil {
		t.Fatalf("the valid plan: %v", err)
	}
	edit := func(f func(p *Plan)) []byte {
		q := *plan
		q.columns = append([]structtensor.DType(nil), plan.columns...)
		field := *plan.nodes[0].fields[0]
		q.nodes = []*planNode{{fields: []*planField{&field}}}
		f(&q)
		return q.marshal()
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"column dtype not the kind's", edit(func(p *Plan) { p.columns[0] = structtensor.Float32 }), `column 0 of float32 for a int64 field (want int64)`},
		{"unknown kind", edit(func(p *Plan) { p.nodes[0].fields[0].kind = 0 }), `kind 0`},
		{"kind past the table", edit(func(p *Plan) { p.nodes[0].fields[0].kind = 19 }), `kind 19 out of range`},
		{"column out of range", edit(func(p *Plan) { p.nodes[0].fields[0].column = 3 }), `column 3 out of range`},
		{"partition out of range", edit(func(p *Plan) { p.nodes[0].fields[0].partition = 1 }), `partition 1 out of range`},
		{"mode", edit(func(p *Plan) { p.nodes[0].fields[0].mode = 4 }), `mode 4 out of range`},
		{"field name", edit(func(p *Plan) { p.nodes[0].fields[0].name = "1x" }), `field name "1x"`},
		{"message name", edit(func(p *Plan) { p.message = "a..b" }), `message name "a..b"`},
		{"max depth", edit(func(p *Plan) { p.maxDepth = 0 }), `max depth 0`},
		{"unknown flag", edit(func(p *Plan) { p.flags = 8 }), `unknown flags 0x8`},
		{"child above its node", edit(func(p *Plan) {
			p.nodes[0].fields[0].kind = protoreflect.MessageKind
			p.nodes[0].fields[0].child = 0
		}), `child node 0 is not below node 0`},
		{"trailing bytes", append(append([]byte(nil), good...), 0), `1 bytes after the plan`},
		{"huge column count", append([]byte("STPL\x01\x05pkg.M\x00\x05"), 0xff, 0xff, 0xff, 0xff, 0x0f), `column count 4294967295 out of range`},
	} {
		_, err := UnmarshalPlan(tc.b)
		if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "byte offset") {
			t.Errorf("%s: %v, want ErrPlan at a byte offset with %q", tc.name, err, tc.want)
		}
	}
}
