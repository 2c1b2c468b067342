package memview

import (
	"encoding/binary"
	"math"
	"testing"
)

// The bytes are the elements' little-endian encodings (x86-64 and arm64,
// the machines the engine builds for), in order, and share the slice.
func TestBytes(t *testing.T) {
	if Bytes([]int64(nil)) != nil || Bytes([]float32{}) != nil {
		t.Fatal("Bytes of an empty slice is not nil")
	}
	s := []int64{1, -2, math.MaxInt64}
	b := Bytes(s)
	if len(b) != 24 {
		t.Fatalf("len %d, want 24", len(b))
	}
	for i, v := range s {
		if got := int64(binary.LittleEndian.Uint64(b[8*i:])); got != v {
			t.Fatalf("element %d reads back as %d, want %d", i, got, v)
		}
	}
	b[8] = 7
	if s[1] != -256+7 {
		t.Fatalf("a write through the bytes is not seen in the slice: %d", s[1])
	}
	f := []float32{1.5}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(Bytes(f))); got != 1.5 {
		t.Fatalf("float32 reads back as %v", got)
	}
	if got := Bytes([]bool{true, false}); len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Fatalf("bools read back as %v", got)
	}
}
