package native_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// bigBatch returns the recipes test records repeated to about mb MiB and
// the plan that decodes them.
func bigBatch(t *testing.T, mb int) (*decode.Plan, [][]byte) {
	t.Helper()
	raw, err := os.ReadFile("../testdata/proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	desc, err := decode.LoadDescriptorSet(raw)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := decode.Compile(desc, "structtensor.testdata.recipe.Recipe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../testdata/decode/recipes.tfrecord")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	batch, err := tfrecord.NewReader(f).NextBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	var records [][]byte
	for size := 0; size < mb<<20; {
		for _, r := range batch.Records() {
			records = append(records, r)
			size += len(r)
		}
	}
	return plan, records
}

// TestThreadsBoundedByGOMAXPROCS runs many concurrent decodes that each
// ask for many threads: the engine's threads, all decodes together, stay
// within GOMAXPROCS (the calling goroutines count as one each), and every
// decode equals the serial one.
func TestThreadsBoundedByGOMAXPROCS(t *testing.T) {
	plan, records := bigBatch(t, 3)
	want, err := plan.Decode(records, decode.DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{2, 3} {
		old := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					st, err := plan.Decode(records, decode.DecodeOptions{Threads: 16})
					if err != nil {
						errs <- err
						return
					}
					if n := native.WorkerThreads(); n > procs-1 {
						errs <- errors.New("too many engine threads")
						t.Errorf("GOMAXPROCS %d: %d engine threads", procs, n)
						return
					}
					if st.NumRows() != want.NumRows() {
						errs <- errors.New("row count differs")
						return
					}
				}
			}()
		}
		wg.Wait()
		runtime.GOMAXPROCS(old)
		close(errs)
		for err := range errs {
			t.Fatalf("GOMAXPROCS %d: %v", procs, err)
		}
	}
	if n := native.WorkerThreads(); n == 0 {
		t.Errorf("no engine threads ran: the multi-threaded path was not taken")
	}
}

// TestPlanClose frees a plan's pooled buffers: decodes after Close fail,
// results from before it stay valid.
func TestPlanClose(t *testing.T) {
	plan, records := bigBatch(t, 2)
	st, err := plan.Decode(records, decode.DecodeOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	plan.Close()
	if _, err := plan.Decode(records[:1]); !errors.Is(err, decode.ErrInput) {
		t.Fatalf("decode after Close: err = %v, want ErrInput", err)
	}
	if _, err := plan.DecodeContext(context.Background(), records[:1]); err == nil {
		t.Fatal("decode after Close succeeded")
	}
	plan.Close() // twice is fine
	runtime.GC()
	if st.NumRows() != len(records) {
		t.Fatalf("result from before Close: %d rows", st.NumRows())
	}
}

// TestThreadStartFailureFallsBack decodes on several threads in a process
// whose engine cannot start a single pool thread (a child process of this
// test, so that no thread of an earlier decode is there to help): every
// decode runs on the calling thread alone and equals the serial decode.
func TestThreadStartFailureFallsBack(t *testing.T) {
	if os.Getenv("STRUCTTENSOR_TEST_NO_THREADS") == "1" {
		native.FailThreadStarts(true)
		defer native.FailThreadStarts(false)
		runtime.GOMAXPROCS(4)
		plan, records := bigBatch(t, 3)
		got, err := plan.Decode(records, decode.DecodeOptions{Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		if n := native.WorkerThreads(); n != 0 {
			t.Fatalf("%d engine threads started with every start failing", n)
		}
		native.FailThreadStarts(false)
		want, err := plan.Decode(records, decode.DecodeOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(got, want) {
			t.Fatal("the decode without threads differs from the serial decode")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThreadStartFailureFallsBack$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STRUCTTENSOR_TEST_NO_THREADS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child decode failed: %v\n%s", err, out)
	}
}

// TestExampleThreadsBoundedByGOMAXPROCS decodes tf.Examples by feature
// asking for four threads in a process whose GOMAXPROCS is 1 and that
// decoded nothing before (a child process of this test): the feature
// decoder, too, keeps its threads within GOMAXPROCS, so none start, and
// its decodes equal the serial one. (Until the feature decoder's Go side
// passed GOMAXPROCS on, such a process started a thread per CPU.)
func TestExampleThreadsBoundedByGOMAXPROCS(t *testing.T) {
	if os.Getenv("STRUCTTENSOR_TEST_ONE_PROC") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExampleThreadsBoundedByGOMAXPROCS$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "STRUCTTENSOR_TEST_ONE_PROC=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the child decode failed: %v\n%s", err, out)
		}
		return
	}
	runtime.GOMAXPROCS(1)
	spec := &decode.ExampleSpec{Features: map[string]decode.Feature{
		"ids":  {Kind: decode.VarLen, DType: structtensor.Int64},
		"name": {Kind: decode.VarLen, DType: structtensor.String},
	}}
	plan, err := decode.CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	offsets := []int64{0}
	for i := 0; len(data) < 7<<20; i++ {
		ids := make([]int64, 50+i%100)
		for j := range ids {
			ids[j] = int64(i*j) << (j % 40)
		}
		ex := &tfexample.Example{Features: &tfexample.Features{Feature: map[string]*tfexample.Feature{
			"ids":  {Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: ids}}},
			"name": {Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: [][]byte{[]byte("record"), {byte(i)}}}}},
		}}}
		b, err := proto.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
		offsets = append(offsets, int64(len(data)))
	}
	want, err := plan.DecodeContiguous(data, offsets, decode.DecodeOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Twice: the second decode goes into one block laid out by the first.
	for i := range 2 {
		got, err := plan.DecodeContiguous(data, offsets, decode.DecodeOptions{Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		if n := native.WorkerThreads(); n != 0 {
			t.Fatalf("decode %d: %d engine threads under GOMAXPROCS 1", i, n)
		}
		if !structtensor.Equal(got, want) {
			t.Fatalf("decode %d on four threads asked for differs from the serial decode", i)
		}
	}
}
