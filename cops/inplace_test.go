package cops_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"google.golang.org/protobuf/reflect/protoreflect"
)

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

// messagePlan returns a test schema's message and the plan of all its
// fields.
func messagePlan(t *testing.T, name string) (protoreflect.MessageDescriptor, *decode.Plan) {
	t.Helper()
	d := descriptors(t)
	md, err := d.Message(name)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := decode.Compile(d, name)
	if err != nil {
		t.Fatal(err)
	}
	return md, plan
}

// TestDecodeOpTensorsOutliveSession fetches the op's outputs, closes the
// session and graph (deleting the kernel and its pool), and only then
// reads the tensors: their memory, strings included, belongs to them.
func TestDecodeOpTensorsOutliveSession(t *testing.T) {
	for _, name := range []string{"structtensor.testdata.example.Example", "structtensor.testdata.recipe.Recipe"} {
		t.Run(name[strings.LastIndex(name, ".")+1:], func(t *testing.T) {
			md, plan := messagePlan(t, name)
			before := cops.LoanedBlocks()
			sess, in, sym := decodeGraph(t, plan)
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
				fetched, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym.Components(), nil)
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := sess.Close(); err != nil {
				t.Fatal(err)
			}
			sess.Graph().Close()
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

// TestDecodeOpStringsCopiedByTF lets a TensorFlow op copy the op's string
// output element by element (ReverseV2: long strings stay views of the
// op's block, with a reference of their own), releases the op's output
// and the session, and reads the copy.
func TestDecodeOpStringsCopiedByTF(t *testing.T) {
	md, plan := messagePlan(t, "structtensor.testdata.recipe.Recipe")
	before := cops.LoanedBlocks()
	sess, in, sym := decodeGraph(t, plan)
	g := sess.Graph()
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
	var fetched []*tfbridge.Tensor
	for i := range 2 { // the second batch is decoded in place
		for _, f := range fetched {
			f.Close()
		}
		records, err := copstest.Records(md, 300, uint64(i+7), copstest.Options{MaxRepeated: 5})
		if err != nil {
			t.Fatal(err)
		}
		fetched, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, []tfbridge.Output{values, rev.Output(0)}, nil)
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
