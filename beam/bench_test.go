//go:build linux

package beam

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"golang.org/x/sys/unix"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/tfrecord"
)

var (
	benchDir = flag.String("beam_bench_dir", filepath.Join(os.TempDir(), "structtensor-beam-bench"),
		"BenchmarkPrismWorkers: where its TFRecord files are generated once and reused")
	benchMB = flag.Int("beam_bench_mb", 1024, "BenchmarkPrismWorkers: MiB of TFRecord files to decode")
)

func rowCount(r Rows) int { return len(r.Positions) }

func init() { register.Function1x1[Rows, int](rowCount) }

// benchFiles generates (once: a file "complete" records what was made)
// uncompressed TFRecord files of recipes totalling mb MiB in 64 MiB
// files, and returns their glob, total bytes and record count.
func benchFiles(b *testing.B, mb int) (glob string, size int64, records int) {
	dir := filepath.Join(*benchDir, fmt.Sprintf("%dmb", mb))
	glob = filepath.Join(dir, "*.tfrecord")
	if done, err := os.ReadFile(filepath.Join(dir, "complete")); err == nil {
		if _, err := fmt.Sscan(string(done), &size, &records); err == nil {
			return glob, size, records
		}
	}
	b.Logf("generating %d MiB of TFRecords in %s (once)", mb, dir)
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	d, err := decode.LoadDescriptorSet(descriptorSet(b))
	if err != nil {
		b.Fatal(err)
	}
	md, err := d.Message(recipe)
	if err != nil {
		b.Fatal(err)
	}
	// Distinct records, cycled: the decode cost per byte is what counts.
	pool, err := copstest.Records(md, 50000, 42, copstest.Options{MaxRepeated: 4})
	if err != nil {
		b.Fatal(err)
	}
	const fileSize = 64 << 20
	total := int64(mb) << 20
	for i := 0; size < total; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%04d.tfrecord", i)))
		if err != nil {
			b.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		w := tfrecord.NewWriter(bw)
		var n int64
		for n < fileSize && size+n < total {
			r := pool[records%len(pool)]
			if err := w.Write(r); err != nil {
				b.Fatal(err)
			}
			n += int64(len(r)) + 16
			records++
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		size += n
	}
	if err := os.WriteFile(filepath.Join(dir, "complete"), fmt.Appendf(nil, "%d %d\n", size, records), 0o644); err != nil {
		b.Fatal(err)
	}
	return glob, size, records
}

// cpuSeconds of this process so far (user + system).
func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// singleProcessDecode reads and decodes every file with one plan in this
// process, one batch at a time as the pipeline's workers do, and returns
// the row count.
func singleProcessDecode(b *testing.B, glob string, opts DecodeOptions) int {
	plan, err := compilePlan(opts.DescriptorSet, opts.Message, opts.Paths)
	if err != nil {
		b.Fatal(err)
	}
	defer plan.Close()
	files, _ := filepath.Glob(glob)
	rows := 0
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r := tfrecord.NewReader(f, tfrecord.Options{MaxBatchBytes: 4 << 20})
		for {
			var batch tfrecord.Batch
			if err := r.ReadBatch(&batch, 0); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			st, err := plan.DecodeContiguous(batch.Data, batch.Offsets)
			if err != nil {
				b.Fatal(err)
			}
			rows += st.NumRows()
		}
		f.Close()
	}
	return rows
}

// processTree samples the CPU time of this process's descendants (the
// worker processes Prism starts and theirs) from /proc, and pins each
// harness process to one CPU, so that a worker is one core's worth as on
// a cluster of one-core workers. A descendant's last sample is at most
// one period before it ended; the sampler's own CPU is measured and left
// out of the run's.
type processTree struct {
	root   int
	mu     sync.Mutex
	cpu    map[int]float64 // pid → CPU seconds last seen
	pinned map[int]bool
	next   int // the CPU the next harness process gets
	self   float64
	stop   chan struct{}
	done   chan struct{}
}

// watchProcessTree samples the known descendants every period and looks
// for new ones in all of /proc every discover.
func watchProcessTree(period, discover time.Duration) *processTree {
	t := &processTree{root: os.Getpid(), cpu: map[int]float64{}, pinned: map[int]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		defer close(t.done)
		// The thread may have run before: count its CPU from here.
		t.self = -cpuSeconds(unix.RUSAGE_THREAD)
		tick := time.NewTicker(period)
		defer tick.Stop()
		var last time.Time
		for {
			if time.Since(last) >= discover {
				t.scan()
				last = time.Now()
			} else {
				t.sample()
			}
			select {
			case <-t.stop:
				t.sample()
				t.self += cpuSeconds(unix.RUSAGE_THREAD)
				return
			case <-tick.C:
			}
		}
	}()
	return t
}

// readCPU returns a process's parent and CPU seconds from /proc.
func readCPU(pid int) (ppid int, cpu float64, ok bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// Fields after the command, which is in parentheses: state ppid ...
	// utime (the 14th field of the line) stime (the 15th).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return ppid, (ut + st) / 100, true // USER_HZ
}

// sample reads the CPU of the descendants found so far.
func (t *processTree) sample() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid := range t.cpu {
		if _, c, ok := readCPU(pid); ok {
			t.cpu[pid] = c
		}
	}
}

