package beam

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"golang.org/x/sys/unix"
)

// placement says where the process running it may run: the CPUs of all
// its threads together, and GOMAXPROCS.
func placement([]byte) (string, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return "", err
	}
	var cpus []int
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			continue // the thread ended
		}
		for c := range 1024 {
			if set.IsSet(c) && !slices.Contains(cpus, c) {
				cpus = append(cpus, c)
			}
		}
	}
	slices.Sort(cpus)
	return fmt.Sprintf("cpus %v, GOMAXPROCS %d", cpus, runtime.GOMAXPROCS(0)), nil
}

func init() { register.Function1x2[[]byte, string, error](placement) }

// TestWorkerPinnedToCPU: with CPUsEnv, a worker process runs all its
// threads on its CPU of the list, and Go code on one thread.
func TestWorkerPinnedToCPU(t *testing.T) {
	last := 0
	if runtime.NumCPU() > 1 {
		last = 1
	}
	for _, mode := range []runMode{process, process2} {
		t.Run(string(mode), func(t *testing.T) {
			p, s := beamsdk.NewPipelineWithRoot()
			got := beamsdk.ParDo(s, placement, beamsdk.Impulse(s))
			env := map[string]string{CPUsEnv: "0"}
			want := []any{"cpus [0], GOMAXPROCS 1"}
			if mode == process2 {
				// The bundle runs in either of the two harness processes
				// (not in the relaying one, which is not pinned).
				env[CPUsEnv] = fmt.Sprintf("%d,%d", last, last)
				want = []any{fmt.Sprintf("cpus [%d], GOMAXPROCS 1", last)}
			}
			passert.Equals(s, got, want...)
			if err := mode.run(t, p, runOptions{env: env}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
