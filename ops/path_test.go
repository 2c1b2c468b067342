package ops_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func TestPromoteIssueCase(t *testing.T) {
	root := structValue(t, `[{"docs":[{"tokens":[7,17]},{"tokens":[3,13]}]},{"docs":[{"tokens":[5,15]}]}]`)
	out, err := ops.Promote(root, "docs.tokens", "docs_tokens")
	if err != nil {
		t.Fatal(err)
	}
	v, err := out.FieldValue("docs_tokens")
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, v, `[[7,17,3,13],[5,15]]`)
	// The promoted field shares the leaf's flat values.
	orig, _ := root.FieldValue("docs", "tokens")
	if &orig.(*st.Ragged).Values().Int64s()[0] != &v.(*st.Ragged).Values().Int64s()[0] {
		t.Error("Promote copied the values it could share")
	}
}

// The session/event/user_info example of struct2tensor's
// promote_and_broadcast documentation.
const sessions = `[
 {"session":[
   {"event":[{"val":[1]},{"val":[4,5]}],"user_info":[{"age":[25]}]},
   {"event":[{"val":[7]},{"val":[8,9]}],"user_info":[{"age":[20]}]}]}]`

func TestPromoteAndBroadcast(t *testing.T) {
	root := structValue(t, sessions)
	out, err := ops.PromoteAndBroadcast(root, map[string]string{"nage": "session.user_info.age"}, "session.event")
	if err != nil {
		t.Fatal(err)
	}
	v, err := out.FieldValue("session", "event", "nage")
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, v, `[[[[25],[25]],[[20],[20]]]]`)
	// Only the requested field is added.
	s, _ := out.Field("session")
	if names := fmt.Sprint(s.(*st.StructTensor).FieldNames()); names != "[event user_info]" {
		t.Errorf("session fields %s", names)
	}
}

func TestBroadcast(t *testing.T) {
	// struct2tensor's broadcast example: session.val copied under each event.
	root := structValue(t, `[{"session":[{"event":[{"x":1},{"x":2}],"val":[10,11]},{"event":[{"x":3},{"x":4}],"val":[20]}]}]`)
	out, err := ops.Broadcast(root, "session.val", "event", "nv")
	if err != nil {
		t.Fatal(err)
	}
	v, err := out.FieldValue("session", "event", "nv")
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, v, `[[[[10,11],[10,11]],[[20],[20]]]]`)
	if _, err := ops.Broadcast(root, "session.val", "val", "nv"); !errors.Is(err, ops.ErrPath) {
		t.Errorf("broadcast onto a leaf: err = %v, want ErrPath", err)
	}
}

func TestPositionalIndex(t *testing.T) {
	root := structValue(t, `[{"event":[{"val":[111]},{"val":[121,122]}]},{"event":[{"val":[10,7]},{"val":[1]}]}]`)
	out := must[*st.StructTensor](t)(ops.PositionalIndex(root, "event.val", "val_index"))
	checkValue(t, must[st.Value](t)(out.FieldValue("event", "val_index")), `[[[0],[0,1]],[[0,1],[0]]]`)
	out = must[*st.StructTensor](t)(ops.PositionalIndexFromEnd(root, "event.val", "neg"))
	checkValue(t, must[st.Value](t)(out.FieldValue("event", "neg")), `[[[-1],[-2,-1]],[[-2,-1],[-1]]]`)
}

func TestFilters(t *testing.T) {
	// struct2tensor's filter example.
	root := structValue(t, `[
	 {"doc":[{"bar":["a"],"keep_me":[false]}],"keep_my_sib":[false]},
	 {"doc":[{"bar":["b","c"],"keep_me":[true]}],"keep_my_sib":[true]},
	 {"doc":[{"bar":["d"],"keep_me":[]}],"keep_my_sib":[false]}]`)
	want := `[[],[{"bar":["b","c"],"keep_me":[true]}],[]]`
	out := must[*st.StructTensor](t)(ops.FilterBySibling(root, "doc", "keep_my_sib", "new_doc"))
	checkValue(t, must[st.Value](t)(out.FieldValue("new_doc")), want)
	out = must[*st.StructTensor](t)(ops.FilterByChild(root, "doc", "keep_me", "new_doc"))
	checkValue(t, must[st.Value](t)(out.FieldValue("new_doc")), want)
}

