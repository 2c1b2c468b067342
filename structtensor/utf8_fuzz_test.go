package structtensor

import (
	"testing"
	"unicode/utf8"
)

// FuzzValidUTF8Strings cuts fuzzed bytes at fuzzed offsets: ValidUTF8Strings
// must agree with validating each string on its own when the offsets are
// in order and within the data, give false otherwise, and never panic.
func FuzzValidUTF8Strings(f *testing.F) {
	f.Add([]byte("\xc3\xa9x"), []byte{0, 1, 2, 3})
	f.Add([]byte("héllo"), []byte{0, 2, 6})
	f.Add([]byte("ab"), []byte{2, 1})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		offsets := make([]int64, len(cuts))
		for i, c := range cuts {
			offsets[i] = int64(c) - 8 // some negative, some past the data
		}
		want := true
		for i := 1; i < len(offsets); i++ {
			lo, hi := offsets[i-1], offsets[i]
			if lo < 0 || hi < lo || hi > int64(len(data)) {
				want = false
				break
			}
			want = want && utf8.Valid(data[lo:hi])
		}
		if len(offsets) == 1 {
			want = true
		}
		if got := ValidUTF8Strings(data, offsets); got != want {
			t.Fatalf("ValidUTF8Strings(%q, %v) = %v, want %v", data, offsets, got, want)
		}
	})
}
