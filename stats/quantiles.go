package stats

import "slices"

// quantileSketch summarises a stream of numbers in k·H items (H levels,
// H <= log2(n/k)+1) so that any rank is known within H/(k-1) of n, after
// any sequence of adds and merges.
//
// It is a compactor stack, as in KLL without its shrinking capacities:
// level h holds items that each stand for 2^h values. When a level holds
// k items or more, it is sorted and compacted: of its first 2m items
// (one is left behind when the count is odd) every other one, starting
// at an offset of 0 or 1, moves up a level with twice the weight. For a
// query x the estimated rank R(x) (the weight of the items <= x) changes
// by a compaction at level h by 0 when an even number of the compacted
// items are <= x, and by ±2^h otherwise. Every item that enters level h
// leaves it only by a compaction of at least k-1 items, and at most n/2^h
// ever enter it, so level h is compacted at most n/(2^h (k-1)) times and
// costs at most n/(k-1) in rank; levels are compacted only while
// n/2^h >= k. That is the deterministic bound, for any input order and
// any merge tree: |R(x) - rank(x)| <= n·H/(k-1), H being the number of
// levels above 0. The offsets come from a hash of the level and its
// compaction count rather than from a random source, so the sketch is
// the same for the same adds and merges in the same order, and the
// errors of successive compactions still tend to cancel (the usual error
// is about n·sqrt(H)/k).
//
// NaN is never added (callers count it apart); infinities are ordinary
// items.
type quantileSketch struct {
	k           int
	n           uint64
	levels      [][]float64
	compactions []uint64
}

func newQuantileSketch(k int) *quantileSketch {
	return &quantileSketch{k: k}
}

func (s *quantileSketch) add(x float64) {
	if len(s.levels) == 0 {
		s.levels = [][]float64{make([]float64, 0, s.k)}
		s.compactions = []uint64{0}
	}
	s.n++
	s.levels[0] = append(s.levels[0], x)
	if len(s.levels[0]) >= s.k {
		s.compact(0)
	}
}

func (s *quantileSketch) compact(h int) {
	for ; h < len(s.levels) && len(s.levels[h]) >= s.k; h++ {
		items := s.levels[h]
		slices.Sort(items)
		pairs := len(items) / 2 * 2
		if h+1 == len(s.levels) {
			s.levels = append(s.levels, make([]float64, 0, s.k))
			s.compactions = append(s.compactions, 0)
		}
		off := int(mix64(uint64(h)<<40^s.compactions[h]) & 1)
		for i := off; i < pairs; i += 2 {
			s.levels[h+1] = append(s.levels[h+1], items[i])
		}
		s.compactions[h]++
		// The odd item out (the largest) stays.
		rest := copy(items, items[pairs:])
		s.levels[h] = items[:rest]
	}
}

// merge adds the items of o, level by level, then compacts.
func (s *quantileSketch) merge(o *quantileSketch) {
	if o.n == 0 {
		return
	}
	for len(s.levels) < len(o.levels) {
		s.levels = append(s.levels, make([]float64, 0, s.k))
		s.compactions = append(s.compactions, 0)
	}
	s.n += o.n
	for h, items := range o.levels {
		s.levels[h] = append(s.levels[h], items...)
		s.compactions[h] += o.compactions[h]
	}
	for h := range s.levels {
		if len(s.levels[h]) >= s.k {
			s.compact(h)
		}
	}
}

// rankError is the bound on |R(x) - rank(x)| as a fraction of n.
func (s *quantileSketch) rankError() float64 {
	h := 0
	for i, c := range s.compactions {
		if c > 0 {
			h = i + 1
		}
	}
	return float64(h) / float64(s.k-1)
}

// quantiles returns, for each q (in [0, 1], ascending), the smallest item
// x whose estimated rank R(x) is at least q·n. With min and max (exact)
// the 0 and 1 quantiles are the data's own.
func (s *quantileSketch) quantiles(qs []float64, min, max float64) []float64 {
	if s.n == 0 {
		return nil
	}
	type item struct {
		x float64
		w uint64
	}
	var all []item
	for h, items := range s.levels {
		for _, x := range items {
			all = append(all, item{x, 1 << h})
		}
	}
	slices.SortFunc(all, func(a, b item) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	out := make([]float64, len(qs))
	var cum uint64
	j := 0
	for i, q := range qs {
		switch {
		case q <= 0:
			out[i] = min
			continue
		case q >= 1:
			out[i] = max
			continue
		}
		target := q * float64(s.n)
		for j < len(all) && float64(cum) < target {
			cum += all[j].w
			j++
		}
		if j == 0 {
			out[i] = min
		} else {
			out[i] = all[j-1].x
		}
	}
	return out
}

// mix64 is SplitMix64's finaliser: a fixed bijection of 64-bit words
// whose output bits each depend on every input bit.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
