package tfrecord

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchRecords is 32 MiB of 1 KiB records of pseudo-random text (which
// compresses about as well as serialized protobufs with strings do).
func benchRecords() [][]byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	records := make([][]byte, 32<<10)
	x := uint32(1)
	for i := range records {
		rec := make([]byte, 1024)
		for j := range rec {
			x = x*1664525 + 1013904223
			rec[j] = alphabet[int(x>>24)%len(alphabet)]
		}
		records[i] = rec
	}
	return records
}

func BenchmarkRead(b *testing.B) {
	records := benchRecords()
	// Throughput is of the uncompressed stream, whatever the compression.
	size := int64(len(encode(b, formats[0], records)))
	for _, c := range compressions {
		data := encode(b, formats[0], records, Options{Compression: c})
		b.Run(fmt.Sprintf("%v/ReadBatch", c), func(b *testing.B) {
			b.SetBytes(size)
			var batch Batch
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), Options{Compression: c})
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
			b.SetBytes(size)
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), Options{Compression: c})
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
