package tfrecord

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// allocated returns the bytes the Go heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// claim returns a stream of the format whose one record claims length
// bytes and holds held bytes, gzip-compressed when gz.
func claim(t testing.TB, delimited, gz bool, length uint64, held int) []byte {
	t.Helper()
	var plain []byte
	if delimited {
		plain = binary.AppendUvarint(nil, length)
	} else {
		plain = header(length)
	}
	plain = append(plain, make([]byte, held)...)
	if !gz {
		return plain
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	zw.Close()
	return buf.Bytes()
}

// By default a record longer than DefaultMaxRecordSize is refused before
// any of it is read; Options.MaxRecordSize raises, lowers or removes the limit.
func TestDefaultRecordLimit(t *testing.T) {
	for _, delimited := range []bool{false, true} {
		newReader := func(r io.Reader, o ...Options) RecordReader { return NewReader(r, o...) }
		if delimited {
			newReader = func(r io.Reader, o ...Options) RecordReader { return NewDelimitedReader(r, o...) }
		}
		over := claim(t, delimited, true, DefaultMaxRecordSize+1, 10)
		_, err := newReader(bytes.NewReader(over), Options{Compression: CompressionAuto}).Next()
		assertRecordError(t, err, ErrCorrupt, 0, 0, fmt.Sprintf("record length %d exceeds the limit of %d", DefaultMaxRecordSize+1, DefaultMaxRecordSize))
		_, err = newReader(bytes.NewReader(over), Options{Compression: CompressionAuto, MaxRecordSize: 0}).Next()
		assertRecordError(t, err, ErrCorrupt, 0, 0, fmt.Sprintf("record length %d exceeds the limit of %d", DefaultMaxRecordSize+1, DefaultMaxRecordSize))
		// Raised or removed, the claim is believed as far as the bytes go.
		for _, limit := range []int64{DefaultMaxRecordSize + 1, -1} {
			_, err = newReader(bytes.NewReader(over), Options{Compression: CompressionAuto, MaxRecordSize: limit}).Next()
			assertRecordError(t, err, ErrTruncated, 0, 0, fmt.Sprintf("reading %d data bytes", DefaultMaxRecordSize+1))
		}
		// A record of exactly the limit is read.
		var buf bytes.Buffer
		w := recordWriter(NewWriter(&buf))
		if delimited {
			w = NewDelimitedWriter(&buf)
		}
		if err := w.Write(make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if rec, err := newReader(bytes.NewReader(buf.Bytes()), Options{MaxRecordSize: 1000}).Next(); err != nil || len(rec) != 1000 {
			t.Errorf("record of the limit's size: %d bytes, %v", len(rec), err)
		}
	}
}

// A record's buffer grows with the bytes that arrive, not with the length
// the stream claims: a claim of 4 GiB (with the limit removed) over a
// stream holding 8 MiB allocates a small multiple of 8 MiB, whatever the
// framing and compression.
func TestAllocationFollowsBytes(t *testing.T) {
	const held = 8 << 20
	for _, delimited := range []bool{false, true} {
		for _, gz := range []bool{false, true} {
			data := claim(t, delimited, gz, 4<<30, held)
			var r RecordReader = NewReader(bytes.NewReader(data), Options{Compression: CompressionAuto, MaxRecordSize: -1})
			if delimited {
				r = NewDelimitedReader(bytes.NewReader(data), Options{Compression: CompressionAuto, MaxRecordSize: -1})
			}
			var err error
			n := allocated(func() { _, err = r.Next() })
			t.Logf("delimited %v gzip %v: %d bytes allocated for %d held: %v", delimited, gz, n, held, err)
			assertRecordError(t, err, ErrTruncated, 0, 0, "reading 4294967296 data bytes")
			if n > 5*held {
				t.Errorf("delimited %v gzip %v: %d bytes allocated for a stream holding %d", delimited, gz, n, held)
			}
		}
	}
}

// A long record that arrives whole leaves a buffer of its size, not of
// the doubling's next step.
func TestLongRecordCapacity(t *testing.T) {
	rec := bytes.Repeat([]byte{1}, 3*firstStep+17)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(rec)
	w.Close()
	got, err := NewReader(&buf).Next()
	if err != nil || !bytes.Equal(got, rec) {
		t.Fatalf("Next = %d bytes, %v", len(got), err)
	}
	if cap(got) != len(rec) {
		t.Errorf("a %d-byte record has capacity %d", len(rec), cap(got))
	}
}

// A batch of many small records grows its buffer by doubling: the bytes
// allocated are a small multiple of the batch's, not one copy per record.
func TestBatchGrowthAmortized(t *testing.T) {
	records := make([][]byte, 20000)
	for i := range records {
		records[i] = bytes.Repeat([]byte{byte(i)}, 50)
	}
	for _, f := range formats {
		data := encode(t, f, records)
		var b Batch
		var err error
		n := allocated(func() { err = f.newReader(bytes.NewReader(data)).ReadBatch(&b, 0) })
		if err != nil || b.Len() != len(records) {
			t.Fatalf("%s: %d records, %v", f.name, b.Len(), err)
		}
		if n > 8*uint64(len(b.Data))+(1<<20) {
			t.Errorf("%s: a batch of %d bytes allocated %d", f.name, len(b.Data), n)
		}
	}
}
