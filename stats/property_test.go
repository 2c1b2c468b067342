package stats

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/structtensor/structtensor-go/structtensor"
)

// record is one generated record, the naive form the reference counts.
type record struct {
	id     int64
	flag   bool
	blob   []byte
	scores []float64
	tags   []string
	items  []item
}

type item struct {
	qty   uint32
	vec   [2]float32
	names []string
}

var (
	specialFloats = []float64{0, math.NaN(), math.Inf(1), math.Inf(-1), -0.0, 1e300, -1e-300, 5e-324}
	vocabulary    = []string{"a", "b", "c", "apple", "banana", "\xff\xfe", "é", "", "long value with spaces"}
)

func genRecord(t *rapid.T) record {
	var r record
	r.id = rapid.Int64Range(-1000, 1<<40).Draw(t, "id")
	r.flag = rapid.Bool().Draw(t, "flag")
	r.blob = rapid.SliceOfN(rapid.Byte(), 0, 6).Draw(t, "blob")
	for range rapid.IntRange(0, 3).Draw(t, "nscores") {
		var x float64
		switch rapid.IntRange(0, 5).Draw(t, "scorekind") {
		case 0:
			x = specialFloats[rapid.IntRange(0, len(specialFloats)-1).Draw(t, "special")]
		case 1:
			x = float64(rapid.IntRange(-3, 3).Draw(t, "small"))
		default:
			x = rapid.Float64Range(-1e6, 1e6).Draw(t, "score")
		}
		r.scores = append(r.scores, x)
	}
	for range rapid.IntRange(0, 4).Draw(t, "ntags") {
		// Skewed: low indices are frequent.
		i := rapid.IntRange(0, len(vocabulary)-1).Draw(t, "tag")
		j := rapid.IntRange(0, i).Draw(t, "tagskew")
		s := vocabulary[j]
		if rapid.IntRange(0, 9).Draw(t, "fresh") == 0 {
			s = fmt.Sprintf("v%d", rapid.IntRange(0, 500).Draw(t, "fresh value"))
		}
		r.tags = append(r.tags, s)
	}
	for range rapid.IntRange(0, 3).Draw(t, "nitems") {
		it := item{qty: rapid.Uint32().Draw(t, "qty")}
		it.vec[0] = float32(rapid.Float64Range(-10, 10).Draw(t, "v0"))
		it.vec[1] = float32(rapid.IntRange(-2, 2).Draw(t, "v1"))
		for range rapid.IntRange(0, 2).Draw(t, "nnames") {
			it.names = append(it.names, vocabulary[rapid.IntRange(0, 4).Draw(t, "name")])
		}
		r.items = append(r.items, it)
	}
	return r
}

