package cops_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// batchSizes drive one kernel through both of its output paths: the
// first batch has no predecessor to size lent buffers from (engine memory,
// copied out), the next ones decode in place, a much larger one outgrows
// what was lent (copied out again), and the one after it is in place at
// its new size.
var batchSizes = []int{150, 150, 20, 1500, 1500}

// waitLoaned waits for the kernel's loaned blocks to come back to want:
// tensors release their blocks from Go cleanups, which run after GC.
func waitLoaned(t *testing.T, want int64) {
	t.Helper()
	for i := 0; ; i++ {
		runtime.GC()
		got := cops.LoanedBlocks()
		if got == want {
			return
		}
		if i == 100 {
			t.Fatalf("%d output blocks on loan, want %d", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDecodeOpInPlaceAndOutgrow checks the op against plan.Decode on every
// test schema (the bench datasets' four among them) through both output
// paths, on one engine thread and on two.
func TestDecodeOpInPlaceAndOutgrow(t *testing.T) {
	d := descriptors(t)
	for _, name := range testMessages {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", name[strings.LastIndex(name, ".")+1:], threads), func(t *testing.T) {
				md, err := d.Message(name)
				if err != nil {
					t.Fatal(err)
				}
				plan, err := decode.Compile(d, name)
				if err != nil {
					t.Fatal(err)
				}
				before := cops.LoanedBlocks()
				sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: threads})
				inPlace0 := cops.InPlaceOutputs()
				for i, n := range batchSizes {
					records, err := copstest.Records(md, n, uint64(100*i+n), copstest.Options{MaxRepeated: 5})
					if err != nil {
						t.Fatal(err)
					}
					want, err := plan.Decode(records)
					if err != nil {
						t.Fatal(err)
					}
					got, err := sess.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
					if err != nil {
						t.Fatalf("batch %d (%d records): %v", i, n, err)
					}
					if !structtensor.Equal(got, want) {
						t.Fatalf("batch %d (%d records): the op's StructTensor differs from plan.Decode\n got %v\nwant %v", i, n, got, want)
					}
				}
				if cops.InPlaceOutputs() == inPlace0 {
					t.Error("no output was produced in place")
				}
				sess.Close()
				waitLoaned(t, before)
			})
		}
	}
}

// TestDecodeOpTensorsOutliveSession fetches the op's outputs, closes the
// session and graph (deleting the kernel and its pool), and only then
// reads the tensors: their memory, strings included, belongs to them.
func TestDecodeOpTensorsOutliveSession(t *testing.T) {
	d := descriptors(t)
	for _, name := range []string{"structtensor.testdata.example.Example", "structtensor.testdata.recipe.Recipe"} {
		t.Run(name[strings.LastIndex(name, ".")+1:], func(t *testing.T) {
			md, err := d.Message(name)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := decode.Compile(d, name)
			if err != nil {
				t.Fatal(err)
			}
			before := cops.LoanedBlocks()
			g := tfbridge.NewGraph()
			ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records", Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
			if err != nil {
				t.Fatal(err)
			}
			sym, err := cops.DecodeGraph(g, ph.Output(0), plan)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := tfbridge.NewSession(g, nil)
			if err != nil {
				t.Fatal(err)
			}
			var fetched []*tfbridge.Tensor
			var want *structtensor.StructTensor
			for i := range 2 { // the second batch is decoded in place
				records, err := copstest.Records(md, 300, uint64(i+1), copstest.Options{MaxRepeated: 5})
				if err != nil {
					t.Fatal(err)
				}
				if want, err = plan.Decode(records); err != nil {
					t.Fatal(err)
				}
				for _, f := range fetched {
					f.Close()
				}
				fetched, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, records)}, sym.Components(), nil)
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := sess.Close(); err != nil {
				t.Fatal(err)
			}
			g.Close()
			runtime.GC()
			got, err := sym.Value(fetched)
			if err != nil {
				t.Fatal(err)
			}
			if !structtensor.Equal(got, want) {
				t.Errorf("tensors read after the session closed differ from plan.Decode\n got %v\nwant %v", got, want)
			}
			for _, f := range fetched {
				f.Close()
			}
			waitLoaned(t, before)
		})
	}
}

