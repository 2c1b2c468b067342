package stparquet

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestMutatedFiles reads a few hundred copies of a valid file with random
// bytes replaced: each gives a value or an ErrCorrupt error, never a crash
// (pqarrow decodes on goroutines of its own, where a panic would kill the
// process: the footer checks must stop bad ranges first). FuzzReadParquet
// explores further.
func TestMutatedFiles(t *testing.T) {
	seed := writeBytes(t, recipes(t))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 400; i++ {
		b := append([]byte(nil), seed...)
		for k := 0; k < 1+rng.IntN(4); k++ {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		v, err := Read(bytes.NewReader(b), ReadOptions{})
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNoColumn) {
			// Conversion errors (invalid Arrow data) are also acceptable,
			// as long as they are errors.
			t.Logf("mutation %d: %v", i, err)
		}
		if err == nil && v == nil {
			t.Fatalf("mutation %d: nil value without an error", i)
		}
	}
}
