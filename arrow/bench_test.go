package arrow

import (
	"fmt"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// BenchmarkToArrow exports a generated int64 column and a ragged int64
// column of n values; zero-copy export takes the same time at every size.
func BenchmarkToArrow(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("%dM", n/1_000_000), func(b *testing.B) {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = int64(i)
			}
			splits := make([]int64, n/4+1)
			for i := range splits {
				splits[i] = int64(4 * i)
			}
			// n/4 rows: x holds n/4 values, lists n values in rows of 4.
			s := must(st.NewStruct(n/4,
				st.Field{Name: "x", Value: must(st.NewTensor(nil, vals[:n/4]))},
				st.Field{Name: "lists", Value: must(st.NewRaggedFromSplits(must(st.NewTensor(nil, vals[:4*(n/4)])), splits))},
			))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rec, err := ToArrow(s)
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
			b.ReportMetric(float64(n/4+4*(n/4)), "values")
		})
	}
}

// BenchmarkFromArrow imports a generated int64 column: the buffer is
// shared, so the time does not grow with the column (validating a
// primitive array is O(1); list offsets would be checked in O(rows)).
func BenchmarkFromArrow(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("%dM", n/1_000_000), func(b *testing.B) {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = int64(i)
			}
			rec := must(ToArrow(must(st.NewStruct(n, st.Field{Name: "x", Value: must(st.NewTensor(nil, vals))}))))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FromArrow(rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTakeRows compacts every other row (as dropping null rows does)
// of a struct of 1M rows with an int64 column, a string column and a
// ragged int64 column, with takeRows and with ops.Gather (given the same
// []int rows), which takeRows is not written with because it is slower
// here.
func BenchmarkTakeRows(b *testing.B) {
	s, idx := takeRowsBenchData(1_000_000)
	b.Run("takeRows", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := takeRows(s, idx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ops.Gather", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows := make([]int64, len(idx))
			for j, i := range idx {
				rows[j] = int64(i)
			}
			if _, err := ops.Gather(s, must(st.NewTensor(st.Shape{len(rows)}, rows)), 0, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func takeRowsBenchData(n int) (st.Value, []int) {
	vals := make([]int64, 2*n)
	var data []byte
	offsets := make([]int64, 1, n+1)
	splits := make([]int64, 1, n+1)
	for i := range n {
		vals[i] = int64(i)
		data = fmt.Appendf(data, "row %d", i)
		offsets = append(offsets, int64(len(data)))
		splits = append(splits, splits[i]+int64(i%4))
	}
	s := must(st.NewStruct(n,
		st.Field{Name: "x", Value: must(st.NewTensor(nil, vals[:n]))},
		st.Field{Name: "s", Value: must(st.NewStringTensor(st.Shape{n}, data, offsets, true))},
		st.Field{Name: "lists", Value: must(st.NewRaggedFromSplits(must(st.NewTensor(nil, vals[:splits[n]])), splits))},
	))
	idx := make([]int, 0, n/2)
	for i := 0; i < n; i += 2 {
		idx = append(idx, i)
	}
	return s, idx
}
