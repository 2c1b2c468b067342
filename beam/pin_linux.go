package beam

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinToCPU makes every thread of this process, those running now and
// those started later, run on cpu only. Affinity is a property of each
// thread, and a new thread inherits its creator's: so each thread listed
// in /proc/self/task is pinned, and the list is read again until it shows
// no thread not yet pinned (one started meanwhile by a thread not yet
// pinned).
func pinToCPU(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	pinned := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("pinning to CPU %d: %w", cpu, err)
		}
		more := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || pinned[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pinning thread %d to CPU %d: %w", tid, cpu, err)
			}
			pinned[tid], more = true, true
		}
		if !more {
			return nil
		}
	}
}
