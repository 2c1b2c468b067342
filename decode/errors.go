package decode

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error about the caller's input (records, plans,
// descriptors, paths, values to encode) wraps one of them (errors.Is),
// with context: the record index, the byte offset inside the record and
// the field path for decode errors, the path and the fields that exist for
// projection errors. Errors of reading a stream wrap the tfrecord
// package's, a cancelled decode the context's error; errors prefixed
// "decode: internal" report a bug and wrap none.
var (
	// ErrMalformed reports bytes that are not a valid protobuf encoding:
	// a truncated varint or fixed-width value, a length past the end of
	// its message, an invalid tag or field number, broken group nesting.
	ErrMalformed = errors.New("decode: malformed record")
	// ErrWireType reports a known field encoded with a wire type its type
	// cannot have. (protobuf parsers keep such a field as unknown; a
	// decoder that produces columns treats it as corrupt data instead.)
	ErrWireType = errors.New("decode: wrong wire type")
	// ErrDepth reports messages nested deeper than the depth limit.
	ErrDepth = errors.New("decode: nesting too deep")
	// ErrUTF8 reports invalid UTF-8 in a string field that requires valid
	// text (proto3, editions with utf8_validation = VERIFY).
	ErrUTF8 = errors.New("decode: invalid UTF-8")
	// ErrRequired reports a missing proto2 required field.
	ErrRequired = errors.New("decode: required field missing")
	// ErrPath reports a projection path that names no field.
	ErrPath = errors.New("decode: no such field")
	// ErrDescriptor reports descriptors that cannot be loaded, or a
	// message name that is not among them.
	ErrDescriptor = errors.New("decode: bad descriptor")
	// ErrPlan reports a serialized plan that cannot be parsed.
	ErrPlan = errors.New("decode: bad plan")
	// ErrInput reports bad arguments, such as offsets that do not describe
	// records inside the data buffer.
	ErrInput = errors.New("decode: bad input")
	// ErrValue reports a StructTensor that Encode cannot write as messages
	// of the plan's type (a field of the wrong dtype or shape).
	ErrValue = errors.New("decode: value does not fit the message")
)

// RecordError is the error for a record that cannot be decoded. It wraps
// one of ErrMalformed, ErrWireType, ErrDepth, ErrUTF8 or ErrRequired.
type RecordError struct {
	Record int64  // index of the record in the batch (or the stream)
	Offset int64  // byte offset of the problem inside the record
	Detail string // what is wrong, naming the field path
	Err    error  // the sentinel
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%v: record %d, byte %d: %s", e.Err, e.Record, e.Offset, e.Detail)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Errors of tf.Example decoding by feature spec (ExamplePlan), where
// tf.io.parse_example raises them. Decode errors come as a *RecordError.
var (
	// ErrFeatureSpec reports a feature spec that cannot be compiled.
	ErrFeatureSpec = errors.New("decode: bad feature spec")
	// ErrFeatureMissing reports an absent fixed-length feature that has
	// no default (or an absent feature list that must be present).
	ErrFeatureMissing = errors.New("decode: feature missing")
	// ErrFeatureType reports a feature holding another list kind
	// (int64_list, float_list, bytes_list) than its spec's dtype.
	ErrFeatureType = errors.New("decode: wrong feature type")
	// ErrFeatureShape reports a feature holding a number of values that
	// its shape does not allow, or ragged partitions that do not fit.
	ErrFeatureShape = errors.New("decode: wrong feature shape")
)
