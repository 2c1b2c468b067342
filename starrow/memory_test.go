package starrow

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// poisonAllocator hands out C memory (malloc) and overwrites every buffer
// with 0xA5 before freeing it, so a value still reading a freed buffer
// reads poison instead of the values that happened to stay there.
type poisonAllocator struct{ *mallocator.Mallocator }

func (a poisonAllocator) Free(b []byte) {
	for i := range b {
		b[i] = 0xA5
	}
	a.Mallocator.Free(b)
}

func (a poisonAllocator) Reallocate(size int, b []byte) []byte {
	return a.Mallocator.Reallocate(size, b)
}

// cMemoryRecord builds, in C memory, a record with an int64 column, a
// string column and a list<int32> column.
func cMemoryRecord(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{7, 8, 9}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"pie", "", "stew"}, nil)
	lb := b.Field(2).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Int32Builder)
	lb.Append(true)
	vb.AppendValues([]int32{1, 2}, nil)
	lb.Append(true)
	lb.Append(true)
	vb.AppendValues([]int32{3}, nil)
	return b.NewRecordBatch()
}

// TestImportOutlivesCMemory releases a record in C memory right after
// importing it, checks that every byte went back to the allocator (so the
// result holds nothing of it), and that the result still reads its values.
func TestImportOutlivesCMemory(t *testing.T) {
	mem := memory.NewCheckedAllocator(poisonAllocator{mallocator.NewMallocator()})
	rec := cMemoryRecord(t, mem)
	goRec := cMemoryRecord(t, memory.NewGoAllocator())
	want := must(FromArrow(goRec))
	s, err := FromArrow(rec)
	if err != nil {
		t.Fatal(err)
	}
	arr := must(FromArrowArray(rec.Column(0)))
	rec.Release()
	mem.AssertSize(t, 0)
	if !st.Equal(s, want) {
		t.Errorf("after the record's release:\n%v\nwant\n%v", s, want)
	}
	if v, _ := st.Values[int64](arr.(*st.Tensor)); len(v) != 3 || v[0] != 7 || v[2] != 9 {
		t.Errorf("FromArrowArray after the record's release: %v", v)
	}
}

// TestImportSharesGoMemoryOnly checks the probe both ways: Go buffers are
// shared, C buffers are not.
func TestImportSharesGoMemoryOnly(t *testing.T) {
	goBuf := make([]int64, 4)
	if !inGoMemory(unsafe.Pointer(&goBuf[0])) {
		t.Error("a Go slice is not in Go memory")
	}
	c := mallocator.NewMallocator()
	cBuf := c.Allocate(64)
	defer c.Free(cBuf)
	if inGoMemory(unsafe.Pointer(&cBuf[0])) {
		t.Error("malloc'd memory is in Go memory")
	}
	rec := cMemoryRecord(t, c)
	defer rec.Release()
	s := must(FromArrow(rec))
	id, _ := s.Field("id")
	if addr(rec.Column(0).Data().Buffers()[1].Bytes()) == uintptr(unsafe.Pointer(&id.(*st.Tensor).Int64s()[0])) {
		t.Error("an int64 column in C memory was shared")
	}
}
