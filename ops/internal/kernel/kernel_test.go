package kernel

import (
	"reflect"
	"testing"
)

func TestAppendSpan(t *testing.T) {
	var s []Span
	s = AppendSpan(s, 0, 2)
	s = AppendSpan(s, 2, 3) // contiguous: extends
	s = AppendSpan(s, 5, 5) // empty: dropped
	s = AppendSpan(s, 5, 7)
	s = AppendSpan(s, 1, 2) // backwards: a new span
	want := []Span{{0, 3}, {5, 7}, {1, 2}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("spans %v, want %v", s, want)
	}
	if TotalLen(s) != 6 {
		t.Fatalf("TotalLen %d, want 6", TotalLen(s))
	}
}

func TestGatherAndSpans(t *testing.T) {
	src := []int32{0, 1, 2, 3, 4, 5, 6, 7}
	dst := make([]int32, 4)
	Gather(dst, src, []int{7, 0, 0, 3}, 1)
	if want := []int32{7, 0, 0, 3}; !reflect.DeepEqual(dst, want) {
		t.Errorf("Gather inner 1: %v, want %v", dst, want)
	}
	dst = make([]int32, 4)
	Gather(dst, src, []int{3, 1}, 2) // rows of 2
	if want := []int32{6, 7, 2, 3}; !reflect.DeepEqual(dst, want) {
		t.Errorf("Gather inner 2: %v, want %v", dst, want)
	}
	long := make([]int64, 100)
	for i := range long {
		long[i] = int64(i)
	}
	out := make([]int64, 3+40)
	n := CopySpans(out, long, []Span{{1, 4}, {50, 90}}, 1)
	if n != 43 || out[0] != 1 || out[2] != 3 || out[3] != 50 || out[42] != 89 {
		t.Errorf("CopySpans: n=%d %v", n, out)
	}
	if got := Concat([][]bool{{true}, nil, {false, true}}); !reflect.DeepEqual(got, []bool{true, false, true}) {
		t.Errorf("Concat: %v", got)
	}
}

func TestRagged(t *testing.T) {
	splits := []int64{0, 2, 2, 5}
	src := []float64{1, 2, 3, 4, 5}
	idx := []int{2, 0, 1, 2}
	outSplits := make([]int64, len(idx)+1)
	starts := make([]int64, len(idx))
	total := RaggedSplits(splits, idx, outSplits, starts)
	if total != 8 || !reflect.DeepEqual(outSplits, []int64{0, 3, 5, 5, 8}) || !reflect.DeepEqual(starts, []int64{2, 0, 2, 2}) {
		t.Fatalf("RaggedSplits: %d %v %v", total, outSplits, starts)
	}
	dst := make([]float64, total)
	GatherRagged(dst, src, starts, 1, outSplits)
	if want := []float64{3, 4, 5, 1, 2, 3, 4, 5}; !reflect.DeepEqual(dst, want) {
		t.Fatalf("GatherRagged: %v, want %v", dst, want)
	}
}

func TestStrings(t *testing.T) {
	// "ab", "", "cde", "f" stored after a 2-byte prefix.
	src := Strings{Data: []byte("xxabcdef"), Offsets: []int64{2, 4, 4, 7, 8}}
	g := GatherStrings(src, []int{3, 0, 1}, 1)
	if string(g.Data) != "fab" || !reflect.DeepEqual(g.Offsets, []int64{0, 1, 3, 3}) {
		t.Errorf("GatherStrings: %q %v", g.Data, g.Offsets)
	}
	s := SpanStrings(src, []Span{{2, 4}, {0, 1}}, 1)
	if string(s.Data) != "cdefab" || !reflect.DeepEqual(s.Offsets, []int64{0, 3, 4, 6}) {
		t.Errorf("SpanStrings: %q %v", s.Data, s.Offsets)
	}
	c := ConcatStrings([]Strings{src, {Data: []byte("zz"), Offsets: []int64{0, 2}}})
	if string(c.Data) != "abcdefzz" || !reflect.DeepEqual(c.Offsets, []int64{0, 2, 2, 5, 6, 8}) {
		t.Errorf("ConcatStrings: %q %v", c.Data, c.Offsets)
	}
}
