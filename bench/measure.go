package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/structtensor/structtensor-go/structtensor"
)

// measurement is what one decoder run reports. A child process prints it
// as JSON; the parent adds peak_rss from the child's rusage.
type measurement struct {
	Records int     `json:"records"`
	Bytes   int64   `json:"bytes"`  // payload bytes decoded per call
	Iters   int     `json:"iters"`  // timed calls
	CPUSec  float64 `json:"cpu_s"`  // process CPU seconds (user+system) of the timed calls
	WallSec float64 `json:"wall_s"` // wall seconds of the timed calls
	// FastestCallCPUSec is the least process CPU time one timed call
	// took (in-process decoders; 0 for the others). On a host whose
	// other tenants slow a CPU for seconds at a time, the mean (CPUSec)
	// moves with them and this far less: the code's own speed.
	FastestCallCPUSec float64 `json:"fastest_call_cpu_s,omitempty"`
	// QuietIters and QuietCPUSec are the timed calls made on a quiet core
	// (coreprobe.go) and their process CPU seconds, and FastestProbeNs
	// the fastest of the core probes around them, in nanoseconds (the
	// harness passes the fastest it has seen to the children after);
	// in-process decoders timed on their own, 0 for the others.
	QuietIters     int     `json:"quiet_iters,omitempty"`
	QuietCPUSec    float64 `json:"quiet_cpu_s,omitempty"`
	FastestProbeNs int64   `json:"fastest_probe_ns,omitempty"`
	// AnchorCPUSec and AnchorWallSec are, for a decoder timed in
	// lockstep with another (decoder.anchor), the other's calls' CPU
	// and wall seconds: as many calls, each beside one of this decoder's,
	// so that both meet the same spells of the host's other load.
	AnchorCPUSec  float64 `json:"anchor_cpu_s,omitempty"`
	AnchorWallSec float64 `json:"anchor_wall_s,omitempty"`
	OutBytes      int64   `json:"out_bytes"` // bytes of one call's output buffers
	Digest        string  `json:"digest,omitempty"`
	// Leaves digests each leaf path's flat values (see leafDigest), for
	// the comparison with struct2tensor.
	Leaves map[string]leafDigest `json:"leaves,omitempty"`
	// BaseRSS is the child's peak RSS before its first decode (runtime,
	// input, prepared decoder) and PeakRSS its peak RSS at the end, in
	// bytes, both the kernel's high-water mark of the process's own
	// memory (VmHWM). Not ru_maxrss from wait4: Linux carries the
	// parent's peak into a child that execs after a vfork-style clone, as
	// os/exec does, so every child would report at least the parent's peak.
	BaseRSS int64 `json:"base_rss"`
	PeakRSS int64 `json:"peak_rss"`
}

func (m *measurement) check() error {
	if m.Iters <= 0 || m.CPUSec <= 0 || m.WallSec <= 0 || m.PeakRSS <= 0 {
		return fmt.Errorf("an empty measurement: %+v", *m)
	}
	return nil
}

func (m *measurement) mbPerCPUSec() float64 {
	return float64(m.Bytes) * float64(m.Iters) / 1e6 / m.CPUSec
}

// fastestMBPerCPUSec is the MB per CPU-second of the fastest timed call,
// or 0 when the decoder does not report it.
func (m *measurement) fastestMBPerCPUSec() float64 {
	if m.FastestCallCPUSec <= 0 {
		return 0
	}
	return float64(m.Bytes) / 1e6 / m.FastestCallCPUSec
}

// quietMBPerCPUSec is the MB per CPU-second of the calls made on a quiet
// core, or 0 when none was (or the decoder does not report them).
func (m *measurement) quietMBPerCPUSec() float64 {
	if m.QuietIters <= 0 || m.QuietCPUSec <= 0 {
		return 0
	}
	return float64(m.Bytes) * float64(m.QuietIters) / 1e6 / m.QuietCPUSec
}

func (m *measurement) wallMBPerSec() float64 {
	return float64(m.Bytes) * float64(m.Iters) / 1e6 / m.WallSec
}

