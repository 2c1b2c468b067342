package decode

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/structtensor"
)

func contiguous(records [][]byte) ([]byte, []int64) {
	var data []byte
	offsets := []int64{0}
	for _, r := range records {
		data = append(data, r...)
		offsets = append(offsets, int64(len(data)))
	}
	return data, offsets
}

// TestSerialContiguousLendsBuffers covers the serial paths (Decode and
// DecodeContiguous) in which the engine writes into Go buffers sized from
// a sample (first batch) or from the previous batch: their output must
// equal the chunked copy path's whether the buffers fit, are too small or
// too large.
func TestSerialContiguousLendsBuffers(t *testing.T) {
	d := testDescriptors(t)
	for _, ds := range benchDatasets(t, 512) {
		plan, err := Compile(d, ds.message)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, records [][]byte) {
			t.Helper()
			want, err := plan.Decode(records, WithThreads(4))
			if err != nil {
				t.Fatal(err)
			}
			data, offsets := contiguous(records)
			got, err := plan.DecodeContiguous(data, offsets, WithThreads(1))
			if err != nil {
				t.Fatalf("%s %s: %v", ds.name, what, err)
			}
			if !structtensor.Equal(want, got) {
				t.Errorf("%s %s: serial contiguous differs from the chunked decode", ds.name, what)
			}
			got, err = plan.Decode(records, WithThreads(1))
			if err != nil {
				t.Fatalf("%s %s: %v", ds.name, what, err)
			}
			if !structtensor.Equal(want, got) {
				t.Errorf("%s %s: serial decode differs from the chunked decode", ds.name, what)
			}
		}
		n := len(ds.records)
		check("first batch (sampled)", ds.records)
		check("same batch again", ds.records)
		check("smaller batch", ds.records[n/2:])
		// Output per input byte far above the last batch's: every buffer
		// overflows to engine memory.
		check("denser batch", append(append([][]byte(nil), ds.records...), ds.records...))
		// The first bad record is reported as on the chunked path.
		bad := append([][]byte(nil), ds.records...)
		bad[n/2] = []byte{0x80}
		data, offsets := contiguous(bad)
		_, e1 := plan.DecodeContiguous(data, offsets, WithThreads(1))
		_, e4 := plan.Decode(bad, WithThreads(4))
		_, es := plan.Decode(bad, WithThreads(1))
		var r1, r4, rs *RecordError
		if !errors.As(e1, &r1) || !errors.As(e4, &r4) || !errors.As(es, &rs) || *r1 != *r4 || *rs != *r4 {
			t.Errorf("%s: errors differ: serial contiguous %v, serial %v, chunked %v", ds.name, e1, es, e4)
		}
	}
	// A batch whose sample and predecessor hold one big string and few
	// values, then one with many values: every buffer but the string's is
	// too small.
	plan, err := Compile(d, "structtensor.testdata.recipe.Recipe")
	if err != nil {
		t.Fatal(err)
	}
	b := &benchBuilder{t: t, d: d}
	var sparse [][]byte
	for range 8 {
		m := b.msg("structtensor.testdata.recipe.Recipe")
		set(m, "title", strings.Repeat("x", 40<<10))
		rec, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		sparse = append(sparse, rec)
	}
	dense := benchDatasets(t, 512)[1].records
	for _, batch := range [][][]byte{sparse, dense, sparse, append(sparse, dense...)} {
		want, err := plan.Decode(batch, WithThreads(4))
		if err != nil {
			t.Fatal(err)
		}
		data, offsets := contiguous(batch)
		got, err := plan.DecodeContiguous(data, offsets, WithThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(want, got) {
			t.Errorf("recipe batch of %d records: serial contiguous differs from the chunked decode", len(batch))
		}
		if got, err = plan.Decode(batch, WithThreads(1)); err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(want, got) {
			t.Errorf("recipe batch of %d records: serial decode differs from the chunked decode", len(batch))
		}
	}
}
