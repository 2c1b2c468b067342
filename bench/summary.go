package main

import (
	"fmt"
	"io"
)

// The targets, single-threaded and per CPU-second on the
// project's 2-core machine.
var throughputTargets = map[string]float64{
	"flat":      1000,
	"recipe":    400,
	"tfexample": 400,
	"elwc":      400,
}

const (
	minSpeedupVsS2T = 5.0 // ours-1t >= 5x struct2tensor per CPU-second
	maxMemoryFactor = 2.0 // peak RSS <= 2 x (input + output)
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
		if goal, ok := throughputTargets[ds]; ok {
			got := ours.mbPerCPUSec()
			fmt.Fprintf(w, "target dataset=%s throughput ours-1t: %.1f MB/cpu-s, goal >= %.0f: %s\n", ds, got, goal, met(got >= goal))
		}
		if s2t := get(ds, "struct2tensor"); s2t != nil {
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
		summarizeTFOp(w, ds, ours, get(ds, "tf-op"), get(ds, "struct2tensor"), skipped["struct2tensor"], met)
	}
}
