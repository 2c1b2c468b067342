package main

import (
	"fmt"
	"io"
	"runtime"
)

// The targets, single-threaded and per CPU-second: flat records, and
// every dataset whose output is under lowOutputFactor times its input (a
// dataset that writes many times its input, as the wide sparse ones do,
// is bound by writing its output and has no throughput goal of its own).
const (
	flatTarget      = 2000.0
	defaultTarget   = 400.0
	lowOutputFactor = 4.0
)

const (
	minSpeedupVsS2T     = 10.0 // ours-1t >= 10x struct2tensor per CPU-second
	minSpeedupVsGenCode = 3.0  // ours-1t >= 3x protogo-gen (generated code, parse only)
	maxMemoryFactor     = 2.0  // peak RSS <= 2 x (input + output)
	// ours-all on every core: wall-clock speedup over ours-1t for batches
	// of at least allCoresMinBytes, keeping its MB per CPU-second within
	// allCoresMinCPU of ours-1t's.
	allCoresSpeedup  = 1.7
	allCoresMinCPU   = 0.9
	allCoresMinBytes = 8_000_000
	// ours-1t-1mb: MB per CPU-second in 1 MB batches against ours-1t's
	// on the whole dataset.
	smallBatchesMin = 0.8
)

// summarize prints one line per target and dataset: the goal, the
// measured number and whether it is met.
func summarize(w io.Writer, results []result, skipped map[string]string) {
	get := func(ds, dec string) *measurement {
		for _, r := range results {
			if r.dataset == ds && r.decoder == dec {
				return r.m
			}
		}
		return nil
	}
	var datasets []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.dataset] {
			seen[r.dataset] = true
			datasets = append(datasets, r.dataset)
		}
	}
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	for _, ds := range datasets {
		ours := get(ds, "ours-1t")
		if ours == nil {
			fmt.Fprintf(w, "target dataset=%s: not measured (ours-1t did not run)\n", ds)
			continue
		}
		got := ours.mbPerCPUSec()
		// The fastest call, beside the figure the goal is judged on: how far
		// the host's other load moved it.
		fastest := ""
		if f := ours.fastestMBPerCPUSec(); f > 0 {
			fastest = fmt.Sprintf(" (fastest call %.1f", f)
			switch {
			case ours.QuietIters > 0:
				fastest += fmt.Sprintf("; %d calls on a quiet core %.1f", ours.QuietIters, ours.quietMBPerCPUSec())
			case ours.FastestProbeNs > 0:
				fastest += "; no call on a quiet core"
			}
			fastest += ")"
		}
		switch factor := float64(ours.OutBytes) / float64(ours.Bytes); {
		case ds == "flat":
			fmt.Fprintf(w, "target dataset=%s throughput ours-1t: %.1f MB/cpu-s%s, goal >= %.0f: %s\n", ds, got, fastest, flatTarget, met(got >= flatTarget))
		case factor < lowOutputFactor:
			fmt.Fprintf(w, "target dataset=%s throughput ours-1t: %.1f MB/cpu-s%s, goal >= %.0f (output %.1fx input): %s\n", ds, got, fastest, defaultTarget, factor, met(got >= defaultTarget))
		default:
			fmt.Fprintf(w, "target dataset=%s throughput ours-1t: %.1f MB/cpu-s%s, no goal (output %.1fx input, >= %.0fx)\n", ds, got, fastest, factor, lowOutputFactor)
		}
		// Judged on the calls alternating (protogo-gen-paired) where they
		// ran; the run apart then for reference.
		pairedGen := get(ds, "protogo-gen-paired")
		if pairedGen != nil {
			x := pairedGen.CPUSec / pairedGen.AnchorCPUSec
			fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs protogo-gen, calls alternating: %.1fx (%.1f vs %.1f MB/cpu-s), goal >= %.0fx: %s\n",
				ds, x, pairedGen.mbPerCPUSec()*x, pairedGen.mbPerCPUSec(), minSpeedupVsGenCode, met(x >= minSpeedupVsGenCode))
		}
		if gen := get(ds, "protogo-gen"); gen != nil {
			x := got / gen.mbPerCPUSec()
			fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs protogo-gen: %.1fx (%.1f vs %.1f MB/cpu-s), goal >= %.0fx: %s\n",
				ds, x, got, gen.mbPerCPUSec(), minSpeedupVsGenCode, apart(pairedGen, met)(x >= minSpeedupVsGenCode))
		}
		// The every-core goal, judged where the calls alternated
		// (ours-all-paired, lockstep.go); the runs apart, beside it, for
		// reference.
		everyCore := func(label, anchor string, paired, all, one *measurement) {
			if paired != nil {
				x := paired.AnchorWallSec / paired.WallSec
				c := paired.AnchorCPUSec / paired.CPUSec
				fmt.Fprintf(w, "target dataset=%s %s on %d cores, calls alternating with %s's: wall speedup %.2fx (%.1f vs %.1f MB/s), goal >= %.1fx; MB/cpu-s %.0f%% of %s's, goal >= %.0f%%: %s\n",
					ds, label, runtime.NumCPU(), anchor, x, paired.wallMBPerSec(), paired.wallMBPerSec()/x, allCoresSpeedup, 100*c, anchor, 100*allCoresMinCPU, met(x >= allCoresSpeedup && c >= allCoresMinCPU))
			}
			if all == nil || one == nil {
				return
			}
			x := all.wallMBPerSec() / one.wallMBPerSec()
			c := all.mbPerCPUSec() / one.mbPerCPUSec()
			fmt.Fprintf(w, "target dataset=%s %s on %d cores, run apart from %s: wall speedup %.2fx (%.1f vs %.1f MB/s), goal >= %.1fx; MB/cpu-s %.0f%% of %s's, goal >= %.0f%%: %s\n",
				ds, label, runtime.NumCPU(), anchor, x, all.wallMBPerSec(), one.wallMBPerSec(), allCoresSpeedup, 100*c, anchor, 100*allCoresMinCPU, apart(paired, met)(x >= allCoresSpeedup && c >= allCoresMinCPU))
		}
		// The small-batch goal, judged where the calls alternated
		// (ours-1t-1mb-paired: each call of the anchor decodes the same
		// records, so the ratio of CPU seconds is that of MB per
		// CPU-second); the runs apart, beside it, for reference.
		smallBatches := func(label, anchor string, paired, small, whole *measurement) {
			if paired != nil {
				r := paired.AnchorCPUSec / paired.CPUSec
				fmt.Fprintf(w, "target dataset=%s 1 MB batches%s, calls alternating with %s's: %.0f%% of its MB/cpu-s (%.1f vs %.1f), goal >= %.0f%%: %s\n",
					ds, label, anchor, 100*r, paired.mbPerCPUSec(), paired.mbPerCPUSec()/r, 100*smallBatchesMin, met(r >= smallBatchesMin))
			}
			if small == nil || whole == nil {
				return
			}
			r := small.mbPerCPUSec() / whole.mbPerCPUSec()
			fmt.Fprintf(w, "target dataset=%s 1 MB batches%s, run apart from %s: %.0f%% of its MB/cpu-s (%.1f vs %.1f), goal >= %.0f%%: %s\n",
				ds, label, anchor, 100*r, small.mbPerCPUSec(), whole.mbPerCPUSec(), 100*smallBatchesMin, apart(paired, met)(r >= smallBatchesMin))
		}
		if float64(ours.Bytes) >= allCoresMinBytes {
			everyCore("ours-all", "ours-1t", get(ds, "ours-all-paired"), get(ds, "ours-all"), ours)
		}
		everyCore("ours-all in 8 MB batches", "ours-1t-8mb", get(ds, "ours-all-8mb-paired"), get(ds, "ours-all-8mb"), get(ds, "ours-1t-8mb"))
		smallBatches("", "ours-1t", get(ds, "ours-1t-1mb-paired"), get(ds, "ours-1t-1mb"), ours)
		smallBatches(", recycling", "ours-1t-recycle", get(ds, "ours-1t-1mb-recycle-paired"), get(ds, "ours-1t-1mb-recycle"), get(ds, "ours-1t-recycle"))
		if _, byFeature := lookupExampleDataset(ds); byFeature {
			summarizeExamples(w, ds, ours, get, skipped, met)
		} else if s2t := get(ds, "struct2tensor"); s2t != nil {
			x := ours.mbPerCPUSec() / s2t.mbPerCPUSec()
			fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs struct2tensor: %.1fx (%.1f vs %.1f MB/cpu-s), goal >= %.0fx: %s\n",
				ds, x, ours.mbPerCPUSec(), s2t.mbPerCPUSec(), minSpeedupVsS2T, met(x >= minSpeedupVsS2T))
		} else {
			why := skipped["struct2tensor"]
			if why == "" {
				why = "not run"
			}
			fmt.Fprintf(w, "target dataset=%s speedup ours-1t vs struct2tensor: not measured (%s)\n", ds, why)
		}
		for _, dec := range []string{"ours-1t", "ours-all"} {
			m := get(ds, dec)
			if m == nil {
				continue
			}
			in, out := float64(m.Bytes)/1e6, float64(m.OutBytes)/1e6
			limit := maxMemoryFactor * (in + out)
			rss := float64(m.PeakRSS) / 1e6
			fmt.Fprintf(w, "target dataset=%s memory %s: peak RSS %.1f MB (%.1f MB before decoding), goal <= 2 x (input %.1f MB + output %.1f MB) = %.1f MB: %s\n",
				ds, dec, rss, float64(m.BaseRSS)/1e6, in, out, limit, met(rss <= limit))
		}
		summarizeTFOp(w, ds, ours, get(ds, "ours-1t-recycle"), get(ds, "tf-op"), get(ds, "tf-op-paired"), get(ds, "ours-1t-recycle-paired"),
			get(ds, "struct2tensor"), skipped["struct2tensor"], met)
	}
}

// apart is the verdict of a goal's line for a run apart from its anchor:
// met's, or where the pair ran in lockstep (paired, nil when it did not),
// only a reference, the goal being judged on the pair's line.
func apart(paired *measurement, met func(bool) string) func(bool) string {
	if paired == nil {
		return met
	}
	return func(bool) string { return "for reference (judged above)" }
}
