package tfrecord

import (
	"errors"
	"io"
	"iter"
)

// Batch is a run of records stored in one contiguous buffer: record i is
// Data[Offsets[i]:Offsets[i+1]]. Offsets has Len()+1 entries and starts at
// 0, the layout of an Arrow large_binary array and of a structtensor
// string Tensor.
type Batch struct {
	Data    []byte
	Offsets []int64
	// Start is the index in the stream of the batch's first record, so a
	// decoder can name records by their position in the file.
	Start int64
}

// Len returns the number of records in the batch.
func (b *Batch) Len() int {
	if len(b.Offsets) == 0 {
		return 0
	}
	return len(b.Offsets) - 1
}

// Record returns record i, a slice of b.Data (not a copy).
func (b *Batch) Record(i int) []byte {
	return b.Data[b.Offsets[i]:b.Offsets[i+1]:b.Offsets[i+1]]
}

// Records returns every record as a slice of b.Data (no data is copied).
func (b *Batch) Records() [][]byte {
	out := make([][]byte, b.Len())
	for i := range out {
		out[i] = b.Record(i)
	}
	return out
}

// Reset empties the batch and keeps its buffers for reuse.
func (b *Batch) Reset() {
	b.Data = b.Data[:0]
	b.Offsets = append(b.Offsets[:0], 0)
	b.Start = 0
}

// RecordReader is what Reader and DelimitedReader have in common, for code
// that reads either framing.
type RecordReader interface {
	Next() ([]byte, error)
	NextBatch(max int) (*Batch, error)
	ReadBatch(dst *Batch, max int) error
}

// Reader reads a TFRecord stream. It buffers its input, so it may read
// past the last record it returned.
type Reader struct{ s *stream }

var _ RecordReader = (*Reader)(nil)

// NewReader returns a Reader of the TFRecord stream r. Options select the
// compression (default none; CompressionAuto detects it), a record size
// limit and a batch byte budget. Errors about r's header (a bad gzip
// header) are returned by the first read.
func NewReader(r io.Reader, opts ...Options) *Reader {
	return &Reader{newStream(r, false, opts)}
}

// Next returns the next record in a newly allocated slice that the caller
// owns. It returns io.EOF at a clean end of the stream, and otherwise an
// error wrapping ErrCorrupt, ErrTruncated or the underlying reader's error.
func (r *Reader) Next() ([]byte, error) { return next(r.s) }

// NextBatch reads up to max records (max <= 0: until the end of the stream
// or the batch byte budget) into a new Batch. If an error follows some
// complete records, NextBatch returns those and the error comes from the
// next call; it returns io.EOF only when no record is left.
func (r *Reader) NextBatch(max int) (*Batch, error) { return nextBatch(r.s, max) }

// ReadBatch is NextBatch into dst, reusing dst's buffers, so a loop over a
// large file allocates only while its batches grow.
func (r *Reader) ReadBatch(dst *Batch, max int) error { return r.s.readBatch(dst, max) }

// Index returns the index of the next record to be read, which after an
// error is the index of the record that failed.
func (r *Reader) Index() int64 { return r.s.index }

// All returns an iterator over the remaining records, each in a newly
// allocated slice the caller owns. It ends after the last record, or after
// yielding an error (never io.EOF) with a nil record; Index then names the
// record that failed.
func (r *Reader) All() iter.Seq2[[]byte, error] { return all(r.s) }

// Offset returns the byte offset, in the uncompressed stream, of the next
// record to be read.
func (r *Reader) Offset() int64 { return r.s.offset }

func all(s *stream) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for {
			rec, err := next(s)
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

func next(s *stream) ([]byte, error) {
	data, err := s.appendNext(nil)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

func nextBatch(s *stream, max int) (*Batch, error) {
	b := new(Batch)
	if err := s.readBatch(b, max); err != nil {
		return nil, err
	}
	return b, nil
}

// DelimitedReader reads a stream of varint-length-delimited records, the
// framing of protobuf's writeDelimitedTo: each record is its length as a
// base-128 varint followed by that many bytes. There is no checksum, so
// only a bad varint, an oversized length or a truncated stream can be
// detected. With CompressionAuto, a plain stream that happens to start
// like a gzip or zlib header is taken as compressed: name the compression
// when it is known.
type DelimitedReader struct{ s *stream }

var _ RecordReader = (*DelimitedReader)(nil)

// NewDelimitedReader returns a DelimitedReader of r, with the same options
// as NewReader.
func NewDelimitedReader(r io.Reader, opts ...Options) *DelimitedReader {
	return &DelimitedReader{newStream(r, true, opts)}
}

// Next returns the next record, as Reader.Next does.
func (r *DelimitedReader) Next() ([]byte, error) { return next(r.s) }

// NextBatch reads up to max records into a new Batch, as Reader.NextBatch does.
func (r *DelimitedReader) NextBatch(max int) (*Batch, error) { return nextBatch(r.s, max) }

// ReadBatch is NextBatch into dst, reusing dst's buffers.
func (r *DelimitedReader) ReadBatch(dst *Batch, max int) error { return r.s.readBatch(dst, max) }

// Index returns the index of the next record to be read.
func (r *DelimitedReader) Index() int64 { return r.s.index }

// Offset returns the byte offset, in the uncompressed stream, of the next
// record to be read.
func (r *DelimitedReader) Offset() int64 { return r.s.offset }

// All returns an iterator over the remaining records, as Reader.All does.
func (r *DelimitedReader) All() iter.Seq2[[]byte, error] { return all(r.s) }
