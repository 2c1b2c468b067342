// Command bench is the decode benchmark harness that `make bench` runs. It
// generates deterministic datasets (seeded), decodes each with every
// registered decoder in a process of its own, and prints one line per
// dataset and decoder:
//
//	dataset=<name> decoder=<name> bytes=<n> mb_per_cpu_s=<x> wall_mb_per_s=<y> peak_rss_mb=<z> ratio_vs_ours=<r>
//
// then one summary line per target. See bench/README.md for the method.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/structtensor/structtensor-go/tfrecord"
)

// env is what decoders may need besides their dataset.
type env struct {
	root       string // module root
	schemas    *schemas
	descPath   string // the FileDescriptorSet file
	s2tPython  string
	minTime    time.Duration
	minIters   int
	rounds     int    // times each in-process decoder runs per dataset (-rounds)
	cpuProfile string // -run-one only
	lockstep   bool   // -run-one only: time the calls at the parent's word (lockstep.go)
	// probeRef is the fastest core probe (coreprobe.go) the harness has
	// seen, its own and its children's, passed to each child (-probe-ref).
	probeRef time.Duration
	// agreementOnly is set by tests that compare outputs and keep no
	// timing: struct2tensor runs without TensorFlow's graph optimizer,
	// which spends seconds on each of its large graphs and changes no value.
	agreementOnly bool
}

