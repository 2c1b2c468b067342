package structtensor

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// TestPrintGolden compares String() of values of every kind with
// testdata/print/NAME.golden (go test -run TestPrintGolden -update
// rewrites them; review the diff).
func TestPrintGolden(t *testing.T) {
	ints := mustT(t, nil, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	grid, _ := ints.Reshape(Shape{3, 4})
	long, _ := ints.Reshape(Shape{12, 1})
	st2, err := NewPartitionedStruct(2, []*RowPartition{mustP(t, 0, 2, 3)},
		Field{"id", mustT(t, nil, []uint32{7, 8, 9})},
		Field{"tags", mustR(t, mustT(t, nil, []string{"a", "b\n", "c"}), []int64{0, 0, 2, 3})},
	)
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := NewStruct(3)
	for name, v := range map[string]Value{
		"recipe":         recipe(t),
		"tensor_scalar":  mustScalar(t, "say \"hi\""),
		"tensor_bool":    mustT(t, nil, []bool{true, false}),
		"tensor_grid":    grid,
		"tensor_long":    ints,
		"tensor_long_2d": long,
		"tensor_floats":  mustT(t, nil, []float64{0.1, -2.5e-10, 1e21, math.NaN(), math.Inf(1), math.Inf(-1)}),
		"tensor_float32": mustT(t, nil, []float32{0.1, 1.0 / 3}),
		"tensor_bytes":   mustT(t, nil, [][]byte{{0xff, 0}, []byte("ok")}),
		"tensor_empty":   EmptyTensor(Int32, 2),
		"ragged":         mustR(t, ints, []int64{0, 1, 1, 9, 12}),
		"ragged_2":       mustR(t, ints, []int64{0, 2, 2, 3}, []int64{0, 4, 4, 12}),
		"ragged_dense":   mustR(t, grid, []int64{0, 1, 3}),
		"struct_rank2":   st2,
		"struct_empty":   empty,
	} {
		t.Run(name, func(t *testing.T) {
			got := v.(interface{ String() string }).String() + "\n"
			path := filepath.Join("testdata", "print", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("String() =\n%s\nwant (%s):\n%s", got, path, want)
			}
		})
	}
}

// TestStringExact pins a few forms written by hand (the goldens above
// were reviewed when created; these do not depend on them).
func TestStringExact(t *testing.T) {
	ints := mustT(t, nil, []int64{1, 2, 3, 4, 5, 6, 7})
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{ints, "Tensor([1, 2, 3, ..., 5, 6, 7], shape=[7], dtype=int64)"},
		{mustT(t, nil, []int64{1, 2, 3, 4, 5, 6}), "Tensor([1, 2, 3, 4, 5, 6], shape=[6], dtype=int64)"},
		{mustR(t, ints, []int64{0, 0, 7}), "Ragged([[], [1, 2, 3, ..., 5, 6, 7]], shape=[2, None], dtype=int64)"},
		{mustScalar(t, false), "Tensor(false, shape=[], dtype=bool)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String() = %s\nwant       %s", got, tc.want)
		}
	}
	st, _ := NewStruct(2, Field{"a", mustT(t, nil, []int64{1, 2})})
	want := "StructTensor(shape=[2], fields={\n  a: Tensor([1, 2], shape=[2], dtype=int64)\n})"
	if got := st.String(); got != want {
		t.Errorf("String() = %s\nwant %s", got, want)
	}
}
