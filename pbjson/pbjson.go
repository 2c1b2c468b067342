// Package pbjson reads and writes JSON-encoded protobuf messages (the
// protojson mapping: lowerCamelCase or original field names, 64-bit
// integers as strings, enums by name, bytes as base64) as StructTensors.
//
// It adds no mapping of its own: each JSON line is parsed into a dynamic
// message of the given descriptor (protojson.Unmarshal), serialized, and
// decoded by a decode.Plan, so JSON input gives exactly the StructTensor
// the same messages give in binary form (the table in decode's package doc: repeated
// fields and maps are lists, fields with presence 0/1 lists, implicit
// scalars scalars). The way back is the plan's: decode.Plan.Messages
// walks that mapping in reverse, one dynamic message per row, written
// here with protojson.Marshal.
//
// The round trip through the binary form costs a serialization per
// record; it buys one mapping shared with the decoder and protobuf's own
// JSON rules (unknown field handling, Any, well-known types) unchanged.
package pbjson

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/decode"
	st "github.com/structtensor/structtensor-go/structtensor"
)

var (
	// ErrJSON marks a line that is not a valid JSON encoding of the
	// message.
	ErrJSON = errors.New("structtensor/pbjson: invalid JSON message")
	// ErrValue marks a StructTensor that does not fit the message (a
	// field of the wrong dtype or shape). It is decode.ErrValue: the
	// mapping back to messages is decode.Plan.Messages.
	ErrValue = decode.ErrValue
)

// Codec converts JSON-encoded messages of one type to and from
// StructTensors.
type Codec struct {
	plan *decode.Plan
	md   protoreflect.MessageDescriptor
	// Unmarshal and Marshal are the protojson options used; Marshal has
	// AllowPartial set, since a projected value may lack required fields.
	Unmarshal protojson.UnmarshalOptions
	Marshal   protojson.MarshalOptions
}

// New returns a Codec for message (a full name) of desc, projected to
// paths (struct2tensor syntax; none means every field), the arguments of
// decode.Compile.
func New(desc *decode.Descriptors, message string, paths ...string) (*Codec, error) {
	plan, err := decode.Compile(desc, message, paths...)
	if err != nil {
		return nil, err
	}
	md, err := desc.Message(message)
	if err != nil {
		return nil, err
	}
	return &Codec{plan: plan, md: md,
		Marshal: protojson.MarshalOptions{AllowPartial: true}}, nil
}

// Plan returns the decode plan the codec shares.
func (c *Codec) Plan() *decode.Plan { return c.plan }

// FromJSONLines reads one JSON-encoded message per line (blank lines
// skipped) as a rank-1 StructTensor. Errors name the line.
func (c *Codec) FromJSONLines(data []byte) (*st.StructTensor, error) {
	var records [][]byte
	opts := c.Unmarshal
	for line := 1; len(data) > 0; line++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		msg := dynamicpb.NewMessage(c.md)
		if err := opts.Unmarshal(l, msg); err != nil {
			return nil, fmt.Errorf("%w: line %d (record %d): %v", ErrJSON, line, len(records), err)
		}
		// Deterministic sorts map entries by key: a Go map iterates in
		// random order, and the same JSON must give the same StructTensor.
		b, err := proto.MarshalOptions{AllowPartial: true, Deterministic: true}.Marshal(msg)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (record %d): %v", ErrJSON, line, len(records), err)
		}
		records = append(records, b)
	}
	return c.plan.Decode(records)
}

// ToJSONLines writes each row of s (a rank-1 StructTensor shaped as the
// plan decodes) as one JSON-encoded message per line. The messages are
// the plan's (decode.Plan.Messages).
func (c *Codec) ToJSONLines(s *st.StructTensor) ([]byte, error) {
	msgs, err := c.plan.Messages(s)
	if err != nil {
		return nil, err
	}
	var out []byte
	for i, msg := range msgs {
		b, err := c.Marshal.Marshal(msg)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out = append(append(out, b...), '\n')
	}
	return out, nil
}
