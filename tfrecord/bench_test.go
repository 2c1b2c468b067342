package tfrecord

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchFile is about 32 MiB of 1 KiB records.
func benchFile(b *testing.B, c Compression) []byte {
	rec := bytes.Repeat([]byte("0123456789abcdef"), 64)
	records := make([][]byte, 32<<10)
	for i := range records {
		records[i] = rec
	}
	return encode(b, formats[0], records, WithCompression(c))
}

func BenchmarkRead(b *testing.B) {
	for _, c := range compressions {
		data := benchFile(b, c)
		b.Run(fmt.Sprintf("%v/ReadBatch", c), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var batch Batch
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), WithCompression(c))
				for {
					if err := r.ReadBatch(&batch, 1024); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("%v/Next", c), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), WithCompression(c))
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	rec := bytes.Repeat([]byte("0123456789abcdef"), 64)
	b.SetBytes(int64(len(rec)+16) * 1024)
	for b.Loop() {
		w := NewWriter(io.Discard)
		for range 1024 {
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
}