// TestDecodeOpBadRecordLeaksNothing fails a run whose buffers were lent
// (the kernel decoded a batch before): every block comes back at once.
func TestDecodeOpBadRecordLeaksNothing(t *testing.T) {
	d := descriptors(t)
	name := "structtensor.testdata.recipe.Recipe"
	md, _ := d.Message(name)
	plan, err := decode.Compile(d, name)
	if err != nil {
		t.Fatal(err)
	}
	records, err := copstest.Records(md, 200, 3, copstest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: 2})
	if _, err := sess.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym); err != nil {
		t.Fatal(err)
	}
	waitLoaned(t, 0)
	records[150] = []byte{0x12, 0x05, 0x0a, 0x01} // ingredients: a length past the end
	_, err = sess.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
	if err == nil {
		t.Fatal("the op accepted the bad record")
	}
	if tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument {
		t.Errorf("code %v, want InvalidArgument: %v", tfbridge.CodeOf(err), err)
	}
	for _, want := range []string{"record 150,", "byte offset", "ingredients"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if n := cops.LoanedBlocks(); n != 0 {
		t.Errorf("%d output blocks on loan after the failed run", n)
	}
}

// TestDecodeOpStringsCopiedByTF lets a TensorFlow op copy the op's string
// output element by element (ReverseV2: long strings stay views of the
// op's block, with a reference of their own), releases the op's output
// and the session, and reads the copy.
func TestDecodeOpStringsCopiedByTF(t *testing.T) {
	d := descriptors(t)
	name := "structtensor.testdata.recipe.Recipe"
	md, _ := d.Message(name)
	plan, err := decode.Compile(d, name)
	if err != nil {
		t.Fatal(err)
	}
	before := cops.LoanedBlocks()
	g := tfbridge.NewGraph()
	defer g.Close()
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records", Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		t.Fatal(err)
	}
	sym, err := cops.DecodeGraph(g, ph.Output(0), plan)
	if err != nil {
		t.Fatal(err)
	}
	var values tfbridge.Output
	found := false
	for i, c := range sym.ComponentSpecs() {
		if c.Kind == tfbridge.Values && c.DType == structtensor.String {
			values, found = sym.Components()[i], true
			break
		}
	}
	if !found {
		t.Fatal("the recipe plan has no string column")
	}
	axis, err := structtensor.NewTensor(structtensor.Shape{1}, []int32{0})
	if err != nil {
		t.Fatal(err)
	}
	ax, err := g.AddOperation(tfbridge.OpSpec{Type: "Const", Name: "axis", Attrs: map[string]any{"dtype": structtensor.Int32, "value": axis}})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := g.AddOperation(tfbridge.OpSpec{Type: "ReverseV2", Name: "reversed", Input: []tfbridge.Input{values, ax.Output(0)}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := tfbridge.NewSession(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fetched []*tfbridge.Tensor
	for i := range 2 { // the second batch is decoded in place
		for _, f := range fetched {
			f.Close()
		}
		records, err := copstest.Records(md, 300, uint64(i+7), copstest.Options{MaxRepeated: 5})
		if err != nil {
			t.Fatal(err)
		}
		fetched, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, records)}, []tfbridge.Output{values, rev.Output(0)}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	orig, err := fetched[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	fetched[0].Close()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	got, err := fetched[1].Value()
	if err != nil {
		t.Fatal(err)
	}
	fetched[1].Close()
	n := orig.Len()
	if got.Len() != n || n == 0 {
		t.Fatalf("reversed has %d strings, the op's output %d", got.Len(), n)
	}
	long := 0
	for i := range n {
		if string(got.StringAt(i)) != string(orig.StringAt(n-1-i)) {
			t.Fatalf("reversed[%d] = %q, want %q", i, got.StringAt(i), orig.StringAt(n-1-i))
		}
		if len(orig.StringAt(i)) > 22 {
			long++
		}
	}
	if long == 0 {
		t.Error("no string longer than 22 bytes: the views were not exercised")
	}
	waitLoaned(t, before)
}
