package starrow

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// TestExportCDataOutlivesProducer exports a value through the C Data
// Interface, drops every Go reference to it and collects garbage (with
// fresh allocations over any memory freed), and only then imports it:
// the export keeps the buffers alive and pinned until the consumer's
// release, so the value reads back intact.
func TestExportCDataOutlivesProducer(t *testing.T) {
	before := exportsOut.Load()
	carr := new(cdata.CArrowArray)
	cschema := new(cdata.CArrowSchema)
	func() {
		if err := ExportCData(recipes(), carr, cschema); err != nil {
			t.Fatal(err)
		}
	}()
	for range 3 {
		runtime.GC()
		var keep [][]byte
		for i := range 512 {
			keep = append(keep, bytes.Repeat([]byte{0xAA}, 64+i*8))
		}
		runtime.KeepAlive(keep)
	}
	got, release, err := ImportCData(carr, cschema, FromArrowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := recipes(); !st.Equal(got, want) {
		t.Errorf("after the producer was collected the export reads %v, want %v", got, want)
	}
	if exportsOut.Load() != before+1 {
		t.Fatalf("%d exports outstanding, want 1", exportsOut.Load()-before)
	}
	release()
	// The consumer's release ran ours: the buffers are unpinned.
	if n := exportsOut.Load() - before; n != 0 {
		t.Errorf("%d exports outstanding after the consumer's release", n)
	}
}
