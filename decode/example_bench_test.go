package decode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
)

// benchExamples is a realistic tf.Example dataset: 37 features of a
// ranking model (id lists, counts, four 16-float embeddings, prices and
// scores, 1-3 query strings, a country, float tag lists), lists absent
// from some records, as proto.Marshal writes them.
func benchExamples(n int) (*ExampleSpec, []byte, []int64) {
	r := rand.New(rand.NewPCG(5, 5))
	spec := &ExampleSpec{Features: map[string]Feature{}}
	for i := 0; i < 10; i++ {
		spec.Features[fmt.Sprintf("id_%d", i)] = Feature{Kind: VarLen, DType: structtensor.Int64}
		spec.Features[fmt.Sprintf("tags_%d", i)] = Feature{Kind: VarLen, DType: structtensor.Float32}
	}
	for i := 0; i < 5; i++ {
		spec.Features[fmt.Sprintf("cnt_%d", i)] = Feature{Kind: FixedLen, DType: structtensor.Int64, Default: []int64{0}}
		spec.Features[fmt.Sprintf("score_%d", i)] = Feature{Kind: FixedLen, DType: structtensor.Float32, Default: []float32{0}}
		spec.Features[fmt.Sprintf("query_%d", i)] = Feature{Kind: VarLen, DType: structtensor.String}
	}
	for i := 0; i < 4; i++ {
		spec.Features[fmt.Sprintf("emb_%d", i)] = Feature{Kind: FixedLen, DType: structtensor.Float32, Shape: []int{16}}
	}
	spec.Features["price"] = Feature{Kind: FixedLen, DType: structtensor.Float32, Default: []float32{0}}
	spec.Features["country"] = Feature{Kind: FixedLen, DType: structtensor.String, Default: []string{""}}
	ints := func(k int, max int64) *tfexample.Feature {
		v := make([]int64, k)
		for i := range v {
			v[i] = r.Int64N(max)
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
	}
	floats := func(k int) *tfexample.Feature {
		v := make([]float32, k)
		for i := range v {
			v[i] = r.Float32()
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: v}}}
	}
	strs := func(k int) *tfexample.Feature {
		v := make([][]byte, k)
		for i := range v {
			b := make([]byte, 5+r.IntN(16))
			for j := range b {
				b[j] = byte('a' + r.IntN(26))
			}
			v[i] = b
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: v}}}
	}
	var data []byte
	offsets := []int64{0}
	for k := 0; k < n; k++ {
		m := map[string]*tfexample.Feature{}
		for i := 0; i < 10; i++ {
			if r.IntN(5) != 0 {
				m[fmt.Sprintf("id_%d", i)] = ints(1+r.IntN(10), 1<<40)
			}
			if r.IntN(3) != 0 {
				m[fmt.Sprintf("tags_%d", i)] = floats(r.IntN(9))
			}
		}
		for i := 0; i < 5; i++ {
			if r.IntN(5) != 0 {
				m[fmt.Sprintf("cnt_%d", i)] = ints(1, 1000)
			}
			m[fmt.Sprintf("score_%d", i)] = floats(1)
			if r.IntN(10) < 7 {
				m[fmt.Sprintf("query_%d", i)] = strs(1 + r.IntN(3))
			}
		}
		for i := 0; i < 4; i++ {
			m[fmt.Sprintf("emb_%d", i)] = floats(16)
		}
		m["price"] = floats(1)
		m["country"] = strs(1)
		b, err := proto.Marshal(&tfexample.Example{Features: &tfexample.Features{Feature: m}})
		if err != nil {
			panic(err)
		}
		data = append(data, b...)
		offsets = append(offsets, int64(len(data)))
	}
	return spec, data, offsets
}

