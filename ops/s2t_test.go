package ops_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// s2tCase is one path-op case for struct2tensor: every field of input is
// a list (struct2tensor's repeated fields), so both sides give check the
// same ragged shape. scalar marks a checked field that we store as one
// value per parent and struct2tensor as an optional (a list of one).
type s2tCase struct {
	Op    string            `json:"op"`
	Args  map[string]string `json:"args"`
	Input any               `json:"input"`
	Check string            `json:"check"`
	// Optional lists the leaves that are optional in struct2tensor.
	Optional []string `json:"optional"`
	scalar   bool
}

// navigate returns the values at path in a nested value, keeping every
// list dimension on the way.
func navigate(x any, steps []string) any {
	if len(steps) == 0 {
		return x
	}
	switch v := x.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = navigate(e, steps)
		}
		return out
	case map[string]any:
		return navigate(v[steps[0]], steps[1:])
	}
	return fmt.Sprintf("cannot navigate %T", x)
}

// wrapScalars puts every non-list leaf of x in a list of one.
func wrapScalars(x any) any {
	if l, ok := x.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = wrapScalars(e)
		}
		return out
	}
	return []any{x}
}

const sessionsJSON = `[{"session":[{"event":[{"val":[1]},{"val":[4,5]}],"user_info":[{"age":[25]}]},{"event":[{"val":[7]},{"val":[8,9]}],"user_info":[{"age":[20]}]}]}]`

func fixedS2TCases(t *testing.T) []s2tCase {
	docs := parseJSON(t, `[{"docs":[{"tokens":[7,17],"keep":[true]},{"tokens":[3,13],"keep":[false]}],"val":[1,2],"ev":[{"x":[1]},{"x":[]}]},{"docs":[],"val":[],"ev":[{"x":[2]}]},{"docs":[{"tokens":[5,15,25],"keep":[]}],"val":[3],"ev":[]}]`)
	sessions := parseJSON(t, sessionsJSON)
	a := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	return []s2tCase{
		{Op: "promote", Args: a("src", "docs.tokens", "new", "docs_tokens"), Input: docs, Check: "docs_tokens"},
		{Op: "promote", Args: a("src", "session.event.val", "new", "vals"), Input: sessions, Check: "session.vals"},
		{Op: "broadcast", Args: a("src", "val", "sibling", "ev", "new", "v"), Input: docs, Check: "ev.v"},
		{Op: "broadcast", Args: a("src", "session.user_info", "sibling", "event", "new", "ui"), Input: sessions, Check: "session.event.ui.age"},
		{Op: "promote_and_broadcast", Args: a("new", "nage", "src", "session.user_info.age", "dest", "session.event"), Input: sessions, Check: "session.event.nage"},
		{Op: "promote_and_broadcast", Args: a("new", "t", "src", "docs.tokens", "dest", "ev"), Input: docs, Check: "ev.t"},
		{Op: "reroot", Args: a("path", "docs", "index", "idx"), Input: docs, Check: "tokens"},
		{Op: "reroot", Args: a("path", "docs", "index", "idx"), Input: docs, Check: "idx", scalar: true},
		{Op: "reroot", Args: a("path", "session.event"), Input: sessions, Check: "val"},
		{Op: "project", Args: a("paths", "docs.keep,val"), Input: docs, Check: "docs.keep"},
		{Op: "slice", Args: a("path", "docs.tokens", "new", "s", "begin", "1"), Input: docs, Check: "docs.s"},
		{Op: "slice", Args: a("path", "val", "new", "s", "begin", "-1", "end", "5"), Input: docs, Check: "s"},
		{Op: "truncate", Args: a("path", "docs", "new", "d", "limit", "1"), Input: docs, Check: "d.tokens"},
		{Op: "size_field", Args: a("path", "docs.tokens", "new", "n"), Input: docs, Check: "docs.n", scalar: true},
		{Op: "has_field", Args: a("path", "val", "new", "h"), Input: docs, Check: "h", scalar: true},
		{Op: "positional_index", Args: a("path", "docs.tokens", "new", "i"), Input: docs, Check: "docs.i"},
		{Op: "positional_index_from_end", Args: a("path", "session.event.val", "new", "i"), Input: sessions, Check: "session.event.i"},
		{Op: "filter_by_child", Args: a("path", "docs", "child", "keep", "new", "kept"), Input: docs, Check: "kept.tokens", Optional: []string{"docs.keep"}},
		{Op: "filter_by_sibling", Args: a("path", "doc", "sibling", "keep", "new", "kept"), Check: "kept.bar",
			Input: parseJSON(t, `[{"doc":[{"bar":[1]},{"bar":[2,3]}],"keep":[false,true]},{"doc":[],"keep":[]},{"doc":[{"bar":[4]}],"keep":[true]}]`)},
	}
}

