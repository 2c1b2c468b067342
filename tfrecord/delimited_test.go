package tfrecord

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestDelimitedMatchesProtodelim checks the delimited framing both ways
// against google.golang.org/protobuf/encoding/protodelim, protobuf-go's
// implementation of writeDelimitedTo / parseDelimitedFrom.
func TestDelimitedMatchesProtodelim(t *testing.T) {
	var msgs []*wrapperspb.StringValue
	for _, n := range []int{0, 1, 126, 127, 200, 20000} {
		msgs = append(msgs, wrapperspb.String(strings.Repeat("x", n)))
	}
	var theirs bytes.Buffer
	var records [][]byte
	for _, m := range msgs {
		if _, err := protodelim.MarshalTo(&theirs, m); err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, b)
	}
	// Their stream, our reader.
	got, err := readAll(NewDelimitedReader(bytes.NewReader(theirs.Bytes())))
	if err != nil || !equalRecords(got, records) {
		t.Fatalf("reading protodelim's stream: %d records, %v; want %d", len(got), err, len(records))
	}
	// Our stream: the same bytes, and their reader.
	ours := encode(t, formats[1], records)
	if !bytes.Equal(ours, theirs.Bytes()) {
		t.Fatal("DelimitedWriter's bytes differ from protodelim.MarshalTo's")
	}
	br := bufio.NewReader(bytes.NewReader(ours))
	for i, want := range msgs {
		m := new(wrapperspb.StringValue)
		if err := protodelim.UnmarshalFrom(br, m); err != nil {
			t.Fatalf("protodelim reading our record %d: %v", i, err)
		}
		if !proto.Equal(m, want) {
			t.Fatalf("record %d: protodelim read %q", i, m.GetValue())
		}
	}
	if err := protodelim.UnmarshalFrom(br, new(wrapperspb.StringValue)); err != io.EOF {
		t.Fatalf("after the last record protodelim says %v, want io.EOF", err)
	}
}
