package ops_test

import (
	"reflect"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"pgregory.net/rapid"
)

// sameNested fails t unless v's ToValue form equals want.
func sameNested(t *rapid.T, op string, v st.Value, want any) {
	t.Helper()
	got := canon(st.ToValue(v))
	if w := canon(want); !reflect.DeepEqual(got, w) {
		t.Fatalf("%s:\n got %s\nwant %s", op, show(st.ToValue(v)), show(want))
	}
}

func ok[T any](t *rapid.T, op string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return v
	}
}

// drawInput draws a StructTensor of rank minRank to 3, or a Tensor or
// Ragged value of rank minRank or more.
func drawInput(t *rapid.T, minRank int) (st.Value, []fieldSchema, int) {
	if rapid.Bool().Draw(t, "leaf") {
		f := drawSchema(t, "leaf", 0)[0]
		n := rapid.IntRange(0, 4).Draw(t, "nrows")
		v := drawFlat(t, f, n)
		if v.Rank() >= minRank {
			return v, nil, v.Rank()
		}
	}
	schema := drawSchema(t, "root", 2)
	rank := rapid.IntRange(minRank, 3).Draw(t, "rank")
	return drawRoot(t, schema, rank), schema, rank
}

func i64(t *rapid.T, xs []int64) *st.Tensor {
	v, err := st.NewTensor(st.Shape{len(xs)}, xs)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// drawTuple draws a gather_nd index tuple of d steps into the nested list
// x, each step in [-len, len), and returns the value it reaches; whole is
// false when an empty list cut the tuple short.
func drawTuple(t *rapid.T, x any, d int) (tuple []int64, at any, whole bool) {
	at, tuple = x, []int64{}
	for range d {
		l := at.([]any)
		if len(l) == 0 {
			break
		}
		i := rapid.IntRange(-len(l), len(l)-1).Draw(t, "i")
		tuple = append(tuple, int64(i))
		if i < 0 {
			i += len(l)
		}
		at = l[i]
	}
	return tuple, at, len(tuple) == d
}

func TestPropGather(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, rank := drawInput(t, 1)
		x := st.ToValue(v)
		axis := rapid.IntRange(0, rank-1).Draw(t, "axis")
		minLen := -1
		for _, c := range elements(x, axis) {
			if l := len(c.([]any)); minLen < 0 || l < minLen {
				minLen = l
			}
		}
		var idx []int64
		if minLen > 0 {
			idx = rapid.SliceOfN(rapid.Int64Range(int64(-minLen), int64(minLen-1)), 0, 4).Draw(t, "idx")
		}
		want := atDepth(x, axis, func(c any) any { return refGather(c, idx) })
		neg := axis - rank // the same axis, counted from the end
		got := ok[st.Value](t, "Gather")(ops.Gather(v, i64(t, idx), neg, 0))
		sameNested(t, "Gather", got, want)

		if minLen > 0 {
			i := rapid.Int64Range(int64(-minLen), int64(minLen-1)).Draw(t, "scalar")
			want := atDepth(x, axis, func(c any) any { return refGather(c, []int64{i}).([]any)[0] })
			s := ok[*st.Tensor](t, "scalar")(st.NewScalar(i))
			got := ok[st.Value](t, "Gather scalar")(ops.Gather(v, s, axis, 0))
			sameNested(t, "Gather scalar", got, want)
		}
		if minLen >= 0 {
			bad := int64(minLen)
			if _, err := ops.Gather(v, i64(t, []int64{bad}), axis, 0); err == nil && len(elements(x, axis)) > 0 {
				t.Fatalf("Gather index %d past every row of axis %d: no error", bad, axis)
			}
		}
	})
}

func TestPropGatherBatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, _ := drawInput(t, 2)
		x := st.ToValue(v).([]any)
		splits := []int64{0}
		var flat []int64
		var want []any
		for r, row := range x {
			n := len(row.([]any))
			var idx []int64
			if n > 0 {
				idx = rapid.SliceOfN(rapid.Int64Range(int64(-n), int64(n-1)), 0, 3).Draw(t, "idx")
			}
			_ = r
			flat = append(flat, idx...)
			splits = append(splits, int64(len(flat)))
			want = append(want, refGather(row, idx))
		}
		indices := ok[*st.Ragged](t, "indices")(st.NewRaggedFromSplits(i64(t, flat), splits))
		got := ok[st.Value](t, "Gather batch_dims=1")(ops.Gather(v, indices, 1, 1))
		sameNested(t, "Gather batch_dims=1", got, want)
		got = ok[st.Value](t, "BatchGather")(ops.BatchGather(v, indices))
		sameNested(t, "BatchGather", got, want)
	})
}

func TestPropGatherND(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, rank := drawInput(t, 1)
		x := st.ToValue(v)
		d := rapid.IntRange(1, rank).Draw(t, "depth")
		var tuples []int64
		var want []any
		for range rapid.IntRange(0, 4).Draw(t, "ntuples") {
			if tuple, at, whole := drawTuple(t, x, d); whole {
				tuples = append(tuples, tuple...)
				want = append(want, at)
			}
		}
		idx := ok[*st.Tensor](t, "indices")(st.NewTensor(st.Shape{len(want), d}, append([]int64{}, tuples...)))
		got := ok[st.Value](t, "GatherND")(ops.GatherND(v, idx, 0))
		sameNested(t, "GatherND", got, want)
	})
}

// drawMask draws a random bool value with the outer dims dimensions of v
// (a mask or a condition, named label) and returns it with its flat bits.
func drawMask(t *rapid.T, v st.Value, dims int, label string) (st.Value, []bool) {
	t.Helper()
	parts, flat, err := st.SplitOuterDims(v, dims)
	if err != nil {
		t.Fatal(err)
	}
	bits := rapid.SliceOfN(rapid.Bool(), flat.NumRows(), flat.NumRows()).Draw(t, label)
	bt := ok[*st.Tensor](t, label)(st.NewTensor(nil, bits))
	return ok[st.Value](t, label)(st.JoinOuterDims(parts, bt)), bits
}

func TestPropBooleanMask(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, rank := drawInput(t, 1)
		x := st.ToValue(v)
		axis := rapid.IntRange(0, rank-1).Draw(t, "axis")
		mask, bits := drawMask(t, v, axis+1, "mask")
		off := 0
		want := atDepth(x, axis, func(c any) any {
			n := len(c.([]any))
			r := refMask(c, bits[off:off+n])
			off += n
			return r
		})
		got := ok[st.Value](t, "BooleanMask")(ops.BooleanMask(v, mask, axis))
		sameNested(t, "BooleanMask", got, want)
	})
}

func TestPropConcatStack(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema := drawSchema(t, "root", 2)
		rank := rapid.IntRange(1, 3).Draw(t, "rank")
		v, w := drawRoot(t, schema, rank), drawRoot(t, schema, rank)
		x, y := st.ToValue(v), st.ToValue(w)
		got := ok[st.Value](t, "Concat")(ops.Concat([]st.Value{v, w}, 0))
		sameNested(t, "Concat axis 0", got, append(append([]any{}, x.([]any)...), y.([]any)...))

		axis := rapid.IntRange(0, rank-1).Draw(t, "axis")
		got = ok[st.Value](t, "Concat")(ops.Concat([]st.Value{v, v}, axis))
		sameNested(t, "Concat self", got, atDepth(x, axis, func(c any) any {
			return append(append([]any{}, c.([]any)...), c.([]any)...)
		}))
		sa := rapid.IntRange(0, rank).Draw(t, "stack axis")
		got = ok[st.Value](t, "Stack")(ops.Stack([]st.Value{v, v}, sa))
		sameNested(t, "Stack", got, atDepth(x, sa, func(e any) any { return []any{e, e} }))

		rows := ok[[]st.Value](t, "Unstack")(ops.Unstack(v, 0))
		if len(rows) != len(x.([]any)) {
			t.Fatalf("Unstack gave %d rows, want %d", len(rows), len(x.([]any)))
		}
		for i, r := range rows {
			sameNested(t, "Unstack", r, x.([]any)[i])
		}
	})
}

func TestPropExpandSqueezeMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, rank := drawInput(t, 0)
		x := st.ToValue(v)
		a := rapid.IntRange(0, rank).Draw(t, "axis")
		e := ok[st.Value](t, "ExpandDims")(ops.ExpandDims(v, a))
		sameNested(t, "ExpandDims", e, atDepth(x, a, func(e any) any { return []any{e} }))
		s := ok[st.Value](t, "Squeeze")(ops.Squeeze(e, a))
		sameNested(t, "Squeeze", s, x)
		// A Ragged value whose partitions are all uniform comes back as
		// the equivalent dense Tensor (JoinOuterDims' canonical form).
		if !st.Equal(s, v) && !uniformRagged(v) {
			t.Fatalf("Squeeze(ExpandDims(v)) is not structurally v")
		}
		if got, want := ops.Size(v), len(elements(x, rank)); got != want {
			t.Fatalf("Size = %d, want %d", got, want)
		}
		if ops.Rank(v) != rank {
			t.Fatalf("Rank = %d, want %d", ops.Rank(v), rank)
		}
		if rank >= 2 {
			o := rapid.IntRange(0, rank-2).Draw(t, "outer")
			i := rapid.IntRange(o+1, rank-1).Draw(t, "inner")
			m := ok[st.Value](t, "MergeDims")(ops.MergeDims(v, o, i))
			sameNested(t, "MergeDims", m, refMerge(x, o, i))
		}
		if rank >= 1 {
			n := v.NumRows()
			var lengths []int64
			left := n
			for left > 0 {
				l := rapid.IntRange(0, left).Draw(t, "len")
				lengths = append(lengths, int64(l))
				left -= l
			}
			p := ok[*st.RowPartition](t, "lengths")(st.NewRowLengths(lengths))
			got := ok[st.Value](t, "PartitionOuterDimension")(ops.PartitionOuterDimension(v, p))
			var want []any
			off := 0
			for _, l := range lengths {
				want = append(want, x.([]any)[off:off+int(l)])
				off += int(l)
			}
			if want == nil {
				want = []any{}
			}
			sameNested(t, "PartitionOuterDimension", got, want)
		}
	})
}

func TestPropTileWhere(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema := drawSchema(t, "root", 2)
		rank := rapid.IntRange(1, 3).Draw(t, "rank")
		v := drawRoot(t, schema, rank)
		x := st.ToValue(v)
		mult := rapid.SliceOfN(rapid.IntRange(0, 2), rank, rank).Draw(t, "multiples")
		want := x
		for d, m := range mult {
			want = atDepth(want, d, func(l any) any { return refTile(l, m) })
		}
		got := ok[st.Value](t, "Tile")(ops.Tile(v, mult))
		sameNested(t, "Tile", got, want)

		// y has x's outer dimensions and its own fields.
		w := drawRootOver(t, schema, v.NumRows(), v.Partitions(), v.NumElements())
		y := st.ToValue(w)
		k := rapid.IntRange(1, rank).Draw(t, "cond rank")
		cond, bits := drawMask(t, v, k, "cond")
		i := 0
		want = atDepth2(x, y, k-1, func(a, b any) any {
			la, lb := a.([]any), b.([]any)
			out := make([]any, len(la))
			for j := range la {
				if bits[i] {
					out[j] = la[j]
				} else {
					out[j] = lb[j]
				}
				i++
			}
			return out
		})
		got = ok[st.Value](t, "Where")(ops.Where(cond, v, w))
		sameNested(t, "Where", got, want)
	})
}

