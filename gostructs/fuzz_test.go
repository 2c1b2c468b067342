package gostructs

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// FuzzToStructs reads arbitrary JSON lines into a StructTensor and that
// into []Node, the type that exercises every Go kind ToStructs handles.
//
// With the spec FromStructs gives Node, every value FromJSONLines accepts
// has the right fields, dtypes and ranks, so ToStructs may fail only with
// ErrRange (a number too wide for its Go type, an optional value with two
// values, a fixed-size array of the wrong length), and what it returns must
// come back to the same StructTensor through FromStructs. Without a spec
// (inference picks the dtypes and ranks) ToStructs must return an error or
// rows, never panic, and the rows must survive FromStructs/ToStructs.
func FuzzToStructs(f *testing.F) {
	seed, err := FromStructs(nodeSeeds())
	if err != nil {
		f.Fatal(err)
	}
	lines, err := st.ToJSONLines(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(lines, true)
	f.Add(lines, false)
	f.Add([]byte(`{"Leaf": {"I8": 300}}`), false)
	f.Add([]byte(`{"Opt": [{}, {}]}`), false)
	f.Add([]byte("{}\n{}\n"), true)
	f.Add([]byte(`[1, 2]`), true)

	spec := st.AnyRows(seed.Spec())
	f.Fuzz(func(t *testing.T, data []byte, withSpec bool) {
		var v st.Value
		if withSpec {
			v, err = st.FromJSONLines(data, spec)
		} else {
			v, err = st.FromJSONLines(data)
		}
		if err != nil {
			return
		}
		s, ok := v.(*st.StructTensor)
		if !ok {
			if withSpec {
				t.Fatalf("FromJSONLines with a struct spec returned %T", v)
			}
			return // lines that are not objects: no rows of a struct type
		}
		rows, err := ToStructs[Node](s)
		if err != nil {
			if withSpec && !errors.Is(err, ErrRange) {
				t.Fatalf("ToStructs of a value of Node's spec: %v", err)
			}
			return
		}
		if len(rows) != s.NumRows() {
			t.Fatalf("ToStructs returned %d rows for %d", len(rows), s.NumRows())
		}
		back, err := FromStructs(rows)
		if err != nil {
			t.Fatalf("FromStructs of rows ToStructs returned: %v", err)
		}
		if withSpec && !st.Equal(back, binaryRaw(t, s)) {
			t.Fatalf("FromStructs(ToStructs(s)) != s\n got %v\nwant %v", back, s)
		}
		again, err := ToStructs[Node](back)
		if err != nil {
			t.Fatalf("ToStructs(FromStructs(rows)): %v", err)
		}
		if !reflect.DeepEqual(again, rows) {
			t.Fatalf("rows changed through FromStructs/ToStructs\n got %+v\nwant %+v", again, rows)
		}
	})
}

// nodeSeeds is a batch of Nodes with every field set in some row and
// every list empty, absent or long in another.
func nodeSeeds() []Node {
	x := int64(-7)
	opt := []float64{0.5, -1}
	return []Node{
		{},
		{
			Leaf: Leaf{B: true, I8: -128, I16: 32767, I32: -1, I: 1 << 40, U8: 255, U16: 65535, U32: 1 << 31,
				U: 1 << 50, U64: 1<<64 - 1, F32: 1.5, F64: -2.25, S: "héllo", Raw: []byte("raw")},
			Opt:    &Leaf{S: "opt", I32: 3},
			List:   []Leaf{{S: "a"}, {S: "b", Raw: []byte{1}}},
			Deep:   [][]*int64{{&x, nil}, nil, {nil}},
			Fixed:  [2][]string{{"p", "q"}, nil},
			OptOpt: &opt,
		},
		{List: []Leaf{{}}, Fixed: [2][]string{nil, {"r"}}},
	}
}

// binaryRaw returns s with its Raw fields marked binary, as FromStructs
// marks a []byte field: JSON has no binary strings, so FromJSONLines
// marks them text.
func binaryRaw(t *testing.T, s *st.StructTensor) *st.StructTensor {
	t.Helper()
	updates := map[string]st.Value{}
	for _, path := range []string{"Leaf.Raw", "Opt.Raw", "List.Raw"} {
		v, err := s.FieldValue(strings.Split(path, ".")...)
		if err != nil {
			t.Fatal(err)
		}
		switch x := v.(type) {
		case *st.Tensor:
			updates[path] = x.WithUTF8(false)
		case *st.Ragged:
			if updates[path], err = st.NewRagged(x.Values().WithUTF8(false), x.Partitions()...); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s is a %T", path, v)
		}
	}
	out, err := s.WithUpdates(updates)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
