package ops_test

import (
	"errors"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
	"pgregory.net/rapid"
)

// drawPathInput draws a root with random fields plus a known skeleton:
// r, a ragged int64 list per element; n, a struct collection of depth kn
// with an int64 leaf v of per-element rank kv and a bool b; m, a struct
// collection of depth km with an int64 w.
func drawPathInput(t *rapid.T) (root *st.StructTensor, rank, kn, kv, km int) {
	schema := drawSchema(t, "root", 1)
	kn = rapid.IntRange(0, 2).Draw(t, "kn")
	km = rapid.IntRange(0, 2).Draw(t, "km")
	kv = rapid.IntRange(0, 2).Draw(t, "kv")
	v := fieldSchema{name: "v", kind: leafRagged, dtype: st.Int64, depth: kv}
	if kv == 0 {
		v = fieldSchema{name: "v", kind: leafDense, dtype: st.Int64}
	}
	schema = append(schema,
		fieldSchema{name: "r", kind: leafRagged, dtype: st.Int64, depth: 1},
		fieldSchema{name: "n", kind: nested, depth: kn, fields: []fieldSchema{v, {name: "b", kind: leafDense, dtype: st.Bool}}},
		fieldSchema{name: "m", kind: nested, depth: km, fields: []fieldSchema{{name: "w", kind: leafDense, dtype: st.Int64}}},
	)
	rank = rapid.IntRange(0, 3).Draw(t, "rank")
	return drawRoot(t, schema, rank), rank, kn, kv, km
}

// withField returns x with every root element m given field name = f(m).
func withField(x any, rank int, name string, f func(m map[string]any) any) any {
	return atDepth(x, rank, func(e any) any {
		m := copyMap(e.(map[string]any))
		m[name] = f(e.(map[string]any))
		return m
	})
}

func TestPropPromoteBroadcast(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		root, rank, kn, kv, km := drawPathInput(t)
		x := st.ToValue(root)

		got := ok[*st.StructTensor](t, "Promote")(ops.Promote(root, "n.v", "nv"))
		sameNested(t, "Promote", got, withField(x, rank, "nv", func(m map[string]any) any {
			return refPromote(m["n"], kn, kv, "v")
		}))

		got = ok[*st.StructTensor](t, "Broadcast")(ops.Broadcast(root, "r", "m", "rb"))
		sameNested(t, "Broadcast", got, withField(x, rank, "m", func(m map[string]any) any {
			return atDepth(m["m"], km, func(rec any) any {
				c := copyMap(rec.(map[string]any))
				c["rb"] = m["r"]
				return c
			})
		}))

		got = ok[*st.StructTensor](t, "PromoteAndBroadcast")(ops.PromoteAndBroadcast(root, map[string]string{"pv": "n.v"}, "m"))
		sameNested(t, "PromoteAndBroadcast", got, withField(x, rank, "m", func(m map[string]any) any {
			pv := refPromote(m["n"], kn, kv, "v")
			return atDepth(m["m"], km, func(rec any) any {
				c := copyMap(rec.(map[string]any))
				c["pv"] = pv
				return c
			})
		}))
	})
}

func TestPropRerootProject(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		root, rank, kn, _, _ := drawPathInput(t)
		x := st.ToValue(root)
		want := []any{}
		for e, m := range elements(x, rank) {
			for _, rec := range elements(m.(map[string]any)["n"], kn) {
				c := copyMap(rec.(map[string]any))
				c["idx"] = int64(e)
				want = append(want, c)
			}
		}
		got := ok[*st.StructTensor](t, "Reroot")(ops.Reroot(root, "n", "idx"))
		sameNested(t, "Reroot", got, want)

		got = ok[*st.StructTensor](t, "Project")(ops.Project(root, "r", "n.b"))
		sameNested(t, "Project", got, atDepth(x, rank, func(e any) any {
			m := e.(map[string]any)
			return map[string]any{"r": m["r"], "n": atDepth(m["n"], kn, func(rec any) any {
				return map[string]any{"b": rec.(map[string]any)["b"]}
			})}
		}))
	})
}

func pySlice(l []any, begin, end int) []any {
	lo, hi := clamp(begin, len(l)), clamp(end, len(l))
	if hi < lo {
		hi = lo
	}
	return l[lo:hi]
}

func clamp(i, n int) int {
	if i < 0 {
		i += n
		if i < 0 {
			return 0
		}
	}
	return min(i, n)
}

func TestPropPerParentOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		root, rank, kn, _, _ := drawPathInput(t)
		x := st.ToValue(root)
		begin := rapid.IntRange(-4, 4).Draw(t, "begin")
		end := rapid.IntRange(-4, 4).Draw(t, "end")
		got := ok[*st.StructTensor](t, "Slice")(ops.Slice(root, "r", "s", begin, end))
		sameNested(t, "Slice", got, withField(x, rank, "s", func(m map[string]any) any {
			return pySlice(m["r"].([]any), begin, end)
		}))
		got = ok[*st.StructTensor](t, "SizeField")(ops.SizeField(root, "r", "size"))
		sameNested(t, "SizeField", got, withField(x, rank, "size", func(m map[string]any) any {
			return int64(len(m["r"].([]any)))
		}))
		got = ok[*st.StructTensor](t, "HasField")(ops.HasField(root, "n", "has"))
		sameNested(t, "HasField", got, withField(x, rank, "has", func(m map[string]any) any {
			if kn == 0 {
				return true
			}
			return len(m["n"].([]any)) > 0
		}))
		got = ok[*st.StructTensor](t, "PositionalIndexFromEnd")(ops.PositionalIndexFromEnd(root, "r", "p"))
		sameNested(t, "PositionalIndexFromEnd", got, withField(x, rank, "p", func(m map[string]any) any {
			l := m["r"].([]any)
			out := make([]any, len(l))
			for i := range l {
				out[i] = int64(i - len(l))
			}
			return out
		}))

		// Map a mask next to r, then filter r by it.
		thr := rapid.Int64Range(-9, 99).Draw(t, "threshold")
		masked := ok[*st.StructTensor](t, "MapValues")(ops.MapValues(root, "r", "keep", func(v int64) bool { return v > thr }))
		got = ok[*st.StructTensor](t, "FilterBySibling")(ops.FilterBySibling(masked, "r", "keep", "big"))
		wantKeep := withField(x, rank, "keep", func(m map[string]any) any {
			return atDepth(m["r"], 1, func(v any) any { return v.(int64) > thr })
		})
		sameNested(t, "FilterBySibling", got, withField(wantKeep, rank, "big", func(m map[string]any) any {
			out := []any{}
			for _, v := range m["r"].([]any) {
				if v.(int64) > thr {
					out = append(out, v)
				}
			}
			return out
		}))

		if kn > 0 {
			got = ok[*st.StructTensor](t, "FilterByChild")(ops.FilterByChild(root, "n", "b", "nb"))
			sameNested(t, "FilterByChild", got, withField(x, rank, "nb", func(m map[string]any) any {
				return atDepth(m["n"], kn-1, func(l any) any {
					out := []any{}
					for _, rec := range l.([]any) {
						if rec.(map[string]any)["b"].(bool) {
							out = append(out, rec)
						}
					}
					return out
				})
			}))
		}
		got = ok[*st.StructTensor](t, "Map")(ops.Map(root, "twice", st.Int64, func(a []any) (any, error) {
			return a[0].(int64) + a[1].(int64), nil
		}, "r", "r"))
		sameNested(t, "Map", got, withField(x, rank, "twice", func(m map[string]any) any {
			return atDepth(m["r"], 1, func(v any) any { return 2 * v.(int64) })
		}))
	})
}

func TestPathErrors(t *testing.T) {
	root := structValue(t, `[{"a":[{"b":1}],"c":[1,2]}]`)
	cases := map[string]error{}
	_, cases["promote root child"] = ops.Promote(root, "a", "x")
	_, cases["promote missing"] = ops.Promote(root, "a.zz", "x")
	_, cases["broadcast onto leaf"] = ops.Broadcast(root, "a", "c", "x")
	_, cases["slice scalar"] = ops.Slice(root, "a.b", "x", 0, 1)
	_, cases["bad path"] = ops.Promote(root, "a..b", "x")
	_, cases["reroot leaf"] = ops.Reroot(root, "c", "")
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if !errorsIs(err, ops.ErrPath) {
			t.Errorf("%s: %v does not wrap ErrPath", name, err)
		}
	}
	if _, err := ops.Promote(root, "a.b", "c"); !errorsIs(err, ops.ErrFieldExists) {
		t.Errorf("promote onto existing field: %v", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
