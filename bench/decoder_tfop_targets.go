package main

import (
	"fmt"
	"io"
)

// Issue 4's targets for the decode op inside a TensorFlow session (tf-op,
// built into bin/bench-tf and run through -decoders-from): its throughput
// per CPU-second against the direct Go path and against struct2tensor, on
// the same records in the same run. This file has no build tag: the
// summary is printed by the harness that ran every decoder, which need
// not link TensorFlow.
const (
	minTFOpVsOurs = 0.8 // tf-op >= 80% of ours-1t
	minTFOpVsS2T  = 5.0 // tf-op >= 5x struct2tensor
)

// summarizeTFOp prints the tf-op target lines of one dataset; nothing when
// tf-op did not run. paired is tf-op-paired's measurement (nil when it did
// not run): tf-op's calls alternating with ours-1t's, on which the two
// ratios to ours-1t are judged; the runs apart are then printed for
// reference. recyclePaired is ours-1t-recycle-paired's, the same for
// ours-1t-recycle (timed) beside tf-op (the anchor).
func summarizeTFOp(w io.Writer, ds string, ours, recycle, tfop, paired, recyclePaired, s2t *measurement, s2tSkipped string, met func(bool) string) {
	if tfop == nil {
		return
	}
	ratios := func(how string, r, tfopRate, oursRate float64, verdict func(bool) string) {
		fmt.Fprintf(w, "target dataset=%s tf-op vs ours-1t%s: %.0f%% (%.1f vs %.1f MB/cpu-s), goal >= %.0f%%: %s\n",
			ds, how, 100*r, tfopRate, oursRate, 100*minTFOpVsOurs, verdict(r >= minTFOpVsOurs))
		// The Go path costs nothing over the op: ours-1t >= tf-op.
		fmt.Fprintf(w, "target dataset=%s ours-1t vs tf-op%s: %.0f%% (%.1f vs %.1f MB/cpu-s), goal >= 100%%: %s\n",
			ds, how, 100/r, oursRate, tfopRate, verdict(r <= 1))
	}
	if paired != nil {
		r := paired.AnchorCPUSec / paired.CPUSec
		ratios(", calls alternating", r, paired.mbPerCPUSec(), paired.mbPerCPUSec()/r, met)
	}
	ratios("", tfop.mbPerCPUSec()/ours.mbPerCPUSec(), tfop.mbPerCPUSec(), ours.mbPerCPUSec(), apart(paired, met))
	// The same with the Go path's output memory reused from batch to
	// batch, as the op's is.
	recycled := func(how string, x, oursRate, tfopRate float64, verdict func(bool) string) {
		fmt.Fprintf(w, "target dataset=%s ours-1t-recycle vs tf-op%s: %.0f%% (%.1f vs %.1f MB/cpu-s), goal >= 100%%: %s\n",
			ds, how, 100*x, oursRate, tfopRate, verdict(x >= 1))
	}
	if recyclePaired != nil {
		x := recyclePaired.AnchorCPUSec / recyclePaired.CPUSec
		recycled(", calls alternating", x, recyclePaired.mbPerCPUSec(), recyclePaired.mbPerCPUSec()/x, met)
	}
	if recycle != nil {
		recycled("", recycle.mbPerCPUSec()/tfop.mbPerCPUSec(), recycle.mbPerCPUSec(), tfop.mbPerCPUSec(), apart(recyclePaired, met))
	}
	if s2t == nil {
		if s2tSkipped == "" {
			s2tSkipped = "not run"
		}
		fmt.Fprintf(w, "target dataset=%s speedup tf-op vs struct2tensor: not measured (%s)\n", ds, s2tSkipped)
		return
	}
	x := tfop.mbPerCPUSec() / s2t.mbPerCPUSec()
	fmt.Fprintf(w, "target dataset=%s speedup tf-op vs struct2tensor: %.1fx (%.1f vs %.1f MB/cpu-s), goal >= %.0fx: %s\n",
		ds, x, tfop.mbPerCPUSec(), s2t.mbPerCPUSec(), minTFOpVsS2T, met(x >= minTFOpVsS2T))
}
