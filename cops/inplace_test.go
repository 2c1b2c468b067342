package cops_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
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

// TestDecodeOpTensorsOutliveSession fetches the op's outputs, closes the
// session and graph (deleting the kernel and its pool), and only then
// reads the tensors: their memory, strings included, belongs to them.
// Batches of 80 KB take a block for each output; batches of 3 MB, whose
// outputs add up to more than a huge page, share one arena (where the
// system has huge pages), which goes back only with the last tensor.
func TestDecodeOpTensorsOutliveSession(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch int
	}{
		{"structtensor.testdata.example.Example", lendable},
		{"structtensor.testdata.recipe.Recipe", lendable},
		{"structtensor.testdata.example.Example", 3 << 20},
		{"structtensor.testdata.recipe.Recipe", 3 << 20},
	} {
		name := tc.name
		t.Run(fmt.Sprintf("%s/%dKB", name[strings.LastIndex(name, ".")+1:], tc.batch>>10), func(t *testing.T) {
			md, plan := messagePlan(t, name)
			before := cops.LoanedBlocks()
			arenas0 := cops.ArenaLoans()
			// Three engine threads: each writes its share of every lent
			// block, closed up in place by the engine (a share a thread's
			// records outgrow is copied back in), so the blocks are the
			// outputs on several threads as on one.
			sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: 3})
			var fetched []*tfbridge.Tensor
			var want *structtensor.StructTensor
			inPlace0, _ := cops.OutputCounts()
			for i := range 2 { // the first batch samples itself, the second is sized from the first
				records := recordsOf(t, md, 300, uint64(i+1), copstest.Options{MaxRepeated: 5}, tc.batch)
				var err error
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
			if inPlace, _ := cops.OutputCounts(); inPlace == inPlace0 {
				t.Fatal("no output was decoded in place: the lent blocks were not exercised")
			}
			arenas := cops.ArenaLoans() - arenas0
			if wantArenas := tc.batch >= 3<<20 && cops.HugePageBytes() > 0; (arenas > 0) != wantArenas {
				t.Fatalf("%d decodes lent their outputs in an arena; want some: %v (huge pages of %d bytes)", arenas, wantArenas, cops.HugePageBytes())
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
// and the session, and reads the copy: in batches of 80 KB, and of 3 MB,
// whose outputs share one arena that the copy's views alone then hold.
func TestDecodeOpStringsCopiedByTF(t *testing.T) {
	for _, batch := range []int{lendable, 3 << 20} {
		t.Run(fmt.Sprintf("%dKB", batch>>10), func(t *testing.T) { stringsCopiedByTF(t, batch) })
	}
}

func stringsCopiedByTF(t *testing.T, batch int) {
	md, plan := messagePlan(t, "structtensor.testdata.recipe.Recipe")
	before := cops.LoanedBlocks()
	sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: 3}) // as in TestDecodeOpTensorsOutliveSession
	g := sess.Graph()
	var values tfbridge.Output
	found := false
	for i, c := range sym.ComponentSpecs() {
		if c.Kind == graphst.ValuesComponent && c.DType == structtensor.String {
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
	inPlace0, _ := cops.OutputCounts()
	for i := range 2 { // the first batch samples itself, the second is sized from the first
		for _, f := range fetched {
			f.Close()
		}
		records := recordsOf(t, md, 300, uint64(i+7), copstest.Options{MaxRepeated: 5}, batch)
		var err error
		fetched, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, []tfbridge.Output{values, rev.Output(0)}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if inPlace, _ := cops.OutputCounts(); inPlace == inPlace0 {
		t.Fatal("no output was decoded in place: the lent blocks were not exercised")
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

// TestDecodeOpConcurrentRuns runs one session (so one kernel instance,
// which TensorFlow may call concurrently) from several goroutines at once,
// each with batches of its own sizes: every output equals plan.Decode of
// its own records, and every lent block comes back. The kernel's shared
// state (its plan's sizes of the last batch, the block pool) is what is
// under test; run with -race.
func TestDecodeOpConcurrentRuns(t *testing.T) {
	for _, name := range []string{"structtensor.testdata.recipe.Recipe", "structtensor.testdata.example.ExampleListWithContext"} {
		t.Run(name[strings.LastIndex(name, ".")+1:], func(t *testing.T) {
			md, plan := messagePlan(t, name)
			before := cops.LoanedBlocks()
			sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: 1})
			const workers, runs = 4, 12
			errs := make(chan error, workers)
			for w := 0; w < workers; w++ {
				go func() {
					errs <- func() error {
						for r := 0; r < runs; r++ {
							n := 1 + (w*runs+r)*37%600 // up to about 140 KB: some batches lend, some do not
							records, err := copstest.Records(md, n, uint64(w*1000+r+1), copstest.Options{MaxRepeated: 8})
							if err != nil {
								return err
							}
							want, err := plan.Decode(records)
							if err != nil {
								return err
							}
							st, err := structtensor.NewTensor(nil, records)
							if err != nil {
								return err
							}
							feed, err := tfbridge.NewTensor(st)
							if err != nil {
								return err
							}
							got, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: feed}, sym)
							feed.Close()
							if err != nil {
								return fmt.Errorf("worker %d run %d (%d records): %w", w, r, n, err)
							}
							if !structtensor.Equal(got, want) {
								return fmt.Errorf("worker %d run %d (%d records): the op's StructTensor differs from plan.Decode", w, r, n)
							}
						}
						return nil
					}()
				}()
			}
			for w := 0; w < workers; w++ {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			sess.Close()
			waitLoaned(t, before)
		})
	}
}