func TestSliceSizeHas(t *testing.T) {
	root := structValue(t, `[{"x":[1,2,3]},{"x":[]},{"x":[4,5]}]`)
	cases := []struct {
		begin, end int
		want       string
	}{
		{0, 2, `[[1,2],[],[4,5]]`},
		{1, ops.SliceEnd, `[[2,3],[],[5]]`},
		{-1, ops.SliceEnd, `[[3],[],[5]]`},
		{-5, -1, `[[1,2],[],[4]]`},
		{2, 1, `[[],[],[]]`},
	}
	for _, c := range cases {
		out := must[*st.StructTensor](t)(ops.Slice(root, "x", "y", c.begin, c.end))
		checkValue(t, must[st.Value](t)(out.FieldValue("y")), c.want)
	}
	out := must[*st.StructTensor](t)(ops.Truncate(root, "x", "y", 1))
	checkValue(t, must[st.Value](t)(out.FieldValue("y")), `[[1],[],[4]]`)
	out = must[*st.StructTensor](t)(ops.SizeField(root, "x", "n"))
	checkValue(t, must[st.Value](t)(out.FieldValue("n")), `[3,0,2]`)
	out = must[*st.StructTensor](t)(ops.HasField(root, "x", "h"))
	checkValue(t, must[st.Value](t)(out.FieldValue("h")), `[true,false,true]`)
}

func TestRerootProject(t *testing.T) {
	root := structValue(t, `[{"docs":[{"t":1,"u":"a"},{"t":2,"u":"b"}],"id":5},{"docs":[],"id":6},{"docs":[{"t":3,"u":"c"}],"id":7}]`)
	out := must[*st.StructTensor](t)(ops.Reroot(root, "docs", "root_index"))
	checkValue(t, out, `[{"t":1,"u":"a","root_index":0},{"t":2,"u":"b","root_index":0},{"t":3,"u":"c","root_index":2}]`)
	p := must[*st.StructTensor](t)(ops.Project(root, "docs.u", "id"))
	checkValue(t, p, `[{"docs":[{"u":"a"},{"u":"b"}],"id":5},{"docs":[],"id":6},{"docs":[{"u":"c"}],"id":7}]`)
	if _, err := ops.Project(root, "docs.nope"); !errors.Is(err, ops.ErrPath) {
		t.Errorf("err = %v, want ErrPath", err)
	}
}

func TestMap(t *testing.T) {
	root := structValue(t, `[{"a":[1,2],"b":[10,20]},{"a":[3],"b":[30]}]`)
	out, err := ops.Map(root, "c", st.Int64, func(args []any) (any, error) {
		return args[0].(int64) + args[1].(int64), nil
	}, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, must[st.Value](t)(out.FieldValue("c")), `[[11,22],[33]]`)
	out, err = ops.MapValues(root, "a", "d", func(x int64) float64 { return float64(x) / 2 })
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, must[st.Value](t)(out.FieldValue("d")), `[[0.5,1],[1.5]]`)
	out, err = ops.MapRagged(root, "", []string{"a"}, "rev", func(args []st.Value) (st.Value, error) {
		return ops.Gather(args[0], ints(t, -1), 1, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, must[st.Value](t)(out.FieldValue("rev")), `[[2],[3]]`)
	for _, dt := range []st.DType{st.Bool, st.Int32, st.Int64, st.Uint32, st.Uint64, st.Float32, st.Float64, st.String} {
		out, err = ops.Map(root, "s", dt, func(args []any) (any, error) {
			if dt == st.String {
				return 1.5, nil
			}
			return "x", nil
		}, "a")
		if !errors.Is(err, ops.ErrArgument) || out != nil {
			t.Errorf("Map to %v returning the wrong type: %v, %v; want ErrArgument", dt, out, err)
		}
	}
	out, err = ops.Map(root, "s", st.String, func(args []any) (any, error) { return fmt.Sprint(args[0]), nil }, "a")
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, must[st.Value](t)(out.FieldValue("s")), `[["1","2"],["3"]]`)
}
