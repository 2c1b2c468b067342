package graphst_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

func mustTensor(t testing.TB, shape structtensor.Shape, values any) *structtensor.Tensor {
	t.Helper()
	v, err := structtensor.NewTensor(shape, values)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustOp(t *testing.T, g *tfbridge.Graph, spec tfbridge.OpSpec) *tfbridge.Operation {
	t.Helper()
	op, err := g.AddOperation(spec)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// nestedValue is a batch of three records with a dense scalar, a ragged
// list, a ragged list of structs holding a doubly ragged field, and a
// scalar sub-struct; the middle record has empty lists.
func nestedValue(t testing.TB) *structtensor.StructTensor {
	t.Helper()
	v, err := structtensor.FromValue([]any{
		map[string]any{
			"id":   int64(1),
			"tags": []any{"a", "b\x00c"},
			"items": []any{
				map[string]any{"name": "x", "qty": []any{int32(1), int32(2)}, "w": []any{[]any{1.5}, []any{}}},
				map[string]any{"name": "y", "qty": []any{}, "w": []any{}},
			},
			"meta": map[string]any{"ok": true, "score": float32(0.5)},
		},
		map[string]any{
			"id": int64(2), "tags": []any{}, "items": []any{},
			"meta": map[string]any{"ok": false, "score": float32(-1)},
		},
		map[string]any{
			"id":    int64(3),
			"tags":  []any{"d"},
			"items": []any{map[string]any{"name": "z", "qty": []any{int32(7)}, "w": []any{[]any{2.0, 3.0}}}},
			"meta":  map[string]any{"ok": true, "score": float32(2)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v.(*structtensor.StructTensor)
}

// uniformValue is a rank-2 struct [2, 3] (a uniform partition) with a dense
// [.., 2] field and a uint64 ragged field.
func uniformValue(t *testing.T) *structtensor.StructTensor {
	t.Helper()
	p, err := structtensor.NewUniformPartition(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	pair := mustTensor(t, structtensor.Shape{6, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	r, err := structtensor.NewRaggedFromSplits(mustTensor(t, nil, []uint64{1, 2, 3}), []int64{0, 0, 1, 1, 3, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	st, err := structtensor.NewPartitionedStruct(2, []*structtensor.RowPartition{p},
		structtensor.Field{Name: "pair", Value: pair}, structtensor.Field{Name: "u", Value: r})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func scalarValue(t *testing.T) *structtensor.StructTensor {
	t.Helper()
	v, err := structtensor.FromValue(map[string]any{
		"n": uint32(4), "list": []any{int64(1), int64(2)},
		"sub": map[string]any{"s": "q", "xs": []any{[]any{true}, []any{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v.(*structtensor.StructTensor)
}

// identityStruct feeds st through placeholders and one Identity op per
// component, and returns the session, the feeds and the symbolic struct
// over the Identity outputs.
func identityStruct(t *testing.T, st *structtensor.StructTensor) (*tfbridge.Session, map[tfbridge.Output]*tfbridge.Tensor, *graphst.Struct) {
	t.Helper()
	g := tfbridge.NewGraph()
	t.Cleanup(g.Close)
	spec := st.Spec().(*structtensor.StructSpec)
	ph, err := graphst.Placeholders(g, spec, "in")
	if err != nil {
		t.Fatal(err)
	}
	var outs []tfbridge.Output
	for _, c := range ph.Components() {
		outs = append(outs, mustOp(t, g, tfbridge.OpSpec{Type: "Identity", Input: []tfbridge.Input{c}}).Output(0))
	}
	sym, err := graphst.NewStruct(spec, outs)
	if err != nil {
		t.Fatal(err)
	}
	feeds, err := graphst.Feed(ph, st)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tfbridge.NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, feeds, sym
}

func TestStructRoundTrip(t *testing.T) {
	for name, st := range map[string]*structtensor.StructTensor{
		"nested":  nestedValue(t),
		"uniform": uniformValue(t),
		"scalar":  scalarValue(t),
	} {
		t.Run(name, func(t *testing.T) {
			s, feeds, sym := identityStruct(t, st)
			got, err := graphst.Run(t.Context(), s, feeds, sym)
			if err != nil {
				t.Fatal(err)
			}
			if !structtensor.Equal(got, st) {
				t.Fatalf("got %v\nwant %v", got, st)
			}
		})
	}
}

// TestComponentOrder pins the documented component order on the nested
// value's spec.
func TestComponentOrder(t *testing.T) {
	comps, err := graphst.Components(nestedValue(t).Spec().(*structtensor.StructSpec))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range comps {
		got = append(got, c.Name()+":"+c.DType.String()+c.Shape.String())
	}
	want := []string{
		"id/values:int64[3]",
		"items/row_splits_0:int64[None]",
		"items.name/values:string[None]",
		"items.qty/row_splits_0:int64[None]",
		"items.qty/values:int32[None]",
		"items.w/row_splits_0:int64[None]",
		"items.w/row_splits_1:int64[None]",
		"items.w/values:float64[None]",
		"meta.ok/values:bool[3]",
		"meta.score/values:float32[3]",
		"tags/row_splits_0:int64[None]",
		"tags/values:string[None]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("components:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSymbolicField fetches selected fields and compares them with the
// value model's FieldValue.
func TestSymbolicField(t *testing.T) {
	st := nestedValue(t)
	s, feeds, sym := identityStruct(t, st)
	for _, path := range [][]string{{"items", "w"}, {"items", "name"}, {"items"}, {"meta"}, {"meta", "score"}, {"tags"}, {"id"}} {
		f, err := sym.Field(path...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := graphst.Run(t.Context(), s, feeds, f)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		want, err := st.FieldValue(path...)
		if err != nil {
			t.Fatal(err)
		}
		if !structtensor.Equal(got, want) {
			t.Errorf("%v: got %v, want %v", path, got, want)
		}
		if !f.Spec().Equal(want.Spec()) {
			t.Errorf("%v: spec %v, want %v", path, f.Spec(), want.Spec())
		}
	}
	for _, path := range [][]string{{"nope"}, {"id", "x"}, {"items", "nope"}, {}} {
		if _, err := sym.Field(path...); !errors.Is(err, structtensor.ErrNoField) {
			t.Errorf("Field(%v): %v", path, err)
		}
	}
}

func TestSymbolicStructErrors(t *testing.T) {
	st := nestedValue(t)
	spec := st.Spec().(*structtensor.StructSpec)
	g := tfbridge.NewGraph()
	defer g.Close()
	ph, err := graphst.Placeholders(g, spec, "in")
	if err != nil {
		t.Fatal(err)
	}
	comps := ph.Components()
	if _, err := graphst.NewStruct(spec, comps[1:]); !errors.Is(err, tfbridge.ErrShape) {
		t.Errorf("too few components: %v", err)
	}
	swapped := append([]tfbridge.Output(nil), comps...)
	swapped[1], swapped[2] = swapped[2], swapped[1] // int64 splits <-> string values
	if _, err := graphst.NewStruct(spec, swapped); !errors.Is(err, tfbridge.ErrDType) {
		t.Errorf("swapped components: %v", err)
	}
	if _, err := graphst.Feed(ph, uniformValue(t)); !errors.Is(err, structtensor.ErrSpec) {
		t.Errorf("feeding a value of another spec: %v", err)
	}

	// Decreasing row splits must come back as an error, not a panic.
	s, feeds, sym := identityStruct(t, st)
	splits, err := sym.Components()[0].Op.Graph().OutputByName("in/items/row_splits_0")
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := tfbridge.NewTensor(mustTensor(t, nil, []int64{0, 2, 1, 3}))
	feeds[splits] = bad
	if _, err := graphst.Run(t.Context(), s, feeds, sym); !errors.Is(err, structtensor.ErrPartition) || !strings.Contains(err.Error(), "items/row_splits_0") {
		t.Errorf("bad row splits: %v", err)
	}
	// Row splits that do not match the values: the struct constructor's
	// error, named.
	short, _ := tfbridge.NewTensor(mustTensor(t, nil, []int64{0, 1, 1, 2}))
	feeds[splits] = short
	if _, err := graphst.Run(t.Context(), s, feeds, sym); err == nil || !strings.Contains(err.Error(), "items") {
		t.Errorf("inconsistent row splits: %v", err)
	}
}
