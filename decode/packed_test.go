package decode

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/structtensor"
)

// packedVarintFields are AllScalars' packed fields of every varint type.
var packedVarintFields = []protowire.Number{61, 62, 63, 64, 65, 66, 73} // int32 int64 uint32 uint64 sint32 sint64 bool

// allScalarsPlan compiles AllScalars and returns the plan, the message
// and a record holding only its required fields, so that packed runs
// appended to it make a valid record.
func allScalarsPlan(t *testing.T) (*Plan, protoreflect.MessageDescriptor, []byte) {
	t.Helper()
	const name = "structtensor.testdata.scalars.AllScalars"
	d := testDescriptors(t)
	md, _ := d.Message(name)
	p, err := Compile(d, name)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(md)
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Cardinality() != protoreflect.Required {
			continue
		}
		if fd.Message() != nil {
			m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
			continue
		}
		m.Set(fd, fd.Default())
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return p, md, b
}

// appendPackedRun appends field num as one packed run of count varints,
// each of a length drawn from lengths (bytes, 1-10).
func appendPackedRun(b []byte, rng *rand.Rand, num protowire.Number, count int, lengths []int) []byte {
	var run []byte
	for range count {
		n := lengths[rng.IntN(len(lengths))]
		var v uint64
		if n == 10 {
			v = rng.Uint64() | 1<<63 // ten bytes: the top bit set (negative int64s)
		} else {
			v = rng.Uint64N(uint64(1)<<(7*n)-uint64(1)<<(7*(n-1))) + uint64(1)<<(7*(n-1))
			if n == 1 {
				v = rng.Uint64N(128)
			}
		}
		run = protowire.AppendVarint(run, v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, run)
}

// TestPackedVarintRuns decodes packed runs of every varint type, of
// lengths around the packed decoders' steps (8 and 16 values) and chunks
// (512 and 1024 bytes) and far beyond, with values of one to ten bytes
// mixed as the lengths say, and compares every packed-varint decoder the
// CPU has with protobuf-go: the same values, in every tier.
func TestPackedVarintRuns(t *testing.T) {
	p, md, base := allScalarsPlan(t)
	rng := rand.New(rand.NewPCG(14, 2026))
	mixes := []struct {
		name    string
		lengths []int
	}{
		{"one byte", []int{1}},
		{"one to five", []int{1, 2, 3, 4, 5}},
		{"one to ten", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"a few ten", append(slices.Repeat([]int{1, 2, 3}, 20), 10)},
		{"eight and nine", []int{8, 9}},
		{"ten", []int{10}},
		{"seven and eight", []int{7, 8}},
		{"mostly one, a two", append(slices.Repeat([]int{1}, 30), 2)},
	}
	counts := []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 300, 511, 512, 513, 1023, 1024, 1025, 3000}
	for _, mix := range mixes {
		var records [][]byte
		for _, count := range counts {
			rec := append([]byte(nil), base...)
			for _, num := range packedVarintFields {
				rec = appendPackedRun(rec, rng, num, count, mix.lengths)
			}
			records = append(records, rec)
		}
		st, err := p.Decode(records, DecodeOptions{Threads: 1})
		if err != nil {
			t.Fatalf("%s: %v", mix.name, err)
		}
		if ok, why := sameValue(refRecords(t, md, records), structtensor.ToValue(st)); !ok {
			t.Fatalf("%s: %s", mix.name, why)
		}
		for _, rec := range records {
			samePackedTiers(t, []*Plan{p}, rec)
		}
	}
}

// TestPackedVarintRunErrors corrupts one value of a long packed run, at
// places around the packed decoders' steps and chunks: a varint of
// eleven bytes, ones of hundreds (continuation bytes with one terminator
// at the end), a ten-byte varint overflowing 64 bits, and a run whose last
// value is cut short. protobuf-go rejects each record; so must every
// packed-varint decoder, each with the same error, naming the field.
func TestPackedVarintRunErrors(t *testing.T) {
	p, md, base := allScalarsPlan(t)
	rng := rand.New(rand.NewPCG(14, 11))
	bad := []struct {
		name  string
		value []byte // nil: the run's last value cut short
	}{
		{"eleven bytes", append(bytes.Repeat([]byte{0x80}, 10), 0x01)},
		{"300 bytes", append(bytes.Repeat([]byte{0xff}, 299), 0x01)},
		// Lengths of 256 and 264 look like 0 and 8 to byte arithmetic.
		{"256 bytes", append(bytes.Repeat([]byte{0x80}, 255), 0x01)},
		{"264 bytes", append(bytes.Repeat([]byte{0x80}, 263), 0x01)},
		{"overflowing", append(bytes.Repeat([]byte{0xff}, 9), 0x02)},
		{"cut short at end", nil},
	}
	for _, b := range bad {
		badName, value := b.name, b.value
		for _, at := range []int{0, 1, 7, 8, 15, 16, 100, 340, 341, 342, 343, 600, 1999} {
			for _, num := range []protowire.Number{62, 65, 61, 73} {
				var run []byte
				for i := range 2000 {
					if i == at && value != nil {
						run = append(run, value...)
						continue
					}
					run = protowire.AppendVarint(run, rng.Uint64N(1<<(7*(1+rng.IntN(4)))))
				}
				if value == nil {
					run = run[:len(run)-1]
					run = append(run, 0x80) // the last value continues past the run
				}
				rec := append([]byte(nil), base...)
				rec = protowire.AppendBytes(protowire.AppendTag(rec, num, protowire.BytesType), run)
				if _, err := refUnmarshal(md, rec); err == nil {
					t.Fatalf("%s at %d: protobuf-go accepts the record", badName, at)
				}
				_, err := p.Decode([][]byte{rec}, DecodeOptions{Threads: 1})
				if err == nil {
					t.Fatalf("%s at value %d of field %d: Decode accepts the record", badName, at, num)
				}
				if fd := md.Fields().ByNumber(num); !strings.Contains(err.Error(), string(fd.Name())) {
					t.Fatalf("%s at value %d of field %d: the error does not name %s: %v", badName, at, num, fd.Name(), err)
				}
				samePackedTiers(t, []*Plan{p}, rec)
			}
		}
	}
}
