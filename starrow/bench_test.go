package starrow

import (
	"fmt"
	"testing"

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
