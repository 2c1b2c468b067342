package decode

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"pgregory.net/rapid"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// fuzzPlans are the plans the fuzz targets decode with: every testdata
// schema with its full projection, and a deep explicit path through the
// recursive message.
func fuzzPlans(t testing.TB) []*Plan {
	d := testDescriptors(t)
	var plans []*Plan
	for _, name := range testMessages {
		p, err := Compile(d, name)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	p, err := CompileOptions{MaxDepth: 8}.Compile(d, nodeMsg, strings.Repeat("left.", 6)+"children.leaf.tag", "children.name")
	if err != nil {
		t.Fatal(err)
	}
	return append(plans, p)
}

// fuzzSeeds are valid records of every schema plus some hand-built
// non-canonical ones.
func fuzzSeeds(t testing.TB) [][]byte {
	d := testDescriptors(t)
	var seeds [][]byte
	for _, name := range testMessages {
		md, _ := d.Message(name)
		gen := rapid.Custom(func(rt *rapid.T) *dynamicpb.Message { return genMessage(rt, md, 3) })
		for seed := 0; seed < 3; seed++ {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(gen.Example(seed))
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	seeds = append(seeds,
		nil,
		allScalarsRequired().group(90, wire{}.varint(91, 8)),
		wire{}.bytes(20, wire{}.varint(1, 7)).bytes(20, wire{}.str(2, "x")),
		wire{}.varint(14, 5).bytes(16, wire{}.varint(1, 1)),
		wire{}.raw(0xa3, 0x06, 0x08, 0x01, 0xa4, 0x06),
	)
	// Packed varint runs long enough for the vector decoders (over 72
	// bytes before the record's end), of every length from 1 to 10 bytes,
	// and of 1 to 8 and 1 to 7 (the vector decoders' own steps, where no
	// value is longer; with 7, the zeros fall on every lane of the AVX2
	// decoder's four): AllScalars' packed fields of every conversion and
	// Flat's int64s.
	for _, longest := range []int{10, 8, 7} {
		run := packedVarintRun(longest)
		all := allScalarsRequired()
		for n := protowire.Number(61); n <= 66; n++ {
			all = all.bytes(n, run)
		}
		all = all.bytes(73, run).bytes(76, run)
		seeds = append(seeds, all, wire{}.bytes(1, run).bytes(2, run), wire{}.bytes(1, run).bytes(2, run[:len(run)-1]).varint(3, 1))
	}
	return seeds
}

// packedVarintRun returns a packed run of 120 varints whose lengths cycle
// through 1 to longest bytes, the 1-byte ones zero (false), the 10-byte
// ones negative int64s.
func packedVarintRun(longest int) []byte {
	var run []byte
	for i := range 120 {
		n := i%longest + 1
		v := uint64(1)<<(7*(n-1)) + uint64(i)
		switch n {
		case 1:
			v = 0
		case 10:
			v = ^uint64(i)
		}
		run = protowire.AppendVarint(run, v)
	}
	return run
}

// FuzzDecode decodes arbitrary bytes, and mutations of valid records,
// with every plan: the engine must never crash or read out of bounds, and
// either fail with one of the decode sentinels or return a well-formed
// StructTensor with one row per record. The records are decoded as a
// small serial batch and, repeated, as batches that lend the engine Go
// buffers, on one thread and on several: the same rows or the same
// error.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint64(0))
	}
	plans := fuzzPlans(f)
	f.Fuzz(func(t *testing.T, data []byte, mutate uint64) {
		if mutate != 0 && len(data) > 0 {
			// Flip, drop or duplicate a few bytes, as a cheap structural
			// mutator on top of the fuzzer's own.
			rng := rand.New(rand.NewPCG(mutate, 1))
			data = append([]byte(nil), data...)
			for k := 0; k < 1+int(mutate%4); k++ {
				i := rng.IntN(len(data))
				switch rng.IntN(3) {
				case 0:
					data[i] ^= byte(1 << rng.IntN(8))
				case 1:
					data = append(data[:i], data[i+1:]...)
				default:
					data = append(data[:i+1], data[i:]...)
				}
				if len(data) == 0 {
					break
				}
			}
		}
		for _, p := range plans {
			st, err := p.Decode([][]byte{data, data[:len(data)/2]}, DecodeOptions{Threads: 1})
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWireType) && !errors.Is(err, ErrDepth) &&
					!errors.Is(err, ErrUTF8) && !errors.Is(err, ErrRequired) {
					t.Fatalf("%s: unexpected error %v", p.Message(), err)
				}
				if st != nil {
					t.Fatalf("%s: output returned with an error", p.Message())
				}
				continue
			}
			if st.NumRows() != 2 || !p.Spec().IsCompatibleWith(st.Spec()) {
				t.Fatalf("%s: bad output shape %v", p.Message(), st.Spec())
			}
			checkUTF8MarksAgainstGo(t, p.Message(), st, func() (*structtensor.StructTensor, error) {
				return p.Decode([][]byte{data, data[:len(data)/2]}, DecodeOptions{Threads: 1})
			})
		}
		samePackedTiers(t, plans, data)
		samePackedTiers(t, plans, data[:len(data)/2])
		// The same two records repeated into a batch large enough that the
		// engine writes into Go buffers (sized from the plan's previous
		// batch, so from another input: too small or too large), on one
		// thread and on several (each writing its share, closed up after).
		if len(data) == 0 {
			return
		}
		k := (lendBytes+len(data)-1)/len(data) + 1
		batch := make([][]byte, 0, 2*k)
		for range k {
			batch = append(batch, data, data[:len(data)/2])
		}
		buf, offsets := contiguous(batch)
		for _, p := range plans {
			small, serr := p.Decode(batch[:2], DecodeOptions{Threads: 1})
			for _, threads := range []int{1, 3} {
				st, err := p.DecodeContiguous(buf, offsets, DecodeOptions{Threads: threads})
				if (err == nil) != (serr == nil) {
					t.Fatalf("%s, %d threads: %d records: %v; the first two: %v", p.Message(), threads, len(batch), err, serr)
				}
				if err != nil {
					var r1, r2 *RecordError
					if !errors.As(err, &r1) || !errors.As(serr, &r2) || *r1 != *r2 {
						t.Fatalf("%s, %d threads: errors differ: %v, %v", p.Message(), threads, err, serr)
					}
					continue
				}
				checkUTF8MarksAgainstGo(t, fmt.Sprintf("%s, %d threads", p.Message(), threads), st, func() (*structtensor.StructTensor, error) {
					return p.DecodeContiguous(buf, offsets, DecodeOptions{Threads: threads})
				})
				rows := structtensor.ToValue(st).([]any)
				want := structtensor.ToValue(small).([]any)
				for _, i := range []int{0, 1, len(rows) / 2, len(rows)/2 + 1, len(rows) - 2, len(rows) - 1} {
					if ok, why := sameValue(want[i%2], rows[i]); !ok {
						t.Fatalf("%s, %d threads: row %d of %d: %s", p.Message(), threads, i, len(rows), why)
					}
				}
			}
		}
	})
}

