package decode

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/internal/exampledata"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// benchExamples is exampledata.Ranking's first n records: a realistic
// tf.Example dataset of 37 features.
func benchExamples(n int) (*ExampleSpec, []byte, []int64) {
	return benchSet(exampledata.Ranking(rand.New(rand.NewPCG(5, 5))), n)
}

// benchSequenceExamples is exampledata.Sessions' first n records: a
// realistic tf.SequenceExample dataset.
func benchSequenceExamples(n int) (*ExampleSpec, []byte, []int64) {
	return benchSet(exampledata.Sessions(rand.New(rand.NewPCG(7, 7))), n)
}

// exampleSets are the two generators above by name; "sequence" compiles
// with CompileSequenceExample.
var exampleSets = []struct {
	name string
	gen  func(int) (*ExampleSpec, []byte, []int64)
}{{"example", benchExamples}, {"sequence", benchSequenceExamples}}

func benchSet(set *exampledata.Set, n int) (*ExampleSpec, []byte, []int64) {
	spec, err := ParseExampleSpec(set.Spec)
	if err != nil {
		panic(err)
	}
	data, offsets := set.Records(n)
	return spec, data, offsets
}

// BenchmarkExampleVsAnchors decodes the benchExamples dataset (20000
// records) on one thread and, in the same run, measures the anchors on
// the same records and spec: tf.io.parse_example with one intra-op thread
// (.venv) and tfx-bsl's ExamplesToRecordBatchDecoder (.venv-tfx). All
// figures are MB of records per CPU-second; x_vs_tf and x_vs_tfx are our
// figure (each output recycled into the next decode: the harness's
// ours-1t-recycle) over theirs, the fresh_ ones the same without
// recycling (ours-1t). Ours is timed as the harness times it, around the
// anchors (see benchVsAnchors).
//
//	go test ./decode -run XXX -bench 'ExampleVsAnchors' -benchtime 20x
func BenchmarkExampleVsAnchors(b *testing.B) {
	spec, data, offsets := benchExamples(20000)
	plan, err := CompileExample(spec)
	if err != nil {
		b.Fatal(err)
	}
	benchVsAnchors(b, plan, spec, data, offsets)
}

// BenchmarkSequenceExampleVsAnchors is BenchmarkExampleVsAnchors for the
// benchSequenceExamples dataset (10000 records): the anchors are
// tf.io.parse_sequence_example and tfx-bsl's
// SequenceExamplesToRecordBatchDecoder.
func BenchmarkSequenceExampleVsAnchors(b *testing.B) {
	spec, data, offsets := benchSequenceExamples(10000)
	plan, err := CompileSequenceExample(spec)
	if err != nil {
		b.Fatal(err)
	}
	benchVsAnchors(b, plan, spec, data, offsets)
}

func benchVsAnchors(b *testing.B, plan *ExamplePlan, spec *ExampleSpec, data []byte, offsets []int64) {
	b.SetBytes(int64(len(data)))
	// Timed as the harness (bench/measure.go) times a decoder, so that
	// both give the same figures: one decode untimed first (the plan's
	// pools and sizes warm, and an output to recycle into the first timed
	// call), then each call timed by itself, with the garbage of the calls
	// before it collected outside the clock.
	//
	// Ours is timed in two halves around the anchors, and each rate is
	// over both halves: on a shared machine our rate drifts by +-10% over
	// a minute (the anchors' much less), so a figure taken a minute before
	// the anchors' (as this benchmark did: 2.75x where the harness said
	// 3.27x) can differ by that much from one taken beside them.
	prev, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	// decodes times n decodes; recycle hands each output back to the plan
	// (ExamplePlan.Recycle) for the next, as a loop over batches does,
	// else each output is fresh memory (ours-1t-recycle and ours-1t).
	decodes := func(n int, recycle bool) time.Duration {
		var cpu time.Duration
		for range n {
			if recycle {
				plan.Recycle(prev)
			}
			prev = nil
			runtime.GC()
			c0 := cpuTime()
			st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
			cpu += cpuTime() - c0
			if err != nil {
				b.Fatal(err)
			}
			prev = st
		}
		return cpu
	}
	b.ResetTimer()
	half := max(b.N/2, 1)
	recycled := decodes(half, true)
	fresh := decodes(half, false)
	b.StopTimer()
	var anchors map[string]float64
	if b.N > 1 { // (testing's first call, of b.N = 1, only sizes b.N)
		anchors = benchAnchors(b, spec, data, offsets)
	}
	b.StartTimer()
	fresh += decodes(b.N-half, false)
	recycled += decodes(b.N-half, true)
	rate := func(cpu time.Duration) float64 { return float64(len(data)) * float64(b.N) / cpu.Seconds() / 1e6 }
	ours := rate(recycled)
	b.ReportMetric(ours, "MB/cpu-s")
	b.ReportMetric(rate(fresh), "fresh_MB/cpu-s")
	for name, r := range anchors {
		b.ReportMetric(r, name+"_MB/cpu-s")
		b.ReportMetric(ours/r, "x_vs_"+name)
		b.ReportMetric(rate(fresh)/r, "fresh_x_vs_"+name)
	}
}

// benchAnchors runs each anchor (python/bench/example_decode.py, which
// the harness runs too) on the records and returns their rates: anew on
// every call, as they are compared with ours timed beside them.
func benchAnchors(b *testing.B, spec *ExampleSpec, data []byte, offsets []int64) map[string]float64 {
	rates := map[string]float64{}
	dir := b.TempDir()
	specPath, recPath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "records.tfrecord")
	sj, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	for i := 0; i+1 < len(offsets); i++ {
		if err := w.Write(data[offsets[i]:offsets[i+1]]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(specPath, sj, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(recPath, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(testenv.ModuleRoot(b), "python", "bench", "example_decode.py")
	for _, a := range []struct{ name, venv string }{{"tf", ".venv"}, {"tfx", ".venv-tfx"}} {
		args := []string{script, "--decoder", a.name, "--file", recPath, "--spec", specPath}
		if len(spec.SequenceFeatures) > 0 {
			args = append(args, "--sequence")
		}
		cmd := exec.Command(testenv.Python(b, a.venv), args...)
		cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%s: %v\n%s", a.name, err, stderr.Bytes())
		}
		var m struct {
			Rate float64 `json:"mb_per_cpu_s"`
		}
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		if err := json.Unmarshal(lines[len(lines)-1], &m); err != nil || m.Rate <= 0 {
			b.Fatalf("%s printed %q: %v", a.name, out, err)
		}
		rates[a.name] = m.Rate
	}
	return rates
}
