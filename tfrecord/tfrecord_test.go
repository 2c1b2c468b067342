package tfrecord

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// testRecords is a deterministic record set covering an empty record, a
// one-byte record, every byte value and a record larger than the I/O
// buffers used in the tests.
func testRecords() [][]byte {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := make([]byte, 5000)
	x := uint32(1)
	for i := range big {
		x = x*1664525 + 1013904223
		big[i] = byte(x >> 24)
	}
	return [][]byte{{}, []byte("a"), all, big, []byte("hello, tfrecord")}
}

var compressions = []Compression{CompressionNone, CompressionGzip, CompressionZlib}

type format struct {
	name      string
	newReader func(io.Reader, ...Options) RecordReader
	newWriter func(io.Writer, ...Options) recordWriter
}

type recordWriter interface {
	Write([]byte) error
	Close() error
}

var formats = []format{
	{"tfrecord",
		func(r io.Reader, o ...Options) RecordReader { return NewReader(r, o...) },
		func(w io.Writer, o ...Options) recordWriter { return NewWriter(w, o...) }},
	{"delimited",
		func(r io.Reader, o ...Options) RecordReader { return NewDelimitedReader(r, o...) },
		func(w io.Writer, o ...Options) recordWriter { return NewDelimitedWriter(w, o...) }},
}