func stringTensor(vals []string, utf8 bool) *structtensor.Tensor {
	var data []byte
	offs := []int64{0}
	for _, v := range vals {
		data = append(data, v...)
		offs = append(offs, int64(len(data)))
	}
	t, err := structtensor.NewStringTensor(structtensor.Shape{len(vals)}, data, offs, utf8)
	if err != nil {
		panic(err)
	}
	return t
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// build makes the rank-1 StructTensor of records.
func build(recs []record) *structtensor.StructTensor {
	n := len(recs)
	ids, flags, scores := []int64{}, []bool{}, []float64{}
	qty, vec := []uint32{}, []float32{}
	var blobs, tags, names []string
	scoreSplits, tagSplits, itemSplits, nameSplits := []int64{0}, []int64{0}, []int64{0}, []int64{0}
	for _, r := range recs {
		ids = append(ids, r.id)
		flags = append(flags, r.flag)
		blobs = append(blobs, string(r.blob))
		scores = append(scores, r.scores...)
		scoreSplits = append(scoreSplits, int64(len(scores)))
		tags = append(tags, r.tags...)
		tagSplits = append(tagSplits, int64(len(tags)))
		for _, it := range r.items {
			qty = append(qty, it.qty)
			vec = append(vec, it.vec[:]...)
			names = append(names, it.names...)
			nameSplits = append(nameSplits, int64(len(names)))
		}
		itemSplits = append(itemSplits, int64(len(qty)))
	}
	nitems := len(qty)
	items := must(structtensor.NewStruct(nitems,
		structtensor.Field{Name: "qty", Value: must(structtensor.NewTensor(structtensor.Shape{nitems}, qty))},
		structtensor.Field{Name: "vec", Value: must(structtensor.NewTensor(structtensor.Shape{nitems, 2}, vec))},
		structtensor.Field{Name: "names", Value: must(structtensor.NewRaggedFromSplits(stringTensor(names, true), nameSplits))},
	))
	itemList := must(structtensor.NewPartitionedStruct(n, []*structtensor.RowPartition{must(structtensor.NewRowSplits(itemSplits))}, items.Fields()...))
	return must(structtensor.NewStruct(n,
		structtensor.Field{Name: "id", Value: must(structtensor.NewTensor(structtensor.Shape{n}, ids))},
		structtensor.Field{Name: "flag", Value: must(structtensor.NewTensor(structtensor.Shape{n}, flags))},
		structtensor.Field{Name: "blob", Value: stringTensor(blobs, false)},
		structtensor.Field{Name: "scores", Value: must(structtensor.NewRaggedFromSplits(must(structtensor.NewTensor(structtensor.Shape{len(scores)}, scores)), scoreSplits))},
		structtensor.Field{Name: "tags", Value: must(structtensor.NewRaggedFromSplits(stringTensor(tags, true), tagSplits))},
		structtensor.Field{Name: "items", Value: itemList},
	))
}

// reference is the naive computation of one feature's statistics.
type reference struct {
	present, empty, missing uint64
	perRecord               []uint64 // values of each present record
	levels                  [][]uint64
	nums                    []float64 // every number, NaN included
	strs                    []string
}

func references(recs []record) map[string]*reference {
	refs := map[string]*reference{}
	for _, k := range []string{"id", "flag", "blob", "scores", "tags", "items", "items.qty", "items.vec", "items.names"} {
		refs[k] = &reference{}
	}
	count := func(ref *reference, reached bool, values int) {
		switch {
		case values > 0:
			ref.present++
			ref.perRecord = append(ref.perRecord, uint64(values))
		case reached:
			ref.empty++
		default:
			ref.missing++
		}
	}
	for _, r := range recs {
		count(refs["id"], true, 1)
		refs["id"].nums = append(refs["id"].nums, float64(r.id))
		count(refs["flag"], true, 1)
		b := 0.0
		if r.flag {
			b = 1
		}
		refs["flag"].nums = append(refs["flag"].nums, b)
		count(refs["blob"], true, 1)
		refs["blob"].strs = append(refs["blob"].strs, string(r.blob))
		count(refs["scores"], true, len(r.scores))
		refs["scores"].nums = append(refs["scores"].nums, r.scores...)
		refs["scores"].levels = appendLevel(refs["scores"].levels, 0, len(r.scores))
		count(refs["tags"], true, len(r.tags))
		refs["tags"].strs = append(refs["tags"].strs, r.tags...)
		refs["tags"].levels = appendLevel(refs["tags"].levels, 0, len(r.tags))
		count(refs["items"], true, len(r.items))
		nnames := 0
		for _, it := range r.items {
			nnames += len(it.names)
		}
		count(refs["items.qty"], len(r.items) > 0, len(r.items))
		count(refs["items.vec"], len(r.items) > 0, 2*len(r.items))
		count(refs["items.names"], len(r.items) > 0, nnames)
		for _, k := range []string{"items", "items.qty", "items.vec", "items.names"} {
			refs[k].levels = appendLevel(refs[k].levels, 0, len(r.items))
		}
		for _, it := range r.items {
			refs["items.qty"].nums = append(refs["items.qty"].nums, float64(it.qty))
			refs["items.vec"].nums = append(refs["items.vec"].nums, float64(it.vec[0]), float64(it.vec[1]))
			refs["items.vec"].levels = appendLevel(refs["items.vec"].levels, 1, 2)
			refs["items.names"].strs = append(refs["items.names"].strs, it.names...)
			refs["items.names"].levels = appendLevel(refs["items.names"].levels, 1, len(it.names))
		}
	}
	// Levels with no lists at all still exist.
	for k, n := range map[string]int{"scores": 1, "tags": 1, "items": 1, "items.qty": 1, "items.vec": 2, "items.names": 2} {
		for len(refs[k].levels) < n {
			refs[k].levels = append(refs[k].levels, nil)
		}
	}
	return refs
}

func appendLevel(levels [][]uint64, i, length int) [][]uint64 {
	for len(levels) <= i {
		levels = append(levels, nil)
	}
	levels[i] = append(levels[i], uint64(length))
	return levels
}

func checkLengths(t *rapid.T, what string, got Lengths, want []uint64) {
	var total, empty uint64
	hist := map[uint64]uint64{}
	for _, l := range want {
		total += l
		if l == 0 {
			empty++
		}
		low := uint64(0)
		if l > 0 {
			low = 1 << (63 - uint(bitsLeading(l)))
		}
		hist[low]++
	}
	if got.Lists != uint64(len(want)) || got.Total != total || got.Empty != empty {
		t.Fatalf("%s: lists %d total %d empty %d, want %d %d %d", what, got.Lists, got.Total, got.Empty, len(want), total, empty)
	}
	if len(want) > 0 && (got.Min != slices.Min(want) || got.Max != slices.Max(want)) {
		t.Fatalf("%s: min %d max %d, want %d %d", what, got.Min, got.Max, slices.Min(want), slices.Max(want))
	}
	for _, b := range got.Histogram {
		if hist[b.Low] != b.Count {
			t.Fatalf("%s: bucket [%d, %d] holds %d, want %d", what, b.Low, b.High, b.Count, hist[b.Low])
		}
		delete(hist, b.Low)
	}
	if len(hist) > 0 {
		t.Fatalf("%s: buckets missing: %v", what, hist)
	}
}

func bitsLeading(x uint64) int {
	n := 0
	for x&(1<<63) == 0 {
		x <<= 1
		n++
	}
	return n
}

// checkAgainstReference checks every exact quantity of s against the
// naive computation and every sketch against its bound.
func checkAgainstReference(t *rapid.T, s *Summary, recs []record) {
	refs := references(recs)
	if s.Records != uint64(len(recs)) {
		t.Fatalf("records %d, want %d", s.Records, len(recs))
	}
	if len(s.Features) != len(refs) {
		t.Fatalf("%d features, want %d", len(s.Features), len(refs))
	}
	for _, f := range s.Features {
		key := strings.Join(f.Path, ".")
		ref := refs[key]
		if ref == nil {
			t.Fatalf("unexpected feature %q", key)
		}
		if f.Present != ref.present || f.Empty != ref.empty || f.Missing != ref.missing {
			t.Fatalf("%s: present/empty/missing %d/%d/%d, want %d/%d/%d", key, f.Present, f.Empty, f.Missing, ref.present, ref.empty, ref.missing)
		}
		checkLengths(t, key+" values per record", f.ValuesPerRecord, ref.perRecord)
		if len(f.Levels) != len(ref.levels) {
			t.Fatalf("%s: %d levels, want %d", key, len(f.Levels), len(ref.levels))
		}
		for i := range f.Levels {
			checkLengths(t, fmt.Sprintf("%s level %d", key, i), f.Levels[i], ref.levels[i])
		}
		switch {
		case f.Numbers != nil:
			checkNumbers(t, key, f.Numbers, ref.nums)
		case f.Strings != nil:
			checkStrings(t, key, f.Strings, ref.strs, f.Kind)
		}
	}
}

func checkNumbers(t *rapid.T, key string, n *Numbers, all []float64) {
	var vals []float64
	var nan, zeros uint64
	for _, x := range all {
		switch {
		case math.IsNaN(x):
			nan++
			continue
		case x == 0:
			zeros++
		}
		vals = append(vals, x)
	}
	if n.Count != uint64(len(vals)) || n.NaN != nan || n.Zeros != zeros {
		t.Fatalf("%s: count/nan/zeros %d/%d/%d, want %d/%d/%d", key, n.Count, n.NaN, n.Zeros, len(vals), nan, zeros)
	}
	if len(vals) == 0 {
		return
	}
	slices.Sort(vals)
	if n.Min.Float64() != vals[0] || n.Max.Float64() != vals[len(vals)-1] {
		t.Fatalf("%s: min %v max %v, want %v %v", key, n.Min.Float64(), n.Max.Float64(), vals[0], vals[len(vals)-1])
	}
	// Mean and standard deviation from exact rational sums.
	var posInf, negInf bool
	sum, sq := new(big.Rat), new(big.Rat)
	finite := 0
	for _, x := range vals {
		switch {
		case math.IsInf(x, 1):
			posInf = true
		case math.IsInf(x, -1):
			negInf = true
		default:
			r := new(big.Rat).SetFloat64(x)
			sum.Add(sum, r)
			sq.Add(sq, new(big.Rat).Mul(r, r))
			finite++
		}
	}
	switch {
	case posInf && negInf:
		if !math.IsNaN(float64(n.Mean)) {
			t.Fatalf("%s: mean %v with both infinities", key, n.Mean)
		}
	case posInf || negInf:
		if !math.IsInf(float64(n.Mean), 0) || !math.IsNaN(float64(n.StdDev)) {
			t.Fatalf("%s: mean %v std %v with an infinity", key, n.Mean, n.StdDev)
		}
	default:
		cnt := new(big.Rat).SetInt64(int64(finite))
		mean := new(big.Rat).Quo(sum, cnt)
		want, _ := mean.Float64()
		if !closeTo(float64(n.Mean), want) {
			t.Fatalf("%s: mean %v, want %v", key, n.Mean, want)
		}
		v := new(big.Rat).Sub(new(big.Rat).Quo(sq, cnt), new(big.Rat).Mul(mean, mean))
		// The square root in high precision: the variance itself may be
		// below the smallest float64.
		vf := new(big.Float).SetPrec(300).SetRat(v)
		std, _ := vf.Sqrt(vf).Float64()
		if !closeTo(float64(n.StdDev), std) {
			t.Fatalf("%s: std %v, want %v", key, n.StdDev, std)
		}
	}
	// Quantiles: each within the rank bound.
	eps := n.QuantileRankError * float64(len(vals))
	q := len(n.Quantiles) - 1
	for i, x := range n.Quantiles {
		target := float64(i) / float64(q) * float64(len(vals))
		below := sort.SearchFloat64s(vals, float64(x))                                        // values < x
		atOrBelow := sort.Search(len(vals), func(j int) bool { return vals[j] > float64(x) }) // values <= x
		if float64(below) > target+eps || float64(atOrBelow) < target-eps {
			t.Fatalf("%s: quantile %d/%d = %v has rank [%d, %d], want %v ± %v", key, i, q, x, below, atOrBelow, target, eps)
		}
	}
}

// closeTo allows the few ulps a correctly rounded result and one rounded
// twice may differ by.
func closeTo(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

func checkStrings(t *rapid.T, key string, s *Strings, vals []string, kind Kind) {
	counts := map[string]uint64{}
	var total, invalid uint64
	for _, v := range vals {
		counts[v]++
		total += uint64(len(v))
		if kind == KindString && !utf8.ValidString(v) {
			invalid++
		}
	}
	if s.Count != uint64(len(vals)) || s.TotalBytes != total || s.InvalidUTF8 != invalid {
		t.Fatalf("%s: count/bytes/invalid %d/%d/%d, want %d/%d/%d", key, s.Count, s.TotalBytes, s.InvalidUTF8, len(vals), total, invalid)
	}
	if len(vals) == 0 {
		return
	}
	// Distinct: these small sets are in linear counting's range, where
	// the error is the number of register collisions, about d²/2^(p+1)
	// (under 0.1 here): allow five standard errors and three collisions.
	// (The bound is statistical, over the hash; TestDistinctAccuracy
	// measures it at scale.)
	d := float64(len(counts))
	if tol := 5*s.DistinctStandardError*d + 3; math.Abs(float64(s.Distinct)-d) > tol {
		t.Fatalf("%s: %d distinct, want %v ± %v", key, s.Distinct, d, tol)
	}
	for _, tc := range s.Top {
		c := counts[tc.Value]
		if tc.Count > c || c-tc.Count > s.TopMaxUndercount {
			t.Fatalf("%s: %q counted %d, true %d, bound %d", key, tc.Value, tc.Count, c, s.TopMaxUndercount)
		}
	}
	if bound := uint64(len(vals)) / 5; s.TopMaxUndercount > bound { // 4 counters in the test
		t.Fatalf("%s: undercount bound %d over n/(c+1) = %d", key, s.TopMaxUndercount, bound)
	}
}

// exactPart is the summary without its sketches' results.
func exactPart(s *Summary) *Summary {
	c := *s
	c.Features = slices.Clone(s.Features)
	for i := range c.Features {
		f := &c.Features[i]
		if f.Numbers != nil {
			n := *f.Numbers
			n.Quantiles, n.Median, n.QuantileRankError = nil, 0, 0
			f.Numbers = &n
		}
		if f.Strings != nil {
			st := *f.Strings
			st.Top, st.TopMaxUndercount, st.Distinct = nil, 0, 0
			f.Strings = &st
		}
	}
	return &c
}

func jsonOf(t *rapid.T, s *Summary) string {
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Any split of the data into batches, added to separate accumulators
// and merged in any order (each partial passing through its serialized
// form, as between Beam workers), gives exactly the exact quantities of
// one accumulator over all the data, which equal a naive computation;
// and the sketches stay within their bounds.
func TestMergeAnySplit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(rapid.Custom(genRecord), 0, 60).Draw(t, "records")
		// Small sketches, so that the bounds are exercised.
		opts := Options{QuantileK: 8, TopCounters: 4, TopK: 4}
		whole, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := whole.Add(build(recs)); err != nil {
			t.Fatal(err)
		}
		ws := whole.Summary()
		checkAgainstReference(t, ws, recs)

		// Split at random cuts; empty batches included.
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(recs)), 0, 8).Draw(t, "cuts")
		cuts = append(cuts, 0, len(recs))
		slices.Sort(cuts)
		var parts []*Accumulator
		for i := 1; i < len(cuts); i++ {
			a, _ := New(opts)
			if err := a.Add(build(recs[cuts[i-1]:cuts[i]])); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, a)
		}
		if rapid.Bool().Draw(t, "with an empty accumulator") {
			a, _ := New(opts)
			parts = append(parts, a)
		}
		for len(parts) > 1 {
			i := rapid.IntRange(0, len(parts)-1).Draw(t, "into")
			j := rapid.IntRange(0, len(parts)-2).Draw(t, "from")
			if j >= i {
				j++
			}
			b, err := parts[j].MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var o Accumulator
			if err := o.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if err := parts[i].Merge(&o); err != nil {
				t.Fatal(err)
			}
			parts = slices.Delete(parts, j, j+1)
		}
		ms := parts[0].Summary()
		if got, want := jsonOf(t, exactPart(ms)), jsonOf(t, exactPart(ws)); got != want {
			t.Fatalf("merged exact statistics differ from one pass:\n%s\nwant\n%s", got, want)
		}
		checkAgainstReference(t, ms, recs)
	})
}

// The same adds and merges in the same order give the same bytes.
func TestDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(rapid.Custom(genRecord), 1, 80).Draw(t, "records")
		cut := rapid.IntRange(0, len(recs)).Draw(t, "cut")
		run := func() []byte {
			opts := Options{QuantileK: 8, TopCounters: 3, TopK: 3}
			a, _ := New(opts)
			b, _ := New(opts)
			a.Add(build(recs[:cut]))
			b.Add(build(recs[cut:]))
			if err := a.Merge(b); err != nil {
				t.Fatal(err)
			}
			out, _ := a.MarshalBinary()
			return out
		}
		if !bytes.Equal(run(), run()) {
			t.Fatal("two runs of the same adds and merges differ")
		}
	})
}
