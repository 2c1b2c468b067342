package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/exampledata"
	"github.com/structtensor/structtensor-go/structtensor"
)

// The tf.Example datasets decoded by feature spec (decode.ExamplePlan,
// the form of tf.io.parse_example), not by descriptor: realistic records
// of package exampledata, whose anchors are TensorFlow's parse_example
// and tfx-bsl's decoder. Only decoders whose runsOn includes
// exampleDatasets run on them.

// exampleDatasetSpec describes one dataset decoded by feature spec.
type exampleDatasetSpec struct {
	name, about string
	set         func(r *rand.Rand) *exampledata.Set
}

var exampleDatasetSpecs = []exampleDatasetSpec{
	{"tfexample-spec", "tf.Example by feature spec: 37 features of a ranking model (id and tag lists, counts, scores, queries, four 16-float embeddings, a price, a country), some absent",
		exampledata.Ranking},
	{"seqexample-spec", "tf.SequenceExample by feature spec: sessions of 5-30 steps (item id, click, dwell, tags, token) with a 5-feature context",
		exampledata.Sessions},
}

func lookupExampleDataset(name string) (exampleDatasetSpec, bool) {
	for _, d := range exampleDatasetSpecs {
		if d.name == name {
			return d, true
		}
	}
	return exampleDatasetSpec{}, false
}

// generateExamples draws records of spec until they hold at least size
// bytes; the same seed always gives the same bytes.
func generateExamples(spec exampleDatasetSpec, size int64, seed uint64) (*dataset, error) {
	set := spec.set(rand.New(rand.NewPCG(seed, hashName(spec.name))))
	ds, err := exampleDataset(spec.name, set)
	if err != nil {
		return nil, err
	}
	ds.offsets = []int64{0}
	for int64(len(ds.data)) < size {
		ds.data = append(ds.data, set.Next()...)
		ds.offsets = append(ds.offsets, int64(len(ds.data)))
	}
	return ds, nil
}

// exampleDataset is an empty dataset of set's kind: its spec and output
// field names.
func exampleDataset(name string, set *exampledata.Set) (*dataset, error) {
	spec, err := decode.ParseExampleSpec(set.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ds := &dataset{name: name, features: spec, specJSON: set.Spec, sequence: set.Sequence}
	plan, err := compileExamplePlan(ds)
	if err != nil {
		return nil, err
	}
	for _, f := range plan.Spec().Fields {
		ds.paths = append(ds.paths, f.Name)
	}
	return ds, nil
}

// compileExamplePlan compiles the feature spec of an example dataset.
func compileExamplePlan(ds *dataset) (*decode.ExamplePlan, error) {
	compile := decode.CompileExample
	if ds.sequence {
		compile = decode.CompileSequenceExample
	}
	plan, err := compile(ds.features)
	if err != nil {
		return nil, fmt.Errorf("%s: compiling the feature spec: %w", ds.name, err)
	}
	return plan, nil
}

// exampleLeafDigests digests each feature's flat values, keyed by output
// field name, as python/bench/example_decode.py does.
func exampleLeafDigests(st *structtensor.StructTensor, names []string) (map[string]leafDigest, error) {
	out := make(map[string]leafDigest, len(names))
	for _, name := range names {
		v, err := st.FieldValue(name)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case *structtensor.Tensor:
			out[name] = hashValues(x, false)
		case *structtensor.Ragged:
			out[name] = hashValues(x.Values(), false)
		default:
			return nil, fmt.Errorf("feature %s: %v", name, v.Spec())
		}
	}
	return out, nil
}

