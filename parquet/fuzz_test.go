package parquet

import (
	"bytes"
	"testing"
)

// FuzzReadParquet feeds arbitrary bytes to Read: every input must give a
// value or an error, never a crash.
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
	})
}
