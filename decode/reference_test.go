package decode

import (
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"pgregory.net/rapid"
)

// This file holds the test reference: a slow, obviously correct decoder
// (dynamicpb unmarshal, then a walk building the mapping table's nested Go
// value, in structtensor.ToValue's form), and rapid generators of random
// messages for every testdata schema.

var (
	testDescOnce sync.Once
	testDesc     *Descriptors
	testTypes    *dynamicpb.Types
	testDescErr  error
)

func testDescriptors(t testing.TB) *Descriptors {
	testDescOnce.Do(func() {
		b, err := os.ReadFile("../testdata/proto/testdata.pb")
		if err != nil {
			testDescErr = err
			return
		}
		testDesc, testDescErr = LoadDescriptorSet(b)
		if testDescErr == nil {
			testTypes = dynamicpb.NewTypes(testDesc.files)
		}
	})
	if testDescErr != nil {
		t.Fatal(testDescErr)
	}
	return testDesc
}

// testMessages are the schemas every property test runs on.
var testMessages = []string{
	"structtensor.testdata.recipe.Recipe",
	"structtensor.testdata.scalars.AllScalars",
	"structtensor.testdata.proto3.Proto3Msg",
	"structtensor.testdata.recursive.Node",
	"structtensor.testdata.editions.EdMsg",
	"structtensor.testdata.example.Example",
	"structtensor.testdata.example.ExampleListWithContext",
	"structtensor.testdata.flat.Flat",
}

// refUnmarshal parses a record the way protobuf does. protobuf-go
// v1.36.12 panics on some malformed map entries (a key seen once valid,
// then again with another wire type: unmarshalMap keeps its "have key"
// flag with an invalid key); the reference then rejects the record, as
// protobuf would have if it did not crash.
func refUnmarshal(md protoreflect.MessageDescriptor, b []byte) (m *dynamicpb.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("reference unmarshal panicked: %v", r)
		}
	}()
	m = dynamicpb.NewMessage(md)
	err = proto.UnmarshalOptions{Resolver: testTypes}.Unmarshal(b, m)
	return m, err
}

// refRecords decodes records with the reference: one map per record.
// fataler is what testing.TB and rapid.T share.
type fataler interface {
	Fatalf(format string, args ...any)
}

func refRecords(t fataler, md protoreflect.MessageDescriptor, records [][]byte) []any {
	out := make([]any, len(records))
	for i, r := range records {
		m, err := refUnmarshal(md, r)
		if err != nil {
			t.Fatalf("reference unmarshal of record %d: %v", i, err)
		}
		out[i] = refMessage(m, []protoreflect.FullName{md.FullName()})
	}
	return out
}

// extType returns the extension type descriptor dynamicpb needs to read xd.
func extType(xd protoreflect.FieldDescriptor) protoreflect.FieldDescriptor {
	xt, err := testTypes.FindExtensionByName(xd.FullName())
	if err != nil {
		panic(err)
	}
	return xt.TypeDescriptor()
}

// refMessage applies the mapping table to one message, projecting every
// field and cutting recursion on message types already on the path.
func refMessage(m protoreflect.Message, anc []protoreflect.FullName) map[string]any {
	md := m.Descriptor()
	out := map[string]any{}
	var fds []protoreflect.FieldDescriptor
	for i := 0; i < md.Fields().Len(); i++ {
		fds = append(fds, md.Fields().Get(i))
	}
	for _, x := range testDesc.Extensions(md) {
		fds = append(fds, extType(x))
	}
	for _, fd := range fds {
		var sub []protoreflect.FullName
		if fd.Message() != nil {
			if refContains(anc, fd.Message().FullName()) {
				continue
			}
			sub = append(append([]protoreflect.FullName(nil), anc...), fd.Message().FullName())
		}
		name := string(fd.Name())
		if fd.IsExtension() {
			name = ""
			for _, c := range string(fd.FullName()) {
				if c == '.' {
					c = '_'
				}
				name += string(c)
			}
		}
		switch {
		case md.IsMapEntry() || fd.Cardinality() == protoreflect.Required:
			out[name] = refSingle(fd, m.Get(fd), sub)
		case fd.IsMap():
			mp := m.Get(fd).Map()
			type entry struct {
				k protoreflect.MapKey
				v protoreflect.Value
			}
			var es []entry
			mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				es = append(es, entry{k, v})
				return true
			})
			sort.Slice(es, func(i, j int) bool { return mapKeyLess(es[i].k, es[j].k) })
			entryAnc := sub
			list := []any{}
			for _, e := range es {
				vfd := fd.MapValue()
				var vanc []protoreflect.FullName
				if vfd.Message() != nil {
					vanc = append(append([]protoreflect.FullName(nil), entryAnc...), vfd.Message().FullName())
				}
				list = append(list, map[string]any{
					"key":   refScalar(fd.MapKey(), e.k.Value()),
					"value": refSingle(vfd, e.v, vanc),
				})
			}
			out[name] = list
		case fd.IsList():
			l := m.Get(fd).List()
			list := []any{}
			for i := 0; i < l.Len(); i++ {
				list = append(list, refSingle(fd, l.Get(i), sub))
			}
			out[name] = list
		case fd.HasPresence():
			if m.Has(fd) {
				out[name] = []any{refSingle(fd, m.Get(fd), sub)}
			} else {
				out[name] = []any{}
			}
		default:
			out[name] = refSingle(fd, m.Get(fd), sub)
		}
	}
	return out
}

