package pbjson

import "testing"

// FuzzFromJSONLines: any bytes give a value or an error, and a value
// writes back without error.
func FuzzFromJSONLines(f *testing.F) {
	f.Add([]byte(proto3Lines))
	f.Add([]byte(`{"counts": {"": "-1"}, "subs": [{}, {"codes": [1]}]}`))
	f.Add([]byte("{\n"))
	c, err := New(descriptorsF(f), "structtensor.testdata.proto3.Proto3Msg")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := c.FromJSONLines(data)
		if err != nil {
			return
		}
		if _, err := c.ToJSONLines(s); err != nil {
			t.Fatalf("decoded value does not write back: %v", err)
		}
	})
}
