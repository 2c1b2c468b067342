package stats

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// mergeTree adds values to parts sketches (values dealt out in runs) and
// merges them in a random order.
func mergeTree[S any](rng *rand.Rand, parts int, values int, newSketch func() S, add func(S, int), merge func(into, from S)) S {
	sk := make([]S, parts)
	for i := range sk {
		sk[i] = newSketch()
	}
	for i := 0; i < values; {
		run := 1 + rng.IntN(5000)
		p := rng.IntN(parts)
		for ; run > 0 && i < values; run, i = run-1, i+1 {
			add(sk[p], i)
		}
	}
	for len(sk) > 1 {
		i, j := rng.IntN(len(sk)), rng.IntN(len(sk)-1)
		if j >= i {
			j++
		}
		merge(sk[i], sk[j])
		sk = slices.Delete(sk, j, j+1)
	}
	return sk[0]
}

// The quantile sketch's every rank is within its reported bound, which
// is within the documented H/(k-1), for inputs in adversarial orders
// and any merge tree; the usual error is far below the bound.
func TestQuantileBound(t *testing.T) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(1, 2))
	orders := map[string]func(i int) float64{
		"ascending":  func(i int) float64 { return float64(i) },
		"descending": func(i int) float64 { return float64(n - i) },
		"random":     func(i int) float64 { return float64(mix64(uint64(i)) >> 11) },
		"few values": func(i int) float64 { return float64(mix64(uint64(i)) % 7) },
		"zigzag":     func(i int) float64 { return float64((i % 1000) * (1 - 2*(i%2))) },
	}
	for name, value := range orders {
		for _, k := range []int{16, 512} {
			for _, parts := range []int{1, 7} {
				s := mergeTree(rng, parts, n, func() *quantileSketch { return newQuantileSketch(k) },
					func(s *quantileSketch, i int) { s.add(value(i)) },
					func(a, b *quantileSketch) { a.merge(b) })
				all := make([]float64, n)
				for i := range all {
					all[i] = value(i)
				}
				slices.Sort(all)
				eps := s.rankError()
				if limit := (math.Floor(math.Log2(n/float64(k))) + 1) / float64(k-1); eps > limit {
					t.Errorf("%s k=%d: bound %v over the documented %v", name, k, eps, limit)
				}
				var qs []float64
				for i := 0; i <= 100; i++ {
					qs = append(qs, float64(i)/100)
				}
				worst := 0.0
				for i, x := range s.quantiles(qs, all[0], all[n-1]) {
					target := qs[i] * n
					below := float64(sort.SearchFloat64s(all, x))
					atOrBelow := float64(sort.Search(n, func(j int) bool { return all[j] > x }))
					err := max(below-target, target-atOrBelow, 0) / n
					worst = max(worst, err)
					if err > eps {
						t.Fatalf("%s k=%d parts=%d: quantile %v = %v off by %v of n, bound %v", name, k, parts, qs[i], x, err, eps)
					}
				}
				t.Logf("%s k=%d parts=%d: worst rank error %.5f, bound %.5f, %d levels", name, k, parts, worst, eps, len(s.levels))
			}
		}
	}
}

// The distinct counts of sketches merged from any parts equal the
// sketch of the whole (the registers are the same), and estimates are
// within four standard errors over a range of cardinalities.
func TestDistinctAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []uint8{10, 14} {
		for _, n := range []int{10, 1000, 20_000, 60_000, 300_000} {
			key := func(i int) []byte { return []byte("value-" + strconv.Itoa(i%n)) }
			// Every value twice, so duplicates land in different parts.
			merged := mergeTree(rng, 5, 2*n, func() *distinctSketch { return newDistinctSketch(p) },
				func(d *distinctSketch, i int) { d.add(key(i)) },
				func(a, b *distinctSketch) { a.merge(b) })
			whole := newDistinctSketch(p)
			for i := range n {
				whole.add(key(i))
			}
			if !slices.Equal(merged.registers, whole.registers) {
				t.Fatalf("p=%d n=%d: merged registers differ from one sketch's", p, n)
			}
			est := merged.estimate()
			rel := (est - float64(n)) / float64(n)
			t.Logf("p=%d n=%d: estimate %.0f (%+.4f, standard error %.4f)", p, n, est, rel, merged.standardError())
			if math.Abs(rel) > 4*merged.standardError() {
				t.Errorf("p=%d n=%d: estimate %.0f is %+.4f off, over four standard errors", p, n, est, rel)
			}
		}
	}
}

