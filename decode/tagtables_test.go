package decode

import (
	"math/rand/v2"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
)

// TestNodesShareTagTables checks which nodes of a plan share a field
// table (native: nodes with equal fields, wherever they are in the plan,
// one table) and that a plan whose nodes share tables decodes as one
// whose nodes do not: sparse nested records' thirty sections and their
// repeated items are one message type.
func TestNodesShareTagTables(t *testing.T) {
	d := testDescriptors(t)
	const message = "structtensor.testdata.wide.SparseNested"
	md, err := d.Message(message)
	if err != nil {
		t.Fatal(err)
	}
	records := recordsOf(t, md, rand.New(rand.NewPCG(3, 4)), 256<<10)
	data, offsets := contiguous(records)

	full, err := Compile(d, message)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	// The root, and one table for the 31 nodes of SparseSection.
	if got := full.native.NumTagTables(); got != 2 {
		t.Errorf("full plan: %d tag tables, want 2 (the root's, the sections')", got)
	}
	whole, err := full.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := sameValue(refRecords(t, md, records), structtensor.ToValue(whole)); !ok {
		t.Fatalf("full plan: differs from the reference: %s", why)
	}

	// s1 and s3 projected alike share a table; s2, whole, has another.
	projected, err := Compile(d, message, "s1.v1", "s2", "s3.v1")
	if err != nil {
		t.Fatal(err)
	}
	defer projected.Close()
	if got := projected.native.NumTagTables(); got != 3 {
		t.Errorf("projected plan: %d tag tables, want 3 (the root's, s1's and s3's, s2's)", got)
	}
	for _, threads := range []int{1, 2} {
		got, err := projected.DecodeContiguous(data, offsets, DecodeOptions{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range [][]string{{"s1", "v1"}, {"s2"}, {"s3", "v1"}} {
			p, err := got.FieldValue(path...)
			if err != nil {
				t.Fatal(err)
			}
			w, err := whole.FieldValue(path...)
			if err != nil {
				t.Fatal(err)
			}
			if !structtensor.Equal(p, w) {
				t.Errorf("projected plan on %d threads: %v differs from the full plan's", threads, path)
			}
		}
	}
}
