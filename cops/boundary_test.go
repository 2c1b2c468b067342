package cops_test

import (
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// TestKernelExceptionsBecomeStatus makes the kernel throw (std::bad_alloc)
// while TensorFlow creates it and while it computes: each must fail the
// run with ResourceExhausted, not terminate the process, and the next run
// must work.
func TestKernelExceptionsBecomeStatus(t *testing.T) {
	md, plan := messagePlan(t, "structtensor.testdata.recipe.Recipe")
	records, err := copstest.Records(md, 20, 3, copstest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		where int
	}{{"creating the kernel", 1}, {"computing", 2}} {
		t.Run(c.name, func(t *testing.T) {
			sess, in, sym := decodeGraph(t, plan)
			feed := map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}
			cops.InjectFault(c.where)
			defer cops.InjectFault(0)
			_, err := graphst.Run(t.Context(), sess, feed, sym)
			if err == nil {
				t.Fatal("the run succeeded despite the exception")
			}
			if tfbridge.CodeOf(err) != tfbridge.CodeResourceExhausted || !strings.Contains(err.Error(), "out of memory") {
				t.Errorf("err = %v (code %v), want ResourceExhausted, out of memory", err, tfbridge.CodeOf(err))
			}
			cops.InjectFault(0)
			if c.where == 1 {
				// TensorFlow keeps the failed kernel creation's status for
				// the node: a new session creates the kernel afresh.
				sess, in, sym = decodeGraph(t, plan)
				feed = map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}
			}
			st, err := graphst.Run(t.Context(), sess, feed, sym)
			if err != nil {
				t.Fatalf("the run after the fault: %v", err)
			}
			if st.NumRows() != len(records) {
				t.Fatalf("%d rows, want %d", st.NumRows(), len(records))
			}
		})
	}
}
