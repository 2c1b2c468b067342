package graphst_test

import (
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// componentsFromBytes turns fuzz input into one tensor per component of
// comps: for each, a length byte (mod 9) and that many small elements, so
// row splits may be short, long, decreasing or inconsistent.
func componentsFromBytes(comps []graphst.ComponentSpec, data []byte) []*structtensor.Tensor {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	out := make([]*structtensor.Tensor, len(comps))
	for i, c := range comps {
		n := next() % 9
		if c.Kind == graphst.ValuesComponent && len(c.Shape) != 1 {
			n = 1 // a rank-0 leaf of a scalar struct
		}
		var vals any
		switch c.DType {
		case structtensor.Int64:
			v := make([]int64, n)
			for k := range v {
				v[k] = int64(next()%12) - 1
			}
			vals = v
		case structtensor.Int32:
			vals = make([]int32, n)
		case structtensor.Uint32:
			vals = make([]uint32, n)
		case structtensor.Float32:
			vals = make([]float32, n)
		case structtensor.Float64:
			vals = make([]float64, n)
		case structtensor.Bool:
			vals = make([]bool, n)
		case structtensor.String:
			v := make([]string, n)
			for k := range v {
				v[k] = string(rune('a' + next()%26))
			}
			vals = v
		}
		shape := structtensor.Shape{n}
		if c.Kind == graphst.ValuesComponent && len(c.Shape) == 0 {
			shape = structtensor.Shape{}
		}
		t, err := structtensor.NewTensor(shape, vals)
		if err != nil {
			panic(err)
		}
		out[i] = t
	}
	return out
}

// unknownBatch returns s with its outermost dimension (and so every field's)
// unknown, so that batches of any size fit.
func unknownBatch(s structtensor.Spec) structtensor.Spec {
	shape := func(sh structtensor.Shape) structtensor.Shape {
		c := append(structtensor.Shape(nil), sh...)
		if len(c) > 0 {
			c[0] = structtensor.Unknown
		}
		return c
	}
	switch x := s.(type) {
	case *structtensor.TensorSpec:
		return &structtensor.TensorSpec{DType: x.DType, Shape: shape(x.Shape)}
	case *structtensor.RaggedSpec:
		return &structtensor.RaggedSpec{DType: x.DType, Shape: shape(x.Shape), RaggedRank: x.RaggedRank}
	case *structtensor.StructSpec:
		c := &structtensor.StructSpec{Shape: shape(x.Shape)}
		for _, f := range x.Fields {
			c.Fields = append(c.Fields, structtensor.FieldSpec{Name: f.Name, Spec: unknownBatch(f.Spec)})
		}
		return c
	}
	return s
}

// FuzzRun feeds arbitrary components to a nested Struct: Run must return a
// valid StructTensor or an error, never panic, and a StructTensor it
// returns must survive Feed and Run unchanged.
func FuzzRun(f *testing.F) {
	spec := unknownBatch(nestedValue(f).Spec()).(*structtensor.StructSpec)
	g := tfbridge.NewGraph()
	defer g.Close()
	ph, err := graphst.Placeholders(g, spec, "in")
	if err != nil {
		f.Fatal(err)
	}
	var outs []tfbridge.Output
	for _, c := range ph.Components() {
		op, err := g.AddOperation(tfbridge.OpSpec{Type: "Identity", Input: []tfbridge.Input{c}})
		if err != nil {
			f.Fatal(err)
		}
		outs = append(outs, op.Output(0))
	}
	sym, err := graphst.NewStruct(spec, outs)
	if err != nil {
		f.Fatal(err)
	}
	s, err := tfbridge.NewSession(g)
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	comps := ph.ComponentSpecs()

	// Seeds: the components of nestedValue written in the fuzz encoding,
	// an empty batch, and garbage.
	f.Add([]byte{
		3, 1, 2, 3, // id/values
		4, 1, 3, 3, 4, // items/row_splits_0 = [0 2 2 3]
		3, 23, 24, 25, // items.name/values
		4, 1, 3, 3, 4, // items.qty/row_splits_0
		3,             // items.qty/values (int32 zeros)
		4, 1, 3, 3, 4, // items.w/row_splits_0
		4, 1, 2, 2, 4, // items.w/row_splits_1
		3,             // items.w/values
		3,             // meta.ok
		3,             // meta.score
		4, 1, 3, 3, 4, // tags/row_splits_0
		3, 0, 1, 3, // tags/values
	})
	f.Add([]byte{0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0})
	f.Add([]byte{8, 255, 0, 7, 1, 1, 1, 1, 1, 2, 200, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := componentsFromBytes(comps, data)
		feeds := map[tfbridge.Output]*tfbridge.Tensor{}
		for i, v := range vals {
			tt, err := tfbridge.NewTensor(v)
			if err != nil {
				t.Fatal(err)
			}
			feeds[ph.Components()[i]] = tt
		}
		got, err := graphst.Run(t.Context(), s, feeds, sym)
		if err != nil {
			return
		}
		again, err := graphst.Feed(ph, got.(*structtensor.StructTensor))
		if err != nil {
			t.Fatalf("Feed of a Run result: %v", err)
		}
		back, err := graphst.Run(t.Context(), s, again, sym)
		if err != nil {
			t.Fatalf("second Run: %v", err)
		}
		if !structtensor.Equal(back, got) {
			t.Fatalf("round trip changed %v into %v", got, back)
		}
	})
}