// samePackedTiers decodes a record with each packed-varint decoder the
// CPU has below its best (AVX2, BMI2's pext, scalar; the AVX2 and BMI2
// ones also without pext, as where it is slow: testhook.ForcePackedTier)
// and compares each with the best's: the same row, or the same error
// (naming the same field and byte).
func samePackedTiers(t *testing.T, plans []*Plan, record []byte) {
	t.Helper()
	records := [][]byte{record}
	best := testhook.ForcePackedTier(-1, false)
	defer testhook.ForcePackedTier(-1, false)
	for _, p := range plans {
		want, werr := p.Decode(records, DecodeOptions{Threads: 1})
		for tier := best; tier <= 3; tier++ {
			for _, noPext := range []bool{false, true} {
				if (tier == best && !noPext) || (noPext && tier != 1 && tier != 2) || testhook.ForcePackedTier(tier, noPext) != tier {
					continue
				}
				got, err := p.Decode(records, DecodeOptions{Threads: 1})
				testhook.ForcePackedTier(-1, false)
				if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
					t.Fatalf("%s: packed decoder tier %d (no pext: %v): %v; tier %d: %v", p.Message(), tier, noPext, err, best, werr)
				}
				if err != nil {
					continue
				}
				if ok, why := sameValue(structtensor.ToValue(want), structtensor.ToValue(got)); !ok {
					t.Fatalf("%s: packed decoder tier %d (no pext: %v) differs from tier %d: %s", p.Message(), tier, noPext, best, why)
				}
			}
		}
	}
}

