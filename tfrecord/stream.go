package tfrecord

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's masked CRC32C: a checksum stored next to the data
// it covers must not be easy to confuse with a checksum of that checksum.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// firstStep is how much of a record is read before its buffer grows by
// more than that: afterwards the buffer at most doubles what has arrived,
// so a hostile length cannot force an allocation beyond about twice the
// bytes the input actually holds.
const firstStep = 64 << 10

// sourceError marks an error of the caller's io.Reader, so that it is
// passed through as is rather than reported as corrupt compressed data.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

type taggedReader struct{ r io.Reader }

func (t taggedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		err = &sourceError{err}
	}
	return n, err
}

// stream is the engine shared by Reader and DelimitedReader: decompression,
// position bookkeeping, sticky errors and the two framings.
type stream struct {
	cfg       config
	format    string // "tfrecord" or "delimited"
	delimited bool
	src       io.Reader
	br        *bufio.Reader // the uncompressed byte stream
	started   bool
	compress  Compression // resolved compression once started
	index     int64       // index of the next record
	offset    int64       // uncompressed byte offset of the next record
	err       error       // sticky: returned by every call once set
	hdr       [12]byte
}

func newStream(r io.Reader, delimited bool, opts []Options) *stream {
	s := &stream{cfg: newConfig(opts), src: r, delimited: delimited, format: "tfrecord"}
	if delimited {
		s.format = "delimited"
	}
	if s.cfg.err != nil {
		s.err = s.cfg.err
	}
	return s
}

func (s *stream) fail(detail string, err error) error {
	if se := (*sourceError)(nil); errors.As(err, &se) {
		err = se.err
	} else {
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			err = ErrTruncated
		case errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated):
		case s.compress == CompressionGzip || s.compress == CompressionZlib:
			// Anything else the decompressor says is about its input.
			err = fmt.Errorf("%w: %v: %w", ErrCorrupt, s.compress, err)
		}
	}
	s.err = &RecordError{Format: s.format, Index: s.index, Offset: s.offset, Detail: detail, Err: err}
	return s.err
}

// start resolves the compression and sets up the uncompressed stream.
func (s *stream) start() error {
	s.started = true
	raw := bufio.NewReaderSize(taggedReader{s.src}, s.cfg.bufferSize)
	c := s.cfg.compression
	if c == CompressionAuto {
		c = s.detect(raw)
	}
	s.compress = c
	switch c {
	case CompressionNone:
		s.br = raw
	case CompressionGzip:
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return s.fail("reading gzip header", err)
		}
		s.br = bufio.NewReaderSize(zr, s.cfg.bufferSize)
	case CompressionZlib:
		zr, err := zlib.NewReader(raw)
		if err != nil {
			return s.fail("reading zlib header", err)
		}
		s.br = bufio.NewReaderSize(zr, s.cfg.bufferSize)
	default:
		s.err = fmt.Errorf("%w: compression %v", ErrOption, c)
		return s.err
	}
	return nil
}

// detect guesses the compression from the first bytes (SniffCompression).
func (s *stream) detect(raw *bufio.Reader) Compression {
	b, _ := raw.Peek(12)
	return SniffCompression(b, s.delimited)
}

