// Package tfrecord reads and writes record files: TFRecord files (the
// framing TensorFlow's tf.io.TFRecordWriter and tf.data.TFRecordDataset
// use) and varint-length-delimited streams (protobuf's writeDelimitedTo /
// parseDelimitedFrom framing), each uncompressed, GZIP or ZLIB compressed.
//
// # TFRecord framing
//
// A TFRecord file is a sequence of records, each
//
//	uint64 length        little endian
//	uint32 masked CRC32C of the 8 length bytes
//	byte   data[length]
//	uint32 masked CRC32C of data
//
// where mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8. The length is
// checksummed separately so that a reader never trusts a corrupt length:
// the Reader checks the length CRC before it reads a single data byte, and
// the data CRC before it hands the record out. A compressed file is the
// same byte stream run through gzip (RFC 1952) or zlib (RFC 1950).
//
// # Why batches
//
// Decoding protobuf records into columns is fast enough that allocating one
// []byte per record would dominate it. NextBatch and ReadBatch therefore
// read many records into one contiguous buffer and return it with len+1
// offsets, the layout of an Arrow large_binary array and of a string Tensor
// in package structtensor, so a decoder can walk the records with no copy
// and no per-record allocation, and ReadBatch reuses the caller's buffers
// from one batch to the next. Next, which returns one freshly allocated
// record, is the simple API for everything else.
//
// # Errors
//
// Every error about the data wraps ErrCorrupt (a checksum mismatch, a bad
// varint, undecodable compressed data) or ErrTruncated (the stream ends
// inside a record), and is a *RecordError naming the record index and the
// byte offset of the record in the uncompressed stream. Errors of the
// underlying io.Reader are returned wrapped, with the same context, so
// that errors.Is still finds them. A clean end of input, at a record
// boundary, is io.EOF. Once a Reader has returned an error it returns the
// same error from then on: a stream is never resynchronised past damage,
// because a record boundary found by guessing could silently drop or
// invent records.
//
// Records before the damage are still delivered: a batch that meets an
// error returns the complete records read so far, and the error comes
// from the next call. Nothing partial is ever returned as if it were whole.
//
// # Memory
//
// Readers refuse a record longer than DefaultMaxRecordSize (64 MiB) with
// ErrCorrupt before reading any of it; Options.MaxRecordSize sets another
// limit or none. Below the limit, a corrupt or hostile length field still
// cannot make the Reader allocate much more than the input holds: the
// buffer for a record grows as its bytes actually arrive (at most doubling
// what has arrived), so a stream that claims a 4 GiB record and holds
// 8 MiB fails with ErrTruncated having allocated a small multiple of
// 8 MiB, and a record read whole occupies a buffer of its own size.
package tfrecord
