package decode

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/structtensor/structtensor-go/internal/exampledata"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
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
// figure (each output recycled into the next decode) over theirs, the
// fresh_ ones the same without recycling.
//
//	go test ./decode -run XXX -bench 'ExampleVsAnchors' -benchtime 20x
func BenchmarkExampleVsAnchors(b *testing.B) {
	spec, data, offsets := benchExamples(20000)
	plan, err := CompileExample(spec)
	if err != nil {
		b.Fatal(err)
	}
	benchVsAnchors(b, "example", plan, spec, data, offsets)
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
	benchVsAnchors(b, "sequence", plan, spec, data, offsets)
}

func benchVsAnchors(b *testing.B, dataset string, plan *ExamplePlan, spec *ExampleSpec, data []byte, offsets []int64) {
	anchors := benchAnchors(b, dataset, spec, data, offsets)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	// As a loop over batches runs: each output, once done with, recycled
	// into the next decode (ExamplePlan.Recycle). fresh_MB/cpu-s is the
	// same loop without recycling, each output in fresh memory (garbage
	// collection and page faults included).
	c0 := cpuTime()
	var prev *structtensor.StructTensor
	for i := 0; i < b.N; i++ {
		plan.Recycle(prev)
		st, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		prev = st
	}
	ours := float64(len(data)) * float64(b.N) / (cpuTime() - c0).Seconds() / 1e6
	b.StopTimer()
	prev = nil
	c0 = cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1}); err != nil {
			b.Fatal(err)
		}
	}
	fresh := float64(len(data)) * float64(b.N) / (cpuTime() - c0).Seconds() / 1e6
	b.ReportMetric(ours, "MB/cpu-s")
	b.ReportMetric(fresh, "fresh_MB/cpu-s")
	for name, rate := range anchors {
		b.ReportMetric(rate, name+"_MB/cpu-s")
		b.ReportMetric(ours/rate, "x_vs_"+name)
		b.ReportMetric(fresh/rate, "fresh_x_vs_"+name)
	}
}

var (
	anchorMu    sync.Mutex
	anchorRates = map[string]map[string]float64{}
)

// benchAnchors runs each anchor once per dataset and process (testing.B
// calls a benchmark several times).
func benchAnchors(b *testing.B, dataset string, spec *ExampleSpec, data []byte, offsets []int64) map[string]float64 {
	anchorMu.Lock()
	defer anchorMu.Unlock()
	if r, ok := anchorRates[dataset]; ok {
		return r
	}
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
	anchorRates[dataset] = rates
	return rates
}