// appendNext appends the next record's data to dst. At a clean end of the
// stream it returns io.EOF; on any error dst may hold part of the record
// past its original length, which the caller must discard.
func (s *stream) appendNext(dst []byte) ([]byte, error) {
	if s.err != nil {
		return dst, s.err
	}
	if !s.started {
		if err := s.start(); err != nil {
			return dst, err
		}
	}
	var length uint64
	var framing int64
	if s.delimited {
		var err error
		length, framing, err = s.readVarint()
		if err != nil {
			return dst, err
		}
	} else {
		n, err := io.ReadFull(s.br, s.hdr[:12])
		if err != nil {
			if n == 0 && err == io.EOF {
				s.err = io.EOF
				return dst, io.EOF
			}
			return dst, s.fail("reading length header", err)
		}
		length = binary.LittleEndian.Uint64(s.hdr[:8])
		stored, computed := binary.LittleEndian.Uint32(s.hdr[8:12]), maskedCRC(s.hdr[:8])
		if stored != computed {
			return dst, s.fail(fmt.Sprintf("length CRC mismatch (stored %#08x, computed %#08x)", stored, computed), ErrCorrupt)
		}
		framing = 16
	}
	if length > math.MaxInt64/2 || (s.cfg.maxRecordSize > 0 && length > uint64(s.cfg.maxRecordSize)) {
		limit := "the maximum"
		if s.cfg.maxRecordSize > 0 {
			limit = fmt.Sprintf("the limit of %d", s.cfg.maxRecordSize)
		}
		return dst, s.fail(fmt.Sprintf("record length %d exceeds %s", length, limit), ErrCorrupt)
	}
	start := len(dst)
	for remaining := length; remaining > 0; {
		at := len(dst)
		chunk := min(remaining, uint64(max(firstStep, at-start)))
		dst = growTo(dst, at+int(chunk), start, start+int(length))
		if _, err := io.ReadFull(s.br, dst[at:]); err != nil {
			return dst[:at], s.fail(fmt.Sprintf("reading %d data bytes", length), err)
		}
		remaining -= chunk
	}
	if !s.delimited {
		if _, err := io.ReadFull(s.br, s.hdr[:4]); err != nil {
			return dst, s.fail("reading data CRC", err)
		}
		stored, computed := binary.LittleEndian.Uint32(s.hdr[:4]), maskedCRC(dst[start:])
		if stored != computed {
			return dst, s.fail(fmt.Sprintf("data CRC mismatch (stored %#08x, computed %#08x)", stored, computed), ErrCorrupt)
		}
	}
	s.index++
	s.offset += framing + int64(length)
	return dst, nil
}

// growTo returns dst extended to length n (n >= len(dst)), reallocating
// when its capacity is short: to twice the old capacity, so that a batch
// of many records grows in amortized constant time. A long record (one
// that starts at start and ends at end, read in steps of at least
// firstStep) stops the doubling at its end, so it does not leave up to
// twice its size allocated.
func growTo(dst []byte, n, start, end int) []byte {
	if n <= cap(dst) {
		return dst[:n]
	}
	c := max(n, 2*cap(dst))
	if end-start > firstStep {
		c = min(c, end)
	}
	out := make([]byte, n, c)
	copy(out, dst)
	return out
}

// readVarint reads a delimited record's length: a base-128 varint of at
// most 10 bytes that must fit in 64 bits.
func (s *stream) readVarint() (v uint64, n int64, err error) {
	for shift := uint(0); ; shift += 7 {
		b, err := s.br.ReadByte()
		if err != nil {
			if n == 0 && err == io.EOF {
				s.err = io.EOF
				return 0, 0, io.EOF
			}
			return 0, 0, s.fail("reading length varint", err)
		}
		n++
		if n == 10 && b > 1 {
			return 0, 0, s.fail("length varint overflows 64 bits", ErrCorrupt)
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, n, nil
		}
	}
}

// readBatch fills dst with up to max records (max <= 0: no count limit).
func (s *stream) readBatch(dst *Batch, max int) error {
	dst.Reset()
	dst.Start = s.index
	for max <= 0 || dst.Len() < max {
		if s.cfg.maxBatchBytes > 0 && dst.Len() > 0 && int64(len(dst.Data)) >= s.cfg.maxBatchBytes {
			break
		}
		end := len(dst.Data)
		data, err := s.appendNext(dst.Data)
		if err != nil {
			dst.Data = data[:end]
			if dst.Len() > 0 {
				// The complete records read so far are delivered; the
				// error is sticky and comes from the next call.
				return nil
			}
			return err
		}
		dst.Data = data
		dst.Offsets = append(dst.Offsets, int64(len(data)))
	}
	return nil
}
