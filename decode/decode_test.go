package decode

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/structtensor/structtensor-go/structtensor"
)

// TestDecodeMatchesReference decodes random messages of every testdata
// schema and compares ToValue of the result with the reference decoder,
// and the result's Spec with Plan.Spec.
func TestDecodeMatchesReference(t *testing.T) {
	for _, name := range testMessages {
		t.Run(name, func(t *testing.T) {
			plan, md := compiledMessage(t, name)
			rapid.Check(t, func(rt *rapid.T) {
				n := rapid.IntRange(0, 6).Draw(rt, "records")
				records := make([][]byte, n)
				for i := range records {
					m := genMessage(rt, md, 3)
					b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
					if err != nil {
						rt.Fatal(err)
					}
					records[i] = b
				}
				st, err := plan.Decode(records)
				if err != nil {
					rt.Fatalf("Decode: %v", err)
				}
				if !plan.Spec().IsCompatibleWith(st.Spec()) {
					rt.Fatalf("spec\n got %v\nwant %v", st.Spec(), plan.Spec())
				}
				got := structtensor.ToValue(st)
				want := refRecords(rt, md, records)
				if ok, why := sameValue(want, got); !ok {
					rt.Fatalf("mismatch: %s", why)
				}
			})
		})
	}
}

// TestDecodeOptions checks that the options change nothing in the output
// and that more than one DecodeOptions is refused.
func TestDecodeOptions(t *testing.T) {
	d := testDescriptors(t)
	plan, err := Compile(d, "structtensor.testdata.proto3.Proto3Msg")
	if err != nil {
		t.Fatal(err)
	}
	records := [][]byte{{}, {}, {}}
	want, err := plan.Decode(records)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []DecodeOptions{{}, {Threads: 1}, {Threads: 2}, {Threads: -1}} {
		got, err := plan.Decode(records, o)
		if err != nil || !structtensor.Equal(got, want) {
			t.Errorf("%+v: %v, %v", o, got, err)
		}
	}
	if _, err := plan.Decode(records, DecodeOptions{}, DecodeOptions{}); !errors.Is(err, ErrInput) {
		t.Errorf("two DecodeOptions: %v, want ErrInput", err)
	}
}
