package tfrecord

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error about the content of a stream wraps one of
// them inside a *RecordError; test with errors.Is.
var (
	// ErrCorrupt reports bytes that cannot be a valid stream: a length or
	// data checksum mismatch, a malformed or oversized length varint, a
	// record over the size limit, or compressed data that does not
	// decompress.
	ErrCorrupt = errors.New("tfrecord: corrupt record")
	// ErrTruncated reports a stream that ends inside a record (or inside
	// the compressed stream that holds it).
	ErrTruncated = errors.New("tfrecord: truncated record")
	// ErrOption reports an option that does not apply, such as
	// CompressionAuto on a Writer.
	ErrOption = errors.New("tfrecord: invalid option")
)

// RecordError is the error for a record that cannot be read. It names the
// record by its 0-based index in the stream and by the byte offset where
// its framing starts in the uncompressed stream.
type RecordError struct {
	Format string // "tfrecord" or "delimited"
	Index  int64  // 0-based index of the record in the stream
	Offset int64  // byte offset of the record's first framing byte (uncompressed)
	Detail string // what is wrong, e.g. "data CRC mismatch"
	Err    error  // ErrCorrupt, ErrTruncated, or an error of the underlying reader
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s: record %d at byte offset %d: %s: %v", e.Format, e.Index, e.Offset, e.Detail, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }
