package ops_test

import (
	"errors"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"pgregory.net/rapid"
)

var sentinels = []error{ops.ErrAxis, ops.ErrIndex, ops.ErrShape, ops.ErrSchema, ops.ErrPath, ops.ErrFieldExists, ops.ErrArgument,
	st.ErrPartition, st.ErrShape, st.ErrDType, st.ErrFieldName, st.ErrNoField, st.ErrIndex}

// wrapsSentinel fails t if err is not nil and wraps no sentinel.
func wrapsSentinel(t *rapid.T, op string, err error) {
	if err == nil {
		return
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("%s: error %q wraps no sentinel", op, err)
}

// TestPropBadArguments calls every op with random, mostly invalid,
// arguments: it must return a value or an error wrapping a sentinel, and
// never panic.
func TestPropBadArguments(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema := drawSchema(t, "root", 2)
		v := drawRoot(t, schema, rapid.IntRange(0, 3).Draw(t, "rank"))
		w := drawRoot(t, drawSchema(t, "other", 1), rapid.IntRange(0, 3).Draw(t, "rank2"))
		axis := rapid.IntRange(-5, 5).Draw(t, "axis")
		bd := rapid.IntRange(-3, 3).Draw(t, "batch_dims")
		idx := i64(t, rapid.SliceOfN(rapid.Int64Range(-6, 6), 0, 5).Draw(t, "idx"))
		bits := rapid.SliceOfN(rapid.Bool(), 0, 6).Draw(t, "bits")
		mask := ok[*st.Tensor](t, "mask")(st.NewTensor(nil, bits))
		var err error
		_, err = ops.Gather(v, idx, axis, bd)
		wrapsSentinel(t, "Gather", err)
		_, err = ops.Gather(v, mask, axis, 0)
		wrapsSentinel(t, "Gather bool indices", err)
		_, err = ops.BatchGather(v, idx)
		wrapsSentinel(t, "BatchGather", err)
		if nd, e := st.NewTensor(st.Shape{len(idx.Int64s()) / 2, 2}, idx.Int64s()[:len(idx.Int64s())/2*2]); e == nil {
			_, err = ops.GatherND(v, nd, bd)
			wrapsSentinel(t, "GatherND", err)
		}
		_, err = ops.BooleanMask(v, mask, axis)
		wrapsSentinel(t, "BooleanMask", err)
		_, err = ops.Concat([]st.Value{v, w}, axis)
		wrapsSentinel(t, "Concat", err)
		_, err = ops.Stack([]st.Value{v, w}, axis)
		wrapsSentinel(t, "Stack", err)
		_, err = ops.Unstack(v, axis)
		wrapsSentinel(t, "Unstack", err)
		_, err = ops.ExpandDims(v, axis)
		wrapsSentinel(t, "ExpandDims", err)
		_, err = ops.Squeeze(v, axis)
		wrapsSentinel(t, "Squeeze", err)
		_, err = ops.Tile(v, rapid.SliceOfN(rapid.IntRange(-1, 2), 0, 4).Draw(t, "multiples"))
		wrapsSentinel(t, "Tile", err)
		_, err = ops.Where(mask, v, w)
		wrapsSentinel(t, "Where", err)
		_, err = ops.Where(mask, v, v)
		wrapsSentinel(t, "Where self", err)
		_, err = ops.MergeDims(v, axis, rapid.IntRange(-5, 5).Draw(t, "inner"))
		wrapsSentinel(t, "MergeDims", err)
		if p, e := st.NewRowLengths([]int64{int64(len(bits))}); e == nil {
			_, err = ops.PartitionOuterDimension(v, p)
			wrapsSentinel(t, "PartitionOuterDimension", err)
		}
		paths := []string{"f0", "f1", "f0.f0", "f1.f1", "f2.f0.f1", "", "x.", "f0.zz"}
		p1 := rapid.SampledFrom(paths).Draw(t, "path1")
		p2 := rapid.SampledFrom(paths).Draw(t, "path2")
		name := rapid.SampledFrom([]string{"n", "f0", "1bad", ""}).Draw(t, "name")
		_, err = ops.Promote(v, p1, name)
		wrapsSentinel(t, "Promote", err)
		_, err = ops.Broadcast(v, p1, p2, name)
		wrapsSentinel(t, "Broadcast", err)
		_, err = ops.PromoteAndBroadcast(v, map[string]string{name: p1}, p2)
		wrapsSentinel(t, "PromoteAndBroadcast", err)
		_, err = ops.Reroot(v, p1, name)
		wrapsSentinel(t, "Reroot", err)
		_, err = ops.Project(v, p1, p2)
		wrapsSentinel(t, "Project", err)
		_, err = ops.Slice(v, p1, name, axis, bd)
		wrapsSentinel(t, "Slice", err)
		_, err = ops.Truncate(v, p1, name, axis)
		wrapsSentinel(t, "Truncate", err)
		_, err = ops.SizeField(v, p1, name)
		wrapsSentinel(t, "SizeField", err)
		_, err = ops.HasField(v, p1, name)
		wrapsSentinel(t, "HasField", err)
		_, err = ops.PositionalIndex(v, p1, name)
		wrapsSentinel(t, "PositionalIndex", err)
		_, err = ops.FilterByChild(v, p1, "f0", name)
		wrapsSentinel(t, "FilterByChild", err)
		_, err = ops.FilterBySibling(v, p1, "f1", name)
		wrapsSentinel(t, "FilterBySibling", err)
		_, err = ops.Map(v, name, st.Int64, func(a []any) (any, error) { return int64(len(a)), nil }, p1, p2)
		wrapsSentinel(t, "Map", err)
		_, err = ops.MapValues(v, p1, name, func(x int64) int64 { return x })
		wrapsSentinel(t, "MapValues", err)
		_, err = ops.MapRagged(v, p1, []string{"f0"}, name, func(a []st.Value) (st.Value, error) { return a[0], nil })
		wrapsSentinel(t, "MapRagged", err)
	})
}
