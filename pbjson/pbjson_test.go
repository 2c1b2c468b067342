package pbjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/decode"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func descriptors(t *testing.T) *decode.Descriptors { return descriptorsF(t) }

func descriptorsF(t testing.TB) *decode.Descriptors {
	t.Helper()
	b, err := os.ReadFile("../testdata/proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	d, err := decode.LoadDescriptorSet(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Proto3Msg lines in protojson form: int64 as strings, enums by name,
// bytes base64, maps as objects, a oneof, optional scalars, either field
// name spelling.
const proto3Lines = `{"i32": 7, "i64": "-9007199254740993", "u64": "18446744073709551615", "mood": "HUNGRY", "blob": "AP8=", "optI32": 0, "choiceText": "hi", "counts": {"a": "1", "b": "2"}, "subsById": {"5": {"id": "5", "label": "five", "codes": [1, 2]}}, "sub": {"label": "s"}, "words": ["x", "y"], "fixed": [4]}
{"text": "second", "flag": true, "flt": 1.5, "choice_sub": {"id": "9"}, "packed_dbl": [0.25], "flags": {"true": "yes"}}

{}
`

func TestFromJSONLines(t *testing.T) {
	c, err := New(descriptors(t), "structtensor.testdata.proto3.Proto3Msg")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.FromJSONLines([]byte(proto3Lines))
	if err != nil {
		t.Fatal(err)
	}
	if s.NumRows() != 3 {
		t.Fatalf("%d rows, want 3", s.NumRows())
	}
	check := func(path string, want st.Value) {
		t.Helper()
		got, err := s.FieldValue(strings.Split(path, ".")...)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Equal(got, want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	must := func(v st.Value, err error) st.Value {
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Implicit scalars with their defaults; int64 and uint64 exact.
	check("i64", must(st.NewTensor(nil, []int64{-9007199254740993, 0, 0})))
	check("u64", must(st.NewTensor(nil, []uint64{18446744073709551615, 0, 0})))
	// Enums by name decode to their numbers.
	check("mood", must(st.NewTensor(nil, []int32{2, 0, 0})))
	// An explicit optional set to its default is present.
	check("opt_i32", must(st.NewRaggedFromSplits(mustV(st.NewTensor(nil, []int32{0})), []int64{0, 1, 1, 1})))
	check("choice_text", must(st.NewRaggedFromSplits(mustV(st.NewTensor(nil, []string{"hi"})), []int64{0, 1, 1, 1})))
	check("counts.key", must(st.NewRaggedFromSplits(mustV(st.NewTensor(nil, []string{"a", "b"})), []int64{0, 2, 2, 2})))
	check("subs_by_id.value.label", must(st.NewRaggedFromSplits(mustV(st.NewTensor(nil, []string{"five"})), []int64{0, 1, 1, 1})))
	check("blob", must(st.NewTensor(nil, [][]byte{{0, 0xff}, {}, {}})))
}

func TestRoundTrip(t *testing.T) {
	d := descriptors(t)
	for _, tc := range []struct {
		message string
		lines   string
	}{
		{"structtensor.testdata.proto3.Proto3Msg", proto3Lines},
		{"structtensor.testdata.recipe.Recipe", `{"title": "Bread", "ingredients": [{"name": "flour", "amount": 500, "unit": "g"}], "ratings": [{"user": "ann", "rating": 5, "userEmbedding": [0.5, 1]}], "steps": [{"instruction": "knead", "minutes": 10, "tools": [{"name": "hands", "electric": false}, {"name": "mixer"}]}], "servings": 4, "tags": ["easy"]}
{"title": "Tea", "steps": [{"tools": []}]}
`},
	} {
		t.Run(tc.message, func(t *testing.T) {
			c, err := New(d, tc.message)
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.FromJSONLines([]byte(tc.lines))
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.ToJSONLines(s)
			if err != nil {
				t.Fatal(err)
			}
			// Each line must equal protojson's own canonical form of the
			// input message.
			md, _ := d.Message(tc.message)
			var want []any
			for _, l := range strings.Split(tc.lines, "\n") {
				if strings.TrimSpace(l) == "" {
					continue
				}
				m := dynamicpb.NewMessage(md)
				if err := protojson.Unmarshal([]byte(l), m); err != nil {
					t.Fatal(err)
				}
				b, err := protojson.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, decodeJSON(t, b))
			}
			var got []any
			for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
				got = append(got, decodeJSON(t, l))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip\n got %v\nwant %v", got, want)
			}
		})
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return v
}

func TestProjected(t *testing.T) {
	c, err := New(descriptors(t), "structtensor.testdata.recipe.Recipe", "steps.tools.name")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.FromJSONLines([]byte(`{"title": "x", "steps": [{"tools": [{"name": "oven"}]}]}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.ToJSONLines(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); !reflect.DeepEqual(decodeJSON(t, []byte(got)), decodeJSON(t, []byte(`{"steps":[{"tools":[{"name":"oven"}]}]}`))) {
		t.Errorf("projected round trip = %s", got)
	}
}

func TestErrors(t *testing.T) {
	c, err := New(descriptors(t), "structtensor.testdata.proto3.Proto3Msg")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"i32": 1}` + "\n" + `{"i32": "x"}`,
		`{"i32": 1}` + "\n" + `{"nope": 1}`,
		`{"i32": 1}` + "\n" + `{"mood": "SAD"}`,
		`{"i32": 1}` + "\n" + `{"i32": 1`,
	} {
		_, err := c.FromJSONLines([]byte(bad))
		if !errors.Is(err, ErrJSON) || !strings.Contains(err.Error(), "line 2 (record 1)") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	// A StructTensor of the wrong dtype names the field and row.
	s, err := st.NewStruct(1, st.Field{Name: "i32", Value: mustV(st.NewTensor(nil, []string{"x"}))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ToJSONLines(s); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "row 0") || !strings.Contains(err.Error(), "i32") {
		t.Errorf("wrong dtype: err = %v", err)
	}
}

func mustV(v *st.Tensor, err error) *st.Tensor {
	if err != nil {
		panic(err)
	}
	return v
}