// randomDocs draws records {docs:[{tokens:[..], keep:[0 or 1 bool]}],
// val:[..], ev:[{x:[..]}]}; the first record has one of everything so
// that inference sees every field's type.
func randomDocs(r *rand.Rand) any {
	ints := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = int64(r.IntN(100))
		}
		return out
	}
	n := 1 + r.IntN(4)
	recs := make([]any, n)
	for i := range recs {
		first := i == 0
		nd := r.IntN(3)
		if first {
			nd = max(nd, 1)
		}
		docs := make([]any, nd)
		for j := range docs {
			nt := r.IntN(4)
			if first && j == 0 {
				nt = max(nt, 1)
			}
			keep := []any{}
			if r.IntN(3) > 0 || first {
				keep = []any{r.IntN(2) == 0}
			}
			docs[j] = map[string]any{"tokens": ints(nt), "keep": keep}
		}
		nv, ne := r.IntN(4), r.IntN(3)
		if first {
			nv, ne = max(nv, 1), max(ne, 1)
		}
		ev := make([]any, ne)
		for j := range ev {
			nx := r.IntN(3)
			if first && j == 0 {
				nx = max(nx, 1)
			}
			ev[j] = map[string]any{"x": ints(nx)}
		}
		recs[i] = map[string]any{"docs": docs, "val": ints(nv), "ev": ev}
	}
	return recs
}

func randomS2TCases() []s2tCase {
	r := rand.New(rand.NewPCG(11, 12))
	var cases []s2tCase
	for range 25 {
		in := randomDocs(r)
		b, e := fmt.Sprint(r.IntN(7)-3), fmt.Sprint(r.IntN(7)-3)
		cases = append(cases,
			s2tCase{Op: "promote", Args: map[string]string{"src": "docs.tokens", "new": "p"}, Input: in, Check: "p"},
			s2tCase{Op: "broadcast", Args: map[string]string{"src": "val", "sibling": "ev", "new": "b"}, Input: in, Check: "ev.b"},
			s2tCase{Op: "promote_and_broadcast", Args: map[string]string{"new": "pb", "src": "docs.tokens", "dest": "ev"}, Input: in, Check: "ev.pb"},
			s2tCase{Op: "reroot", Args: map[string]string{"path": "docs", "index": "idx"}, Input: in, Check: "idx", scalar: true},
			s2tCase{Op: "slice", Args: map[string]string{"path": "docs.tokens", "new": "s", "begin": b, "end": e}, Input: in, Check: "docs.s"},
			s2tCase{Op: "size_field", Args: map[string]string{"path": "docs", "new": "n"}, Input: in, Check: "n", scalar: true},
			s2tCase{Op: "positional_index_from_end", Args: map[string]string{"path": "val", "new": "i"}, Input: in, Check: "i"},
			s2tCase{Op: "filter_by_child", Args: map[string]string{"path": "docs", "child": "keep", "new": "k"}, Input: in, Check: "k.tokens", Optional: []string{"docs.keep"}},
		)
	}
	return cases
}

// TestAgainstStruct2Tensor runs path-op cases (struct2tensor's documented
// examples and random records) through struct2tensor 0.48.1 in .venv-s2t
// and compares the checked field with ours.
func TestAgainstStruct2Tensor(t *testing.T) {
	python := venvPython(t, ".venv-s2t", "struct2tensor")
	cases := append(fixedS2TCases(t), randomS2TCases()...)
	res := runPython(t, python, "testdata/s2t_reference.py", cases, len(cases))
	for i, c := range cases {
		name := fmt.Sprintf("case %d %s %v", i, c.Op, c.Args)
		r := res[i]
		if r.Error != "" {
			t.Errorf("%s: struct2tensor: %s", name, r.Error)
			continue
		}
		dd := ddCase{op: c.Op, args: c.Args, inputs: []string{show(c.Input)}}
		got, err := runCase(t, dd)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		ours := navigate(got, strings.Split(c.Check, "."))
		if c.scalar {
			ours = wrapScalars(ours)
		}
		if !reflect.DeepEqual(canon(ours), canon(r.Value)) {
			t.Errorf("%s on %s:\n ours %s\n  s2t %s", name, show(c.Input), show(ours), show(r.Value))
		}
	}
	t.Logf("%d cases compared with struct2tensor", len(cases))
}
