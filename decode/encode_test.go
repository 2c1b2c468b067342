package decode

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"pgregory.net/rapid"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// TestEncodeRoundTrip generates random messages of every test schema,
// decodes them, encodes the result with Plan.Encode and checks, with
// protobuf-go's own Unmarshal and Equal, that every record parses to a
// message equal to the one generated; decoding the records again gives
// the same StructTensor. Recursive schemas are compiled with their
// recursion cut by default, so the generator stays within the cut depth.
func TestEncodeRoundTrip(t *testing.T) {
	for _, name := range testMessages {
		t.Run(name, func(t *testing.T) {
			plan, md := compiledMessage(t, name)
			rapid.Check(t, func(rt *rapid.T) {
				n := rapid.IntRange(0, 4).Draw(rt, "records")
				msgs := make([]*dynamicpb.Message, n)
				records := make([][]byte, n)
				for i := range msgs {
					msgs[i] = genMessage(rt, md, 3)
					b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msgs[i])
					if err != nil {
						rt.Fatal(err)
					}
					records[i] = b
				}
				st, err := plan.Decode(records)
				if err != nil {
					rt.Fatalf("Decode: %v", err)
				}
				encoded, err := plan.Encode(st)
				if err != nil {
					rt.Fatalf("Encode: %v", err)
				}
				if len(encoded) != n {
					rt.Fatalf("Encode returned %d records for %d", len(encoded), n)
				}
				for i, b := range encoded {
					got := dynamicpb.NewMessage(md)
					if err := (proto.UnmarshalOptions{Resolver: testTypes}).Unmarshal(b, got); err != nil {
						rt.Fatalf("record %d: Unmarshal: %v", i, err)
					}
					if !proto.Equal(got, msgs[i]) && !cutByProjection(plan) {
						rt.Fatalf("record %d: encoded %v, generated %v", i, got, msgs[i])
					}
				}
				again, err := plan.Decode(encoded)
				if err != nil {
					rt.Fatalf("Decode of the encoded records: %v", err)
				}
				if !structtensor.Equal(again, st) {
					rt.Fatalf("Decode(Encode(s)) != s\n%v\n%v", again, st)
				}
			})
		})
	}
}

// cutByProjection reports whether the default projection of the plan cut
// a recursion, so that generated messages may hold fields it lacks.
func cutByProjection(p *Plan) bool { return p.message == "structtensor.testdata.recursive.Node" }

func TestEncodeErrors(t *testing.T) {
	d := testDescriptors(t)
	plan, err := Compile(d, "structtensor.testdata.proto3.Proto3Msg")
	if err != nil {
		t.Fatal(err)
	}
	st, err := plan.Decode([][]byte{{}})
	if err != nil {
		t.Fatal(err)
	}
	name := st.FieldNames()[0]
	wrong, err := structtensor.NewTensor(nil, []bool{true})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := st.WithUpdates(map[string]structtensor.Value{name: wrong})
	if err == nil {
		if _, err := plan.Encode(bad); !errors.Is(err, ErrValue) {
			t.Errorf("a bool in field %s: %v, want ErrValue", name, err)
		}
	}
	b, _ := plan.MarshalBinary()
	back, err := UnmarshalPlan(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Encode(st); !errors.Is(err, ErrInput) {
		t.Errorf("Encode with an unmarshalled plan: %v, want ErrInput", err)
	}
	var file bytes.Buffer
	if err := plan.EncodeTFRecord(&file, st); err != nil {
		t.Fatal(err)
	}
	rec, err := tfrecord.NewReader(&file).Next()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := plan.Decode([][]byte{rec}); err != nil || !structtensor.Equal(again, st) {
		t.Errorf("through a TFRecord file: %v, %v", again, err)
	}
}
