package tfrecord

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// boundaries returns the byte offset of every record of a TFRecord file.
func boundaries(records [][]byte) []int64 {
	var out []int64
	var at int64
	for _, r := range records {
		out = append(out, at)
		at += int64(len(r)) + 16
	}
	return out
}

func TestFindRecordFindsEveryBoundary(t *testing.T) {
	records := testRecords()
	// A record longer than the scan window, so a frame's data is read past it.
	records = append(records, bytes.Repeat([]byte{0xa5}, syncWindow+100), []byte("tail"))
	file := encode(t, formats[0], records)
	bounds := append(boundaries(records), int64(len(file)))
	long := bounds[len(bounds)-3]
	next := 0
	for from := int64(0); from <= int64(len(file)); from++ {
		if from > long+50 && from < long+syncWindow+50 {
			from = min(from+9973, long+syncWindow+50) // sample the long record's interior
		}
		for bounds[next] < from {
			next++
		}
		got, err := FindRecord(bytes.NewReader(file), from, int64(len(file)), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got != bounds[next] {
			t.Fatalf("FindRecord from %d = %d, want %d", from, got, bounds[next])
		}
	}
}

// TestFindRecordFindsFramesInsidePayloads shows why a split reader must
// check the boundary it finds: a payload that is itself a TFRecord file
// holds frames that are valid by both checksums.
func TestFindRecordFindsFramesInsidePayloads(t *testing.T) {
	inner := encode(t, formats[0], [][]byte{[]byte("inner record")})
	file := encode(t, formats[0], [][]byte{[]byte("a"), inner})
	got, err := FindRecord(bytes.NewReader(file), 18, int64(len(file)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(17 + 12); got != want {
		t.Fatalf("FindRecord = %d, want the inner frame at %d", got, want)
	}
	// A size limit below the outer record's length cannot hide the inner one.
	if got, _ := FindRecord(bytes.NewReader(file), 1, int64(len(file)), 20); got != 17+12 {
		t.Fatalf("FindRecord with limit = %d", got)
	}
}

type failingReaderAt struct{}

func (failingReaderAt) ReadAt([]byte, int64) (int, error) { return 0, errors.ErrUnsupported }

func TestFindRecordReportsReadErrors(t *testing.T) {
	_, err := FindRecord(failingReaderAt{}, 5, 100, 0)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("err = %v", err)
	}
}

func TestSniffCompression(t *testing.T) {
	records := [][]byte{[]byte("x")}
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionZlib} {
		b := encode(t, formats[0], records, Options{Compression: c})
		if got := SniffCompression(b[:12], false); got != c {
			t.Errorf("%v: sniffed %v", c, got)
		}
	}
	if got := SniffCompression(nil, false); got != CompressionNone {
		t.Errorf("empty: %v", got)
	}
}

// FuzzFindRecord: on any bytes, a boundary FindRecord returns starts a
// record the Reader accepts, and nothing before it from `from` does.
func FuzzFindRecord(f *testing.F) {
	f.Add(encode(f, formats[0], testRecords()), int64(3))
	f.Add([]byte("not a record at all, not even close"), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		size := int64(len(data))
		if from < 0 || from > size {
			return
		}
		p, err := FindRecord(bytes.NewReader(data), from, size, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p < from || p > size {
			t.Fatalf("FindRecord = %d outside [%d, %d]", p, from, size)
		}
		if p < size {
			if _, err := NewReader(bytes.NewReader(data[p:])).Next(); err != nil && err != io.EOF {
				t.Fatalf("no record at the boundary %d: %v", p, err)
			}
		}
	})
}
