package structtensor

import (
	"errors"
	"testing"
)

// FuzzUnmarshalSpec: any input either fails with ErrSpec or parses to a
// spec whose JSON form parses back to an equal spec. It never panics.
func FuzzUnmarshalSpec(f *testing.F) {
	for _, s := range []string{
		`{"kind":"tensor","dtype":"int64","shape":[]}`,
		`{"kind":"tensor","dtype":"float32","shape":[null,3]}`,
		`{"kind":"ragged","dtype":"string","shape":[2,null,null],"ragged_rank":2}`,
		`{"kind":"struct","shape":[null],"fields":[{"name":"a","spec":{"kind":"tensor","dtype":"int64","shape":[null]}}]}`,
		`{"kind":"struct","shape":[],"fields":[{"name":"r","spec":{"kind":"struct","shape":[null],"fields":[]}}]}`,
		`{"kind":"struct","shape":[3],"fields":[{"name":"x","spec":{"kind":"tensor","dtype":"int64","shape":[4]}}]}`,
		`{"kind":"tensor","dtype":"int64","shape":[-1]}`,
		`[]`, `null`, `{"kind":"struct"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := UnmarshalSpec(b)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("error without ErrSpec: %v", err)
			}
			return
		}
		out, err := MarshalSpec(s)
		if err != nil {
			t.Fatalf("MarshalSpec(%v): %v", s, err)
		}
		back, err := UnmarshalSpec(out)
		if err != nil {
			t.Fatalf("re-parsing %s: %v", out, err)
		}
		if !back.Equal(s) || back.String() != s.String() {
			t.Fatalf("round trip %v -> %s -> %v", s, out, back)
		}
	})
}
