package structtensor

import (
	"strconv"
	"testing"
)

// benchStruct is a [n] struct with a [n, 16] float32 embedding and a
// ragged list of 0-4 string tags per record.
func benchStruct(b *testing.B, n int) *StructTensor {
	emb := make([]float32, n*16)
	for i := range emb {
		emb[i] = float32(i)
	}
	lengths := make([]int64, n)
	var words []string
	for i := range lengths {
		lengths[i] = int64(i % 5)
		for j := 0; j < i%5; j++ {
			words = append(words, "t"+strconv.Itoa(j))
		}
	}
	e := mustT(b, Shape{n, 16}, emb)
	w := mustT(b, nil, words)
	p, err := NewRowLengths(lengths)
	if err != nil {
		b.Fatal(err)
	}
	tags, err := NewRagged(w, p)
	if err != nil {
		b.Fatal(err)
	}
	st, err := NewStruct(n, Field{"emb", e}, Field{"tags", tags})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkGet measures the indexing paths: a whole field and a row range
// share buffers (cost: the new row splits), a step and a per-row index
// gather.
func BenchmarkGet(b *testing.B) {
	st := benchStruct(b, 100_000)
	for _, bc := range []struct {
		name string
		keys []any
	}{
		{"field_all", []any{All, "emb"}},
		{"row_range_ragged", []any{Slice{Start: new(10), Stop: new(90_000)}, "tags"}},
		{"step_dense", []any{All, "emb", Slice{Step: 2}}},
		{"per_row_ragged", []any{All, "tags", Slice{Stop: new(1)}}},
		{"one_record", []any{-1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Get(bc.keys...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWithUpdates(b *testing.B) {
	st := benchStruct(b, 100_000)
	score := mustT(b, nil, make([]float64, 100_000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.WithUpdates(map[string]Value{"score": score}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTakeRows compacts every other row of a struct of 200k records
// (as dropping Arrow's null rows does).
func BenchmarkTakeRows(b *testing.B) {
	st := benchStruct(b, 200_000)
	idx := make([]int, 0, st.NumRows()/2)
	for i := 0; i < st.NumRows(); i += 2 {
		idx = append(idx, i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TakeRows(st, idx); err != nil {
			b.Fatal(err)
		}
	}
}