func uniformRagged(v st.Value) bool {
	r, ok := v.(*st.Ragged)
	if !ok {
		return false
	}
	for _, p := range r.Partitions() {
		if !p.IsUniform() {
			return false
		}
	}
	return true
}

// TestPropGatherBatchAxis covers batch_dims 1 with axis 2 and batch_dims 2
// with axis 2 on rank-3 values: each batch element gathers with its own
// index list from every row below it.
func TestPropGatherBatchAxis(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, rank := drawInput(t, 3)
		if rank < 3 {
			t.Skip("need rank 3")
		}
		x := st.ToValue(v).([]any)
		b := rapid.IntRange(1, 2).Draw(t, "batch_dims")
		var want []any
		splits := []int64{0}
		var flat []int64
		var innerSplits []int64 // b == 2: the second batch dimension
		if b == 2 {
			innerSplits = []int64{0}
		}
		for _, row := range x {
			rowCells := row.([]any)
			if b == 1 {
				// One index list per row, valid for every cell in it.
				minLen := -1
				for _, c := range rowCells {
					if l := len(c.([]any)); minLen < 0 || l < minLen {
						minLen = l
					}
				}
				var idx []int64
				if minLen > 0 {
					idx = rapid.SliceOfN(rapid.Int64Range(int64(-minLen), int64(minLen-1)), 0, 3).Draw(t, "idx")
				}
				flat = append(flat, idx...)
				splits = append(splits, int64(len(flat)))
				out := make([]any, len(rowCells))
				for j, c := range rowCells {
					out[j] = refGather(c, idx)
				}
				want = append(want, out)
				continue
			}
			out := make([]any, len(rowCells))
			for j, c := range rowCells {
				n := len(c.([]any))
				var idx []int64
				if n > 0 {
					idx = rapid.SliceOfN(rapid.Int64Range(int64(-n), int64(n-1)), 0, 3).Draw(t, "idx")
				}
				flat = append(flat, idx...)
				innerSplits = append(innerSplits, int64(len(flat)))
				out[j] = refGather(c, idx)
			}
			splits = append(splits, splits[len(splits)-1]+int64(len(rowCells)))
			want = append(want, out)
		}
		if want == nil {
			want = []any{}
		}
		var indices st.Value
		if b == 1 {
			indices = ok[*st.Ragged](t, "indices")(st.NewRaggedFromSplits(i64(t, flat), splits))
		} else {
			indices = ok[*st.Ragged](t, "indices")(st.NewRaggedFromSplits(i64(t, flat), splits, innerSplits))
		}
		got := ok[st.Value](t, "Gather")(ops.Gather(v, indices, 2, b))
		sameNested(t, "Gather batch_dims", got, want)
	})
}

// TestPropGatherNDBatch covers gather_nd with batch_dims 1: each row
// holds tuples indexing its own sub-value.
func TestPropGatherNDBatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _, rank := drawInput(t, 2)
		x := st.ToValue(v).([]any)
		d := rapid.IntRange(1, rank-1).Draw(t, "depth")
		var want []any
		var flat []int64
		splits := []int64{0}
		for _, row := range x {
			var got []any
			for range rapid.IntRange(0, 2).Draw(t, "ntuples") {
				if tuple, at, whole := drawTuple(t, row, d); whole {
					flat = append(flat, tuple...)
					got = append(got, at)
				}
			}
			if got == nil {
				got = []any{}
			}
			want = append(want, got)
			splits = append(splits, int64(len(flat)/d))
		}
		if want == nil {
			want = []any{}
		}
		tuples := ok[*st.Tensor](t, "tuples")(st.NewTensor(st.Shape{len(flat) / d, d}, append([]int64{}, flat...)))
		indices := ok[*st.Ragged](t, "indices")(st.NewRaggedFromSplits(tuples, splits))
		got := ok[st.Value](t, "GatherND")(ops.GatherND(v, indices, 1))
		sameNested(t, "GatherND batch_dims=1", got, want)
	})
}