// finish stops sampling and returns the descendants' CPU seconds, each
// descendant's (sorted) and the sampler's own.
func (t *processTree) finish() (descendants float64, each []float64, sampler float64) {
	close(t.stop)
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.cpu {
		descendants += c
		each = append(each, c)
	}
	slices.Sort(each)
	return descendants, each, t.self
}

func (t *processTree) scan() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	parent := map[int]int{}
	cpu := map[int]float64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, c, ok := readCPU(pid); ok {
			parent[pid], cpu[pid] = ppid, c
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid := range cpu {
		if pid == t.root {
			continue
		}
		p, depth := parent[pid], 0
		for p != 0 && p != t.root && depth < 16 {
			p, depth = parent[p], depth+1
		}
		if p != t.root {
			continue
		}
		t.cpu[pid] = cpu[pid]
		if !t.pinned[pid] {
			t.pinned[pid] = true
			cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			args := strings.Split(string(cmd), "\x00")
			harness := false
			for _, a := range args {
				// A harness: started as one by a relay, or booted
				// with one process (no ProcessesEnv).
				harness = harness || a == "--worker=true"
			}
			if !harness && t.booted(pid) {
				harness = true
			}
			if harness {
				var set unix.CPUSet
				set.Set(t.next % runtime.NumCPU())
				t.next++
				unix.SchedSetaffinity(pid, &set)
			}
		}
	}
}

// booted reports whether pid is a worker booted by Prism that runs the
// harness itself (its environment names no second process).
func (t *processTree) booted(pid int) bool {
	cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if !bytes.Contains(cmd, []byte("--provision_endpoint=")) {
		return false
	}
	env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, ProcessesEnv+"="); ok && v != "1" {
			return false
		}
	}
	return true
}

// BenchmarkPrismWorkers decodes >= 1 GiB of TFRecord files (generated
// once under --beam_bench_dir) three ways in one run: in this process with
// one plan (the anchor), and by a pipeline on Prism with one and with two
// worker processes, each pinned to a CPU of its own. The pipeline reads
// and decodes the files in two branches of half the files each, which
// Prism runs as two bundles at once. It reports MB per
// CPU-second of each (for the pipelines counting this process, which
// hosts Prism, and every worker process) and the wall-clock speedup of two
// workers over one. Targets: the two-worker pipeline's MB per CPU-second
// at least 60% of the anchor's, and a speedup of at least 1.6.
//
//	make beam-bench
func BenchmarkPrismWorkers(b *testing.B) {
	glob, size, records := benchFiles(b, *benchMB)
	mb := float64(size) / 1e6
	opts := DecodeOptions{DescriptorSet: descriptorSet(b), Message: recipe}
	for range b.N {
		cpu0, t0 := cpuSeconds(syscall.RUSAGE_SELF), time.Now()
		if n := singleProcessDecode(b, glob, opts); n != records {
			b.Fatalf("decoded %d rows of %d", n, records)
		}
		single := mb / (cpuSeconds(syscall.RUSAGE_SELF) - cpu0)
		b.Logf("single process: %.0f MB in %v, %.1f MB per CPU-second", mb, time.Since(t0).Round(time.Millisecond), single)

		pipeline := func(workers int) (mbPerCPU float64, wall time.Duration) {
			// Two branches, each reading and decoding half of the files:
			// Prism runs a stage's pending elements as one bundle, so one
			// Read would run on one worker at a time (see the package
			// documentation).
			p, s := beamsdk.NewPipelineWithRoot()
			var counts []beamsdk.PCollection
			for _, half := range []string{"[02468]", "[13579]"} {
				rows, err := Decode(s, must(Read(s, strings.TrimSuffix(glob, ".tfrecord")+half+".tfrecord", ReadOptions{})), opts)
				if err != nil {
					b.Fatal(err)
				}
				counts = append(counts, beamsdk.ParDo(s, rowCount, rows))
			}
			passert.Equals(s, stats.Sum(s, beamsdk.Flatten(s, counts...)), records)
			tree := watchProcessTree(20*time.Millisecond, 200*time.Millisecond)
			cpu0, t0 := cpuSeconds(syscall.RUSAGE_SELF), time.Now()
			mode := process
			if workers == 2 {
				mode = process2
			}
			err := mode.run(b, p, runOptions{})
			wall = time.Since(t0)
			self := cpuSeconds(syscall.RUSAGE_SELF) - cpu0
			desc, each, sampler := tree.finish()
			if err != nil {
				b.Fatal(err)
			}
			cpu := self - sampler + desc
			b.Logf("Prism, %d worker process(es): %.0f MB in %v, CPU %.1f s (launcher and Prism %.1f s, worker processes %.1f s: %.2f), %.1f MB per CPU-second",
				workers, mb, wall.Round(time.Millisecond), cpu, self-sampler, desc, each, mb/cpu)
			return mb / cpu, wall
		}
		one, wall1 := pipeline(1)
		two, wall2 := pipeline(2)
		speedup := wall1.Seconds() / wall2.Seconds()
		b.ReportMetric(single, "MB/cpu-s-single")
		b.ReportMetric(one, "MB/cpu-s-1worker")
		b.ReportMetric(two, "MB/cpu-s-2workers")
		b.ReportMetric(two/single, "cpu-efficiency-2workers")
		b.ReportMetric(speedup, "speedup-2-over-1")
		b.Logf("2 workers: MB per CPU-second %.0f%% of the single process (target >= 60%%); wall-clock speedup over 1 worker %.2fx (target >= 1.6x)",
			100*two/single, speedup)
	}
}
