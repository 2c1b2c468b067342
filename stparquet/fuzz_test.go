package stparquet

import (
	"bytes"
	"testing"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// FuzzReadParquet feeds arbitrary bytes to Read: every input must give a
// value or an error, never a crash, and a value read must survive a
// Write/Read round trip.
func FuzzReadParquet(f *testing.F) {
	s := recipes(f)
	f.Add(writeBytes(f, s))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Read(bytes.NewReader(data), ReadOptions{})
		if err == nil && v == nil {
			t.Fatal("nil value without an error")
		}
		if err != nil {
			return
		}
		// What was read and can be written must read back the same: a
		// value Read returns is whole and well formed.
		var buf bytes.Buffer
		if err := Write(&buf, v); err != nil {
			return
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
		if err != nil || !st.Equal(back, v) {
			t.Fatalf("Read(Write(v)) = %v, %v\nwant %v", back, err, v)
		}
	})
}
