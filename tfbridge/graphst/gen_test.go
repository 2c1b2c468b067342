package graphst_test

import (
	"context"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	"pgregory.net/rapid"
)

// schema picks the shape of the random records: every struct has an int64
// id, a float64 score (optionally with an inner dimension), ragged string
// tags (one or two ragged dimensions) and optionally a nested list of items
// {qty int32, w ragged float32}.
type schema struct {
	scoreInner  bool
	tagsDepth   int
	withItems   bool
	itemsRagged bool
}

func drawSchema(t *rapid.T) schema {
	return schema{
		scoreInner:  rapid.Bool().Draw(t, "scoreInner"),
		tagsDepth:   rapid.IntRange(1, 2).Draw(t, "tagsDepth"),
		withItems:   rapid.Bool().Draw(t, "withItems"),
		itemsRagged: rapid.Bool().Draw(t, "itemsRagged"),
	}
}

func lengths(t *rapid.T, label string, n int) []int64 {
	l := make([]int64, n)
	for i := range l {
		l[i] = int64(rapid.IntRange(0, 3).Draw(t, label))
	}
	return l
}

func sum(l []int64) int {
	s := 0
	for _, v := range l {
		s += int(v)
	}
	return s
}

// must returns v, panicking on err: inside rapid.Check a panic is a failed
// property with its inputs shown.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func drawRagged(t *rapid.T, label string, n, depth int, values func(m int) *st.Tensor) *st.Ragged {
	parts := make([]*st.RowPartition, depth)
	for d := range parts {
		l := lengths(t, label, n)
		parts[d] = must(st.NewRowLengths(l))
		n = sum(l)
	}
	return must(st.NewRagged(values(n), parts...))
}

func drawStruct(t *rapid.T, sc schema, label string) *st.StructTensor {
	n := rapid.IntRange(0, 5).Draw(t, label+".n")
	ids := rapid.SliceOfN(rapid.Int64Range(-50, 50), n, n).Draw(t, label+".id")
	fields := []st.Field{{Name: "id", Value: must(st.NewTensor(st.Shape{n}, ids))}}
	scoreShape := st.Shape{n}
	if sc.scoreInner {
		scoreShape = st.Shape{n, 2}
	}
	k := scoreShape.NumElements()
	scores := rapid.SliceOfN(rapid.Float64Range(-4, 4), k, k).Draw(t, label+".score")
	fields = append(fields, st.Field{Name: "score", Value: must(st.NewTensor(scoreShape, scores))})
	fields = append(fields, st.Field{Name: "tags", Value: drawRagged(t, label+".tags", n, sc.tagsDepth, func(m int) *st.Tensor {
		s := rapid.SliceOfN(rapid.SampledFrom([]string{"", "a", "bc", "déf"}), m, m).Draw(t, label+".tag")
		return must(st.NewTensor(st.Shape{m}, s))
	})})
	if sc.withItems {
		l := lengths(t, label+".items", n)
		m := sum(l)
		q := rapid.SliceOfN(rapid.Int32Range(-9, 99), m, m).Draw(t, label+".qty")
		item := []st.Field{{Name: "qty", Value: must(st.NewTensor(st.Shape{m}, q))}}
		if sc.itemsRagged {
			item = append(item, st.Field{Name: "w", Value: drawRagged(t, label+".w", m, 1, func(k int) *st.Tensor {
				f := rapid.SliceOfN(rapid.Float32Range(-2, 2), k, k).Draw(t, label+".wv")
				return must(st.NewTensor(st.Shape{k}, f))
			})})
		}
		items := must(st.NewPartitionedStruct(n, []*st.RowPartition{must(st.NewRowLengths(l))}, item...))
		fields = append(fields, st.Field{Name: "items", Value: items})
	}
	return must(st.NewStruct(n, fields...))
}

// unknownOuter is the spec of x with an unknown outer dimension, so that
// one placeholder set takes structs of any length.
func unknownOuter(x *st.StructTensor) *st.StructSpec {
	spec := x.Spec().(*st.StructSpec)
	return withOuter(spec).(*st.StructSpec)
}

func withOuter(spec st.Spec) st.Spec {
	switch x := spec.(type) {
	case *st.TensorSpec:
		return &st.TensorSpec{DType: x.DType, Shape: append(st.Shape{st.Unknown}, x.Shape[1:]...)}
	case *st.RaggedSpec:
		return &st.RaggedSpec{DType: x.DType, Shape: append(st.Shape{st.Unknown}, x.Shape[1:]...), RaggedRank: x.RaggedRank}
	case *st.StructSpec:
		out := &st.StructSpec{Shape: append(st.Shape{st.Unknown}, x.Shape[1:]...)}
		for _, f := range x.Fields {
			out.Fields = append(out.Fields, st.FieldSpec{Name: f.Name, Spec: withOuter(f.Spec)})
		}
		return out
	}
	return spec
}

// feedStruct adds placeholders for x to s's graph and returns them with
// their feeds.
func feedStruct(t rapid.TB, s *op.Scope, x *st.StructTensor, name string, feeds map[tfbridge.Output]*tfbridge.Tensor) *graphst.Struct {
	t.Helper()
	ph := must(graphst.Placeholders(s.Graph(), unknownOuter(x), name))
	f := must(graphst.Feed(ph, x))
	for k, v := range f {
		feeds[k] = v
	}
	return ph
}

func runStruct(t rapid.TB, s *op.Scope, feeds map[tfbridge.Output]*tfbridge.Tensor, x *graphst.Struct) *st.StructTensor {
	t.Helper()
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := must(tfbridge.NewSession(s.Graph()))
	defer sess.Close()
	return must(graphst.Run(context.Background(), sess, feeds, x)).(*st.StructTensor)
}