func encode(t testing.TB, f format, records [][]byte, opts ...Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := f.newWriter(&buf, opts...)
	for _, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// readAll reads records with Next until an error; it returns the records
// and the error (nil at a clean io.EOF).
func readAll(r RecordReader) ([][]byte, error) {
	var out [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// readAllBatches reads records with ReadBatch in batches of n.
func readAllBatches(r RecordReader, n int) ([][]byte, error) {
	var out [][]byte
	var b Batch
	for {
		err := r.ReadBatch(&b, n)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if b.Len() == 0 || (n > 0 && b.Len() > n) {
			return out, fmt.Errorf("batch of %d records for max %d", b.Len(), n)
		}
		if b.Start != int64(len(out)) {
			return out, fmt.Errorf("batch Start %d, want %d", b.Start, len(out))
		}
		for _, rec := range b.Records() {
			out = append(out, bytes.Clone(rec))
		}
	}
}

func equalRecords(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	sets := map[string][][]byte{
		"none":        nil,
		"one empty":   {{}},
		"records":     testRecords(),
		"many small":  bytes.SplitAfter(bytes.Repeat([]byte("xy"), 3000), []byte("y")),
		"large":       {bytes.Repeat([]byte{7}, 4*firstStep+12345), []byte("after")},
		"varint edge": {make([]byte, 127), make([]byte, 128), make([]byte, 16383), make([]byte, 16384)},
	}
	for _, f := range formats {
		for _, c := range compressions {
			for name, records := range sets {
				t.Run(fmt.Sprintf("%s/%v/%s", f.name, c, name), func(t *testing.T) {
					data := encode(t, f, records, Options{Compression: c})
					for _, rc := range []Compression{c, CompressionAuto} {
						got, err := readAll(f.newReader(bytes.NewReader(data), Options{Compression: rc}))
						if err != nil || !equalRecords(got, records) {
							t.Fatalf("Next with %v: got %d records, err %v; want %d records", rc, len(got), err, len(records))
						}
						for _, n := range []int{1, 2, 1000, 0} {
							got, err := readAllBatches(f.newReader(bytes.NewReader(data), Options{Compression: rc, BufferSize: 64}), n)
							if err != nil || !equalRecords(got, records) {
								t.Fatalf("ReadBatch(%d) with %v: got %d records, err %v; want %d", n, rc, len(got), err, len(records))
							}
						}
					}
				})
			}
		}
	}
}

func TestNextReturnsOwnedNonNilSlices(t *testing.T) {
	data := encode(t, formats[0], [][]byte{{}, []byte("abc")})
	r := NewReader(bytes.NewReader(data))
	a, err := r.Next()
	if err != nil || a == nil || len(a) != 0 {
		t.Fatalf("first Next = %q, %v; want a non-nil empty record", a, err)
	}
	b, _ := r.Next()
	b[0] = 'X'
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("third Next err = %v, want io.EOF", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next after EOF err = %v, want io.EOF again", err)
	}
}

func TestBatchLimits(t *testing.T) {
	records := testRecords() // sizes 0, 1, 256, 5000, 15
	data := encode(t, formats[0], records)
	r := NewReader(bytes.NewReader(data), Options{MaxBatchBytes: 200})
	var sizes []int
	for {
		b, err := r.NextBatch(0)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, b.Len())
	}
	// 0+1+256 >= 200 closes the first batch; 5000 alone; 15 alone.
	if fmt.Sprint(sizes) != "[3 1 1]" {
		t.Fatalf("batch sizes %v, want [3 1 1]", sizes)
	}
}

// header builds a TFRecord length header with a valid length CRC.
func header(length uint64) []byte {
	h := binary.LittleEndian.AppendUint64(nil, length)
	return binary.LittleEndian.AppendUint32(h, maskedCRC(h))
}

func TestKnownBytes(t *testing.T) {
	// The CRC32C of "123456789" is 0xe3069283 (RFC 3720 B.4); masked it
	// is ((c >> 15) | (c << 17)) + 0xa282ead8.
	c := uint32(0xe3069283)
	want := ((c >> 15) | (c << 17)) + 0xa282ead8
	if got := maskedCRC([]byte("123456789")); got != want {
		t.Fatalf("maskedCRC = %#x, want %#x", got, want)
	}
	rec := []byte("123456789")
	wantFile := append(header(9), rec...)
	wantFile = binary.LittleEndian.AppendUint32(wantFile, want)
	if got := encode(t, formats[0], [][]byte{rec}); !bytes.Equal(got, wantFile) {
		t.Fatalf("Writer wrote % x\nwant % x", got, wantFile)
	}
	if got := encode(t, formats[1], [][]byte{make([]byte, 300)}); !bytes.Equal(got[:2], []byte{0xac, 0x02}) || len(got) != 302 {
		t.Fatalf("DelimitedWriter header % x, want ac 02", got[:2])
	}
}

func TestCorrupt(t *testing.T) {
	records := [][]byte{[]byte("first"), []byte("second record"), []byte("third")}
	data := encode(t, formats[0], records)
	second := int64(16 + len(records[0])) // byte offset of record 1
	tests := []struct {
		name   string
		at     int64 // byte to flip
		detail string
	}{
		{"length", second, "length CRC mismatch"},
		{"length CRC", second + 9, "length CRC mismatch"},
		{"data", second + 12, "data CRC mismatch"},
		{"data CRC", second + 12 + int64(len(records[1])) + 3, "data CRC mismatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Clone(data)
			bad[tc.at] ^= 0x40
			got, err := readAll(NewReader(bytes.NewReader(bad)))
			assertRecordError(t, err, ErrCorrupt, 1, second, tc.detail)
			if !equalRecords(got, records[:1]) {
				t.Fatalf("records before the damage: got %d, want 1", len(got))
			}
			// A batch delivers the good record, then the error.
			r := NewReader(bytes.NewReader(bad))
			b, err := r.NextBatch(10)
			if err != nil || b.Len() != 1 {
				t.Fatalf("NextBatch = %v records, %v; want the 1 good record", b, err)
			}
			_, err = r.NextBatch(10)
			assertRecordError(t, err, ErrCorrupt, 1, second, tc.detail)
			_, err2 := r.Next()
			if err2 != err {
				t.Fatalf("error is not sticky: %v then %v", err, err2)
			}
		})
	}
}

func assertRecordError(t *testing.T, err, sentinel error, index, offset int64, detail string) {
	t.Helper()
	var re *RecordError
	if !errors.Is(err, sentinel) || !errors.As(err, &re) {
		t.Fatalf("err = %v, want a *RecordError wrapping %v", err, sentinel)
	}
	if re.Index != index || re.Offset != offset {
		t.Fatalf("error names record %d at %d, want record %d at %d: %v", re.Index, re.Offset, index, offset, err)
	}
	want := fmt.Sprintf("record %d at byte offset %d: %s", index, offset, detail)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestTruncated(t *testing.T) {
	records := [][]byte{[]byte("first"), []byte("second record")}
	for _, f := range formats {
		data := encode(t, f, records)
		second := int64(len(encode(t, f, records[:1])))
		for cut := second + 1; cut < int64(len(data)); cut++ {
			got, err := readAll(f.newReader(bytes.NewReader(data[:cut])))
			assertRecordError(t, err, ErrTruncated, 1, second, "")
			if !equalRecords(got, records[:1]) {
				t.Fatalf("%s cut at %d: got %d records before the error, want 1", f.name, cut, len(got))
			}
		}
		// A cut at a record boundary is a clean end.
		got, err := readAll(f.newReader(bytes.NewReader(data[:second])))
		if err != nil || !equalRecords(got, records[:1]) {
			t.Fatalf("%s cut at a boundary: %d records, %v", f.name, len(got), err)
		}
	}
}

func TestCompressedDamage(t *testing.T) {
	records := testRecords()
	for _, c := range []Compression{CompressionGzip, CompressionZlib} {
		data := encode(t, formats[0], records, Options{Compression: c})
		_, err := readAll(NewReader(bytes.NewReader(data[:len(data)-10]), Options{Compression: c}))
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("%v cut short: err = %v, want ErrTruncated", c, err)
		}
		bad := bytes.Clone(data)
		bad[len(bad)-2] ^= 0xff // inside the trailing checksum
		_, err = readAll(NewReader(bytes.NewReader(bad), Options{Compression: c}))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v with a bad checksum: err = %v, want ErrCorrupt", c, err)
		}
	}
	_, err := readAll(NewReader(strings.NewReader("not gzip at all"), Options{Compression: CompressionGzip}))
	assertRecordError(t, err, ErrCorrupt, 0, 0, "reading gzip header")
}

