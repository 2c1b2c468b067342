package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummaryTFOpTargets checks the tf-op target lines: the ratio to
// ours-1t against 80% and the speedup over struct2tensor against 5x, met
// or missed, and no line when tf-op did not run.
func TestSummaryTFOpTargets(t *testing.T) {
	m := func(dec string, cpuSec float64) result {
		return result{"recipe", dec, &measurement{Bytes: 100e6, Iters: 1, CPUSec: cpuSec, WallSec: cpuSec, PeakRSS: 1}}
	}
	paired := func(dec string, cpuSec, anchorCPUSec float64) result {
		r := m(dec, cpuSec)
		r.m.AnchorCPUSec, r.m.AnchorWallSec = anchorCPUSec, anchorCPUSec
		return r
	}
	for _, tc := range []struct {
		name    string
		results []result
		want    []string
		absent  []string
	}{
		{"met", []result{m("ours-1t", 1), m("tf-op", 1.2), m("struct2tensor", 10)},
			[]string{"tf-op vs ours-1t: 83% (83.3 vs 100.0 MB/cpu-s), goal >= 80%: met",
				"speedup tf-op vs struct2tensor: 8.3x (83.3 vs 10.0 MB/cpu-s), goal >= 5x: met"}, nil},
		{"missed", []result{m("ours-1t", 1), m("tf-op", 2), m("struct2tensor", 5)},
			[]string{"tf-op vs ours-1t: 50% (50.0 vs 100.0 MB/cpu-s), goal >= 80%: MISSED",
				"speedup tf-op vs struct2tensor: 2.5x (50.0 vs 20.0 MB/cpu-s), goal >= 5x: MISSED"}, nil},
		{"no struct2tensor", []result{m("ours-1t", 1), m("tf-op", 1)},
			[]string{"speedup tf-op vs struct2tensor: not measured (no venv)"}, nil},
		{"no tf-op", []result{m("ours-1t", 1)}, nil, []string{"tf-op"}},
		{"recycling", []result{m("ours-1t", 2), m("ours-1t-recycle", 1), m("tf-op", 1.25)},
			[]string{"ours-1t vs tf-op: 62% (50.0 vs 80.0 MB/cpu-s), goal >= 100%: MISSED",
				"ours-1t-recycle vs tf-op: 125% (100.0 vs 80.0 MB/cpu-s), goal >= 100%: met"}, nil},
		// Judged on the calls alternating: tf-op took 1.25 s where
		// ours-1t took 1 s beside it; apart, for reference only.
		{"paired", []result{m("ours-1t", 1), m("tf-op", 1), paired("tf-op-paired", 1.25, 1)},
			[]string{"tf-op vs ours-1t, calls alternating: 80% (80.0 vs 100.0 MB/cpu-s), goal >= 80%: met",
				"ours-1t vs tf-op, calls alternating: 125% (100.0 vs 80.0 MB/cpu-s), goal >= 100%: met",
				"ours-1t vs tf-op: 100% (100.0 vs 100.0 MB/cpu-s), goal >= 100%: for reference (judged above)"}, nil},
		{"paired missed", []result{m("ours-1t", 1), m("tf-op", 2), paired("tf-op-paired", 0.9, 1)},
			[]string{"ours-1t vs tf-op, calls alternating: 90% (100.0 vs 111.1 MB/cpu-s), goal >= 100%: MISSED",
				"tf-op vs ours-1t: 50% (50.0 vs 100.0 MB/cpu-s), goal >= 80%: for reference (judged above)"}, nil},
		{"recycling slower", []result{m("ours-1t", 1), m("ours-1t-recycle", 2), m("tf-op", 1)},
			[]string{"ours-1t-recycle vs tf-op: 50% (50.0 vs 100.0 MB/cpu-s), goal >= 100%: MISSED"}, nil},
		// Recycling judged on calls alternating: ours-1t-recycle took
		// 1 s where tf-op, beside it, took 1.1 s.
		{"recycling paired", []result{m("ours-1t", 1), m("ours-1t-recycle", 2), m("tf-op", 1), paired("ours-1t-recycle-paired", 1, 1.1)},
			[]string{"ours-1t-recycle vs tf-op, calls alternating: 110% (100.0 vs 90.9 MB/cpu-s), goal >= 100%: met",
				"ours-1t-recycle vs tf-op: 50% (50.0 vs 100.0 MB/cpu-s), goal >= 100%: for reference (judged above)"}, nil},
		{"recycling paired missed", []result{m("ours-1t", 1), m("ours-1t-recycle", 1), m("tf-op", 1), paired("ours-1t-recycle-paired", 1, 0.9)},
			[]string{"ours-1t-recycle vs tf-op, calls alternating: 90% (100.0 vs 111.1 MB/cpu-s), goal >= 100%: MISSED"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			summarize(&buf, tc.results, map[string]string{"struct2tensor": "no venv"})
			out := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(out, "target dataset=recipe "+w+"\n") {
					t.Errorf("summary lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("summary mentions %q:\n%s", a, out)
				}
			}
		})
	}
}
