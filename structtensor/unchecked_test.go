package structtensor_test

import (
	"testing"

	"github.com/structtensor/structtensor-go/internal/unchecked"
	"github.com/structtensor/structtensor-go/structtensor"
)

// The one-allocation constructors package decode builds its outputs with
// give the same values as the public constructors, alone, in a slab with
// room for them, in a slab without, and in a slab whose room held other
// values before (a recycled output's, unchecked.ReuseSlab).
func TestUncheckedConstructorsMatchPublicOnes(t *testing.T) {
	slabs := map[string]func() any{
		"alone":   func() any { return nil },
		"slab":    func() any { return unchecked.Slab(1, 1, 1, 1, 1) },
		"no room": func() any { return unchecked.Slab(0, 0, 0, 0, 0) },
		"reused": func() any {
			room := unchecked.Slab(1, 1, 1, 1, 1)
			old := unchecked.StringTensor(room, []byte("old"), []int64{0, 3}, true)
			unchecked.Column(room, old, []int64{0, 0, 1})
			unchecked.Column(room, []float64{-1}, nil)
			unchecked.Struct(room, 2, []int64{0, 1, 1}, []structtensor.Field{{Name: "old", Value: old.(structtensor.Value)}}, map[string]int{"old": 0})
			unchecked.ReuseSlab(room)
			return room
		},
	}
	for name, slab := range slabs {
		t.Run(name, func(t *testing.T) { testUncheckedConstructors(t, slab) })
	}
}

func testUncheckedConstructors(t *testing.T, newSlab func() any) {
	splits := []int64{0, 2, 2, 3}
	cases := []struct {
		name string
		vals any
		want func() (*structtensor.Tensor, error)
	}{
		{"bool", []bool{true, false, true}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []bool{true, false, true}) }},
		{"int32", []int32{1, -2, 3}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []int32{1, -2, 3}) }},
		{"uint32", []uint32{1, 2, 3}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []uint32{1, 2, 3}) }},
		{"float32", []float32{1, 2.5, 3}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []float32{1, 2.5, 3}) }},
		{"int64", []int64{1, -2, 3}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []int64{1, -2, 3}) }},
		{"uint64", []uint64{1, 2, 3}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []uint64{1, 2, 3}) }},
		{"float64", []float64{1, 2.5, 3}, func() (*structtensor.Tensor, error) { return structtensor.NewTensor(nil, []float64{1, 2.5, 3}) }},
		{"string", unchecked.StringTensor(newSlab(), []byte("abc"), []int64{0, 1, 1, 3}, true), func() (*structtensor.Tensor, error) {
			return structtensor.NewTensor(nil, []string{"a", "", "bc"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.want()
			if err != nil {
				t.Fatal(err)
			}
			slab := newSlab()
			if got := unchecked.Column(slab, c.vals, nil).(structtensor.Value); !structtensor.Equal(got, want) {
				t.Errorf("Column(%v, nil) = %v, want %v", c.vals, got, want)
			}
			wantRagged, err := structtensor.NewRaggedFromSplits(want, splits)
			if err != nil {
				t.Fatal(err)
			}
			got := unchecked.Column(slab, c.vals, splits).(structtensor.Value)
			if !structtensor.Equal(got, wantRagged) {
				t.Errorf("Column(%v, %v) = %v, want %v", c.vals, splits, got, wantRagged)
			}
			// A second value from the same slab is one of its own.
			other := unchecked.Column(slab, c.vals, []int64{0, 3}).(structtensor.Value)
			if !structtensor.Equal(got, wantRagged) || other.NumRows() != 1 {
				t.Errorf("a second ragged column from the slab changed the first: %v, or is wrong: %v", got, other)
			}
		})
	}

	inner, err := structtensor.NewTensor(nil, []int64{7, 8, 9})
	if err != nil {
		t.Fatal(err)
	}
	fields := []structtensor.Field{{Name: "x", Value: inner}}
	index := map[string]int{"x": 0}
	want, err := structtensor.NewStruct(3, fields...)
	if err != nil {
		t.Fatal(err)
	}
	slab := newSlab()
	if got := unchecked.Struct(slab, 3, nil, fields, index).(structtensor.Value); !structtensor.Equal(got, want) {
		t.Errorf("Struct(3, nil) = %v, want %v", got, want)
	}
	part, err := structtensor.NewRowSplits(splits)
	if err != nil {
		t.Fatal(err)
	}
	want, err = structtensor.NewPartitionedStruct(3, []*structtensor.RowPartition{part}, fields...)
	if err != nil {
		t.Fatal(err)
	}
	got := unchecked.Struct(slab, 3, splits, fields, index).(*structtensor.StructTensor)
	if !structtensor.Equal(got, want) {
		t.Errorf("Struct(3, %v) = %v, want %v", splits, got, want)
	}
	if v, ok := got.Field("x"); !ok || !structtensor.Equal(v, inner) {
		t.Errorf("Field(x) of the unchecked struct = %v, %v", v, ok)
	}
}
