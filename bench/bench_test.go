package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestDecodersAgree runs a small dataset of every kind through every Go
// decoder in the registry and checks that they produce equal
// StructTensors, so a number the harness prints is the speed of a decoder
// that gives the right answer. It also checks the dataset files round-trip
// and that the generator is deterministic.
func TestDecodersAgree(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range decodersInOrder() {
		if d.prepare != nil && !d.noOutput {
			names = append(names, d.name)
		}
	}
	if len(names) < 2 {
		t.Fatalf("only %d Go decoders registered (%v): nothing to compare", len(names), names)
	}
	for _, spec := range datasetSpecs {
		t.Run(spec.name, func(t *testing.T) {
			ds, err := generate(e.schemas, spec, 20000, 7)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := generate(e.schemas, spec, 20000, 7)
			if string(again.data) != string(ds.data) {
				t.Fatal("the generator is not deterministic for a fixed seed")
			}
			file := filepath.Join(t.TempDir(), spec.name+".tfrecord")
			if err := writeDataset(ds, file); err != nil {
				t.Fatal(err)
			}
			read, err := readDataset(e, spec.name, file)
			if err != nil {
				t.Fatal(err)
			}
			if string(read.data) != string(ds.data) || len(read.offsets) != len(ds.offsets) {
				t.Fatalf("dataset file round trip: %d records of %d bytes, want %d of %d",
					read.numRecords(), read.bytes(), ds.numRecords(), ds.bytes())
			}
			var first *structtensor.StructTensor
			for _, name := range names {
				fn, err := registry[name].prepare(e, read)
				if err != nil {
					t.Fatalf("%s: prepare: %v", name, err)
				}
				got, err := fn()
				if err != nil {
					t.Fatalf("%s: decode: %v", name, err)
				}
				if got.NumRows() != ds.numRecords() {
					t.Fatalf("%s: %d rows, want %d", name, got.NumRows(), ds.numRecords())
				}
				if first == nil {
					first = got
					continue
				}
				if !structtensor.Equal(first, got) {
					t.Errorf("%s and %s disagree:\n%s: %v\n%s: %v", names[0], name, names[0], first.Spec(), name, got.Spec())
				}
				if digest(first) != digest(got) {
					t.Errorf("%s and %s are Equal but their digests differ", names[0], name)
				}
			}
		})
	}
}

// TestProtoGoGenParses checks the parse-only baseline: on every dataset its
// generated messages hold the records, field for field (each marshals back
// to its record's bytes: the records are deterministic marshals), and the
// timed function parses without error.
func TestProtoGoGenParses(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range datasetSpecs {
		ds, err := generate(e.schemas, spec, 20000, 7)
		if err != nil {
			t.Fatal(err)
		}
		mt, err := generatedType(ds)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := parseGenerated(mt, ds)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if rec := ds.data[ds.offsets[i]:ds.offsets[i+1]]; !bytes.Equal(b, rec) {
				t.Fatalf("%s: record %d: the generated message marshals to %d bytes, the record has %d", spec.name, i, len(b), len(rec))
			}
		}
		fn, err := registry["protogo-gen"].prepare(e, ds)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := fn(); err != nil || out != nil {
			t.Fatalf("%s: protogo-gen returned %v, %v; want no output and no error", spec.name, out, err)
		}
	}
}

// TestDecodeInBatches checks the batches of ours-1t-1mb (of
// ours-1t-1mb-recycle, each decoded into the memory of the one before,
// and of ours-all-8mb, on two threads), on every dataset, by
// descriptor and by feature spec: they cover every record once, in
// order, and each decodes (in place, its offsets into the dataset's
// buffer) as its records copied into a buffer of their own do.
func TestDecodeInBatches(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	var datasets []*dataset
	for _, spec := range datasetSpecs {
		ds, err := generate(e.schemas, spec, 100000, 7)
		if err != nil {
			t.Fatal(err)
		}
		datasets = append(datasets, ds)
	}
	for _, spec := range exampleDatasetSpecs {
		ds, err := generateExamples(spec, 100000, 7)
		if err != nil {
			t.Fatal(err)
		}
		datasets = append(datasets, ds)
	}
	for _, ds := range datasets {
		plan, err := compileOurs(e, ds)
		if err != nil {
			t.Fatal(err)
		}
		decodeRecords := func(records [][]byte) (*structtensor.StructTensor, error) {
			if p, ok := plan.(*decode.ExamplePlan); ok {
				return p.Decode(records)
			}
			return plan.(*decode.Plan).Decode(records)
		}
		records := ds.records()
		for _, mode := range []struct {
			threads int
			recycle bool
		}{{1, false}, {1, true}, {2, false}} {
			next, batches := 0, 0
			err = decodeInBatches(plan, ds, 3000, mode.threads, mode.recycle, func(st *structtensor.StructTensor) {
				batches++
				want, err := decodeRecords(records[next : next+st.NumRows()])
				if err != nil {
					t.Fatal(err)
				}
				if !structtensor.Equal(st, want) {
					t.Fatalf("%s: the batch of records %d to %d differs from their decode", ds.name, next, next+st.NumRows())
				}
				next += st.NumRows()
			})
			if err != nil {
				t.Fatal(err)
			}
			if next != ds.numRecords() || batches < 2 {
				t.Fatalf("%s: %d batches covered %d records, want all %d in several", ds.name, batches, next, ds.numRecords())
			}
		}
	}
}

