package tfrecord

import (
	"bytes"
	"errors"
	"testing"
)

// fuzzFormat reads arbitrary bytes with auto-detected compression. Reading
// must end in io.EOF or an error wrapping ErrCorrupt or ErrTruncated (never
// a panic), batches must agree with Next, and whatever was read must
// survive a write/read round trip.
func fuzzFormat(t *testing.T, f format, data []byte) {
	records, err := readAll(f.newReader(bytes.NewReader(data), Options{Compression: CompressionAuto, MaxRecordSize: 1 << 20}))
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) {
		t.Fatalf("error wraps no sentinel: %v", err)
	}
	var re *RecordError
	if err != nil && (!errors.As(err, &re) || re.Index != int64(len(records))) {
		t.Fatalf("error %v does not name record %d", err, len(records))
	}
	batched, err2 := readAllBatches(f.newReader(bytes.NewReader(data), Options{Compression: CompressionAuto, MaxRecordSize: 1 << 20, BufferSize: 16}), 3)
	if !equalRecords(records, batched) || (err == nil) != (err2 == nil) {
		t.Fatalf("Next read %d records (%v), ReadBatch %d (%v)", len(records), err, len(batched), err2)
	}
	again, err := readAll(f.newReader(bytes.NewReader(encode(t, f, records))))
	if err != nil || !equalRecords(again, records) {
		t.Fatalf("round trip of %d records: %d, %v", len(records), len(again), err)
	}
}

func seeds(f *testing.F, fm format) {
	for _, c := range compressions {
		f.Add(encode(f, fm, testRecords()[:3], Options{Compression: c}))
	}
	f.Add([]byte{})
	f.Add(header(1 << 40))
	f.Add(bytes.Repeat([]byte{0xff}, 11))
}

func FuzzReader(f *testing.F) {
	seeds(f, formats[0])
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, formats[0], data) })
}

func FuzzDelimitedReader(f *testing.F) {
	seeds(f, formats[1])
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, formats[1], data) })
}
