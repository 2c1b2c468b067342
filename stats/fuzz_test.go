package stats

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzUnmarshalBinary: any bytes either parse or give an ErrState error,
// never a panic; what parses serializes back to the same bytes and can be
// summarised, merged with itself and converted to a
// DatasetFeatureStatisticsList.
func FuzzUnmarshalBinary(f *testing.F) {
	seed := func(recs []record, opts Options) {
		a, err := New(opts)
		if err != nil {
			f.Fatal(err)
		}
		if err := a.Add(build(recs)); err != nil {
			f.Fatal(err)
		}
		b, err := a.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	small := Options{QuantileK: 8, TopCounters: 2, TopK: 2, DistinctPrecision: 4}
	seed(nil, small)
	seed([]record{{id: 1, scores: []float64{1, 2}, tags: []string{"a"}, items: []item{{qty: 3, names: []string{"x"}}}}}, small)
	var many []record
	for i := range 40 {
		many = append(many, record{id: int64(i), scores: []float64{float64(i), -float64(i)}, tags: []string{string(rune('a' + i%5))}})
	}
	seed(many, small)
	empty, _ := New()
	b, _ := empty.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var a Accumulator
		if err := a.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error %v does not wrap ErrState", err)
			}
			return
		}
		out, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("serialized again differently:\n%x\n%x", out, b)
		}
		s := a.Summary()
		if _, err := s.MarshalStatistics(); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteJSON(new(bytes.Buffer)); err != nil {
			t.Fatal(err)
		}
		c, err := a.clone()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Merge(c); err != nil {
			t.Fatal(err)
		}
		_ = a.Summary()
	})
}
