package ops_test

import (
	"fmt"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func mustValue(x any) st.Value {
	v, err := st.FromValue(x)
	if err != nil {
		panic(err)
	}
	return v
}

func ExampleGather() {
	records := mustValue([]any{
		map[string]any{"a": 4, "b": []any{3, 4}},
		map[string]any{"a": 5, "b": []any{5, 6}},
		map[string]any{"a": 7, "b": []any{9, 10}},
	})
	idx, _ := st.NewTensor(nil, []int64{2, 0, 0})
	out, err := ops.Gather(records, idx, 0, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(st.ToValue(out))

	one, _ := st.NewScalar(int64(-1))
	last, _ := ops.Gather(records, one, 0, 0)
	fmt.Println(last.Rank(), st.ToValue(last))
	// Output:
	// [map[a:7 b:[9 10]] map[a:4 b:[3 4]] map[a:4 b:[3 4]]]
	// 0 map[a:7 b:[9 10]]
}

func ExampleGather_batchDims() {
	rows := mustValue([]any{
		[]any{map[string]any{"r": 0}, map[string]any{"r": 1}},
		[]any{map[string]any{"r": 2}, map[string]any{"r": 3}, map[string]any{"r": 4}},
	})
	idx, _ := st.NewTensor(nil, []int64{1, 0})
	out, _ := ops.Gather(rows, idx, 1, 1)
	fmt.Println(st.ToValue(out))
	// Output: [map[r:1] map[r:2]]
}

func ExampleBooleanMask() {
	v := mustValue([]any{
		[]any{map[string]any{"a": 1}, map[string]any{"a": 2}},
		[]any{map[string]any{"a": 3}, map[string]any{"a": 4}, map[string]any{"a": 5}},
	})
	mask := mustValue([]any{[]any{true, false}, []any{false, true, true}})
	out, _ := ops.BooleanMask(v, mask, 1)
	fmt.Println(st.ToValue(out))
	// Output: [[map[a:1]] [map[a:4] map[a:5]]]
}

func ExampleConcat() {
	a := mustValue([]any{map[string]any{"a": []any{2}}})
	b := mustValue([]any{map[string]any{}})
	_, err := ops.Concat([]st.Value{a, b}, 0)
	fmt.Println(err)
	// Output: ops: schema mismatch: field "a" is missing from input 1
}

func ExampleExpandDims() {
	v := mustValue([]any{
		[]any{map[string]any{"x": 1}, map[string]any{"x": 2}},
		[]any{map[string]any{"x": 3}},
	})
	out, _ := ops.ExpandDims(v, -1)
	fmt.Println(st.ToValue(out))
	// Output: [[[map[x:1]] [map[x:2]]] [[map[x:3]]]]
}

func ExampleMergeDims() {
	v := mustValue([]any{
		[]any{[]any{map[string]any{"x": 1}, map[string]any{"x": 2}}, []any{map[string]any{"x": 3}}},
		[]any{[]any{map[string]any{"x": 4}}},
	})
	out, _ := ops.MergeDims(v, 1, 2)
	fmt.Println(st.ToValue(out))
	// Output: [[map[x:1] map[x:2] map[x:3]] [map[x:4]]]
}

func ExamplePartitionOuterDimension() {
	v := mustValue([]any{"a", "b", "c", "d"})
	p, _ := st.NewRowSplits([]int64{0, 2, 2, 3, 4})
	out, _ := ops.PartitionOuterDimension(v, p)
	fmt.Println(st.ToValue(out))
	// Output: [[a b] [] [c] [d]]
}

func ExamplePromote() {
	root := mustValue([]any{
		map[string]any{"docs": []any{map[string]any{"tokens": []any{7, 17}}, map[string]any{"tokens": []any{3, 13}}}},
		map[string]any{"docs": []any{map[string]any{"tokens": []any{5, 15}}}},
	}).(*st.StructTensor)
	out, err := ops.Promote(root, "docs.tokens", "docs_tokens")
	if err != nil {
		panic(err)
	}
	v, _ := out.FieldValue("docs_tokens")
	fmt.Println(st.ToValue(v))
	// Output: [[7 17 3 13] [5 15]]
}

func ExampleBroadcast() {
	root := mustValue([]any{
		map[string]any{"val": []any{10, 11}, "event": []any{map[string]any{"id": 1}, map[string]any{"id": 2}}},
		map[string]any{"val": []any{20}, "event": []any{map[string]any{"id": 3}}},
	}).(*st.StructTensor)
	out, _ := ops.Broadcast(root, "val", "event", "nv")
	v, _ := out.FieldValue("event", "nv")
	fmt.Println(st.ToValue(v))
	// Output: [[[10 11] [10 11]] [[20]]]
}

func ExampleReroot() {
	root := mustValue([]any{
		map[string]any{"docs": []any{map[string]any{"t": 1}, map[string]any{"t": 2}}},
		map[string]any{"docs": []any{map[string]any{"t": 3}}},
	}).(*st.StructTensor)
	out, _ := ops.Reroot(root, "docs", "root_index")
	fmt.Println(st.ToValue(out))
	// Output: [map[root_index:0 t:1] map[root_index:0 t:2] map[root_index:1 t:3]]
}

func ExampleFilterBySibling() {
	root := mustValue([]any{
		map[string]any{"doc": []any{map[string]any{"x": 1}, map[string]any{"x": 2}}, "keep": []any{false, true}},
	}).(*st.StructTensor)
	out, _ := ops.FilterBySibling(root, "doc", "keep", "kept")
	v, _ := out.FieldValue("kept")
	fmt.Println(st.ToValue(v))
	// Output: [[map[x:2]]]
}

func ExampleMapValues() {
	root := mustValue([]any{
		map[string]any{"price": []any{1.5, 2.0}},
		map[string]any{"price": []any{4.0}},
	}).(*st.StructTensor)
	out, _ := ops.MapValues(root, "price", "cents", func(p float64) int64 { return int64(p * 100) })
	v, _ := out.FieldValue("cents")
	fmt.Println(st.ToValue(v))
	// Output: [[150 200] [400]]
}
