package structtensor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The StructTensor RFC's "Struct Tensor Encoding" examples: one schema
// (x: a string, y: a 2-D ragged list of ints) as a scalar, a vector and a
// 2x2 matrix of structures. Each field is stored flat, and FieldValue
// gives the full-shape encoding the RFC lists in _fields.

func rfcScalar(t *testing.T) *StructTensor {
	st, err := NewScalarStruct(
		Field{"x", mustScalar(t, "foo")},
		Field{"y", mustR(t, mustT(t, nil, []int64{1, 2, 3}), []int64{0, 2, 3})},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func rfcVector(t *testing.T) *StructTensor {
	st, err := NewStruct(3,
		Field{"x", mustT(t, nil, []string{"foo", "bar", "baz"})},
		Field{"y", mustR(t, mustT(t, nil, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}),
			[]int64{0, 2, 4, 5}, []int64{0, 2, 3, 4, 6, 9})},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func rfcMatrix(t *testing.T) *StructTensor {
	// Four structures in 2 rows of 2, stored flat; the last y is empty.
	st, err := NewPartitionedStruct(2, []*RowPartition{mustU(t, 2, 2)},
		Field{"x", mustT(t, nil, []string{"foo", "bar", "baz", "raz"})},
		Field{"y", mustR(t, mustT(t, nil, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}),
			[]int64{0, 2, 4, 5, 5}, []int64{0, 2, 3, 4, 6, 9})},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRFCEncoding(t *testing.T) {
	i := func(x ...int64) []any {
		out := []any{}
		for _, v := range x {
			out = append(out, v)
		}
		return out
	}
	L := func(x ...any) []any { return append([]any{}, x...) }
	for _, tc := range []struct {
		name   string
		st     *StructTensor
		shape  Shape
		xSpec  string
		x      any
		ySpec  string
		y      any
		nested any
	}{
		{
			name: "scalar", st: rfcScalar(t), shape: Shape{},
			xSpec: "TensorSpec([], string)", x: "foo",
			ySpec: "RaggedTensorSpec([2, None], int64, ragged_rank=1)", y: L(i(1, 2), i(3)),
			nested: map[string]any{"x": "foo", "y": L(i(1, 2), i(3))},
		},
		{
			name: "vector", st: rfcVector(t), shape: Shape{3},
			xSpec: "TensorSpec([3], string)", x: L("foo", "bar", "baz"),
			ySpec: "RaggedTensorSpec([3, None, None], int64, ragged_rank=2)",
			y:     L(L(i(1, 2), i(3)), L(i(4), i(5, 6)), L(i(7, 8, 9))),
			nested: L(
				map[string]any{"x": "foo", "y": L(i(1, 2), i(3))},
				map[string]any{"x": "bar", "y": L(i(4), i(5, 6))},
				map[string]any{"x": "baz", "y": L(i(7, 8, 9))},
			),
		},
		{
			name: "matrix", st: rfcMatrix(t), shape: Shape{2, 2},
			xSpec: "TensorSpec([2, 2], string)", x: L(L("foo", "bar"), L("baz", "raz")),
			ySpec: "RaggedTensorSpec([2, 2, None, None], int64, ragged_rank=3)",
			y:     L(L(L(i(1, 2), i(3)), L(i(4), i(5, 6))), L(L(i(7, 8, 9)), L())),
			nested: L(
				L(map[string]any{"x": "foo", "y": L(i(1, 2), i(3))}, map[string]any{"x": "bar", "y": L(i(4), i(5, 6))}),
				L(map[string]any{"x": "baz", "y": L(i(7, 8, 9))}, map[string]any{"x": "raz", "y": L()}),
			),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.st.Shape().Equal(tc.shape) {
				t.Errorf("shape %v, want %v", tc.st.Shape(), tc.shape)
			}
			x, err := tc.st.FieldValue("x")
			if err != nil {
				t.Fatal(err)
			}
			y, err := tc.st.FieldValue("y")
			if err != nil {
				t.Fatal(err)
			}
			if x.Spec().String() != tc.xSpec || y.Spec().String() != tc.ySpec {
				t.Errorf("field specs %v, %v; want %s, %s", x.Spec(), y.Spec(), tc.xSpec, tc.ySpec)
			}
			if got := nested(x); !reflect.DeepEqual(got, tc.x) {
				t.Errorf("x = %#v, want %#v", got, tc.x)
			}
			if got := nested(y); !reflect.DeepEqual(got, tc.y) {
				t.Errorf("y = %#v, want %#v", got, tc.y)
			}
			if got := nested(tc.st); !reflect.DeepEqual(got, tc.nested) {
				t.Errorf("structures = %#v, want %#v", got, tc.nested)
			}
			// The RFC's encoding rule: st[D1...DN][k] = v[D1...DN].
			for _, idx := range [][]any{{}, {0}, {-1}, {1, 0}, {1, 1}} {
				if len(idx) != tc.st.Rank() {
					continue
				}
				a, err := tc.st.Get(append(append([]any{}, idx...), "y")...)
				if err != nil {
					t.Fatal(err)
				}
				b, err := y.(*Ragged).Get(idx...)
				if err != nil {
					t.Fatal(err)
				}
				if !Equal(a, b) {
					t.Errorf("st%v[y] = %v, y%v = %v", idx, a, idx, b)
				}
			}
		})
	}
	// The matrix's structures by index.
	m := rfcMatrix(t)
	if got := nested(mustGet(t, m, 1, 0, "y")); !reflect.DeepEqual(got, L(i(7, 8, 9))) {
		t.Errorf("matrix[1, 0, y] = %v", got)
	}
	if got := nested(mustGet(t, m, All, 1, "x")); !reflect.DeepEqual(got, L("bar", "raz")) {
		t.Errorf("matrix[:, 1, x] = %v", got)
	}
	if got := nested(mustGet(t, m, 1, -1)); !reflect.DeepEqual(got, map[string]any{"x": "raz", "y": L()}) {
		t.Errorf("matrix[1, -1] = %v", got)
	}
	// The first list of every y: raz's y is empty, so index 0 fails there,
	// and names the row.
	if _, err := m.Get(All, All, "y", 0); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), "in row 3") {
		t.Errorf("matrix[:, :, y, 0]: err = %v", err)
	}
	if got := nested(mustGet(t, m, All, All, "y", Slice{Stop: new(1)})); !reflect.DeepEqual(got, L(L(L(i(1, 2)), L(i(4))), L(L(i(7, 8, 9)), L()))) {
		t.Errorf("matrix[:, :, y, :1] = %v", got)
	}
}

// TestRFCEncodingFromValue builds the same three values from the RFC's
// Python literals with FromValue and checks they hold the same structures
// and field encodings as the constructor-built ones. Inference makes
// every list dimension a row-split partition (TensorFlow's from_pyval
// does the same), so the matrix's inner dimension is [2, None] here where
// the constructor used a uniform partition.
func TestRFCEncodingFromValue(t *testing.T) {
	L := func(x ...any) []any { return x }
	M := func(x string, y any) map[string]any { return map[string]any{"x": x, "y": y} }
	for _, tc := range []struct {
		name  string
		py    any
		want  *StructTensor
		shape Shape
	}{
		{"scalar", M("foo", L(L(1, 2), L(3))), rfcScalar(t), Shape{}},
		{"vector", L(M("foo", L(L(1, 2), L(3))), M("bar", L(L(4), L(5, 6))), M("baz", L(L(7, 8, 9)))), rfcVector(t), Shape{3}},
		{"matrix", L(
			L(M("foo", L(L(1, 2), L(3))), M("bar", L(L(4), L(5, 6)))),
			L(M("baz", L(L(7, 8, 9))), M("raz", L())),
		), rfcMatrix(t), Shape{2, Unknown}},
	} {
		v, err := FromValue(tc.py)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		st, ok := v.(*StructTensor)
		if !ok {
			t.Fatalf("%s: FromValue gave %v", tc.name, v.Spec())
		}
		if !st.Shape().Equal(tc.shape) {
			t.Errorf("%s: shape %v, want %v", tc.name, st.Shape(), tc.shape)
		}
		if g, w := nested(st), nested(tc.want); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: FromValue = %#v\nconstructors = %#v", tc.name, g, w)
		}
		if tc.name != "matrix" && !Equal(st, tc.want) {
			t.Errorf("%s: FromValue gave %v, constructors %v", tc.name, st, tc.want)
		}
		for _, f := range []string{"x", "y"} {
			a, _ := st.FieldValue(f)
			b, _ := tc.want.FieldValue(f)
			if !reflect.DeepEqual(nested(a), nested(b)) {
				t.Errorf("%s: field %s = %v, want %v", tc.name, f, a, b)
			}
		}
	}
}