// benchSequenceExamples is a realistic tf.SequenceExample dataset: a
// session of 5-30 steps (item id, click, dwell time, 0-4 item tags and a
// query token per step; tags absent from some records) with its context
// (user id, country, an 8-float user embedding, 1-3 recent queries,
// an optional age), as proto.Marshal writes them.
func benchSequenceExamples(n int) (*ExampleSpec, []byte, []int64) {
	r := rand.New(rand.NewPCG(7, 7))
	spec := &ExampleSpec{
		Features: map[string]Feature{
			"user_id":  {Kind: FixedLen, DType: structtensor.Int64},
			"country":  {Kind: FixedLen, DType: structtensor.String, Default: []string{""}},
			"user_emb": {Kind: FixedLen, DType: structtensor.Float32, Shape: []int{8}},
			"queries":  {Kind: VarLen, DType: structtensor.String},
			"age":      {Kind: FixedLen, DType: structtensor.Int64, Default: []int64{-1}},
		},
		SequenceFeatures: map[string]Feature{
			"item_id":   {Kind: FixedLenSequence, DType: structtensor.Int64},
			"clicked":   {Kind: FixedLenSequence, DType: structtensor.Int64},
			"dwell":     {Kind: FixedLenSequence, DType: structtensor.Float32},
			"item_tags": {Kind: VarLen, DType: structtensor.Int64},
			"token":     {Kind: VarLen, DType: structtensor.String},
		},
	}
	word := func() []byte {
		b := make([]byte, 3+r.IntN(8))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		return b
	}
	i64 := func(v ...int64) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
	}
	f32 := func(v ...float32) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: v}}}
	}
	str := func(v ...[]byte) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: v}}}
	}
	var data []byte
	offsets := []int64{0}
	for k := 0; k < n; k++ {
		emb := make([]float32, 8)
		for i := range emb {
			emb[i] = r.Float32()
		}
		var qs [][]byte
		for i := 0; i < 1+r.IntN(3); i++ {
			qs = append(qs, word())
		}
		ctx := map[string]*tfexample.Feature{
			"user_id": i64(r.Int64N(1 << 32)), "country": str([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26))}),
			"user_emb": f32(emb...), "queries": str(qs...),
		}
		if r.IntN(2) == 0 {
			ctx["age"] = i64(int64(18 + r.IntN(60)))
		}
		steps := 5 + r.IntN(26)
		lists := map[string]*tfexample.FeatureList{}
		add := func(name string, f *tfexample.Feature) {
			if lists[name] == nil {
				lists[name] = &tfexample.FeatureList{}
			}
			lists[name].Feature = append(lists[name].Feature, f)
		}
		tags := r.IntN(4) != 0
		for s := 0; s < steps; s++ {
			add("item_id", i64(r.Int64N(1<<40)))
			add("clicked", i64(int64(r.IntN(2))))
			add("dwell", f32(r.Float32()*60))
			if tags {
				t := make([]int64, r.IntN(5))
				for i := range t {
					t[i] = r.Int64N(5000)
				}
				add("item_tags", i64(t...))
			}
			add("token", str(word()))
		}
		b, err := proto.Marshal(&tfexample.SequenceExample{
			Context:      &tfexample.Features{Feature: ctx},
			FeatureLists: &tfexample.FeatureLists{FeatureList: lists},
		})
		if err != nil {
			panic(err)
		}
		data = append(data, b...)
		offsets = append(offsets, int64(len(data)))
	}
	return spec, data, offsets
}

// BenchmarkExampleVsAnchors decodes the benchExamples dataset (20000
// records) on one thread and, in the same run, measures the anchors on
// the same records and spec: tf.io.parse_example with one intra-op thread
// (.venv) and tfx-bsl's ExamplesToRecordBatchDecoder (.venv-tfx). All
// figures are MB of records per CPU-second; x_vs_tf and x_vs_tfx are our
// figure over theirs.
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
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := plan.DecodeContiguous(data, offsets, DecodeOptions{Threads: 1}); err != nil {
			b.Fatal(err)
		}
	}
	ours := float64(len(data)) * float64(b.N) / (cpuTime() - c0).Seconds() / 1e6
	b.ReportMetric(ours, "MB/cpu-s")
	for name, rate := range anchors {
		b.ReportMetric(rate, name+"_MB/cpu-s")
		b.ReportMetric(ours/rate, "x_vs_"+name)
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
	specPath, recPath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "records.bin")
	sj, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for i := 0; i+1 < len(offsets); i++ {
		binary.Write(&buf, binary.LittleEndian, uint64(offsets[i+1]-offsets[i]))
		buf.Write(data[offsets[i]:offsets[i+1]])
	}
	if err := os.WriteFile(specPath, sj, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(recPath, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(testenv.ModuleRoot(b), "decode", "testdata", "example", "bench_example.py")
	for _, a := range []struct{ name, venv string }{{"tf", ".venv"}, {"tfx", ".venv-tfx"}} {
		args := []string{script, "--decoder", a.name, "--records", recPath, "--spec", specPath}
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
