package graphst_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	"pgregory.net/rapid"
)

// Each outer-dimension op, run in a session on random structs, gives what
// its value-plane twin in package ops gives on the same values.

func checkSame(t *rapid.T, got *st.StructTensor, want st.Value) {
	if !st.Equal(got, want) {
		t.Fatalf("graph:\n%v\nops:\n%v", got, want)
	}
}

func TestGatherMatchesOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawStruct(t, drawSchema(t), "x")
		n := x.NumRows()
		k := rapid.IntRange(0, 6).Draw(t, "k")
		if n == 0 {
			k = 0
		}
		idx := make([]int64, k)
		for i := range idx {
			idx[i] = int64(rapid.IntRange(0, n-1).Draw(t, "idx"))
		}
		it := must(st.NewTensor(st.Shape{k}, idx))
		want := must(ops.Gather(x, it, 0, 0))
		s := op.NewScope()
		feeds := map[tfbridge.Output]*tfbridge.Tensor{}
		ph := feedStruct(t, s, x, "x", feeds)
		got := runStruct(t, s, feeds, graphst.Gather(s, ph, op.Constant(s, it)))
		checkSame(t, got, want)
	})
}

func TestBooleanMaskMatchesOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := drawStruct(t, drawSchema(t), "x")
		n := x.NumRows()
		mask := rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, "mask")
		mt := must(st.NewTensor(st.Shape{n}, mask))
		want := must(ops.BooleanMask(x, mt, 0))
		s := op.NewScope()
		feeds := map[tfbridge.Output]*tfbridge.Tensor{}
		ph := feedStruct(t, s, x, "x", feeds)
		got := runStruct(t, s, feeds, graphst.BooleanMask(s, ph, op.Constant(s, mt)))
		checkSame(t, got, want)
	})
}

func TestConcatStackMatchOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := drawSchema(t)
		m := rapid.IntRange(1, 3).Draw(t, "m")
		xs := make([]*st.StructTensor, m)
		vals := make([]st.Value, m)
		for i := range xs {
			xs[i] = drawStruct(t, sc, "x")
			vals[i] = xs[i]
		}
		s := op.NewScope()
		feeds := map[tfbridge.Output]*tfbridge.Tensor{}
		phs := make([]*graphst.Struct, m)
		for i, x := range xs {
			phs[i] = feedStruct(t, s, x, fmt.Sprintf("x%d", i), feeds)
		}
		cat := graphst.Concat(s, phs)
		stack := graphst.Stack(s, phs)
		checkSame(t, runStruct(t, s, feeds, cat), must(ops.Concat(vals, 0)))
		wantStack := must(ops.Stack(vals, 0))
		gotStack := runStruct(t, s, feeds, stack)
		// The graph cannot know that inputs fed through placeholders of
		// unknown length have equal lengths: where ops.Stack makes the old
		// outer dimension uniform, the graph's is ragged with the same
		// row lengths. Compare through the nested-list form.
		if !st.Equal(gotStack, wantStack) && !sameLists(t, gotStack, wantStack) {
			t.Fatalf("graph:\n%v\nops:\n%v", gotStack, wantStack)
		}
	})
}

func sameLists(t *rapid.T, a, b st.Value) bool {
	return deepEqual(st.ToValue(a), st.ToValue(b))
}

func TestOuterOpErrors(t *testing.T) {
	spec := &st.StructSpec{Shape: st.Shape{st.Unknown}, Fields: []st.FieldSpec{
		{Name: "a", Spec: &st.TensorSpec{DType: st.Int64, Shape: st.Shape{st.Unknown}}},
		{Name: "n", Spec: &st.StructSpec{Shape: st.Shape{st.Unknown, st.Unknown}, Fields: []st.FieldSpec{
			{Name: "b", Spec: &st.TensorSpec{DType: st.Int64, Shape: st.Shape{st.Unknown, st.Unknown}}}}}},
	}}
	other := &st.StructSpec{Shape: st.Shape{st.Unknown}, Fields: []st.FieldSpec{
		{Name: "a", Spec: &st.TensorSpec{DType: st.Float32, Shape: st.Shape{st.Unknown}}}}}
	for _, tc := range []struct {
		name  string
		build func(s *op.Scope, x, y *graphst.Struct)
		want  error
	}{
		{"concat of different specs", func(s *op.Scope, x, y *graphst.Struct) {
			graphst.Concat(s, []*graphst.Struct{x, y})
		}, graphst.ErrSpec},
		{"stack of nothing", func(s *op.Scope, _, _ *graphst.Struct) {
			graphst.Stack(s, nil)
		}, graphst.ErrSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := op.NewScope()
			x := must(graphst.Placeholders(s.Graph(), spec, "x"))
			y := must(graphst.Placeholders(s.Graph(), other, "y"))
			tc.build(s, x, y)
			if err := s.Err(); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRuntimeErrors: bad indices and masks fail the run, with TensorFlow's
// InvalidArgument, not the process.
func TestRuntimeErrors(t *testing.T) {
	x := must(st.NewStruct(2, st.Field{Name: "a", Value: must(st.NewTensor(st.Shape{2}, []int64{1, 2}))}))
	for _, tc := range []struct {
		name  string
		build func(s *op.Scope, ph *graphst.Struct) *graphst.Struct
	}{
		{"index out of range", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Gather(s, ph, op.Constant(s, []int64{0, 2}))
		}},
		{"negative index", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.Gather(s, ph, op.Constant(s, []int32{-1}))
		}},
		{"mask too short", func(s *op.Scope, ph *graphst.Struct) *graphst.Struct {
			return graphst.BooleanMask(s, ph, op.Constant(s, []bool{true}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := op.NewScope()
			feeds := map[tfbridge.Output]*tfbridge.Tensor{}
			ph := feedStruct(t, s, x, "x", feeds)
			r := tc.build(s, ph)
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			sess := must(tfbridge.NewSession(s.Graph()))
			defer sess.Close()
			if _, err := graphst.Run(t.Context(), sess, feeds, r); !errors.Is(err, tfbridge.ErrInvalidArgument) {
				t.Fatalf("error %v, want InvalidArgument", err)
			}
		})
	}
}
