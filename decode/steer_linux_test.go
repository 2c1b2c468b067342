package decode

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/native"
)

// TestHelpersAreSteeredAndRestored decodes batches on two threads: the
// engine keeps the helper it wakes for each off the calling thread's CPU
// until the helper runs (native.SteeredHelpers counts it), and every
// thread of the process may then run on every CPU it could before, the
// helpers included, also one woken for a job its caller had done by the
// time it ran.
func TestHelpersAreSteeredAndRestored(t *testing.T) {
	allowed := cpusAllowed(t, "/proc/self/status")
	if runtime.GOMAXPROCS(0) < 2 || !strings.ContainsAny(allowed, ",-") {
		t.Skipf("GOMAXPROCS %d, CPUs %q: the engine starts no helper, or none can be kept off a CPU", runtime.GOMAXPROCS(0), allowed)
	}
	d := testDescriptors(t)
	const message = "structtensor.testdata.recipe.Recipe"
	md, err := d.Message(message)
	if err != nil {
		t.Fatal(err)
	}
	records, _ := threadedBatches(t, md, rand.New(rand.NewPCG(5, 6)))
	data, offsets := contiguous(records)
	plan, err := Compile(d, message)
	if err != nil {
		t.Fatal(err)
	}
	// Small batches too (over 64 KiB, lent buffers, two chunks), which
	// the calling thread may finish before the helper wakes: the helper
	// then finds no job and sleeps on.
	small := 1
	for offsets[small] < 65<<10 {
		small++
	}
	before := native.SteeredHelpers()
	for i := range 200 {
		n := small
		if i%10 == 0 && i < 150 {
			n = len(offsets) - 1
		}
		if _, err := plan.DecodeContiguous(data, offsets[:n+1], DecodeOptions{Threads: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if native.SteeredHelpers() == before {
		t.Error("200 decodes on two threads steered no helper")
	}
	// A helper woken but not yet run is still steered: wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		tasks, err := filepath.Glob("/proc/self/task/*/status")
		if err != nil {
			t.Fatal(err)
		}
		var narrowed []string
		for _, task := range tasks {
			if cpus := cpusAllowed(t, task); cpus != "" && cpus != allowed {
				narrowed = append(narrowed, task+": "+cpus)
			}
		}
		if len(narrowed) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads still kept off a CPU 10 s after the decodes (the process may run on %s): %v", allowed, narrowed)
		}
	}
}

// cpusAllowed returns the Cpus_allowed_list of the task status file at
// path, or "" when the task has exited.
func cpusAllowed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) || strings.Contains(err.Error(), "no such process") {
			return ""
		}
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s has no Cpus_allowed_list", path)
	return ""
}
