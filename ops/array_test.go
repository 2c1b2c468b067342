package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func TestIssueCases(t *testing.T) {
	v := must[st.Value](t)

	t.Run("ExpandDims-1", func(t *testing.T) {
		in := value(t, `[[{"x":1},{"x":2}],[{"x":3}]]`)
		checkValue(t, v(ops.ExpandDims(in, -1)), `[[[{"x":1}],[{"x":2}]],[[{"x":3}]]]`)
	})
	t.Run("SizeRank", func(t *testing.T) {
		in := value(t, `[[{"x":[3]}],[{"x":[4,5]},{"x":[]}]]`)
		if got := ops.Size(in); got != 3 {
			t.Errorf("Size = %d, want 3", got)
		}
		if got := ops.Rank(in); got != 2 {
			t.Errorf("Rank = %d, want 2", got)
		}
	})
	records := `[{"a":4,"b":[3,4]},{"a":5,"b":[5,6]},{"a":7,"b":[9,10]}]`
	t.Run("Gather", func(t *testing.T) {
		in := value(t, records)
		checkValue(t, v(ops.Gather(in, ints(t, 2, 0, 0), 0, 0)),
			`[{"a":7,"b":[9,10]},{"a":4,"b":[3,4]},{"a":4,"b":[3,4]}]`)
	})
	t.Run("GatherScalar", func(t *testing.T) {
		in := value(t, records)
		idx := must[*st.Tensor](t)(st.NewScalar(int64(1)))
		got := v(ops.Gather(in, idx, 0, 0))
		if s, ok := got.(*st.StructTensor); !ok || s.Rank() != 0 {
			t.Fatalf("got %T of rank %d, want a scalar StructTensor", got, got.Rank())
		}
		checkValue(t, got, `{"a":5,"b":[5,6]}`)
	})
	t.Run("GatherBatchDims1", func(t *testing.T) {
		in := value(t, `[[{"r":0},{"r":1}],[{"r":2},{"r":3},{"r":4}]]`)
		checkValue(t, v(ops.Gather(in, ints(t, 1, 0), 1, 1)), `[{"r":1},{"r":2}]`)
	})
	t.Run("ConcatSchemaError", func(t *testing.T) {
		_, err := ops.Concat([]st.Value{value(t, `[{"a":[2]}]`), value(t, `[{}]`)}, 0)
		if !errors.Is(err, ops.ErrSchema) || !strings.Contains(err.Error(), `"a"`) {
			t.Fatalf("err = %v, want ErrSchema naming a", err)
		}
	})
	t.Run("MergeDims", func(t *testing.T) {
		in := value(t, `[[[{"x":1},{"x":2}],[{"x":3}]],[[{"x":4}]]]`)
		checkValue(t, v(ops.MergeDims(in, 1, 2)), `[[{"x":1},{"x":2},{"x":3}],[{"x":4}]]`)
	})
	t.Run("PartitionOuterDimension", func(t *testing.T) {
		in := value(t, `[{"s":"a"},{"s":"b"},{"s":"c"},{"s":"d"}]`)
		p := must[*st.RowPartition](t)(st.NewRowSplits([]int64{0, 2, 2, 3, 4}))
		checkValue(t, v(ops.PartitionOuterDimension(in, p)), `[[{"s":"a"},{"s":"b"}],[],[{"s":"c"}],[{"s":"d"}]]`)
		leaf := value(t, `["a","b","c","d"]`)
		checkValue(t, v(ops.PartitionOuterDimension(leaf, p)), `[["a","b"],[],["c"],["d"]]`)
	})
}
