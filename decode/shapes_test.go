package decode

import (
	"errors"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"google.golang.org/protobuf/encoding/protowire"
)

// The walker takes a map entry written key-then-value, and a message that
// is one packed run, without walking them (engine_walker.h,
// inline_child); every other form of the same fields takes the walk.
// TestShapedChildrenAgainstReference decodes tf.Examples holding each
// form, alone and among the others, on one and two threads, and compares
// the result with protobuf's own parse of the records.
func TestShapedChildrenAgainstReference(t *testing.T) {
	d := testDescriptors(t)
	const example = "structtensor.testdata.example.Example"
	md, _ := d.Message(example)
	plan, err := Compile(d, example)
	if err != nil {
		t.Fatal(err)
	}
	// Feature's oneof members: bytes_list 1, float_list 2, int64_list 3;
	// each list's values are field 1.
	int64s := func(vs ...uint64) wire { return wire{}.bytes(3, wire{}.bytes(1, packedVarints(vs...))) }
	floats := func(n int) wire {
		var b []byte
		for i := 0; i < n; i++ {
			b = protowire.AppendFixed32(b, uint32(0x3f800000+i))
		}
		return wire{}.bytes(2, wire{}.bytes(1, b))
	}
	entry := func(key string, feature wire) wire { return wire{}.str(1, key).bytes(2, feature) }
	record := func(entries ...wire) wire {
		var features wire
		for _, e := range entries {
			features = features.bytes(1, e)
		}
		return wire{}.bytes(1, features)
	}
	long := strings.Repeat("k", 130) // a key whose length takes two bytes
	// Each form's key is distinct and they are in key order: the
	// reference (protobuf's map) keeps one entry a key, sorted, where
	// the decoder keeps the entries as written, so a record holding them
	// all compares only so.
	forms := []struct {
		name  string
		entry wire
	}{
		{"empty entry", wire{}},
		{"key then value", entry("a", int64s(1, 300, 70000))},
		{"value then key", wire{}.bytes(2, int64s(5)).str(1, "b")},
		{"key alone", wire{}.str(1, "c")},
		{"key twice", wire{}.str(1, "x").str(1, "d").bytes(2, int64s(7))},
		{"value twice", entry("e", int64s(8)).bytes(2, int64s(9, 10))},
		{"floats", entry("f", floats(3))},
		{"unknown field after the value", entry("g", int64s(11)).varint(3, 12)},
		{"unknown field before the key", wire{}.varint(3, 12).str(1, "h").bytes(2, int64s(13))},
		{"value length in two bytes", wire{}.str(1, "i").raw(2<<3|2, 0x80|byte(len(int64s(15))), 0).raw(int64s(15)...)},
		{"empty value", entry("j", wire{})},
		{"key of 130 bytes", entry(long, int64s(14))},
		// Read as a one-byte length (0xc8, 200), the key would end where
		// this one's last byte, 0x12, is, and a "value" of the 18 bytes
		// from the real value's tag on would fill the entry.
		{"key of 200 bytes ending in 0x12", entry(strings.Repeat("k", 199)+"\x12", int64s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13))},
		{"empty list", entry("l", wire{}.bytes(3, wire{}))},
		{"two packed runs", entry("m", wire{}.bytes(3, wire{}.bytes(1, packedVarints(16, 17)).bytes(1, packedVarints(18))))},
		{"unpacked values", entry("n", wire{}.bytes(3, wire{}.varint(1, 19).varint(1, 20)))},
		{"packed then unpacked", entry("o", wire{}.bytes(3, wire{}.bytes(1, packedVarints(21)).varint(1, 22)))},
		{"unknown field in the list", entry("p", wire{}.bytes(3, wire{}.bytes(1, packedVarints(23)).varint(2, 24)))},
		{"run length in two bytes", entry("q", wire{}.bytes(3, wire{}.raw(1<<3|2, 0x82, 0, 25, 26)))},
		{"run of 200 values", entry("r", int64s(make([]uint64, 200)...))},
		{"one list, then another member", entry("s", int64s(27).raw(floats(1)...))},
		{"the same list twice (merged)", entry("t", int64s(28, 29).raw(int64s(30)...))},
		{"value alone", wire{}.bytes(2, int64s(6))},
	}
	var records []wire
	for _, f := range forms {
		records = append(records, record(f.entry))
	}
	all := make([]wire, len(forms)-1) // but the last: its key is the first's
	for i := range all {
		all[i] = forms[i].entry
	}
	records = append(records, record(all...), record(), record(all[1], all[2]))
	batch := wireRecords(records)
	batch = append(append(batch, batch...), batch...)
	want := refRecords(t, md, batch)
	for _, threads := range []int{1, 2} {
		st, err := plan.Decode(batch, DecodeOptions{Threads: threads})
		if err != nil {
			t.Fatalf("%d threads: %v", threads, err)
		}
		if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
			t.Fatalf("%d threads: differs from the reference: %s", threads, why)
		}
	}
	for i, f := range forms {
		st, err := plan.Decode(wireRecords([]wire{record(f.entry)}))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if ok, why := sameValue(refRecords(t, md, wireRecords(records[i:i+1])), structtensor.ToValue(st)); !ok {
			t.Fatalf("%s: differs from the reference: %s", f.name, why)
		}
	}

	// Errors inside a shaped child name the same place as the walk's: the
	// offset of the field's tag in the record, and its path.
	for _, tc := range []struct {
		name   string
		rec    wire
		at     int64 // offset of the bad field's tag
		path   string
		reason string
	}{
		// record: 0x0a len | entry: 0x0a len | key: 0x0a 1 0xff ...
		{"invalid UTF-8 key", record(entry("\xff", int64s(1))), 4, "features.feature.key", "invalid UTF-8"},
		// ... 'a' | value: 0x12 len | Feature: 0x1a len | list: 0x0a (at 11) 1 0x80
		{"truncated varint", record(entry("a", wire{}.bytes(3, wire{}.bytes(1, []byte{0x80})))), 11, "features.feature.value.int64_list.value", "truncated varint"},
		{"floats not a multiple of 4", record(entry("a", wire{}.bytes(2, wire{}.bytes(1, []byte{1, 2, 3})))), 11, "features.feature.value.float_list.value", "multiple"},
	} {
		_, err := plan.Decode(wireRecords([]wire{record(), tc.rec}))
		var re *RecordError
		if !errors.As(err, &re) {
			t.Fatalf("%s: got %v, want a RecordError", tc.name, err)
		}
		if re.Record != 1 || re.Offset != tc.at || !strings.Contains(re.Detail, `"`+tc.path+`"`) || !strings.Contains(re.Detail, tc.reason) {
			t.Fatalf("%s: got record %d offset %d %q, want record 1 offset %d naming %q (%s)", tc.name, re.Record, re.Offset, re.Detail, tc.at, tc.path, tc.reason)
		}
	}
}