// raggedStruct is a struct of len(splits)-1 rows with a ragged int64
// field name (vals split by splits), and more fields.
func raggedStruct(t *testing.T, name string, vals, splits []int64, more ...structtensor.Field) *structtensor.StructTensor {
	t.Helper()
	v, err := structtensor.NewTensor(nil, vals)
	if err != nil {
		t.Fatal(err)
	}
	r, err := structtensor.NewRaggedFromSplits(v, splits)
	if err != nil {
		t.Fatal(err)
	}
	st, err := structtensor.NewStruct(len(splits)-1, append([]structtensor.Field{{Name: name, Value: r}}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDigestSeesDifferences checks that the digest the harness compares
// between decoders changes with a value, a row split or a field name.
func TestDigestSeesDifferences(t *testing.T) {
	base := digest(raggedStruct(t, "a", []int64{1, 2, 3}, []int64{0, 1, 3}))
	for _, other := range []*structtensor.StructTensor{
		raggedStruct(t, "b", []int64{1, 2, 3}, []int64{0, 1, 3}),
		raggedStruct(t, "a", []int64{1, 2, 4}, []int64{0, 1, 3}),
		raggedStruct(t, "a", []int64{1, 2, 3}, []int64{0, 2, 3}),
	} {
		if digest(other) == base {
			t.Errorf("digest of %v equals that of the base value", other)
		}
	}
}

// TestDigestsAllocateNoGarbagePerValue checks that digesting an output
// makes no garbage per value: the warm-up's digest of a large output
// would otherwise leave as much garbage as the output is large, which
// the timed decodes' peak RSS counted (it was most of the "regression"
// of ours-1t's peak RSS on widesparse).
func TestDigestsAllocateNoGarbagePerValue(t *testing.T) {
	const n = 10000
	vals, bools, splits := make([]int64, n), make([]bool, n), make([]int64, n+1)
	for i := range n {
		vals[i], bools[i], splits[i+1] = int64(i), i%3 == 0, int64(i+1)
	}
	v, err := structtensor.NewTensor(nil, vals)
	if err != nil {
		t.Fatal(err)
	}
	b, err := structtensor.NewTensor(nil, bools)
	if err != nil {
		t.Fatal(err)
	}
	st := raggedStruct(t, "a", vals, splits, structtensor.Field{Name: "b", Value: b})
	if a := testing.AllocsPerRun(3, func() { digest(st) }); a > 100 {
		t.Errorf("digest of %d values and %d row splits: %.0f allocations, want at most 100", 2*n, n+1, a)
	}
	if a := testing.AllocsPerRun(3, func() { hashValues(v, false); hashValues(b, false) }); a > 100 {
		t.Errorf("leaf digests of %d values: %.0f allocations, want at most 100", 2*n, a)
	}
}

// TestLeafPaths pins the projection the decoders share on the recipe
// schema, which the README and struct2tensor's paths rely on.
func TestLeafPaths(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	md, err := e.schemas.message("structtensor.testdata.recipe.Recipe")
	if err != nil {
		t.Fatal(err)
	}
	got := leafPaths(md)
	want := []string{"title", "ingredients.name", "ingredients.amount", "ingredients.unit",
		"ratings.user", "ratings.rating", "ratings.user_embedding",
		"steps.instruction", "steps.minutes", "steps.tools.name", "steps.tools.electric",
		"servings", "tags"}
	if len(got) != len(want) {
		t.Fatalf("leafPaths = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("leafPaths = %v, want %v", got, want)
		}
	}
}

// TestStruct2TensorAgrees runs struct2tensor (python/bench/s2t_decode.py in
// .venv-s2t) on a small dataset of every kind and checks that it decodes
// the same values as ours, leaf path by leaf path (see leafDigest for the
// one difference by design, proto3 implicit defaults).
// maxAgreementPaths bounds the leaf paths TestStruct2TensorAgrees projects
// on a dataset: struct2tensor builds graph ops per path, so the wide
// datasets' hundreds of paths (621 on sparsenested) would cost minutes of
// TensorFlow graph building while exercising the same field kinds again.
const maxAgreementPaths = 48

// spreadPaths keeps at most n of paths, evenly spread so every part of a
// wide schema (each field type, each nesting level) stays represented.
func spreadPaths(paths []string, n int) []string {
	if len(paths) <= n {
		return paths
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, paths[i*len(paths)/n])
	}
	return out
}

func TestStruct2TensorAgrees(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	s2t := registry["struct2tensor"]
	if why := s2t.unavailable(e); why != "" {
		testenv.Missing(t, "skipping: %s", why)
	}
	e.minTime, e.minIters, e.agreementOnly = 0, 1, true
	// One struct2tensor process for every dataset: TensorFlow's import
	// dominates the test's time.
	var jobs []s2tJob
	var want []map[string]leafDigest
	for _, spec := range datasetSpecs {
		ds, err := generate(e.schemas, spec, 30000, 11)
		if err != nil {
			t.Fatal(err)
		}
		ds.paths = spreadPaths(ds.paths, maxAgreementPaths)
		file := filepath.Join(t.TempDir(), spec.name+".tfrecord")
		if err := writeDataset(ds, file); err != nil {
			t.Fatal(err)
		}
		fn, err := registry["ours-1t"].prepare(e, ds)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := fn()
		if err != nil {
			t.Fatal(err)
		}
		leaves, err := leafDigests(ours, ds.message, ds.paths)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, s2tJob{ds, file})
		want = append(want, leaves)
	}
	got, err := runS2T(e, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		m := got[i]
		if m.Records != j.ds.numRecords() || m.Bytes != j.ds.bytes() {
			t.Errorf("%s: struct2tensor read %d records of %d bytes, want %d of %d", j.ds.name, m.Records, m.Bytes, j.ds.numRecords(), j.ds.bytes())
		}
		if err := sameLeaves(want[i], m.Leaves); err != nil {
			t.Errorf("%s: %v", j.ds.name, err)
		}
	}
}

// TestExampleDatasets checks the datasets decoded by feature spec: the
// generator is deterministic, the files round-trip, every Go decoder that
// runs on them gives the same StructTensor, the proto-only decoders are
// not run on them, and (unless -short, when .venv and .venv-tfx exist)
// TensorFlow's parse_example and tfx-bsl read the same values as ours,
// leaf by leaf, as the harness checks before printing their speed.
func TestExampleDatasets(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	e.minTime, e.minIters = 0, 1
	for _, spec := range exampleDatasetSpecs {
		t.Run(spec.name, func(t *testing.T) {
			ds, err := generateExamples(spec, 100000, 7)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := generateExamples(spec, 100000, 7)
			if string(again.data) != string(ds.data) {
				t.Fatal("the generator is not deterministic for a fixed seed")
			}
			file := filepath.Join(t.TempDir(), spec.name+".tfrecord")
			if err := writeDataset(ds, file); err != nil {
				t.Fatal(err)
			}
			read, err := readDataset(e, spec.name, file)
			if err != nil {
				t.Fatal(err)
			}
			if string(read.data) != string(ds.data) || len(read.offsets) != len(ds.offsets) || read.features == nil {
				t.Fatalf("dataset file round trip: %d records of %d bytes, want %d of %d", read.numRecords(), read.bytes(), ds.numRecords(), ds.bytes())
			}
			var ours *structtensor.StructTensor
			var ran []string
			for _, d := range decodersInOrder() {
				if d.runs(read) != (d.runsOn&exampleDatasets != 0) {
					t.Errorf("%s: runs on %s: %v", d.name, spec.name, d.runs(read))
				}
				if !d.runs(read) || d.prepare == nil || d.noOutput {
					continue
				}
				ran = append(ran, d.name)
				fn, err := d.prepare(e, read)
				if err != nil {
					t.Fatalf("%s: prepare: %v", d.name, err)
				}
				for range 2 { // twice: a recycling decoder reuses the first output's memory
					got, err := fn()
					if err != nil {
						t.Fatalf("%s: decode: %v", d.name, err)
					}
					if ours == nil {
						ours = got
						continue
					}
					if !structtensor.Equal(ours, got) {
						t.Fatalf("%s and %s disagree", ran[0], d.name)
					}
				}
			}
			if len(ran) < 2 || ours.NumRows() != ds.numRecords() {
				t.Fatalf("decoders %v, %d rows", ran, ours.NumRows())
			}
			if testing.Short() {
				return
			}
			leaves, err := exampleLeafDigests(ours, read.paths)
			if err != nil {
				t.Fatal(err)
			}
			// The paired ones time ours-1t beside them in a copy of this
			// test binary, which the variable makes the harness (TestMain).
			t.Setenv(harnessEnv, "1")
			for _, name := range []string{"tf-parse-example", "tfx-bsl", "tf-parse-example-paired", "tfx-bsl-paired"} {
				d := registry[name]
				if why := d.unavailable(e); why != "" {
					testenv.Missing(t, "skipping %s: %s", name, why)
				}
				m, err := d.external(e, read, file)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				same := sameLeaves
				if d.someLeaves {
					same = sameSomeLeaves
				}
				if err := same(leaves, m.Leaves); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if m.Records != ds.numRecords() || m.Bytes != ds.bytes() {
					t.Errorf("%s read %d records of %d bytes, want %d of %d", name, m.Records, m.Bytes, ds.numRecords(), ds.bytes())
				}
				if paired := strings.HasSuffix(name, "-paired"); paired != (m.AnchorCPUSec > 0 && m.AnchorWallSec > 0) {
					t.Errorf("%s: anchor's CPU and wall seconds %v and %v", name, m.AnchorCPUSec, m.AnchorWallSec)
				}
			}
		})
	}
}

// TestMedianOfRounds checks how -rounds combines a decoder's rounds: the
// median MB per CPU-second and the median MB per wall-second, each on
// its own, the fastest call of any round, the highest peak RSS, and
// every round's quiet calls and fastest core probe.
func TestMedianOfRounds(t *testing.T) {
	round := func(cpu, wall float64, rss int64) *measurement {
		return &measurement{Bytes: 1e6, Iters: 10, CPUSec: cpu, WallSec: wall, PeakRSS: rss, FastestCallCPUSec: cpu / 20,
			QuietIters: 2, QuietCPUSec: cpu / 8, FastestProbeNs: int64(cpu * 1000)}
	}
	m := median([]*measurement{round(2, 1, 5), round(1, 4, 9), round(4, 2, 7)})
	if got := m.quietMBPerCPUSec(); m.QuietIters != 6 || math.Abs(got-6/(7.0/8)) > 1e-9 { // 6 quiet calls of 1 MB in 7/8 s
		t.Errorf("quiet calls %d at %v MB/cpu-s, want every round's: 6 at %v", m.QuietIters, got, 6/(7.0/8))
	}
	if m.FastestProbeNs != 1000 {
		t.Errorf("fastest probe %d ns, want the fastest round's, 1000", m.FastestProbeNs)
	}
	if got := m.fastestMBPerCPUSec(); math.Abs(got-20) > 1e-9 { // fastest calls 0.1, 0.05, 0.2 s of 1 MB
		t.Errorf("fastest call %v MB/cpu-s, want 20", got)
	}
	if got := m.mbPerCPUSec(); math.Abs(got-5) > 1e-9 { // rates 5, 10, 2.5
		t.Errorf("median MB/cpu-s %v, want 5", got)
	}
	if got := m.wallMBPerSec(); math.Abs(got-5) > 1e-9 { // rates 10, 2.5, 5
		t.Errorf("median MB/wall-s %v, want 5", got)
	}
	if m.PeakRSS != 9 {
		t.Errorf("peak RSS %d, want the highest, 9", m.PeakRSS)
	}
	decs := []decoder{{name: "a"}, {name: "b"}, {name: "c"}}
	var order []string
	for round := range 4 {
		for _, d := range roundOrder(decs, round) {
			order = append(order, d.name)
		}
	}
	if got, want := strings.Join(order, ""), "abcbcacababc"; got != want {
		t.Errorf("rounds ran the decoders in the order %s, want %s", got, want)
	}
}

// TestQuietCalls checks which calls count as made on a quiet core: both
// probes around the call within quietProbeSlack of the fastest probe,
// the run's own or the harness's reference, whichever is faster.
func TestQuietCalls(t *testing.T) {
	us := func(ds ...float64) []time.Duration {
		var out []time.Duration
		for _, d := range ds {
			out = append(out, time.Duration(d*1e3))
		}
		return out
	}
	tests := []struct {
		name    string
		probes  []float64 // us, one more than the calls
		cpu     []float64 // ms
		ref     float64   // us, 0: none
		calls   int
		quietMs float64
	}{
		{"every probe quiet", []float64{10, 11, 12}, []float64{5, 6}, 0, 2, 11},
		{"a slow probe spoils the calls on either side", []float64{10, 20, 10, 10}, []float64{5, 6, 7}, 0, 1, 7},
		{"at the slack, still quiet", []float64{10, 10 * quietProbeSlack, 10}, []float64{5, 6}, 0, 2, 11},
		{"a faster reference: the run was never quiet", []float64{20, 21, 20}, []float64{5, 6}, 10, 0, 0},
		{"a slower reference changes nothing", []float64{10, 11, 30}, []float64{5, 6}, 20, 1, 5},
		{"probes missing: nothing counted", []float64{10}, []float64{5, 6}, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := callProbes{probes: us(tc.probes...), cpu: us(tc.cpu...)}
			for i := range p.cpu {
				p.cpu[i] *= 1000
			}
			calls, cpu := p.quiet(time.Duration(tc.ref * 1e3))
			if calls != tc.calls || cpu != time.Duration(tc.quietMs*1e6) {
				t.Errorf("quiet = %d calls, %v; want %d, %vms", calls, cpu, tc.calls, tc.quietMs)
			}
		})
	}
}