// Frequent values: merged in any order, every count is a lower bound
// within the reported undercount, which is within n/(c+1), and every
// value more frequent than that bound is kept.
func TestFrequentBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 200_000
	zipf := rand.NewZipf(rand.New(rand.NewPCG(7, 8)), 1.2, 1, 5000)
	values := make([]string, n)
	truth := map[string]uint64{}
	for i := range values {
		values[i] = "v" + strconv.FormatUint(zipf.Uint64(), 10)
		truth[values[i]]++
	}
	for _, c := range []int{10, 100} {
		for _, parts := range []int{1, 9} {
			f := mergeTree(rng, parts, n, func() *frequentSketch { return newFrequentSketch(c) },
				func(f *frequentSketch, i int) { f.add([]byte(values[i])) },
				func(a, b *frequentSketch) { a.merge(b) })
			bound := f.errorBound()
			if bound > n/uint64(c+1) {
				t.Fatalf("c=%d: undercount bound %d over n/(c+1) = %d", c, bound, n/(c+1))
			}
			for v, tc := range truth {
				est := f.counts[v]
				if est > tc || tc-est > bound {
					t.Fatalf("c=%d parts=%d: %s counted %d, true %d, bound %d", c, parts, v, est, tc, bound)
				}
			}
			top := f.top(5)
			t.Logf("c=%d parts=%d: undercount bound %d; top %v", c, parts, bound, top)
		}
	}
}

// The fixed-point sums are exact: equal to rational arithmetic for any
// floats (subnormal and huge included) and integers, in any order.
func TestFixedPointExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		floats := rapid.SliceOf(rapid.OneOf(
			rapid.Float64(),
			rapid.Float64Range(-1, 1),
			rapid.Just(math.MaxFloat64), rapid.Just(-math.MaxFloat64),
			rapid.Just(5e-324), rapid.Just(-2.2e-308),
		)).Draw(t, "floats")
		ints := rapid.SliceOf(rapid.Int64()).Draw(t, "ints")
		var sum, sq fixedPoint
		rsum, rsq := new(big.Rat), new(big.Rat)
		for _, x := range floats {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				continue
			}
			sum.addFloat(x)
			sq.addFloatSquare(x)
			r := new(big.Rat).SetFloat64(x)
			rsum.Add(rsum, r)
			rsq.Add(rsq, new(big.Rat).Mul(r, r))
		}
		for _, v := range ints {
			mag := uint64(v)
			if v < 0 {
				mag = -mag
			}
			sum.addInt(mag, v < 0)
			sq.addIntSquare(mag)
			r := new(big.Rat).SetInt64(v)
			rsum.Add(rsum, r)
			rsq.Add(rsq, new(big.Rat).Mul(r, r))
		}
		unit := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), fixedScale))
		for _, c := range []struct {
			got  *fixedPoint
			want *big.Rat
		}{{&sum, rsum}, {&sq, rsq}} {
			got := new(big.Rat).Mul(new(big.Rat).SetInt(c.got.int()), unit)
			if got.Cmp(c.want) != 0 {
				t.Fatalf("sum %v, want %v", got.FloatString(20), c.want.FloatString(20))
			}
			var back fixedPoint
			if !back.setInt(c.got.int()) || back != *c.got {
				t.Fatal("setInt(int()) differs")
			}
		}
	})
}