func main() {
	var (
		datasetsFlag = flag.String("datasets", datasetNames(), "comma-separated datasets to run")
		decodersFlag = flag.String("decoders", "", "comma-separated decoders to run (default: every registered decoder)")
		mb           = flag.Float64("mb", 32, "size of each dataset in MB (1e6 bytes of serialized records)")
		seed         = flag.Uint64("seed", 1, "seed of the dataset generator")
		minTime      = flag.Duration("min-time", time.Second, "process CPU time each decoder is timed for, at least")
		minIters     = flag.Int("min-iters", 2, "timed decodes per decoder, at least")
		rounds       = flag.Int("rounds", 1, "time each in-process decoder this many times per dataset, in rounds of every decoder (each round in another order), and report the median")
		dir          = flag.String("dir", "", "directory for the dataset files (default: a temporary directory, removed at exit)")
		descPath     = flag.String("descriptors", "", "FileDescriptorSet of the schemas (default: <module root>/"+descriptorSetPath+")")
		s2tPython    = flag.String("s2t-python", "", "Python with struct2tensor (default: <module root>/.venv-s2t/bin/python)")
		list         = flag.Bool("list", false, "list the datasets and decoders, and exit")
		runOne       = flag.Bool("run-one", false, "time one decoder on one dataset file (args: DATASET DECODER FILE) and print JSON; the harness runs itself so")
		cpuProfile   = flag.String("cpuprofile", "", "with -run-one: write a CPU profile of the timed decodes to this file")
		decodersFrom = flag.String("decoders-from", "", "another build of this harness (e.g. -tags tensorflow) whose extra decoders run from it")
		listJSON     = flag.Bool("list-json", false, "internal: list the in-process decoders as JSON, for -decoders-from")
		lockstep     = flag.Bool("lockstep", false, "internal, with -run-one: time one call per line \"call\" read from standard input (a decoder paired with its anchor)")
		probeRef     = flag.Duration("probe-ref", 0, "internal, with -run-one: the fastest core probe the harness has seen (coreprobe.go)")
	)
	flag.Parse()
	e, err := newEnv(*descPath, *s2tPython)
	if err != nil {
		fatal(err)
	}
	e.minTime, e.minIters, e.rounds = *minTime, *minIters, max(*rounds, 1)
	if *decodersFrom != "" {
		if err := addDecodersFrom(*decodersFrom); err != nil {
			fatal(err)
		}
	}
	switch {
	case *listJSON:
		var out []decoderInfo
		for _, d := range decodersInOrder() {
			if d.prepare != nil {
				out = append(out, decoderInfo{d.name, d.order, d.about})
			}
		}
		json.NewEncoder(os.Stdout).Encode(out)
	case *list:
		for _, d := range datasetSpecs {
			fmt.Printf("dataset %-10s %s\n", d.name, d.about)
		}
		for _, d := range exampleDatasetSpecs {
			fmt.Printf("dataset %-10s %s\n", d.name, d.about)
		}
		for _, d := range decodersInOrder() {
			fmt.Printf("decoder %-14s %s\n", d.name, d.about)
		}
	case *runOne:
		if flag.NArg() != 3 {
			fatal(errors.New("-run-one needs DATASET DECODER FILE"))
		}
		e.cpuProfile, e.lockstep, e.probeRef = *cpuProfile, *lockstep, *probeRef
		m, err := runOneDecoder(e, flag.Arg(0), flag.Arg(1), flag.Arg(2))
		if err != nil {
			fatal(err)
		}
		json.NewEncoder(os.Stdout).Encode(m)
	default:
		if err := runAll(e, split(*datasetsFlag), split(*decodersFlag), int64(*mb*1e6), *seed, *dir, os.Stdout); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func newEnv(descPath, s2tPython string) (*env, error) {
	root, err := findModuleRoot()
	if err != nil {
		return nil, err
	}
	if descPath == "" {
		descPath = filepath.Join(root, descriptorSetPath)
	}
	if s2tPython == "" {
		s2tPython = filepath.Join(root, ".venv-s2t", "bin", "python")
	}
	s, err := loadSchemas(descPath)
	if err != nil {
		return nil, err
	}
	return &env{root: root, schemas: s, descPath: descPath, s2tPython: s2tPython}, nil
}

// readDataset reads a dataset file written by runAll back into one buffer
// sized to the file, so the child's peak memory holds the input once.
func readDataset(e *env, name, file string) (*dataset, error) {
	var ds *dataset
	if spec, ok := lookupDataset(name); ok {
		md, err := e.schemas.message(spec.message)
		if err != nil {
			return nil, err
		}
		ds = &dataset{name: name, message: md, paths: leafPaths(md)}
	} else if spec, ok := lookupExampleDataset(name); ok {
		// (The feature spec does not depend on the seed.)
		var err error
		if ds, err = exampleDataset(name, spec.set(rand.New(rand.NewPCG(0, 0)))); err != nil {
			return nil, err
		}
	} else {
		return nil, fmt.Errorf("unknown dataset %q (have %s)", name, datasetNames())
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := tfrecord.Batch{Data: make([]byte, 0, st.Size())}
	if err := tfrecord.NewReader(f).ReadBatch(&b, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if b.Len() == 0 {
		return nil, fmt.Errorf("%s holds no records", file)
	}
	ds.data, ds.offsets = b.Data, b.Offsets
	return ds, nil
}

func runOneDecoder(e *env, dsName, decName, file string) (*measurement, error) {
	d, ok := registry[decName]
	if !ok || d.prepare == nil {
		return nil, fmt.Errorf("no in-process decoder %q", decName)
	}
	if d.anchor != "" && !e.lockstep {
		// This process only drives the pair (lockstep.go).
		return runPaired(e, dsName, d, file)
	}
	ds, err := readDataset(e, dsName, file)
	if err != nil {
		return nil, err
	}
	if !d.runs(ds) {
		return nil, fmt.Errorf("decoder %s does not decode dataset %s", decName, dsName)
	}
	fn, err := d.prepare(e, ds)
	if err != nil {
		return nil, err
	}
	if e.cpuProfile != "" {
		f, err := os.Create(e.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	var m *measurement
	if e.lockstep {
		m, err = timeInLockstep(ds, fn, os.Stdin, os.Stdout)
	} else {
		m, err = timeDecoder(ds, fn, e.minTime, e.minIters, e.probeRef)
	}
	if err != nil {
		return nil, err
	}
	m.Bytes = ds.bytes()
	return m, nil
}

// runChild runs cmd and parses the JSON measurement on the last line of
// its output.
func runChild(cmd *exec.Cmd) (*measurement, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", filepath.Base(cmd.Path), err, lastLines(stderr.String(), 15))
	}
	return parseMeasurement(filepath.Base(cmd.Path), stdout.Bytes())
}

// parseMeasurement reads the measurement a child printed as the last line
// of its output (who names the child in errors).
func parseMeasurement(who string, out []byte) (*measurement, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	m := new(measurement)
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), m); err != nil {
		return nil, fmt.Errorf("%s printed no measurement: %v\n%s", who, err, out)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	return m, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (e *env) childArgs() []string {
	return []string{
		"-descriptors", e.descPath, "-s2t-python", e.s2tPython,
		"-min-time", e.minTime.String(), "-min-iters", fmt.Sprint(e.minIters),
		"-probe-ref", e.probeRef.String(),
	}
}

// noteProbe keeps p, a core probe's time (the harness's own or the
// fastest a child reports), as the reference for the children after it
// when it is the fastest yet.
func (e *env) noteProbe(p time.Duration) {
	if p > 0 && (e.probeRef <= 0 || p < e.probeRef) {
		e.probeRef = p
	}
}

// roundOrder is the order in which round runs the decoders: the first
// as registered (ours-1t first, the reference the others are compared
// with), each later one rotated by one more place, so that no decoder
// always follows the same one (a decoder that leaves the machine warm or
// busy would favour or slow the next).
func roundOrder(decs []decoder, round int) []decoder {
	if len(decs) == 0 {
		return nil
	}
	k := round % len(decs)
	return append(slices.Clone(decs[k:]), decs[:k]...)
}

// median combines the measurements of one decoder's rounds into one: the
// median MB per CPU-second and, apart, the median MB per wall-second (as
// CPU and wall seconds of the first round's work), the fastest call of
// any round, the highest peak RSS, the quiet calls of every round and the
// fastest core probe (coreprobe.go), and of a decoder timed with an
// anchor the median of its rounds' ratios to it.
func median(ms []*measurement) *measurement {
	if len(ms) == 1 {
		return ms[0]
	}
	mid := func(rate func(*measurement) float64) float64 {
		rs := make([]float64, len(ms))
		for i, m := range ms {
			rs[i] = rate(m)
		}
		slices.Sort(rs)
		if n := len(rs); n%2 == 0 {
			return (rs[n/2-1] + rs[n/2]) / 2
		}
		return rs[len(rs)/2]
	}
	c := *ms[0]
	work := float64(c.Bytes) * float64(c.Iters) / 1e6
	c.CPUSec = work / mid((*measurement).mbPerCPUSec)
	c.WallSec = work / mid((*measurement).wallMBPerSec)
	if c.AnchorWallSec > 0 {
		// The median ratio to the anchor, each round's measured together.
		c.AnchorCPUSec = c.CPUSec * mid(func(m *measurement) float64 { return m.AnchorCPUSec / m.CPUSec })
		c.AnchorWallSec = c.WallSec * mid(func(m *measurement) float64 { return m.AnchorWallSec / m.WallSec })
	}
	c.QuietIters, c.QuietCPUSec = 0, 0
	for _, m := range ms {
		c.PeakRSS = max(c.PeakRSS, m.PeakRSS)
		if m.FastestCallCPUSec > 0 && (c.FastestCallCPUSec <= 0 || m.FastestCallCPUSec < c.FastestCallCPUSec) {
			c.FastestCallCPUSec = m.FastestCallCPUSec
		}
		// The quiet calls of every round together.
		c.QuietIters += m.QuietIters
		c.QuietCPUSec += m.QuietCPUSec
		if m.FastestProbeNs > 0 && (c.FastestProbeNs <= 0 || m.FastestProbeNs < c.FastestProbeNs) {
			c.FastestProbeNs = m.FastestProbeNs
		}
	}
	return &c
}

// result is one decoder's measurement on one dataset.
type result struct {
	dataset, decoder string
	m                *measurement
}

func runAll(e *env, dsNames, decNames []string, size int64, seed uint64, dir string, w io.Writer) error {
	var decs []decoder
	if len(decNames) == 0 {
		decs = decodersInOrder()
	} else {
		for _, n := range decNames {
			d, ok := registry[n]
			if !ok {
				return fmt.Errorf("unknown decoder %q", n)
			}
			decs = append(decs, d)
		}
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "structtensor-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, machineLine())
	// The first reference for telling the children's quiet calls
	// (coreprobe.go): a few hundred probes, a few tens of milliseconds.
	e.noteProbe(calibrateProbe(300))
	start := time.Now()
	var results []result
	skipped := map[string]string{}
	for _, name := range dsNames {
		ds, err := generateNamed(e.schemas, name, size, seed)
		if err != nil {
			return err
		}
		file := filepath.Join(dir, name+".tfrecord")
		if err := writeDataset(ds, file); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: dataset %s: %d records, %d bytes, %d leaf paths\n", name, ds.numRecords(), ds.bytes(), len(ds.paths))
		var base *measurement
		digests := map[string]string{}
		var runs []decoder // the decoders that ran, in order
		timed := map[string][]*measurement{}
		for round := range e.rounds {
			for _, d := range roundOrder(decs, round) {
				if !d.runs(ds) || round > 0 && d.timedOnce {
					continue
				}
				if d.unavailable != nil {
					if why := d.unavailable(e); why != "" {
						skipped[d.name] = why
						continue
					}
				}
				var m *measurement
				if d.prepare != nil {
					cmd := exec.Command(self, append(e.childArgs(), "-run-one", name, d.name, file)...)
					m, err = runChild(cmd)
				} else {
					m, err = d.external(e, ds, file)
				}
				if err != nil {
					return fmt.Errorf("dataset %s, decoder %s: %w", name, d.name, err)
				}
				e.noteProbe(time.Duration(m.FastestProbeNs))
				if m.Bytes != ds.bytes() {
					return fmt.Errorf("dataset %s, decoder %s decoded %d bytes, the dataset has %d", name, d.name, m.Bytes, ds.bytes())
				}
				if m.Digest != "" {
					if prev, ok := digests[d.name]; ok && prev != m.Digest {
						return fmt.Errorf("dataset %s: decoder %s decoded different outputs in two rounds", name, d.name)
					}
					digests[d.name] = m.Digest
				}
				if d.name == "ours-1t" && base == nil {
					base = m
				} else if base != nil && d.external != nil {
					same := sameLeaves
					if d.someLeaves {
						same = sameSomeLeaves
					}
					if err := same(base.Leaves, m.Leaves); err != nil {
						return fmt.Errorf("dataset %s: %s and ours-1t decoded different values: %w", name, d.name, err)
					}
				}
				if timed[d.name] == nil {
					runs = append(runs, d)
				}
				timed[d.name] = append(timed[d.name], m)
			}
		}
		medians := map[string]*measurement{}
		for _, d := range runs {
			medians[d.name] = median(timed[d.name])
		}
		for _, d := range runs {
			m := medians[d.name]
			ratio := "NA"
			if b := medians["ours-1t"]; b != nil {
				ratio = fmt.Sprintf("%.3f", m.mbPerCPUSec()/b.mbPerCPUSec())
			}
			spread := ""
			if ms := timed[d.name]; len(ms) > 1 {
				lo, hi := math.Inf(1), 0.0
				for _, x := range ms {
					lo, hi = min(lo, x.mbPerCPUSec()), max(hi, x.mbPerCPUSec())
				}
				spread = fmt.Sprintf(" rounds=%d mb_per_cpu_s_range=%.1f-%.1f", len(ms), lo, hi)
			}
			if f := m.fastestMBPerCPUSec(); f > 0 {
				spread += fmt.Sprintf(" fastest_call_mb_per_cpu_s=%.1f", f)
			}
			if m.FastestProbeNs > 0 {
				calls := 0
				for _, x := range timed[d.name] {
					calls += x.Iters
				}
				spread += fmt.Sprintf(" quiet_calls=%d/%d quiet_mb_per_cpu_s=%.1f", m.QuietIters, calls, m.quietMBPerCPUSec())
			}
			fmt.Fprintf(w, "dataset=%s decoder=%s bytes=%d mb_per_cpu_s=%.1f wall_mb_per_s=%.1f peak_rss_mb=%.1f ratio_vs_ours=%s%s\n",
				name, d.name, m.Bytes, m.mbPerCPUSec(), m.wallMBPerSec(), float64(m.PeakRSS)/1e6, ratio, spread)
			results = append(results, result{name, d.name, m})
		}
		if err := sameDigests(name, digests); err != nil {
			return err
		}
	}
	for name, why := range skipped {
		fmt.Fprintf(os.Stderr, "bench: decoder %s skipped: %s\n", name, why)
	}
	summarize(w, results, skipped)
	fmt.Fprintf(os.Stderr, "bench: done in %.0fs\n", time.Since(start).Seconds())
	return nil
}

func writeDataset(ds *dataset, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := tfrecord.NewWriter(f)
	for i := 0; i < ds.numRecords(); i++ {
		if err := w.Write(ds.data[ds.offsets[i]:ds.offsets[i+1]]); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sameDigests fails the run when the Go decoders disagree on a dataset's
// output: a fast wrong decoder must not post a number.
func sameDigests(dataset string, digests map[string]string) error {
	var first, firstName string
	for _, d := range decodersInOrder() {
		if dg, ok := digests[d.name]; ok {
			if first == "" {
				first, firstName = dg, d.name
			} else if dg != first {
				return fmt.Errorf("dataset %s: decoders %s and %s produced different StructTensors (digest %s vs %s)", dataset, firstName, d.name, first, dg)
			}
		}
	}
	return nil
}

// sameLeaves compares ours with another program's leaf digests: every
// leaf path must be there, with the same values.
func sameLeaves(ours, theirs map[string]leafDigest) error {
	if len(theirs) == 0 {
		return errors.New("it reported no leaf digests")
	}
	var bad []string
	for p, o := range ours {
		t, ok := theirs[p]
		switch {
		case !ok:
			bad = append(bad, p+": missing")
		case t != o:
			bad = append(bad, fmt.Sprintf("%s: %d values (sha %.12s) vs ours %d (sha %.12s)", p, t.N, t.SHA, o.N, o.SHA))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// sameSomeLeaves compares ours with the leaf digests of a decoder that
// digests only some leaves: each of those must be ours.
func sameSomeLeaves(ours, theirs map[string]leafDigest) error {
	if len(theirs) == 0 {
		return errors.New("it reported no leaf digests")
	}
	some := make(map[string]leafDigest, len(theirs))
	for p := range theirs {
		o, ok := ours[p]
		if !ok {
			return fmt.Errorf("%s: a leaf ours does not have", p)
		}
		some[p] = o
	}
	return sameLeaves(some, theirs)
}

// decoderInfo describes a decoder of another build, for -decoders-from.
type decoderInfo struct {
	Name  string `json:"name"`
	Order int    `json:"order"`
	About string `json:"about"`
}

// addDecodersFrom registers the in-process decoders of another build of
// the harness that this one lacks, run as children of that build. make
// bench uses it so that a decoder needing TensorFlow (built with -tags
// tensorflow) runs side by side with the others while they run from a
// build that does not load the TensorFlow runtime, which would add its
// hundreds of MB to every child's peak RSS.
func addDecodersFrom(binary string) error {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	out, err := exec.Command(abs, "-list-json").Output()
	if err != nil {
		return fmt.Errorf("-decoders-from %s: %v", binary, err)
	}
	var infos []decoderInfo
	if err := json.Unmarshal(out, &infos); err != nil {
		return fmt.Errorf("-decoders-from %s: %v", binary, err)
	}
	for _, info := range infos {
		if _, ok := registry[info.Name]; ok {
			continue
		}
		name := info.Name
		registerDecoder(decoder{
			name:  name,
			order: info.Order,
			about: info.About + " (run from " + binary + ")",
			external: func(e *env, ds *dataset, file string) (*measurement, error) {
				return runChild(exec.Command(abs, append(e.childArgs(), "-run-one", ds.name, name, file)...))
			},
		})
	}
	return nil
}
