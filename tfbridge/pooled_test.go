package tfbridge

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// largestLeaf returns the numeric tensor of v with the most elements.
func largestLeaf(v structtensor.Value) *structtensor.Tensor {
	var best *structtensor.Tensor
	consider := func(t *structtensor.Tensor) {
		if t.DType() != structtensor.String && (best == nil || t.Len() > best.Len()) {
			best = t
		}
	}
	switch x := v.(type) {
	case *structtensor.Tensor:
		consider(x)
	case *structtensor.Ragged:
		consider(x.Values())
	case *structtensor.StructTensor:
		for _, f := range x.Fields() {
			if t := largestLeaf(f.Value); t != nil {
				consider(t)
			}
		}
	}
	return best
}

// TestPooledBlockLentToTensorFlow lends TensorFlow a column of a decode's
// output (the Go path writes it into a block that goes back to a pool once
// nothing refers to it), feeds it to an Identity that forwards the buffer,
// drops every Go reference to the output, and decodes more batches, which
// take blocks from the pool (poisoned first by the test hook): the fetched
// tensor must keep the values, because the loan's pin keeps the block out
// of the pool. Once TensorFlow releases the loan the block may come back.
func TestPooledBlockLentToTensorFlow(t *testing.T) {
	testhook.DropPooledBlocks() // room under the pool's bound, whatever ran before
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	d := copstest.Descriptors(t)
	const message = "structtensor.testdata.recipe.Recipe"
	md, err := d.Message(message)
	if err != nil {
		t.Fatal(err)
	}
	records, err := copstest.Records(md, 4000, 7, copstest.Options{MaxRepeated: 8})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := decode.Compile(d, message)
	if err != nil {
		t.Fatal(err)
	}
	decodeOnce := func(recs [][]byte) *structtensor.StructTensor {
		st, err := plan.Decode(recs, decode.DecodeOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	decodeOnce(records) // sizes the buffers lent from now on
	leaf := largestLeaf(decodeOnce(records))
	if leaf == nil || leaf.Len()*leaf.DType().Size() < borrowMin {
		t.Fatalf("no numeric column of %d bytes or more to lend", borrowMin)
	}
	nbytes := leaf.Len() * leaf.DType().Size()
	want := append([]byte(nil), goBytes(leaf.Data(), nbytes)...)
	dt, err := DTypeOf(leaf.DType())
	if err != nil {
		t.Fatal(err)
	}
	lent := loans.Load()
	in, err := NewTensor(leaf)
	if err != nil {
		t.Fatal(err)
	}
	if loans.Load() != lent+1 {
		t.Fatal("the column was not lent to TensorFlow")
	}
	leaf = nil

	g := NewGraph()
	defer g.Close()
	x := placeholder(t, g, "x", dt)
	ident := mustOp(t, g, OpSpec{Type: "Identity", Input: []Input{x}}).Output(0)
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.Run(map[Output]*Tensor{x: in}, []Output{ident}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Close()

	reversed := make([][]byte, len(records))
	for i, r := range records {
		reversed[len(records)-1-i] = r
	}
	reused := testhook.LentFromPool.Load()
	// At least 4 rounds; more (up to 20) until a block came back:
	// finalizers run when their goroutine gets a CPU.
	for i := 0; i < 4 || i < 20 && testhook.LentFromPool.Load() == reused; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // for the finalizers
		decodeOnce(reversed)
	}
	if testhook.LentFromPool.Load() == reused {
		t.Error("no dropped output's block was lent again: the test did not reach the pool")
	}
	got, err := out[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	if got.Len()*got.DType().Size() != nbytes || !bytes.Equal(goBytes(got.Data(), nbytes), want) {
		t.Error("the tensor TensorFlow was lent changed after its Go owner was dropped")
	}
	out[0].Close()
}