// TestCoreProbe: the probe takes time and names its fastest burst.
func TestCoreProbe(t *testing.T) {
	if d := calibrateProbe(5); d <= 0 || d > time.Second {
		t.Errorf("calibrateProbe = %v, want a positive time well under a second", d)
	}
}

// TestPairedTiming checks the alternation of a decoder with its anchor
// (each pair of calls, one of each, in the other order from the last;
// until the decoder has made the minimum calls and used the minimum CPU)
// and that median keeps the median of the rounds' ratios to the anchor.
func TestPairedTiming(t *testing.T) {
	var calls []byte
	x := fakePeer{calls: &calls, name: 'f', cpu: 30 * time.Millisecond}
	anchor := fakePeer{calls: &calls, name: 'a', cpu: time.Millisecond}
	iters, err := alternate(x, anchor, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(calls), "af"+"fa"+"af"+"fa"; got != want || iters != 4 {
		t.Errorf("calls %s (%d pairs), want %s (4)", got, iters, want)
	}
	// The minimum CPU time counts the decoder's calls, not the anchor's.
	calls = calls[:0]
	if iters, err := alternate(x, anchor, 100*time.Millisecond, 1); err != nil || iters != 4 {
		t.Errorf("%d pairs (%v) to use 100 ms of calls of 30, want 4", iters, err)
	}
	// A failed call ends the pairs with its error.
	calls = calls[:0]
	broken := fakePeer{calls: &calls, name: 'b', err: errors.New("broken")}
	if _, err := alternate(x, broken, 0, 4); err == nil || err.Error() != "broken" || string(calls) != "b" {
		t.Errorf("calls %s, error %v; want b and the anchor's error", calls, err)
	}
	round := func(cpu, wall, acpu, awall float64) *measurement {
		return &measurement{Bytes: 1e6, Iters: 10, CPUSec: cpu, WallSec: wall, AnchorCPUSec: acpu, AnchorWallSec: awall, PeakRSS: 1}
	}
	// Wall ratios 1.5, 2, 1.8; CPU ratios 0.9, 1, 0.8.
	med := median([]*measurement{round(2, 1, 1.8, 1.5), round(1, 4, 1, 8), round(4, 2, 3.2, 3.6)})
	if got := med.AnchorWallSec / med.WallSec; math.Abs(got-1.8) > 1e-9 {
		t.Errorf("median wall ratio to the anchor %v, want 1.8", got)
	}
	if got := med.AnchorCPUSec / med.CPUSec; math.Abs(got-0.9) > 1e-9 {
		t.Errorf("median CPU ratio to the anchor %v, want 0.9", got)
	}
}

// TestSummarySmallBatches checks the small-batch and protogo-gen target
// lines: judged on the calls alternating (ours-1t-1mb-paired,
// protogo-gen-paired) where they ran, the runs apart then printed for
// reference only.
func TestSummarySmallBatches(t *testing.T) {
	m := func(dec string, cpuSec, anchorCPUSec float64) result {
		return result{"flat", dec, &measurement{Bytes: 100e6, Iters: 1, CPUSec: cpuSec, WallSec: cpuSec,
			AnchorCPUSec: anchorCPUSec, AnchorWallSec: anchorCPUSec, PeakRSS: 1}}
	}
	for _, tc := range []struct {
		name    string
		results []result
		want    []string
	}{
		{"apart", []result{m("ours-1t", 1, 0), m("ours-1t-1mb", 1.2, 0)},
			[]string{"1 MB batches, run apart from ours-1t: 83% of its MB/cpu-s (83.3 vs 100.0), goal >= 80%: met"}},
		{"paired", []result{m("ours-1t", 1, 0), m("ours-1t-1mb", 1.2, 0), m("ours-1t-1mb-paired", 2, 1.5)},
			[]string{"1 MB batches, calls alternating with ours-1t's: 75% of its MB/cpu-s (50.0 vs 66.7), goal >= 80%: MISSED",
				"1 MB batches, run apart from ours-1t: 83% of its MB/cpu-s (83.3 vs 100.0), goal >= 80%: for reference (judged above)"}},
		{"protogo-gen", []result{m("ours-1t", 1, 0), m("protogo-gen", 4, 0), m("protogo-gen-paired", 5.6, 2)},
			[]string{"speedup ours-1t vs protogo-gen, calls alternating: 2.8x (50.0 vs 17.9 MB/cpu-s), goal >= 3x: MISSED",
				"speedup ours-1t vs protogo-gen: 4.0x (100.0 vs 25.0 MB/cpu-s), goal >= 3x: for reference (judged above)"}},
		{"recycling", []result{m("ours-1t", 1, 0), m("ours-1t-1mb-recycle-paired", 1, 0.9)},
			[]string{"1 MB batches, recycling, calls alternating with ours-1t-recycle's: 90% of its MB/cpu-s (100.0 vs 111.1), goal >= 80%: met"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			summarize(&buf, tc.results, nil)
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), "target dataset=flat "+w+"\n") {
					t.Errorf("summary lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

type fakePeer struct {
	calls *[]byte
	name  byte
	cpu   time.Duration
	err   error
}

func (p fakePeer) call() (cpu, wall time.Duration, err error) {
	*p.calls = append(*p.calls, p.name)
	return p.cpu, p.cpu, p.err
}

// TestMain lets the test binary be the harness (main) in the processes
// TestLockstepChildren and TestExampleDatasets start: the harness starts
// the processes of a pair as copies of itself.
func TestMain(m *testing.M) {
	if os.Getenv(harnessEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const harnessEnv = "STRUCTTENSOR_BENCH_TEST_IS_HARNESS"

// TestLockstepChildren times a paired decoder as make bench does: a
// process that drives the decoder and its anchor, each in a process of
// its own, call by call; and checks that a pair whose children fail
// reports their error.
func TestLockstepChildren(t *testing.T) {
	e, err := newEnv("", "")
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := lookupDataset("recipe")
	ds, err := generate(e.schemas, spec, 300000, 7)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "recipe.tfrecord")
	if err := writeDataset(ds, file); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (*measurement, string, error) {
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), harnessEnv+"=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, stderr.String(), err
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		m := new(measurement)
		return m, stderr.String(), json.Unmarshal([]byte(lines[len(lines)-1]), m)
	}
	for _, dec := range []string{"ours-1t-1mb-paired", "ours-all-paired"} {
		m, stderr, err := run("-min-time", "0", "-min-iters", "3", "-run-one", "recipe", dec, file)
		if err != nil {
			t.Fatalf("%s: %v\n%s", dec, err, stderr)
		}
		if m.Iters != 3 || m.Bytes != ds.bytes() || m.CPUSec <= 0 || m.AnchorCPUSec <= 0 || m.AnchorWallSec <= 0 || m.PeakRSS <= 0 {
			t.Errorf("%s: %+v, want 3 calls of %d bytes each, timed with the anchor's", dec, *m, ds.bytes())
		}
	}
	// A dataset file that is not there: both children fail before their
	// first call, and the driver says why.
	_, stderr, err := run("-min-time", "0", "-run-one", "recipe", "ours-1t-1mb-paired", file+".absent")
	if err == nil || !strings.Contains(stderr, "the child ended") || !strings.Contains(stderr, "no such file") {
		t.Errorf("a pair on a missing file: %v\n%s", err, stderr)
	}
}