func refContains(names []protoreflect.FullName, n protoreflect.FullName) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func mapKeyLess(a, b protoreflect.MapKey) bool {
	switch x := a.Interface().(type) {
	case bool:
		return !x && b.Bool()
	case int32, int64:
		return a.Int() < b.Int()
	case uint32, uint64:
		return a.Uint() < b.Uint()
	case string:
		return x < b.String()
	}
	panic(fmt.Sprintf("map key %T", a.Interface()))
}

func refSingle(fd protoreflect.FieldDescriptor, v protoreflect.Value, anc []protoreflect.FullName) any {
	if fd.Message() != nil {
		return refMessage(v.Message(), anc)
	}
	return refScalar(fd, v)
}

func refScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.EnumKind:
		return int32(v.Enum())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return int32(v.Int())
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return uint32(v.Uint())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return v.Uint()
	case protoreflect.FloatKind:
		return float32(v.Float())
	case protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return string(v.Bytes())
	}
	panic(fmt.Sprintf("kind %v", fd.Kind()))
}

// sameValue compares nested values, floats by bit pattern (NaN == NaN).
func sameValue(a, b any) (bool, string) {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false, fmt.Sprintf("list %v vs %v", a, b)
		}
		for i := range x {
			if ok, why := sameValue(x[i], y[i]); !ok {
				return false, fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return true, ""
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false, fmt.Sprintf("struct %v vs %v", a, b)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return false, fmt.Sprintf("field %q missing", k)
			}
			if ok, why := sameValue(v, w); !ok {
				return false, fmt.Sprintf("%s: %s", k, why)
			}
		}
		return true, ""
	case float32:
		y, ok := b.(float32)
		if ok && math.Float32bits(x) == math.Float32bits(y) {
			return true, ""
		}
	case float64:
		y, ok := b.(float64)
		if ok && math.Float64bits(x) == math.Float64bits(y) {
			return true, ""
		}
	default:
		if a == b {
			return true, ""
		}
	}
	return false, fmt.Sprintf("%#v (%T) vs %#v (%T)", a, a, b, b)
}

// genMessage draws a random message of md (depth bounds recursion).
func genMessage(t *rapid.T, md protoreflect.MessageDescriptor, depth int) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	fields := md.Fields()
	var fds []protoreflect.FieldDescriptor
	for i := 0; i < fields.Len(); i++ {
		fds = append(fds, fields.Get(i))
	}
	for _, x := range testDesc.Extensions(md) {
		fds = append(fds, extType(x))
	}
	for _, fd := range fds {
		required := fd.Cardinality() == protoreflect.Required
		if !required && !rapid.Bool().Draw(t, "set "+string(fd.Name())) {
			continue
		}
		if fd.Message() != nil && depth <= 0 && !required {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			n := rapid.IntRange(0, 3).Draw(t, "n")
			for i := 0; i < n; i++ {
				k := genScalar(t, fd.MapKey())
				var v protoreflect.Value
				if fd.MapValue().Message() != nil {
					v = protoreflect.ValueOfMessage(genMessage(t, fd.MapValue().Message(), depth-1))
				} else {
					v = genScalar(t, fd.MapValue())
				}
				mp.Set(k.MapKey(), v)
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			n := rapid.IntRange(0, 4).Draw(t, "n")
			for i := 0; i < n; i++ {
				if fd.Message() != nil {
					l.Append(protoreflect.ValueOfMessage(genMessage(t, fd.Message(), depth-1)))
				} else {
					l.Append(genScalar(t, fd))
				}
			}
		case fd.Message() != nil:
			m.Set(fd, protoreflect.ValueOfMessage(genMessage(t, fd.Message(), depth-1)))
		default:
			m.Set(fd, genScalar(t, fd))
		}
	}
	return m
}

func genScalar(t *rapid.T, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(rapid.Bool().Draw(t, "bool"))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(rapid.IntRange(0, vals.Len()-1).Draw(t, "enum")).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(rapid.Int32().Draw(t, "i32"))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(rapid.Int64().Draw(t, "i64"))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(rapid.Uint32().Draw(t, "u32"))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(rapid.Uint64().Draw(t, "u64"))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(math.Float32frombits(rapid.Uint32().Draw(t, "f32")))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(math.Float64frombits(rapid.Uint64().Draw(t, "f64")))
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(rapid.StringN(0, 12, -1).Draw(t, "str"))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "bytes"))
	}
	panic(fmt.Sprintf("kind %v", fd.Kind()))
}