func TestHostileLength(t *testing.T) {
	// A valid header claiming 2^40 bytes over a short input fails, with
	// the limit removed, as truncated after reading what is there, without
	// allocating 1 TiB; by default the length is refused.
	data := append(header(1<<40), "tiny"...)
	_, err := NewReader(bytes.NewReader(data), Options{MaxRecordSize: -1}).Next()
	assertRecordError(t, err, ErrTruncated, 0, 0, "reading 1099511627776 data bytes")

	_, err = NewReader(bytes.NewReader(data), Options{MaxRecordSize: 1000}).Next()
	assertRecordError(t, err, ErrCorrupt, 0, 0, "record length 1099511627776 exceeds the limit of 1000")

	// An 11-byte varint cannot be a 64-bit length.
	_, err = NewDelimitedReader(bytes.NewReader(bytes.Repeat([]byte{0xff}, 11))).Next()
	assertRecordError(t, err, ErrCorrupt, 0, 0, "length varint overflows 64 bits")
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestSourceErrorPassesThrough(t *testing.T) {
	boom := errors.New("disk on fire")
	data := encode(t, formats[0], testRecords(), Options{Compression: CompressionGzip})
	for _, c := range []Compression{CompressionNone, CompressionGzip} {
		src := data
		if c == CompressionNone {
			src = encode(t, formats[0], testRecords())
		}
		_, err := readAll(NewReader(&failingReader{src[:len(src)/2], boom}, Options{Compression: c}))
		if !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated) {
			t.Errorf("%v: err = %v, want the source's error and no format sentinel", c, err)
		}
	}
}

func TestAutoDetect(t *testing.T) {
	for _, c := range compressions {
		data := encode(t, formats[0], testRecords(), Options{Compression: c})
		r := NewReader(bytes.NewReader(data), Options{Compression: CompressionAuto})
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if r.s.compress != c {
			t.Errorf("detected %v, want %v", r.s.compress, c)
		}
	}
	// A plain file whose first record is 0x8b1f bytes long starts with the
	// gzip magic number; its valid length CRC keeps it plain.
	rec := make([]byte, 0x8b1f)
	data := encode(t, formats[0], [][]byte{rec})
	got, err := readAll(NewReader(bytes.NewReader(data), Options{Compression: CompressionAuto}))
	if err != nil || len(got) != 1 {
		t.Fatalf("plain file starting 1f 8b: %d records, %v", len(got), err)
	}
	if _, err := readAll(NewReader(strings.NewReader(""), Options{Compression: CompressionAuto})); err != nil {
		t.Fatalf("empty input with auto: %v, want a clean end", err)
	}
}

func TestWriterOptions(t *testing.T) {
	w := NewWriter(io.Discard, Options{Compression: CompressionAuto})
	if err := w.Write([]byte("x")); !errors.Is(err, ErrOption) {
		t.Fatalf("Write with CompressionAuto: %v, want ErrOption", err)
	}
	w = NewWriter(io.Discard, Options{Compression: CompressionGzip, CompressionLevel: 42})
	if err := w.Write([]byte("x")); !errors.Is(err, ErrOption) {
		t.Fatalf("Write with level 42: %v, want ErrOption", err)
	}
	w = NewWriter(io.Discard)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
	for _, s := range []string{"", "GZIP", "ZLIB", "auto"} {
		if _, err := ParseCompression(s); err != nil {
			t.Errorf("ParseCompression(%q): %v", s, err)
		}
	}
	if _, err := ParseCompression("lz4"); !errors.Is(err, ErrOption) {
		t.Errorf("ParseCompression(lz4) err = %v", err)
	}
}

func TestFlushMakesRecordsReadable(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{Compression: CompressionGzip})
	if err := w.Write([]byte("early")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewReader(zr).Next()
	if err != nil || string(rec) != "early" {
		t.Fatalf("after Flush: %q, %v", rec, err)
	}
}

// TestOneOptions checks that more than one Options is refused by readers
// (first read) and writers (first write), with ErrOption.
func TestOneOptions(t *testing.T) {
	two := []Options{{}, {}}
	if _, err := NewReader(bytes.NewReader(nil), two...).Next(); !errors.Is(err, ErrOption) {
		t.Errorf("reader with two Options: %v, want ErrOption", err)
	}
	if err := NewWriter(io.Discard, two...).Write([]byte("x")); !errors.Is(err, ErrOption) {
		t.Errorf("writer with two Options: %v, want ErrOption", err)
	}
}
