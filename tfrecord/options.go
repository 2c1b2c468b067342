package tfrecord

import (
	"compress/flate"
	"fmt"

	"github.com/structtensor/structtensor-go/internal/optarg"
)

// Compression names how a record stream is compressed.
type Compression int

const (
	// CompressionNone is a plain stream (TensorFlow's compression_type "").
	CompressionNone Compression = iota
	// CompressionGzip is a gzip stream, RFC 1952 ("GZIP").
	CompressionGzip
	// CompressionZlib is a zlib stream, RFC 1950 ("ZLIB").
	CompressionZlib
	// CompressionAuto, for readers only, detects the compression from the
	// first bytes of the stream: a valid uncompressed TFRecord header wins,
	// then the gzip magic number, then a valid zlib header; anything else
	// is read as uncompressed (and fails there if it is not).
	CompressionAuto
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionZlib:
		return "zlib"
	case CompressionAuto:
		return "auto"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// ParseCompression maps TensorFlow's compression_type names ("", "GZIP",
// "ZLIB") and this package's names ("none", "gzip", "zlib", "auto") to a
// Compression.
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "", "none", "NONE":
		return CompressionNone, nil
	case "gzip", "GZIP":
		return CompressionGzip, nil
	case "zlib", "ZLIB":
		return CompressionZlib, nil
	case "auto", "AUTO":
		return CompressionAuto, nil
	}
	return 0, fmt.Errorf("%w: unknown compression %q (want none, gzip, zlib or auto)", ErrOption, s)
}

type config struct {
	compression   Compression
	level         int
	maxRecordSize int64
	maxBatchBytes int64
	bufferSize    int
	err           error // an argument error, returned by the first call
}

// DefaultMaxRecordSize is the record size readers accept unless
// Options.MaxRecordSize says otherwise: 64 MiB, protobuf's long-standing
// default limit on a message parsed at once. A longer record is refused
// with ErrCorrupt before any of it is read.
const DefaultMaxRecordSize = 64 << 20

func newConfig(opts []Options) config {
	c := config{
		compression:   CompressionNone,
		level:         flate.DefaultCompression,
		maxRecordSize: DefaultMaxRecordSize,
		bufferSize:    256 << 10,
	}
	o, err := optarg.One(opts, ErrOption)
	if err != nil {
		c.err = err
		return c
	}
	c.compression = o.Compression
	if o.CompressionLevel != 0 {
		c.level = o.CompressionLevel
	}
	switch {
	case o.MaxRecordSize > 0:
		c.maxRecordSize = o.MaxRecordSize
	case o.MaxRecordSize < 0:
		c.maxRecordSize = 0
	}
	c.maxBatchBytes = o.MaxBatchBytes
	if o.BufferSize > 0 {
		c.bufferSize = o.BufferSize
	}
	return c
}

// Options configure a Reader, DelimitedReader, Writer or DelimitedWriter.
// The zero value is the default; like every configurable call of this
// module, the constructors take it as an optional trailing argument (at
// most one).
type Options struct {
	// Compression is the stream's compression. The default is
	// CompressionNone; readers also accept CompressionAuto.
	Compression Compression
	// CompressionLevel is the gzip or zlib level writers use
	// (compress/flate's levels); 0 means flate.DefaultCompression.
	CompressionLevel int
	// MaxRecordSize makes readers reject, with ErrCorrupt, any record
	// whose length exceeds it, before reading it. 0 means
	// DefaultMaxRecordSize; negative means no limit beyond the data
	// actually present (memory then grows with the longest record, up to
	// twice its size while it is read).
	MaxRecordSize int64
	// MaxBatchBytes makes NextBatch and ReadBatch stop adding records
	// once a batch holds at least this many data bytes (a batch always
	// holds at least one record). 0 means batches are bounded by record
	// count only.
	MaxBatchBytes int64
	// BufferSize is the size of the read or write buffer; 0 means 256 KiB.
	BufferSize int
}