// processCPU returns this process's user+system CPU time: every thread,
// including the garbage collector's and the native engine's workers.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // cannot fail for RUSAGE_SELF
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeDecoder calls fn once untimed (warm-up, and the output measured and
// digested, whole and leaf by leaf), then repeatedly until it has used minCPU of process CPU time
// and run at least minIters times. Between calls the previous output is
// dropped and collected outside the timed region, so the peak memory of
// the process is that of one decode, not of a backlog of garbage. A core
// probe before the first timed call and after each (coreprobe.go), on
// the calls' own OS thread, tells the calls made on a quiet core,
// against the fastest probe of the run or probeRef.
func timeDecoder(ds *dataset, fn decodeFunc, minCPU time.Duration, minIters int, probeRef time.Duration) (*measurement, error) {
	m, err := firstCall(ds, fn)
	if err != nil {
		return nil, err
	}
	var t callTimes
	var probes callProbes
	lockedThread(func() {
		probes.probes = append(probes.probes, coreProbe())
		for m.Iters < minIters || t.cpu < minCPU {
			var c, w time.Duration
			if c, w, err = timedCall(fn); err != nil {
				return
			}
			t.add(m, c, w)
			probes.cpu = append(probes.cpu, c)
			probes.probes = append(probes.probes, coreProbe())
		}
	})
	if err != nil {
		return nil, err
	}
	t.finish(m)
	quiet, quietCPU := probes.quiet(probeRef)
	m.QuietIters, m.QuietCPUSec = quiet, quietCPU.Seconds()
	m.FastestProbeNs = int64(slices.Min(probes.probes))
	return m, nil
}

// timeInLockstep is timeDecoder with the calls at another process's word
// (a decoder paired with its anchor, see lockstep.go): after the first
// call it writes "ready" to out, then times one call for each "call"
// line read from in, answering "done <cpu ns> <wall ns>", until in ends.
func timeInLockstep(ds *dataset, fn decodeFunc, in io.Reader, out io.Writer) (*measurement, error) {
	m, err := firstCall(ds, fn)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintln(out, lockstepReady); err != nil {
		return nil, err
	}
	var t callTimes
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() != lockstepCall {
			return nil, fmt.Errorf("lockstep: read %q, want %q", sc.Text(), lockstepCall)
		}
		c, w, err := timedCall(fn)
		if err != nil {
			return nil, err
		}
		t.add(m, c, w)
		if _, err := fmt.Fprintf(out, "%s %d %d\n", lockstepDone, c, w); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t.finish(m)
	return m, nil
}

// callTimes adds up the timed calls of one decoder.
type callTimes struct{ cpu, wall, fastest time.Duration }

func (t *callTimes) add(m *measurement, cpu, wall time.Duration) {
	t.cpu += cpu
	t.wall += wall
	if m.Iters == 0 || cpu < t.fastest {
		t.fastest = cpu
	}
	m.Iters++
}

func (t *callTimes) finish(m *measurement) {
	m.CPUSec, m.WallSec, m.FastestCallCPUSec = t.cpu.Seconds(), t.wall.Seconds(), t.fastest.Seconds()
	m.PeakRSS = peakRSS()
}

// timedCall calls fn once and returns the process CPU and wall time it
// took; the output is dropped and collected after, untimed.
func timedCall(fn decodeFunc) (cpu, wall time.Duration, err error) {
	c0, w0 := processCPU(), time.Now()
	out, err := fn()
	wall = time.Since(w0)
	cpu = processCPU() - c0
	_ = out
	out = nil
	runtime.GC()
	return cpu, wall, err
}

// firstCall calls fn once, untimed, and returns a measurement holding its
// output's size and digests, whole and leaf by leaf; then warms up
// (warmUp).
func firstCall(ds *dataset, fn decodeFunc) (*measurement, error) {
	base := peakRSS()
	out, err := fn()
	if err != nil {
		return nil, err
	}
	m := &measurement{Records: ds.numRecords(), BaseRSS: base}
	if out != nil { // nil: a parse-only decoder
		var leaves map[string]leafDigest
		if ds.features != nil {
			leaves, err = exampleLeafDigests(out, ds.paths)
		} else {
			leaves, err = leafDigests(out, ds.message, ds.paths)
		}
		if err != nil {
			return nil, err
		}
		m.Records, m.OutBytes, m.Digest, m.Leaves = out.NumRows(), valueBytes(out), digest(out), leaves
	}
	out = nil
	runtime.GC()
	if err := warmUp(fn); err != nil {
		return nil, err
	}
	return m, nil
}

// maxWarmUpCalls bounds the untimed calls of warmUp.
const maxWarmUpCalls = 8

// warmUp calls fn, untimed, until two calls in a row take no more memory
// from the operating system (up to maxWarmUpCalls): what is timed is a process
// decoding batch after batch, its memory reused. A decoder that keeps
// its outputs' memory for the next batches (the lent blocks' pool) grows
// to its steady size over the first few calls, and memory fresh from the
// system is slow to touch in a virtual machine: on wide repeated records
// in 8 MB batches (a 132 MB block a batch) a batch that took a fresh
// block ran 180-365 ms against 18-38 (Intel Xeon model 167, KVM), and
// four such batches fell among the few calls a decoder paired in
// lockstep makes, moving its mean by 3x from run to run. One call
// without growth is not enough: two threads' decodes grew the heap again
// two calls later.
func warmUp(fn decodeFunc) error {
	steady := 0 // calls in a row that mapped no memory
	for range maxWarmUpCalls {
		before := mappedBytes()
		if _, _, err := timedCall(fn); err != nil {
			return err
		}
		if mappedBytes() > before {
			steady = 0
			continue
		}
		if steady++; steady == 2 {
			return nil
		}
	}
	return nil
}

// mappedBytes is the memory the Go runtime has mapped from the operating
// system.
func mappedBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakRSS returns this process's peak resident set so far, in bytes: the
// VmHWM line of /proc/self/status (Linux).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// valueBytes is the size of a value's buffers: values, string bytes and
// offsets, and row splits (each partition counted once, where it is
// stored).
func valueBytes(v structtensor.Value) int64 {
	switch x := v.(type) {
	case *structtensor.Tensor:
		if x.DType() == structtensor.String {
			data, off := x.StringData()
			return int64(len(data) + 8*len(off))
		}
		return int64(x.Len() * x.DType().Size())
	case *structtensor.Ragged:
		return valueBytes(x.Values()) + partitionBytes(x.Partitions())
	case *structtensor.StructTensor:
		n := partitionBytes(x.Partitions())
		for _, f := range x.Fields() {
			n += valueBytes(f.Value)
		}
		return n
	}
	return 0
}

func partitionBytes(ps []*structtensor.RowPartition) int64 {
	var n int64
	for _, p := range ps {
		if !p.IsUniform() {
			n += int64(8 * (p.NumRows() + 1))
		}
	}
	return n
}

// digest is a SHA-256 over a value's structure and contents, so the parent
// can check that every Go decoder produced the same output in the real run
// (the unit test compares whole values with structtensor.Equal).
func digest(v structtensor.Value) string {
	h := sha256.New()
	digestValue(h, v)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func digestValue(h hash.Hash, v structtensor.Value) {
	// One buffer for every value: a fresh one per value would leave the
	// warm-up as much garbage as the output is large, resident when the
	// timed decodes start (it counted in their peak RSS).
	buf := make([]byte, 8)
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(buf, x)
		h.Write(buf)
	}
	putParts := func(ps []*structtensor.RowPartition) {
		put(uint64(len(ps)))
		for _, p := range ps {
			for _, s := range p.RowSplits() {
				put(uint64(s))
			}
		}
	}
	switch x := v.(type) {
	case *structtensor.Tensor:
		fmt.Fprintf(h, "T%v%v", x.DType(), x.Shape())
		switch d := x.Data().(type) {
		case []bool:
			for _, b := range d {
				if b {
					put(1)
				} else {
					put(0)
				}
			}
		case []int32:
			for _, e := range d {
				put(uint64(e))
			}
		case []int64:
			for _, e := range d {
				put(uint64(e))
			}
		case []uint32:
			for _, e := range d {
				put(uint64(e))
			}
		case []uint64:
			for _, e := range d {
				put(e)
			}
		case []float32:
			for _, e := range d {
				put(uint64(math.Float32bits(e)))
			}
		case []float64:
			for _, e := range d {
				put(math.Float64bits(e))
			}
		case nil:
			for i := 0; i < x.Len(); i++ {
				s := x.StringAt(i)
				put(uint64(len(s)))
				h.Write(s)
			}
		}
	case *structtensor.Ragged:
		h.Write([]byte("R"))
		putParts(x.Partitions())
		digestValue(h, x.Values())
	case *structtensor.StructTensor:
		fmt.Fprintf(h, "S%d/%d", x.Rank(), x.NumRows())
		putParts(x.Partitions())
		for _, f := range x.Fields() {
			fmt.Fprintf(h, "F%q", f.Name)
			digestValue(h, f.Value)
		}
	}
}
