package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"runtime"
	"syscall"
	"time"

	"github.com/structtensor/structtensor-go/structtensor"
)

// measurement is what one decoder run reports. A child process prints it
// as JSON; the parent adds peak_rss from the child's rusage.
type measurement struct {
	Records  int     `json:"records"`
	Bytes    int64   `json:"bytes"`     // payload bytes decoded per call
	Iters    int     `json:"iters"`     // timed calls
	CPUSec   float64 `json:"cpu_s"`     // process CPU seconds (user+system) of the timed calls
	WallSec  float64 `json:"wall_s"`    // wall seconds of the timed calls
	OutBytes int64   `json:"out_bytes"` // bytes of one call's output buffers
	Digest   string  `json:"digest,omitempty"`
	PeakRSS  int64   `json:"-"` // bytes, from the child's rusage
}

func (m *measurement) mbPerCPUSec() float64 {
	return float64(m.Bytes) * float64(m.Iters) / 1e6 / m.CPUSec
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
// digested), then repeatedly until it has used minCPU of process CPU time
// and run at least minIters times. Between calls the previous output is
// dropped and collected outside the timed region, so the peak memory of
// the process is that of one decode, not of a backlog of garbage.
func timeDecoder(fn decodeFunc, minCPU time.Duration, minIters int) (*measurement, error) {
	out, err := fn()
	if err != nil {
		return nil, err
	}
	m := &measurement{Records: out.NumRows(), OutBytes: valueBytes(out), Digest: digest(out)}
	out = nil
	runtime.GC()
	var cpu, wall time.Duration
	for m.Iters < minIters || cpu < minCPU {
		c0, w0 := processCPU(), time.Now()
		out, err := fn()
		wall += time.Since(w0)
		cpu += processCPU() - c0
		if err != nil {
			return nil, err
		}
		_ = out
		out = nil
		m.Iters++
		runtime.GC()
	}
	m.CPUSec, m.WallSec = cpu.Seconds(), wall.Seconds()
	return m, nil
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
	put := func(x uint64) { h.Write(binary.LittleEndian.AppendUint64(nil, x)) }
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
