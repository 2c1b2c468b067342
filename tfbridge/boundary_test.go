package tfbridge

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/structtensor"
)

// viewStrings returns n strings of 100 bytes or more (longer than a
// TF_TString holds inline), each naming its index.
func viewStrings(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%08d:%s", i, bytes.Repeat([]byte{byte('a' + i%26)}, 92+i%7))
	}
	return s
}

// scribble allocates and fills memory of about the size of freed Go
// buffers, so that a buffer TensorFlow still read after it was unpinned
// and collected would show other bytes.
func scribble() {
	var keep [][]byte
	for i := range 256 {
		keep = append(keep, bytes.Repeat([]byte{0xAA}, 96<<10+i<<10))
	}
	runtime.KeepAlive(keep)
}

// TestStringViewsOutliveFeed lends a string tensor (views into the Go
// buffer) to ops that copy views rather than bytes (Gather, ConcatV2,
// Identity) and to a hash table that keeps them, closes the feed, drops
// the Go value and collects it, then reads the outputs and looks the
// table up: every string must be intact, because each copied view holds a
// reference on the buffer's owner. Once every tensor and the session are
// gone, the buffer is unpinned.
func TestStringViewsOutliveFeed(t *testing.T) {
	before := loans.Load()
	want := viewStrings(2000) // about 200 KiB: lent
	g := NewGraph()
	defer g.Close()
	x := placeholder(t, g, "x", String)
	idx := placeholder(t, g, "idx", Int32)
	axis := placeholder(t, g, "axis", Int32)
	query := placeholder(t, g, "query", String)
	gather := mustOp(t, g, OpSpec{Type: "Gather", Input: []Input{x, idx}}).Output(0)
	concat := mustOp(t, g, OpSpec{Type: "ConcatV2", Input: []Input{OutputList{x, x}, axis}}).Output(0)
	ident := mustOp(t, g, OpSpec{Type: "Identity", Input: []Input{x}}).Output(0)
	// A mutable hash table copies its keys and values into its map (a
	// HashTable would keep the fed tensors themselves).
	vals := placeholder(t, g, "vals", Int64)
	table := mustOp(t, g, OpSpec{Type: "MutableHashTableV2", Attrs: map[string]any{"key_dtype": String, "value_dtype": Int64}}).Output(0)
	load := mustOp(t, g, OpSpec{Type: "LookupTableInsertV2", Input: []Input{table, x, vals}})
	export := mustOp(t, g, OpSpec{Type: "LookupTableExportV2", Input: []Input{table}, Attrs: map[string]any{"Tkeys": String, "Tvalues": Int64}})
	def := mustOp(t, g, OpSpec{Type: "Const", Attrs: map[string]any{"dtype": Int64,
		"value": mustTensor(t, nil, []int64{-1})}}).Output(0)
	defScalar := mustOp(t, g, OpSpec{Type: "Squeeze", Input: []Input{def}}).Output(0)
	find := mustOp(t, g, OpSpec{Type: "LookupTableFindV2", Input: []Input{table, query, defScalar}}).Output(0)
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}

	indices := []int32{5, 1999, 0, 5, 1234}
	run := func(fetches []Output, targets []*Operation) []*Tensor {
		lent := loans.Load()
		in, err := NewTensor(mustTensor(t, nil, viewStrings(2000)))
		if err != nil {
			t.Fatal(err)
		}
		if loans.Load() != lent+1 {
			t.Fatalf("the string tensor was not lent")
		}
		feeds := map[Output]*Tensor{x: in}
		positions := make([]int64, 2000)
		for i := range positions {
			positions[i] = int64(i)
		}
		for o, v := range map[Output]any{idx: indices, axis: []int32{0}, vals: positions} {
			tt, err := NewTensor(mustTensor(t, nil, v))
			if err != nil {
				t.Fatal(err)
			}
			if o == axis {
				scalar, _ := mustTensor(t, nil, []int32{0}).Reshape(structtensor.Shape{})
				tt, _ = NewTensor(scalar)
			}
			feeds[o] = tt
		}
		out, err := s.Run(feeds, fetches, targets)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range feeds {
			f.Close()
		}
		// The fed tensor and its Go value are gone: only the copied
		// views (in the outputs and the table) reference the buffer.
		for range 3 {
			runtime.GC()
			scribble()
		}
		return out
	}
	// Identity forwards the fed tensor itself (its TF_TString array) into
	// the output: a run of its own, so that the other outputs hold copied
	// views only.
	out := run([]Output{gather, concat}, []*Operation{load})
	out = append(out, run([]Output{ident}, nil)...)
	check := func(name string, tt *Tensor, want []string) {
		t.Helper()
		v, err := tt.Value()
		if err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(v, mustTensor(t, nil, want)) {
			for i := 0; i < v.Len() && i < len(want); i++ {
				if got := string(v.StringAt(i)); got != want[i] {
					t.Fatalf("%s: element %d = %.20q..., want %.20q...", name, i, got, want[i])
				}
			}
			t.Fatalf("%s: differs from the fed strings", name)
		}
	}
	var gathered []string
	for _, i := range indices {
		gathered = append(gathered, want[i])
	}
	check("Gather", out[0], gathered)
	check("ConcatV2", out[1], append(append([]string(nil), want...), want...))
	check("Identity", out[2], want)
	out[2].Close()

	q, err := NewTensor(mustTensor(t, nil, []string{want[7][:12], want[1500], want[3]}))
	if err != nil {
		t.Fatal(err)
	}
	found, err := s.Run(map[Output]*Tensor{query: q}, []Output{find, export.Output(0), export.Output(1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	positions, err := found[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	if got := positions.Int64s(); len(got) != 3 || got[0] != -1 || got[1] != 1500 || got[2] != 3 {
		t.Errorf("LookupTableFindV2: positions %v, want [-1 1500 3]", got)
	}
	keys, err := found[1].Value()
	if err != nil {
		t.Fatal(err)
	}
	at, err := found[2].Value()
	if err != nil {
		t.Fatal(err)
	}
	if keys.Len() != len(want) {
		t.Fatalf("LookupTableExportV2: %d keys, want %d", keys.Len(), len(want))
	}
	for i, p := range at.Int64s() {
		if got := string(keys.StringAt(i)); got != want[p] {
			t.Fatalf("LookupTableExportV2: key of %d = %.20q..., want %.20q...", p, got, want[p])
		}
	}

	for _, tt := range append(append(out, found...), q) {
		tt.Close()
	}
	if loans.Load() == before {
		t.Errorf("the buffer was unpinned while the table still holds views of it")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && loans.Load() != before; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := loans.Load() - before; n != 0 {
		t.Errorf("%d buffers still lent after every tensor, the table and the session are gone", n)
	}
}
