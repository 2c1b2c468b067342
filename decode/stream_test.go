package decode

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

func TestStream(t *testing.T) {
	d := testDescriptors(t)
	ds := benchDatasets(t, 40)[1] // recipe
	plan, err := Compile(d, ds.message)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := plan.Decode(ds.records)
	if err != nil {
		t.Fatal(err)
	}
	for _, framing := range []Framing{TFRecord, Delimited} {
		var buf bytes.Buffer
		var w interface {
			Write([]byte) error
			Close() error
		}
		if framing == TFRecord {
			w = tfrecord.NewWriter(&buf, tfrecord.WithCompression(tfrecord.CompressionGzip))
		} else {
			w = tfrecord.NewDelimitedWriter(&buf)
		}
		for _, r := range ds.records {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		s := plan.NewStream(bytes.NewReader(buf.Bytes()), StreamOptions{Framing: framing, BatchSize: 7, Compression: tfrecord.CompressionAuto})
		var rows []any
		for {
			st, err := s.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.NumRows() > 7 {
				t.Fatalf("batch of %d rows", st.NumRows())
			}
			rows = append(rows, structtensor.ToValue(st).([]any)...)
		}
		if ok, why := sameValue(structtensor.ToValue(whole), rows); !ok || s.Records() != int64(len(ds.records)) {
			t.Fatalf("framing %d: batches differ from one decode: %s", framing, why)
		}
	}
	// A bad record is named by its index in the stream.
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	for i := 0; i < 10; i++ {
		rec := ds.records[i]
		if i == 8 {
			rec = []byte{0x0a, 0x7f}
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw := append([]byte(nil), buf.Bytes()...)
	s := plan.NewStream(bytes.NewReader(raw), StreamOptions{BatchSize: 3})
	var re *RecordError
	for {
		_, err = s.Next(context.Background())
		if err != nil {
			break
		}
	}
	if !errors.As(err, &re) || re.Record != 8 || !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed at record 8", err)
	}
	// A corrupt frame is the tfrecord package's error.
	bad := append([]byte(nil), raw...)
	bad[20] ^= 0xff
	s = plan.NewStream(bytes.NewReader(bad), StreamOptions{})
	if _, err := s.Next(context.Background()); !errors.Is(err, tfrecord.ErrCorrupt) {
		t.Fatalf("err = %v, want tfrecord.ErrCorrupt", err)
	}
}
