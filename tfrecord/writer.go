package tfrecord

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

type sink struct {
	cfg       config
	delimited bool
	bw        *bufio.Writer
	comp      io.WriteCloser // nil when uncompressed
	err       error
	closed    bool
	buf       [16]byte
}

func newSink(w io.Writer, delimited bool, opts []Options) *sink {
	s := &sink{cfg: newConfig(opts), delimited: delimited}
	if s.cfg.err != nil {
		s.err = s.cfg.err
		return s
	}
	dst := w
	switch s.cfg.compression {
	case CompressionNone:
	case CompressionGzip:
		zw, err := gzip.NewWriterLevel(w, s.cfg.level)
		if err != nil {
			s.err = fmt.Errorf("%w: %w", ErrOption, err)
			return s
		}
		s.comp, dst = zw, zw
	case CompressionZlib:
		zw, err := zlib.NewWriterLevel(w, s.cfg.level)
		if err != nil {
			s.err = fmt.Errorf("%w: %w", ErrOption, err)
			return s
		}
		s.comp, dst = zw, zw
	default:
		s.err = fmt.Errorf("%w: a writer needs a definite compression, not %v", ErrOption, s.cfg.compression)
		return s
	}
	s.bw = bufio.NewWriterSize(dst, s.cfg.bufferSize)
	return s
}

var errClosed = errors.New("tfrecord: write to a closed writer")

func (s *sink) write(rec []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errClosed
	}
	var hdr []byte
	if s.delimited {
		hdr = binary.AppendUvarint(s.buf[:0], uint64(len(rec)))
	} else {
		binary.LittleEndian.PutUint64(s.buf[:8], uint64(len(rec)))
		binary.LittleEndian.PutUint32(s.buf[8:12], maskedCRC(s.buf[:8]))
		hdr = s.buf[:12]
	}
	if _, err := s.bw.Write(hdr); err != nil {
		s.err = err
		return err
	}
	if _, err := s.bw.Write(rec); err != nil {
		s.err = err
		return err
	}
	if !s.delimited {
		binary.LittleEndian.PutUint32(s.buf[:4], maskedCRC(rec))
		if _, err := s.bw.Write(s.buf[:4]); err != nil {
			s.err = err
			return err
		}
	}
	return nil
}

func (s *sink) flush() error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errClosed
	}
	if err := s.bw.Flush(); err != nil {
		s.err = err
		return err
	}
	if f, ok := s.comp.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			s.err = err
			return err
		}
	}
	return nil
}

func (s *sink) close() error {
	if s.closed {
		return s.err
	}
	if s.err != nil {
		s.closed = true
		return s.err
	}
	s.closed = true
	if err := s.bw.Flush(); err != nil {
		s.err = err
		return err
	}
	if s.comp != nil {
		if err := s.comp.Close(); err != nil {
			s.err = err
			return err
		}
	}
	return nil
}

// Writer writes a TFRecord stream. Writes are buffered: call Close (or
// Flush) before using what was written. Close does not close the
// underlying io.Writer.
type Writer struct{ s *sink }

// NewWriter returns a Writer to w. Options.Compression selects gzip or zlib
// (CompressionAuto is an error, returned by the first Write);
// Options.CompressionLevel sets their level.
func NewWriter(w io.Writer, opts ...Options) *Writer { return &Writer{newSink(w, false, opts)} }

// Write appends one record. After an error every later call fails.
func (w *Writer) Write(record []byte) error { return w.s.write(record) }

// Flush writes buffered records through to the underlying writer (a
// compressed stream is sync-flushed, so a reader can read up to here).
func (w *Writer) Flush() error { return w.s.flush() }

// Close flushes the buffer and ends the compressed stream, if any.
func (w *Writer) Close() error { return w.s.close() }

// DelimitedWriter writes varint-length-delimited records (protobuf's
// writeDelimitedTo framing).
type DelimitedWriter struct{ s *sink }

// NewDelimitedWriter returns a DelimitedWriter to w, with the same options
// as NewWriter.
func NewDelimitedWriter(w io.Writer, opts ...Options) *DelimitedWriter {
	return &DelimitedWriter{newSink(w, true, opts)}
}

// Write appends one record.
func (w *DelimitedWriter) Write(record []byte) error { return w.s.write(record) }

// Flush writes buffered records through to the underlying writer.
func (w *DelimitedWriter) Flush() error { return w.s.flush() }

// Close flushes the buffer and ends the compressed stream, if any.
func (w *DelimitedWriter) Close() error { return w.s.close() }
