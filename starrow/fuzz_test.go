package starrow

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// FuzzFromArrowIPC feeds arbitrary bytes to the IPC reader and FromArrow:
// every input must give a value or an error, never a panic, and a value
// read must survive a WriteIPC/ReadIPC round trip.
func FuzzFromArrowIPC(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteIPC(&buf, recipes()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	// A batch with nulls, a dictionary and int32 list offsets.
	ints := build(arrow.PrimitiveTypes.Int64, func(b *array.Int64Builder) {
		b.Append(1)
		b.AppendNull()
	})
	lists := build(arrow.ListOf(arrow.BinaryTypes.String), func(b *array.ListBuilder) {
		b.Append(true)
		b.ValueBuilder().(*array.StringBuilder).Append("a")
		b.AppendNull()
	})
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: ints.DataType(), Nullable: true}, {Name: "l", Type: lists.DataType(), Nullable: true}}, nil)
	var buf2 bytes.Buffer
	w := NewIPCWriter(&buf2)
	if err := w.WriteRecord(array.NewRecordBatch(schema, []arrow.Array{ints, lists}, 2)); err != nil {
		f.Fatal(err)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(buf2.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadIPCOptions(bytes.NewReader(data), FromArrowOptions{MaxIPCBufferBytes: 1 << 24})
		if err == nil && s == nil {
			t.Fatal("nil value without an error")
		}
		if err != nil {
			return
		}
		// What was read and can be written must read back the same: a
		// value ReadIPC returns is whole and well formed.
		var buf bytes.Buffer
		if err := WriteIPC(&buf, s); err != nil {
			return
		}
		back, err := ReadIPCOptions(bytes.NewReader(buf.Bytes()), FromArrowOptions{MaxIPCBufferBytes: 1 << 24})
		if err != nil || !st.Equal(back, s) {
			t.Fatalf("ReadIPC(WriteIPC(s)) = %v, %v\nwant %v", back, err, s)
		}
	})
}
