package decode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// Framing is how records are laid out in a stream.
type Framing int

const (
	// TFRecord is TensorFlow's record file format (length, masked CRC32C
	// of the length, data, masked CRC32C of the data).
	TFRecord Framing = iota
	// Delimited is a sequence of records each preceded by its length as a
	// varint (protobuf's writeDelimitedTo).
	Delimited
)

// StreamOptions configure a Stream.
type StreamOptions struct {
	Framing Framing
	// BatchSize is the number of records per decoded batch (default 1024).
	BatchSize int
	// Compression of the stream; the zero value is none. Use
	// tfrecord.CompressionAuto to detect GZIP or ZLIB.
	Compression tfrecord.Compression
	// Decode configures the decode of each batch.
	Decode DecodeOptions
	// MaxRecordSize is the longest record accepted, in bytes; a longer one
	// fails the stream with tfrecord.ErrCorrupt before it is read. 0 means
	// tfrecord.DefaultMaxRecordSize (64 MiB), negative means no limit.
	MaxRecordSize int64
	// ReuseMemory decodes each batch into the memory of the one before
	// (Plan.Recycle), as a bufio.Scanner reuses its buffer: a batch, and
	// every tensor, slice and Arrow array taken from it without a copy,
	// is valid only until the next call of Next (the next iteration of
	// Batches), which overwrites it. Without it each batch has memory of
	// its own, which comes back to the plan by itself a garbage
	// collection after nothing refers to it; small batches of simple
	// records, decoded fast, lose much of their speed to that wait.
	ReuseMemory bool
}

// Stream decodes records read from an io.Reader batch by batch.
//
// Reading a batch (the reads, decompression and CRC checks) overlaps the
// decoding of the one before: when Next has a batch to decode, it starts
// reading the next into the other of two buffers on a goroutine of its
// own, so a stream keeps two cores busy even when the decode has one
// thread. The goroutine hands its batch over a channel with room for it,
// so it ends even when the stream is abandoned, and the reader is only
// ever used by one goroutine at a time.
type Stream struct {
	plan    *Plan
	rr      tfrecord.RecordReader
	batches [2]tfrecord.Batch
	next    int             // the buffer the next read fills
	ahead   chan readResult // the read in flight, nil before the first
	opts    StreamOptions
	prev    *structtensor.StructTensor // the last batch decoded, with ReuseMemory
	n       int64                      // records decoded so far
	bytes   int64                      // record bytes decoded so far
	err     error
}

// readResult is a batch read ahead, or the error that ended the read.
type readResult struct {
	batch *tfrecord.Batch
	err   error
}

// readAhead starts reading the next batch into the free buffer.
func (s *Stream) readAhead() {
	b := &s.batches[s.next]
	s.next ^= 1
	s.ahead = make(chan readResult, 1)
	go func(ch chan<- readResult) {
		ch <- readResult{b, s.rr.ReadBatch(b, s.opts.BatchSize)}
	}(s.ahead)
}

// NewStream returns a Stream that reads records from r and decodes them
// with p.
func (p *Plan) NewStream(r io.Reader, o StreamOptions) *Stream {
	if o.BatchSize <= 0 {
		o.BatchSize = 1024
	}
	s := &Stream{plan: p, opts: o}
	topts := tfrecord.Options{Compression: o.Compression, MaxRecordSize: o.MaxRecordSize}
	if o.Framing == Delimited {
		s.rr = tfrecord.NewDelimitedReader(r, topts)
	} else {
		s.rr = tfrecord.NewReader(r, topts)
	}
	return s
}

// Next reads and decodes the next batch of up to BatchSize records. It
// returns io.EOF when the stream is exhausted. A bad record fails with a
// *RecordError whose Record is the index of the record in the stream; a
// bad frame fails with the tfrecord package's error (tfrecord.ErrCorrupt,
// tfrecord.ErrTruncated). After an error, Next keeps returning it.
func (s *Stream) Next(ctx context.Context) (*structtensor.StructTensor, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.ahead == nil {
		s.readAhead()
	}
	r := <-s.ahead
	s.ahead = nil
	if err := r.err; err != nil {
		if !errors.Is(err, io.EOF) {
			err = fmt.Errorf("decode: reading records: %w", err)
		}
		s.err = err
		return nil, err
	}
	// The decode copies what it keeps out of the batch: the buffer is free
	// again for the read after next.
	s.readAhead()
	batch := r.batch
	if s.opts.ReuseMemory {
		s.plan.Recycle(s.prev)
		s.prev = nil
	}
	st, err := s.plan.DecodeContiguousContext(ctx, batch.Data, batch.Offsets, s.opts.Decode)
	if err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			re.Record += s.n
		}
		s.err = err
		return nil, err
	}
	if s.opts.ReuseMemory {
		s.prev = st
	}
	s.n += int64(batch.Len())
	s.bytes += int64(len(batch.Data))
	return st, nil
}

// Batches returns an iterator over the batches of records read from r and
// decoded with p, as a Stream configured by o yields them. It ends at the
// end of the stream, or after yielding an error (with a nil batch): a
// *RecordError whose Record counts from the start of r, a framing error
// of the tfrecord package, or ctx's error once ctx is done. Breaking out
// of the loop early is allowed: the iterator waits for the read it had
// started ahead, so r is no longer in use once the loop is over.
func (p *Plan) Batches(ctx context.Context, r io.Reader, o StreamOptions) iter.Seq2[*structtensor.StructTensor, error] {
	return func(yield func(*structtensor.StructTensor, error) bool) {
		s := p.NewStream(r, o)
		defer s.waitRead()
		for {
			st, err := s.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(st, err) || err != nil {
				return
			}
		}
	}
}

// waitRead waits for the read in flight, if any, to finish with r.
func (s *Stream) waitRead() {
	if s.ahead != nil {
		r := <-s.ahead
		s.ahead = nil
		if s.err == nil && r.err != nil {
			s.err = r.err
		}
	}
}

// Records returns the number of records decoded so far.
func (s *Stream) Records() int64 { return s.n }

// Bytes returns the number of record bytes decoded so far.
func (s *Stream) Bytes() int64 { return s.bytes }