// lendBytes is a batch size from which decodes lend the engine Go
// buffers (native's lendMinBytes).
const lendBytes = 64 << 10

// FuzzDifferential checks the engine against the reference on valid
// messages: whatever protobuf parses, re-marshalled canonically, must
// decode to exactly the reference's value.
func FuzzDifferential(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	d := testDescriptors(f)
	plans := map[string]*Plan{}
	for _, name := range testMessages {
		p, err := Compile(d, name)
		if err != nil {
			f.Fatal(err)
		}
		plans[name] = p
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range testMessages {
			md, _ := d.Message(name)
			m, err := refUnmarshal(md, data)
			if err != nil {
				continue
			}
			// Protobuf keeps fields it cannot place (among them known
			// fields with another wire type, which Decode rejects) as
			// unknown bytes; a valid message of the schema has none.
			dropUnknown(m)
			canon, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				continue // a required field is missing
			}
			// Among other records, so that what a record lacks is filled
			// in bulk across records (and across threads' chunks).
			batch := [][]byte{canon, canon, canon}
			if _, err := plans[name].Decode([][]byte{{}}); err == nil {
				batch[1] = []byte{} // no required fields: an empty record between
			}
			st, err := plans[name].Decode(batch, DecodeOptions{Threads: 1 + len(data)%2})
			if err != nil {
				t.Fatalf("%s: protobuf parses the record but Decode fails: %v", name, err)
			}
			want := refRecords(t, md, batch)
			if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
				t.Fatalf("%s: %s", name, why)
			}
		}
	})
}

// dropUnknown clears the unknown fields of m and of every message in it.
func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
					dropUnknown(e.Message())
					return true
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := 0; i < v.List().Len(); i++ {
					dropUnknown(v.List().Get(i).Message())
				}
			}
		case fd.Message() != nil:
			dropUnknown(v.Message())
		}
		return true
	})
}

// FuzzUnmarshalPlan feeds the plan parser (Go and engine) mutated plans:
// it never crashes, every error wraps ErrPlan, and a plan it accepts
// decodes records without crashing, with only data errors, the same
// after a MarshalBinary round trip.
func FuzzUnmarshalPlan(f *testing.F) {
	for _, p := range fuzzPlans(f) {
		b, err := p.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	records := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := UnmarshalPlan(b)
		if err != nil {
			if !errors.Is(err, ErrPlan) {
				t.Fatalf("error does not wrap ErrPlan: %v", err)
			}
			return
		}
		// MarshalBinary returns the bytes the plan was parsed from; what
		// the Go side understood of them is marshal's re-encoding of the
		// parsed fields, which must parse (in Go and in the engine) to the
		// same plan and decode the same.
		again := p.marshal()
		q, err := UnmarshalPlan(again)
		if err != nil {
			t.Fatalf("the re-encoding of a plan that parsed does not parse: %v", err)
		}
		if !bytes.Equal(q.marshal(), again) {
			t.Fatalf("re-encoding is not stable")
		}
		if q.String() != p.String() || !q.Spec().Equal(p.Spec()) {
			t.Fatalf("re-encoded plan differs: %v / %v", p, q)
		}
		for _, r := range records {
			a, errA := p.Decode([][]byte{r}, DecodeOptions{Threads: 1})
			c, errC := q.Decode([][]byte{r}, DecodeOptions{Threads: 1})
			if (errA == nil) != (errC == nil) || (errA == nil && !structtensor.Equal(a, c)) {
				t.Fatalf("round-tripped plan decodes differently: %v / %v", errA, errC)
			}
		}
	})
}
