package stats

import (
	"slices"
	"strings"
)

// frequentSketch finds the most frequent byte strings: Misra-Gries with c
// counters, merged as Agarwal et al. merge them ("Mergeable summaries",
// 2012). A value seen for the first time takes a free counter; when none
// is free, every counter goes down by one and those at zero are freed.
// A merge adds the counters of both sides and, when more than c remain,
// subtracts the (c+1)-th largest count from all of them and drops those
// left at zero or below.
//
// Every estimate is a lower bound, and undercounts by at most
// (n - kept)/(c+1) <= n/(c+1), n being the number of values added and
// kept the sum of the counters: each decrement step removes c+1 units of
// count at once (c counters and the value that was not counted). So any
// value more frequent than n/(c+1) is among the counters. The counters
// depend only on the values and the order of adds and merges.
type frequentSketch struct {
	capacity int
	n        uint64
	counts   map[string]uint64
}

func newFrequentSketch(capacity int) *frequentSketch {
	return &frequentSketch{capacity: capacity, counts: make(map[string]uint64)}
}

func (f *frequentSketch) add(b []byte) {
	f.n++
	if c, ok := f.counts[string(b)]; ok {
		f.counts[string(b)] = c + 1
		return
	}
	if len(f.counts) < f.capacity {
		f.counts[string(b)] = 1
		return
	}
	for k, c := range f.counts {
		if c == 1 {
			delete(f.counts, k)
		} else {
			f.counts[k] = c - 1
		}
	}
}

func (f *frequentSketch) merge(o *frequentSketch) {
	f.n += o.n
	for k, c := range o.counts {
		f.counts[k] += c
	}
	if len(f.counts) <= f.capacity {
		return
	}
	all := make([]uint64, 0, len(f.counts))
	for _, c := range f.counts {
		all = append(all, c)
	}
	slices.Sort(all)
	cut := all[len(all)-1-f.capacity] // the (c+1)-th largest
	for k, c := range f.counts {
		if c <= cut {
			delete(f.counts, k)
		} else {
			f.counts[k] = c - cut
		}
	}
}

// errorBound is how much any estimate may undercount.
func (f *frequentSketch) errorBound() uint64 {
	var kept uint64
	for _, c := range f.counts {
		kept += c
	}
	return (f.n - kept) / uint64(f.capacity+1)
}

// top returns up to k values, most frequent first, ties in byte order.
func (f *frequentSketch) top(k int) []ValueCount {
	out := make([]ValueCount, 0, len(f.counts))
	for v, c := range f.counts {
		out = append(out, ValueCount{Value: v, Count: c})
	}
	slices.SortFunc(out, func(a, b ValueCount) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Value, b.Value)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}