// The anchors: TensorFlow's parser with one intra-op thread (.venv) and
// tfx-bsl's decoder (.venv-tfx), by python/bench/example_decode.py. They
// run on the example datasets only.
func init() {
	for _, a := range []struct {
		name, venv, script string
		order              int
		about              string
		someLeaves         bool
	}{
		{"tf-parse-example", ".venv", "tf", 47,
			"tf.io.parse_example / parse_sequence_example (TensorFlow 2.21, .venv) in a tf.function, one intra-op and one inter-op thread, the same feature spec", false},
		{"tfx-bsl", ".venv-tfx", "tfx", 48,
			"tfx-bsl's ExamplesToRecordBatchDecoder / SequenceExamplesToRecordBatchDecoder (.venv-tfx), no schema, to an Arrow RecordBatch", true},
	} {
		unavailable := func(e *env) string {
			if _, err := os.Stat(anchorPython(e, a.venv)); err != nil {
				return fmt.Sprintf("%s is absent (scripts/setup-python.sh builds %s)", anchorPython(e, a.venv), a.venv)
			}
			return ""
		}
		registerDecoder(decoder{
			name:        a.name,
			order:       a.order,
			about:       a.about,
			runsOn:      exampleDatasets,
			someLeaves:  a.someLeaves,
			timedOnce:   true,
			unavailable: unavailable,
			external: func(e *env, ds *dataset, file string) (*measurement, error) {
				cmd, err := exampleAnchorCmd(e, ds, file, a.venv, a.script, false)
				if err != nil {
					return nil, err
				}
				return runChild(cmd)
			},
		})
		// The goals against the anchors are judged on their calls
		// alternating with ours-1t's (lockstep.go): the anchor run apart
		// met other spells of the host's load (ours-1t / tf-parse-example
		// on tfexample-spec: 3.59x in one run, 2.34x in the next).
		registerDecoder(decoder{
			name:        a.name + "-paired",
			order:       a.order,
			about:       a.name + ", each call beside one of ours-1t (alternating, in lockstep)",
			runsOn:      exampleDatasets,
			someLeaves:  a.someLeaves,
			timedOnce:   true,
			unavailable: unavailable,
			external: func(e *env, ds *dataset, file string) (*measurement, error) {
				cmd, err := exampleAnchorCmd(e, ds, file, a.venv, a.script, true)
				if err != nil {
					return nil, err
				}
				self, err := os.Executable()
				if err != nil {
					return nil, err
				}
				return runLockstep(e, a.name+"-paired", cmd, "ours-1t", harnessCmd(e, self, ds.name, "ours-1t", file))
			},
		})
	}
}

func anchorPython(e *env, venv string) string { return filepath.Join(e.root, venv, "bin", "python") }

// exampleAnchorCmd is the command that times anchor decoder (the
// script's --decoder) of venv on ds's records in file, in lockstep if
// lockstep.
func exampleAnchorCmd(e *env, ds *dataset, file, venv, decoder string, lockstep bool) (*exec.Cmd, error) {
	if ds.features == nil {
		return nil, fmt.Errorf("%s is not a dataset of tf.Examples by feature spec", ds.name)
	}
	specFile := file + ".spec.json"
	if err := os.WriteFile(specFile, ds.specJSON, 0o644); err != nil {
		return nil, err
	}
	args := []string{filepath.Join(e.root, "python", "bench", "example_decode.py"), "--decoder", decoder,
		"--spec", specFile, "--file", file,
		"--min-time", fmt.Sprint(e.minTime.Seconds()), "--min-iters", fmt.Sprint(e.minIters)}
	if ds.sequence {
		args = append(args, "--sequence")
	}
	if lockstep {
		args = append(args, "--lockstep")
	}
	cmd := exec.Command(anchorPython(e, venv), args...)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
	return cmd, nil
}

// The targets of the example datasets: ours-1t against the anchors, per
// CPU-second in the same run.
const (
	minSpeedupVsTFParse = 3.0 // ours-1t >= 3x tf.io.parse_example (one intra-op thread)
	minSpeedupVsTFXBSL  = 2.0 // ours-1t >= 2x tfx-bsl's decoder
)

// summarizeExamples prints the anchor target lines of an example
// dataset, saying so when an anchor did not run.
func summarizeExamples(w io.Writer, ds string, ours *measurement, get func(ds, dec string) *measurement, skipped map[string]string, met func(bool) string) {
	for _, a := range []struct {
		name string
		goal float64
	}{{"tf-parse-example", minSpeedupVsTFParse}, {"tfx-bsl", minSpeedupVsTFXBSL}} {
		paired := get(ds, a.name+"-paired")
		if paired != nil {
			x := paired.CPUSec / paired.AnchorCPUSec
			fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs %s, calls alternating: %.2fx (%.1f vs %.1f MB/cpu-s), goal >= %.0fx: %s\n",
				ds, a.name, x, paired.mbPerCPUSec()*x, paired.mbPerCPUSec(), a.goal, met(x >= a.goal))
		}
		m := get(ds, a.name)
		if m == nil {
			why := skipped[a.name]
			if why == "" {
				why = "not run"
			}
			fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs %s: not measured (%s)\n", ds, a.name, why)
			continue
		}
		x := ours.mbPerCPUSec() / m.mbPerCPUSec()
		fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs %s: %.2fx (%.1f vs %.1f MB/cpu-s), goal >= %.0fx: %s\n",
			ds, a.name, x, ours.mbPerCPUSec(), m.mbPerCPUSec(), a.goal, apart(paired, met)(x >= a.goal))
	}
}
