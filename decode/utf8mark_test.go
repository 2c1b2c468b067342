package decode

import (
	"fmt"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/structtensor"
)

// utf8Marks lists whether each string tensor in v is marked UTF-8, in
// field order, each with its path.
func utf8Marks(v structtensor.Value, path string, marks []string) []string {
	switch x := v.(type) {
	case *structtensor.StructTensor:
		for _, f := range x.Fields() {
			marks = utf8Marks(f.Value, path+"/"+f.Name, marks)
		}
	case *structtensor.Ragged:
		marks = utf8Marks(x.Values(), path, marks)
	case *structtensor.Tensor:
		if x.DType() == structtensor.String {
			marks = append(marks, fmt.Sprintf("%s:%v", path, x.UTF8()))
		}
	}
	return marks
}

// checkUTF8MarksAgainstGo fails t unless the string tensors of st, built
// with the marks the engine set as it decoded, are marked as package
// decode marks them when it checks every string itself: again decodes
// the same batch the same way, with the engine's marks ignored.
func checkUTF8MarksAgainstGo(t *testing.T, what string, st *structtensor.StructTensor, again func() (*structtensor.StructTensor, error)) {
	t.Helper()
	testhook.IgnoreUTF8Marks.Store(true)
	ref, err := again()
	testhook.IgnoreUTF8Marks.Store(false)
	if err != nil {
		t.Fatalf("%s: decoding again, the marks ignored: %v", what, err)
	}
	got, want := utf8Marks(st, "", nil), utf8Marks(ref, "", nil)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: UTF-8 marks %v, checked in Go %v", what, got, want)
	}
}

// TestStringsMarkedAsDecoded checks the UTF-8 marks the engine sets on
// proto2 string fields (never validated) as it stores their strings,
// against Go's check of the same strings: a string field is text exactly
// when each string is valid UTF-8 on its own, a bytes field never. The
// cases: all valid, one invalid, an invalid singular string replaced
// later in its record (which the engine cannot judge alone), and each in
// a batch large enough to be decoded into lent buffers on one thread and
// on three, the odd record anywhere in it.
func TestStringsMarkedAsDecoded(t *testing.T) {
	d := testDescriptors(t)
	plan, err := Compile(d, allScalar, "o_string", "r_string", "u_string", "o_bytes")
	if err != nil {
		t.Fatal(err)
	}
	rec := func(o string, u ...string) wire {
		w := allScalarsRequired().str(14, o).str(15, "\xff")
		for _, s := range u {
			w = w.str(54, s)
		}
		return w
	}
	cases := []struct {
		name string
		odd  wire // one record among valid ones
		text map[string]bool
	}{
		{"valid", rec("é", "a", "ü"), map[string]bool{"o_string": true, "u_string": true}},
		{"invalid singular", rec("\xff", "a"), map[string]bool{"o_string": false, "u_string": true}},
		{"invalid repeated", rec("a", "b", "\xc3"), map[string]bool{"o_string": true, "u_string": false}},
		{"split character", rec("a", "\xc3", "\xa9"), map[string]bool{"o_string": true, "u_string": false}},
		{"invalid replaced", rec("\xff").str(14, "ok"), map[string]bool{"o_string": true, "u_string": true}},
		{"valid replaced by invalid", rec("ok").str(14, "\xfe"), map[string]bool{"o_string": false, "u_string": true}},
	}
	for _, tc := range cases {
		for _, n := range []int{1, 3000} {
			for _, threads := range []int{1, 3} {
				batch := make([][]byte, n)
				for i := range batch {
					batch[i] = rec("plain", "x", "y")
				}
				batch[(n*2)/3] = tc.odd
				buf, offsets := contiguous(batch)
				decode := func() (*structtensor.StructTensor, error) {
					return plan.DecodeContiguous(buf, offsets, DecodeOptions{Threads: threads})
				}
				what := fmt.Sprintf("%s, %d records, %d threads", tc.name, n, threads)
				st, err := decode()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				for _, name := range []string{"o_string", "r_string", "u_string", "o_bytes"} {
					v, _ := st.FieldValue(name)
					var vals *structtensor.Tensor
					switch x := v.(type) {
					case *structtensor.Ragged:
						vals = x.Values()
					case *structtensor.Tensor:
						vals = x
					}
					want, ok := tc.text[name]
					if !ok {
						want = name == "r_string"
					}
					if vals.UTF8() != want {
						t.Errorf("%s: %s marked UTF-8 %v, want %v", what, name, vals.UTF8(), want)
					}
				}
				checkUTF8MarksAgainstGo(t, what, st, decode)
			}
		}
	}
}
