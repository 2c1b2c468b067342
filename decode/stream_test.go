package decode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

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
			w = tfrecord.NewWriter(&buf, tfrecord.Options{Compression: tfrecord.CompressionGzip})
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

// gatedReader serves data, but past the first limit bytes it reports each
// Read on reads and serves it only once the test lets it.
type gatedReader struct {
	data  []byte
	limit int
	reads chan struct{}
	open  chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if len(g.data) == 0 {
		return 0, io.EOF
	}
	if g.limit == 0 {
		g.reads <- struct{}{}
		<-g.open
		g.limit = -1 // open from now on
	}
	n := len(p)
	if g.limit > 0 {
		n = min(n, g.limit)
	}
	n = copy(p, g.data[:min(n, len(g.data))])
	g.data = g.data[n:]
	if g.limit > 0 {
		g.limit -= n
	}
	return n, nil
}

// TestStreamReadsAhead checks that a Stream reads the next batch while
// the caller works on the one Next returned: with the input past the
// first batch held back, the stream asks for it before Next is called
// again.
func TestStreamReadsAhead(t *testing.T) {
	d := testDescriptors(t)
	ds := benchDatasets(t, 40)[1] // recipe
	plan, err := Compile(d, ds.message)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := tfrecord.NewDelimitedWriter(&buf)
	first := 0
	for i, r := range ds.records {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if i < 10 { // the writer buffers: count the frames' bytes
			first += len(protowire.AppendVarint(nil, uint64(len(r)))) + len(r)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// One byte of the eleventh record is served: the first batch reads
	// without waiting for the gate, the second cannot.
	g := &gatedReader{data: buf.Bytes(), limit: first + 1, reads: make(chan struct{}, 1), open: make(chan struct{})}
	s := plan.NewStream(g, StreamOptions{Framing: Delimited, BatchSize: 10})
	done := make(chan error, 1)
	go func() {
		st, err := s.Next(context.Background())
		if err == nil && st.NumRows() != 10 {
			err = fmt.Errorf("first batch of %d rows, want 10", st.NumRows())
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first batch waited for bytes past it")
	}
	// Next has returned and is not called again: the read of the second
	// batch is under way all the same.
	select {
	case <-g.reads:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not read ahead while the caller held the first batch")
	}
	g.open <- struct{}{}
	rows := 10
	for {
		st, err := s.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += st.NumRows()
	}
	if rows != len(ds.records) {
		t.Fatalf("%d rows, want %d", rows, len(ds.records))
	}
}

// TestBatchesStops checks that a Batches loop ends on a bad frame with
// its error, and that breaking out early leaves the reader unused.
func TestBatchesStops(t *testing.T) {
	plan, err := Compile(testDescriptors(t), "structtensor.testdata.proto3.Proto3Msg")
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	w := tfrecord.NewWriter(&file)
	for range 10 {
		if err := w.Write(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := file.Bytes()
	n, batches := 0, 0
	for st, err := range plan.Batches(context.Background(), bytes.NewReader(data), StreamOptions{BatchSize: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		n += st.NumRows()
		batches++
	}
	if n != 10 || batches != 4 {
		t.Errorf("read %d records in %d batches, want 10 in 4", n, batches)
	}

	var errs []error
	for st, err := range plan.Batches(context.Background(), bytes.NewReader(data[:len(data)-3]), StreamOptions{BatchSize: 3}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n += st.NumRows()
	}
	if len(errs) != 1 || !errors.Is(errs[0], tfrecord.ErrTruncated) {
		t.Errorf("truncated stream: %v, want one ErrTruncated", errs)
	}

	r := &countingReader{r: bytes.NewReader(data)}
	for range plan.Batches(context.Background(), r, StreamOptions{BatchSize: 1}) {
		break
	}
	reads := r.reads.Load()
	time.Sleep(10 * time.Millisecond)
	if r.reads.Load() != reads {
		t.Error("the reader was still read after the loop ended")
	}
}

type countingReader struct {
	r     io.Reader
	reads atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.r.Read(p)
}

// TestStreamReusesMemory streams the same batch of records again and
// again: with ReuseMemory each batch is decoded into the memory of the
// one before (once the lent sizes settle, from the fourth batch on), and
// still equals the reference; without it, each has memory of its own
// (the collector, stopped here, returns none).
func TestStreamReusesMemory(t *testing.T) {
	withoutReturns(t)
	d := testDescriptors(t)
	ds := benchDatasets(t, 256)[1] // recipe
	md, err := d.Message(ds.message)
	if err != nil {
		t.Fatal(err)
	}
	records := ds.records[:128] // over ST_LEND_MIN_BYTES
	want := refRecords(t, md, records)
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	for range 6 {
		for _, r := range records {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, reuse := range []bool{false, true} {
		plan, err := Compile(d, ds.message)
		if err != nil {
			t.Fatal(err)
		}
		var blocks [][]uintptr
		for st, err := range plan.Batches(context.Background(), bytes.NewReader(buf.Bytes()), StreamOptions{BatchSize: len(records), ReuseMemory: reuse}) {
			if err != nil {
				t.Fatal(err)
			}
			if ok, why := sameValue(want, structtensor.ToValue(st)); !ok {
				t.Fatalf("reuse %v, batch %d: differs from the reference: %s", reuse, len(blocks), why)
			}
			blocks = append(blocks, plan.recent.blocksOf(st))
		}
		if len(blocks) != 6 || len(blocks[1]) == 0 {
			t.Fatalf("reuse %v: %d batches, the second lent %d blocks; want 6 batches, lent memory", reuse, len(blocks), len(blocks[1]))
		}
		for i := 3; i < len(blocks); i++ {
			if same := slices.Equal(blocks[i], blocks[i-1]); same != reuse {
				t.Errorf("reuse %v: batch %d decoded into blocks %x, batch %d into %x", reuse, i, blocks[i], i-1, blocks[i-1])
			}
		}
	}
}
