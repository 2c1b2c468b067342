package starrow

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// WriteIPC writes s to w as an Arrow IPC stream of one record batch (see
// ToArrow), the format pyarrow.ipc.open_stream reads.
func WriteIPC(w io.Writer, s *st.StructTensor) error {
	iw := NewIPCWriter(w)
	if err := iw.Write(s); err != nil {
		return err
	}
	return iw.Close()
}

// IPCWriter writes StructTensors as the record batches of one Arrow IPC
// stream. Every batch must have the schema of the first.
type IPCWriter struct {
	w      io.Writer
	iw     *ipc.Writer
	schema *arrow.Schema
	n      int
}

// NewIPCWriter returns a writer of an IPC stream to w. The stream header is
// written with the first batch.
func NewIPCWriter(w io.Writer) *IPCWriter { return &IPCWriter{w: w} }

// Write appends s as one record batch.
func (w *IPCWriter) Write(s *st.StructTensor) error {
	rec, err := ToArrow(s)
	if err != nil {
		return err
	}
	defer rec.Release()
	return w.WriteRecord(rec)
}

// WriteRecord appends an Arrow record batch.
func (w *IPCWriter) WriteRecord(rec arrow.RecordBatch) error {
	if w.iw == nil {
		w.schema = rec.Schema()
		w.iw = ipc.NewWriter(w.w, ipc.WithSchema(w.schema))
	} else if !w.schema.Equal(rec.Schema()) {
		return fmt.Errorf("%w: batch %d has schema %v, the stream has %v", ErrInvalid, w.n, rec.Schema(), w.schema)
	}
	if err := w.iw.Write(rec); err != nil {
		return fmt.Errorf("arrow ipc: batch %d: %w", w.n, err)
	}
	w.n++
	return nil
}

// Close ends the stream. A stream with no batch cannot be written: its
// schema is unknown.
func (w *IPCWriter) Close() error {
	if w.iw == nil {
		return fmt.Errorf("%w: an IPC stream needs at least one batch to know its schema", ErrUnsupported)
	}
	return w.iw.Close()
}

// IPCReader reads the record batches of an Arrow IPC stream one by one.
type IPCReader struct {
	r    *ipc.Reader
	opts FromArrowOptions
	n    int
}

// NewIPCReader reads the stream header from r.
func NewIPCReader(r io.Reader, opts FromArrowOptions) (*IPCReader, error) {
	limit := opts.MaxIPCBufferBytes
	if limit <= 0 {
		limit = 4 << 30
	}
	cs := &checkedStream{r: r, maxBuffer: limit}
	ir, err := ipc.NewReader(cs, ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		return nil, fmt.Errorf("%w: arrow ipc stream header: %w", ErrInvalid, err)
	}
	return &IPCReader{r: ir, opts: opts}, nil
}

// Schema returns the stream's Arrow schema.
func (r *IPCReader) Schema() *arrow.Schema { return r.r.Schema() }

// NextRecord returns the next Arrow record batch (retained: the caller
// releases it), or io.EOF after the last.
func (r *IPCReader) NextRecord() (arrow.RecordBatch, error) {
	if !r.r.Next() {
		if err := r.r.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: arrow ipc batch %d: %w", ErrInvalid, r.n, err)
		}
		return nil, io.EOF
	}
	rec := r.r.RecordBatch()
	rec.Retain()
	r.n++
	return rec, nil
}

// Next returns the next batch as a StructTensor, or io.EOF after the last.
// The value shares the batch's memory (Go memory, kept alive by the value).
func (r *IPCReader) Next() (*st.StructTensor, error) {
	rec, err := r.NextRecord()
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	s, err := r.opts.Record(rec)
	if err != nil {
		return nil, fmt.Errorf("arrow ipc batch %d: %w", r.n-1, err)
	}
	return s, nil
}

// Release frees the reader.
func (r *IPCReader) Release() { r.r.Release() }

// ReadIPC reads a whole Arrow IPC stream as one rank-1 StructTensor: the
// rows of all its batches in order. A stream of one batch is imported
// without copying; several are concatenated column by column first.
func ReadIPC(r io.Reader) (*st.StructTensor, error) {
	return ReadIPCOptions(r, FromArrowOptions{})
}

// ReadIPCOptions is ReadIPC with conversion options.
func ReadIPCOptions(r io.Reader, opts FromArrowOptions) (*st.StructTensor, error) {
	ir, err := NewIPCReader(r, opts)
	if err != nil {
		return nil, err
	}
	defer ir.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for {
		rec, err := ir.NextRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	rec, err := concatRecords(ir.Schema(), recs)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return opts.Record(rec)
}

// concatRecords joins batches of one schema into one batch.
func concatRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	mem := memory.NewGoAllocator()
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, rec := range recs {
		rows += rec.NumRows()
	}
	for i := range cols {
		f := schema.Field(i)
		if len(recs) == 0 {
			b := array.NewBuilder(mem, f.Type)
			cols[i] = b.NewArray()
			b.Release()
			continue
		}
		parts := make([]arrow.Array, len(recs))
		for j, rec := range recs {
			if err := validateFull(rec.Column(i)); err != nil {
				return nil, fmt.Errorf("batch %d column %q: %w: %v", j, f.Name, ErrInvalid, err)
			}
			parts[j] = rec.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w: %w", f.Name, ErrInvalid, err)
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}
