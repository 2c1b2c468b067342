package starrow

import (
	"runtime"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Who owns imported memory.
//
// A StructTensor has no Release: it is an ordinary Go value, kept alive by
// the garbage collector, and so is every value taken from it (a field, a
// reshaped tensor, a flat slice from Values). A buffer it shares must
// therefore live as long as the garbage collector says, which Go memory
// does and other memory does not: Arrow buffers from a C allocator
// (mallocator, the cgo allocator) or from a C Data import are freed when
// their record's last reference is released, at a point no Go reference
// can delay. So an import shares buffers in Go memory (memory.GoAllocator,
// the checked allocator over it, arrow-go's readers by default, ToArrow's
// export of our own slices) and first copies into Go memory any array
// that holds a buffer elsewhere; the result then depends on the record in
// no way, and the caller may release it at once. ImportCData alone shares
// C memory, under the explicit release it returns.

// inGoMemory reports whether p points into memory the Go runtime manages
// (a heap object, or a global). The runtime offers no direct query, but
// runtime.AddCleanup checks exactly this and panics on memory it does not
// manage, before it registers anything; the cleanup registered for Go
// memory is removed at once. Both outcomes are cheap next to copying a
// buffer, and the probe runs once per buffer, not per value.
func inGoMemory(p unsafe.Pointer) (goMemory bool) {
	defer func() {
		if recover() != nil {
			goMemory = false
		}
	}()
	c := runtime.AddCleanup((*byte)(p), func(struct{}) {}, struct{}{})
	c.Stop()
	return true
}

// allInGoMemory reports whether every buffer of d, its children and its
// dictionary is in Go memory.
func allInGoMemory(d arrow.ArrayData) bool {
	for _, b := range d.Buffers() {
		if b != nil && b.Len() > 0 && !inGoMemory(unsafe.Pointer(&b.Bytes()[0])) {
			return false
		}
	}
	for _, c := range d.Children() {
		if !allInGoMemory(c) {
			return false
		}
	}
	// Dictionary returns a typed nil for other types, hence the type test.
	if d.DataType().ID() == arrow.DICTIONARY && !allInGoMemory(d.Dictionary()) {
		return false
	}
	return true
}

// copyToGoMemory returns a copy of d whose every buffer is a new Go slice,
// with the same offsets, lengths and types, so the conversion that follows
// shares the copy's buffers exactly as it would have shared d's.
func copyToGoMemory(d arrow.ArrayData) arrow.ArrayData {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b != nil {
			bufs[i] = memory.NewBufferBytes(append([]byte(nil), b.Bytes()...))
		}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = copyToGoMemory(c)
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		dc := copyToGoMemory(d.Dictionary())
		out.SetDictionary(dc)
		dc.Release()
	}
	return out
}

// goMemoryArray returns arr if its buffers are all in Go memory, or else a
// copy in Go memory. The caller releases the returned array.
func goMemoryArray(arr arrow.Array) arrow.Array {
	if allInGoMemory(arr.Data()) {
		arr.Retain()
		return arr
	}
	d := copyToGoMemory(arr.Data())
	defer d.Release()
	return array.MakeFromData(d)
}
