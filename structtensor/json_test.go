package structtensor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"pgregory.net/rapid"
)

// TestJSONGolden reads every testdata/json/NAME.json (one value) and
// NAME.jsonl (JSON lines), with the spec in NAME.spec when there is one,
// and compares the result's spec and ToJSON, or the error, with
// NAME.golden. go test -run TestJSONGolden -update rewrites the golden
// files; review the diff.
func TestJSONGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/json/*.json*")
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no inputs in testdata/json")
	}
	for _, in := range inputs {
		ext := filepath.Ext(in)
		base := strings.TrimSuffix(in, ext)
		t.Run(filepath.Base(base), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var spec []Spec
			if b, err := os.ReadFile(base + ".spec"); err == nil {
				s, err := UnmarshalSpec(b)
				if err != nil {
					t.Fatalf("%s.spec: %v", base, err)
				}
				spec = append(spec, s)
			}
			var got bytes.Buffer
			var v Value
			if ext == ".jsonl" {
				v, err = FromJSONLines(data, spec...)
			} else {
				v, err = FromJSON(data, spec...)
			}
			if err != nil {
				got.WriteString("error: " + err.Error() + "\n")
			} else {
				got.WriteString("spec: " + v.Spec().String() + "\n")
				out, err := ToJSON(v)
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString("json: " + string(out) + "\n")
				if ext == ".jsonl" {
					lines, err := ToJSONLines(v)
					if err != nil {
						t.Fatal(err)
					}
					got.WriteString("jsonl:\n" + string(lines))
				}
				checkJSONRoundTrip(t, v)
			}
			golden := base + ".golden"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("%s differs:\n got: %s\nwant: %s", golden, got.String(), want)
			}
		})
	}
}

// fataler is what the checks need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkJSONRoundTrip checks FromJSON(ToJSON(v), v.Spec()) == v (and the
// JSON lines form when v has rows) for a v whose strings are UTF-8.
func checkJSONRoundTrip(t fataler, v Value) {
	t.Helper()
	if !allUTF8(v) {
		return
	}
	b, err := ToJSON(v)
	if err != nil {
		t.Fatalf("ToJSON: %v", err)
	}
	back, err := FromJSON(b, v.Spec())
	if err != nil {
		t.Fatalf("FromJSON(%s, %v): %v", b, v.Spec(), err)
	}
	if !Equal(back, v) {
		t.Fatalf("FromJSON(ToJSON(v), v.Spec()) differs from v: %s", b)
	}
	if v.Rank() == 0 {
		return
	}
	lines, err := ToJSONLines(v)
	if err != nil {
		t.Fatalf("ToJSONLines: %v", err)
	}
	back, err = FromJSONLines(lines, v.Spec())
	if err != nil {
		t.Fatalf("FromJSONLines(%s, %v): %v", lines, v.Spec(), err)
	}
	if !Equal(back, v) {
		t.Fatalf("FromJSONLines(ToJSONLines(v), v.Spec()) differs from v: %s", lines)
	}
}

// allUTF8 reports whether every string in v is valid UTF-8 (ToJSON writes
// the others as base64, which does not read back as the same bytes).
func allUTF8(v Value) bool {
	switch x := v.(type) {
	case *Tensor:
		if x.DType() != String {
			return true
		}
		for i := 0; i < x.Len(); i++ {
			if !utf8.Valid(x.StringAt(i)) {
				return false
			}
		}
		return true
	case *Ragged:
		return allUTF8(x.Values())
	case *StructTensor:
		for _, f := range x.Fields() {
			if !allUTF8(f.Value) {
				return false
			}
		}
	}
	return true
}

// jsonInferable reports whether FromJSON without a spec gives back x from
// ToJSON(x): only the dtypes JSON infers (bool, int64, float64, string),
// finite floats.
func jsonInferable(x Value) bool {
	switch v := x.(type) {
	case *Tensor:
		switch v.DType() {
		case Bool, Int64, String:
			return true
		case Float64:
			for _, f := range v.Float64s() {
				if math.IsInf(f, 0) || math.IsNaN(f) {
					return false
				}
			}
			return true
		case Float32:
			return v.Len() == 0 // the dtype of empty lists
		}
		return false
	case *Ragged:
		return jsonInferable(v.Values())
	case *StructTensor:
		for _, f := range v.Fields() {
			if !jsonInferable(f.Value) {
				return false
			}
		}
	}
	return true
}

// decodeStd decodes one JSON value with encoding/json, numbers as
// json.Number: the reference the JSON scanner must agree with through
// FromValue.
func decodeStd(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// sameOutcome checks that the JSON path (got, gotErr) agrees with
// FromValue on the encoding/json decoding (want, wantErr).
func sameOutcome(t fataler, what string, got Value, gotErr error, want Value, wantErr error) {
	t.Helper()
	switch {
	case gotErr != nil && wantErr != nil:
		for _, s := range []error{ErrInference, ErrSpec, ErrFieldName} {
			if errors.Is(gotErr, s) != errors.Is(wantErr, s) {
				t.Fatalf("%s: JSON error %q, FromValue error %q", what, gotErr, wantErr)
			}
		}
	case gotErr != nil || wantErr != nil:
		t.Fatalf("%s: JSON error %v, FromValue error %v", what, gotErr, wantErr)
	case !Equal(withSortedFields(got), withSortedFields(want)):
		t.Fatalf("%s: JSON gives %v, FromValue gives %v", what, got.Spec(), want.Spec())
	}
}

// withSortedFields returns v with the fields of every struct in name
// order: FromJSON keeps the order of the keys, which a Go map loses.
func withSortedFields(v Value) Value {
	st, ok := v.(*StructTensor)
	if !ok {
		return v
	}
	fields := make([]Field, len(st.fields))
	for i, f := range st.fields {
		fields[i] = Field{Name: f.Name, Value: withSortedFields(f.Value)}
	}
	slices.SortFunc(fields, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	c := *st
	c.fields = fields
	c.index = make(map[string]int, len(fields))
	for i, f := range fields {
		c.index[f.Name] = i
	}
	return &c
}

func TestJSONRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, v, spec := drawValue(t, true)
		x, err := FromValue(v, spec)
		if err != nil {
			t.Fatalf("FromValue: %v", err)
		}
		checkJSONRoundTrip(t, x)
		b, err := ToJSON(x)
		if err != nil {
			t.Fatal(err)
		}
		std, err := decodeStd(b)
		if err != nil {
			t.Fatalf("encoding/json cannot read ToJSON output %s: %v", b, err)
		}
		// With the spec, without it, and the JSON lines form: the scanner
		// and FromValue over encoding/json agree.
		got, gotErr := FromJSON(b, x.Spec())
		want, wantErr := FromValue(std, x.Spec())
		sameOutcome(t, "with spec", got, gotErr, want, wantErr)
		got, gotErr = FromJSON(b)
		want, wantErr = FromValue(std)
		sameOutcome(t, "inferred", got, gotErr, want, wantErr)
		if s.inferred(true) && !notInferable(x) && jsonInferable(x) {
			if gotErr != nil {
				t.Fatalf("FromJSON(%s) of inferred form: %v", b, gotErr)
			}
			if !Equal(got, x) {
				t.Fatalf("FromJSON(ToJSON(x)) = %v, want %v", got.Spec(), x.Spec())
			}
		}
		if x.Rank() > 0 {
			lines, err := ToJSONLines(x)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := FromJSONLines(lines)
			want, wantErr := FromValue(std)
			if _, isTensor := want.(*Tensor); wantErr == nil && isTensor && x.NumRows() == 0 {
				return // no records: nothing to infer a type from
			}
			sameOutcome(t, "JSON lines", got, gotErr, want, wantErr)
		}
	})
}

func TestJSONExactNumbers(t *testing.T) {
	x, err := FromJSON([]byte(`{"i":[-9223372036854775808, 9223372036854775807], "u":[18446744073709551615], "f":[0.1, 1e300, 5e-324]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := m{
		"i": l{int64(math.MinInt64), int64(math.MaxInt64)},
		"u": l{uint64(math.MaxUint64)},
		"f": l{0.1, 1e300, 5e-324},
	}
	if got := ToValue(x); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	b, err := ToJSON(x)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"i":[-9223372036854775808,9223372036854775807],"u":[18446744073709551615],"f":[0.1,1e+300,5e-324]}`; string(b) != want {
		t.Errorf("ToJSON = %s, want %s", b, want)
	}
	// A float that happens to be integral is written with ".0" so that it
	// reads back as a float.
	f, _ := FromValue(l{1.0, -2.0})
	if b, _ := ToJSON(f); string(b) != "[1.0,-2.0]" {
		t.Errorf("ToJSON(floats) = %s", b)
	}
	// float32 is parsed once, straight to float32.
	f32, err := FromJSON([]byte(`[0.1, 16777217, 3.4028235e38]`), &TensorSpec{DType: Float32, Shape: Shape{3}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f32.(*Tensor).Float32s(), []float32{0.1, 16777216, math.MaxFloat32}; !reflect.DeepEqual(got, want) {
		t.Errorf("float32: %v, want %v", got, want)
	}
}

func TestJSONNonFinite(t *testing.T) {
	x, _ := FromValue(l{math.NaN(), math.Inf(1), math.Inf(-1), 0.5})
	b, err := ToJSON(x)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["NaN","Infinity","-Infinity",0.5]`; string(b) != want {
		t.Errorf("ToJSON = %s, want %s", b, want)
	}
	back, err := FromJSON(b, x.Spec())
	if err != nil || !Equal(back, x) {
		t.Errorf("FromJSON(%s, spec) = %v, %v", b, back, err)
	}
	// Without a spec they are strings, and a mix with numbers is an error.
	if _, err := FromJSON(b); !errors.Is(err, ErrInference) {
		t.Errorf("FromJSON without spec: %v, want ErrInference", err)
	}
}

func TestJSONInvalidUTF8Base64(t *testing.T) {
	x, err := NewTensor(nil, [][]byte{{0xff, 0x00, 'a'}, []byte("fine")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ToJSON(x)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["/wBh","fine"]`; string(b) != want {
		t.Errorf("ToJSON = %s, want %s", b, want)
	}
	// Invalid UTF-8 read from JSON is kept byte for byte.
	v, err := FromJSON([]byte("[\"\xff\"]"))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.(*Tensor).StringAt(0); !bytes.Equal(got, []byte{0xff}) || v.(*Tensor).UTF8() {
		t.Errorf("got %q (utf8 mark %v), want \\xff unmarked", got, v.(*Tensor).UTF8())
	}
}

func TestJSONErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		lines    bool
		is       error
		want     string
	}{
		{"record line", "{\"a\":1}\n{\"a\":2}\n{\"a\":\"x\"}\n", true, ErrInference, `line 3, byte offset 21: field "a" at [2]: int64 vs string`},
		{"nested path", `{"r": [{"x": [1]}, {"x": [2, true]}]}`, false, ErrInference, `byte offset 29: field "x" at r[1] element [1]: int64 vs bool`},
		{"syntax", "[1,\n 2,\n x]", false, ErrSyntax, `line 3, byte offset 9: at [2]: unexpected 'x'`},
		{"missing at end", "{\"a\":1,\"b\":1}\n{\"a\":1}\n", true, ErrInference, `line 2, byte offset 14: at [1]: missing field "b"`},
		{"spec unknown field", `{"a":1,"zz":2}`, false, ErrSpec, `byte offset 7: field "zz" is not in the spec`},
		{"empty", "  ", false, ErrSyntax, `no JSON value`},
		{"deep", strings.Repeat("[", 20000), false, ErrSyntax, `nested too deep`},
		{"bad escape", `["\x"]`, false, ErrSyntax, `invalid escape`},
		{"control char", "[\"a\tb\"]", false, ErrSyntax, `control character`},
		{"bad literal", `[tru]`, false, ErrSyntax, `invalid literal`},
		{"exponent", `[1e]`, false, ErrSyntax, `no digits in the exponent`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec []Spec
			if tc.is == ErrSpec {
				spec = append(spec, &StructSpec{Shape: Shape{}, Fields: []FieldSpec{{"a", &TensorSpec{DType: Int64, Shape: Shape{}}}}})
			}
			var err error
			if tc.lines {
				_, err = FromJSONLines([]byte(tc.in), spec...)
			} else {
				_, err = FromJSON([]byte(tc.in), spec...)
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %v containing %q", err, tc.is, tc.want)
			}
		})
	}
}

// fuzzSeeds are the seed corpus of both fuzz targets, with every golden
// input.
func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		`{"a":12,"b":[1,2,3],"c":[[1,2],[3]]}`,
		`[[{"a":1},{"a":2},{"a":3}],[{"a":4},{"a":5}]]`,
		`[{"a":1},{"a":"c"}]`, `[1, 2.5, "x"]`, `[[], [[]]]`, `"\ud83d\ude00"`,
		"{\"a\":1}\n{\"a\":2}\n", "[1]\n[]\n", `[18446744073709551615]`, `{"a":{"b":{"c":[true]}}}`,
	} {
		f.Add([]byte(s))
	}
	inputs, _ := filepath.Glob("testdata/json/*.json*")
	for _, in := range inputs {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
}

// fuzzSpecs exercise the spec-directed path of the fuzz targets.
var fuzzSpecs = []Spec{
	&StructSpec{Shape: Shape{}, Fields: []FieldSpec{
		{"a", &TensorSpec{DType: Int32, Shape: Shape{}}},
		{"b", &RaggedSpec{DType: Float32, Shape: Shape{2, Unknown}, RaggedRank: 1}},
		{"c", &StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{{"x", &TensorSpec{DType: String, Shape: Shape{Unknown}}}}}},
	}},
	&TensorSpec{DType: Uint64, Shape: Shape{Unknown, 2}},
	&RaggedSpec{DType: Float64, Shape: Shape{Unknown, 2, Unknown}, RaggedRank: 2},
	&StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{{"a", &TensorSpec{DType: Int64, Shape: Shape{Unknown}}}}},
}

// checkWithSpecs reads data with each of fuzzSpecs: no panic, and what is
// read round-trips.
func checkWithSpecs(t *testing.T, data []byte, read func([]byte, ...Spec) (Value, error)) {
	for _, s := range fuzzSpecs {
		if v, err := read(data, s); err == nil {
			if !s.IsCompatibleWith(v.Spec()) {
				t.Fatalf("read with %v gives %v", s, v.Spec())
			}
			checkJSONRoundTrip(t, v)
		}
	}
}

// FuzzFromJSON checks that FromJSON never panics, accepts only what
// encoding/json accepts, agrees with FromValue over encoding/json, and
// that what it reads round-trips through ToJSON.
func FuzzFromJSON(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkWithSpecs(t, data, FromJSON)
		v, err := FromJSON(data)
		if err == nil && !json.Valid(data) {
			t.Fatalf("FromJSON accepted invalid JSON %q", data)
		}
		if err == nil {
			checkJSONRoundTrip(t, v)
		}
		inOrder, unique := objectKeys(data)
		if !unique && err == nil {
			t.Fatalf("FromJSON accepted %q, whose object repeats a key", data)
		}
		if !utf8.Valid(data) || !unique {
			// encoding/json rewrites bad UTF-8 and keeps the last of
			// duplicate keys; FromJSON fails at the second, or at an error
			// in a value before it (a bad value the later key replaces).
			return
		}
		std, stdErr := decodeStd(data)
		if stdErr != nil || !json.Valid(data) {
			return
		}
		want, wantErr := FromValue(std)
		if err != nil && wantErr != nil && !inOrder {
			return // both fail; with several errors each may meet a different one first
		}
		sameOutcome(t, "FromJSON vs FromValue", v, err, want, wantErr)
	})
}

// objectKeys reports whether the keys of every object in the valid JSON
// text b come in sort.Strings order, and whether no object repeats a key.
// FromJSON reads keys in document order and FromValue visits a map's keys
// sorted, so only in order do both meet the same error first in an input
// with several ({"}": 1, "b": [[], 2]} has a bad field name first in the
// text and a bad list first in key order).
func objectKeys(b []byte) (inOrder, unique bool) {
	type level struct {
		object, wantKey bool
		keys            map[string]bool
		last            string
	}
	inOrder, unique = true, true
	var stack []*level
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return inOrder, unique
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				top := stack[n-1]
				if len(top.keys) > 0 && k < top.last {
					inOrder = false
				}
				if top.keys[k] {
					unique = false
				}
				top.keys[k] = true
				top.last, top.wantKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{object: true, wantKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the object holding it wants its next key.
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
}

// FuzzFromJSONLines checks that FromJSONLines never panics and that what
// it reads round-trips through ToJSONLines.
func FuzzFromJSONLines(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkWithSpecs(t, data, FromJSONLines)
		v, err := FromJSONLines(data)
		checkInferredBatches(t, data, v, err)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		checkJSONRoundTrip(t, v)
		checkBatches(t, data, v)
		if v.NumRows() == 0 || !allUTF8(v) {
			return
		}
		lines, err := ToJSONLines(v)
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromJSONLines(lines)
		if err != nil || !Equal(back, v) {
			t.Fatalf("FromJSONLines(ToJSONLines(v)) = %v, %v; lines %q", back, err, lines)
		}
	})
}

// TestFromValueAgainstTensorFlow reads the golden inputs that TensorFlow
// can read too, and a few hundred random values in the form inference
// produces, with StructuredTensor.from_pyval (through
// testdata/json/tf_from_pyval.py in the project's .venv, made by
// scripts/setup-python.sh) and checks that FromJSON gives the same kinds,
// shapes, ragged ranks, row partitions and values, and fails where
// TensorFlow fails. Dtypes are compared by class: TensorFlow makes Python
// ints int32 and floats float32 where Go values are int64 and float64.
func TestFromValueAgainstTensorFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts TensorFlow")
	}
	python := testenv.Python(t, ".venv")
	var inputs [][]byte
	var args []string
	for _, pat := range []string{"tf_*.json", "rfc_*.json", "err_structs_and_scalars.json", "err_null.json", "numbers_int64.json"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "json", pat))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, data)
			args = append(args, f)
		}
	}
	random := randomInferredJSON(t, 300)
	lines := filepath.Join(t.TempDir(), "random.jsonl")
	if err := os.WriteFile(lines, bytes.Join(random, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, random...)
	args = append(args, "--lines", lines)

	cmd := exec.Command(python, append([]string{filepath.Join("testdata", "json", "tf_from_pyval.py")}, args...)...)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", python, err, stderr.Bytes())
	}
	results := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(results) != len(inputs) {
		t.Fatalf("%d results for %d inputs:\n%s\n%s", len(results), len(inputs), out, stderr.Bytes())
	}
	for i, line := range results {
		var tf struct {
			File  string
			Error string
			Value any
			Pyval any
		}
		if err := json.Unmarshal([]byte(line), &tf); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		t.Run(tf.File, func(t *testing.T) {
			v, err := FromJSON(inputs[i])
			if tf.Error != "" || err != nil {
				if (tf.Error != "") != (err != nil) {
					t.Fatalf("%s: TensorFlow error %q, ours %v", inputs[i], tf.Error, err)
				}
				return
			}
			if got := asJSON(t, describeLikeTF(t, v)); !approxEqual(got, tf.Value) {
				t.Errorf("%s: structure differs:\n ours %v\n   tf %v", inputs[i], got, tf.Value)
			}
			if got := asJSON(t, ToValue(v)); !approxEqual(got, tf.Pyval) {
				t.Errorf("%s: values differ:\n ours %v\n   tf %v", inputs[i], got, tf.Pyval)
			}
		})
	}
}

// randomInferredJSON draws n values in the form JSON inference produces
// (ragged lists, structs, bool, int64, float64 and string) and returns
// them as JSON, one line each. Floats stay within float32's range so that
// TensorFlow's float32 compares to a relative 1e-6.
func randomInferredJSON(t *testing.T, n int) [][]byte {
	var out [][]byte
	for seed := uint64(0); len(out) < n && seed < uint64(50*n); seed++ {
		var b []byte
		rapid.Custom(func(rt *rapid.T) int {
			s, v, spec := drawValue(rt, true)
			x, err := FromValue(v, spec)
			if err != nil || !s.inferred(true) || notInferable(x) || !jsonInferable(x) || !tfComparable(x) {
				return 0
			}
			if b, err = ToJSON(x); err != nil {
				t.Fatal(err)
			}
			return 0
		}).Example(int(seed))
		if b != nil {
			out = append(out, b)
		}
	}
	if len(out) < n {
		t.Fatalf("drew %d inferable values, want %d", len(out), n)
	}
	return out
}

// tfComparable reports whether every float of x is 0 or within
// [1e-30, 1e30] in magnitude, so that float32 holds it to 1e-6.
func tfComparable(x Value) bool {
	switch v := x.(type) {
	case *Tensor:
		for _, f := range v.Float64s() {
			if a := math.Abs(f); a != 0 && (a < 1e-30 || a > 1e30) {
				return false
			}
		}
		return true
	case *Ragged:
		return tfComparable(v.Values())
	case *StructTensor:
		for _, f := range v.Fields() {
			if !tfComparable(f.Value) {
				return false
			}
		}
	}
	return true
}

// describeLikeTF describes v as tf_from_pyval.py describes TensorFlow's
// result.
func describeLikeTF(t *testing.T, v Value) map[string]any {
	shape := func(s Shape) []any {
		out := []any{}
		for _, d := range s {
			if d < 0 {
				out = append(out, nil)
			} else {
				out = append(out, d)
			}
		}
		return out
	}
	class := func(d DType) string {
		switch d {
		case Int32, Int64, Uint32, Uint64:
			return "int"
		case Float32, Float64:
			return "float"
		}
		return d.String()
	}
	switch x := v.(type) {
	case *StructTensor:
		parts := []any{}
		for _, p := range x.Partitions() {
			parts = append(parts, p.RowSplits())
		}
		fields := map[string]any{}
		for _, name := range x.FieldNames() {
			f, err := x.FieldValue(name)
			if err != nil {
				t.Fatal(err)
			}
			fields[name] = describeLikeTF(t, f)
		}
		return map[string]any{"kind": "struct", "shape": shape(x.Shape()), "partitions": parts, "fields": fields}
	case *Ragged:
		return map[string]any{"kind": "ragged", "shape": shape(x.Shape()), "ragged_rank": x.RaggedRank(), "dtype": class(x.DType())}
	case *Tensor:
		return map[string]any{"kind": "tensor", "shape": shape(x.Shape()), "dtype": class(x.DType())}
	}
	t.Fatalf("unknown value %T", v)
	return nil
}

// asJSON returns v as encoding/json would decode its JSON form, so that
// Go's typed values compare with Python's.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// approxEqual compares decoded JSON values, numbers to a relative 1e-6
// (TensorFlow's float32 against our float64).
func approxEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-6*math.Max(1, math.Abs(x))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !approxEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !approxEqual(v, y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestPlainWord checks the eight-byte string scan against the byte table:
// every byte value at every position, among plain bytes.
func TestPlainWord(t *testing.T) {
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			if got, want := plainWord(binary.LittleEndian.Uint64(w)), strPlain[c]; got != want {
				t.Errorf("byte %#02x at %d: plainWord %v, table %v", c, pos, got, want)
			}
		}
	}
}

func TestJSONLinesReader(t *testing.T) {
	data := recipeJSONLines(1000, 7)
	whole, err := FromJSONLines(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ToJSONLines(whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range [][]Spec{nil, {AnyRows(whole.Spec())}} {
		jr, err := NewJSONLinesReader(bytes.NewReader(data), spec...)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		batches := 0
		for {
			v, err := jr.Read(128)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.NumRows() > 128 || !AnyRows(whole.Spec()).IsCompatibleWith(v.Spec()) {
				t.Fatalf("batch %d: %d rows of %v", batches, v.NumRows(), v.Spec())
			}
			b, err := ToJSONLines(v)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b...)
			batches++
		}
		if batches != 8 || !bytes.Equal(got, want) {
			t.Errorf("spec %v: %d batches; the batches differ from FromJSONLines", spec, batches)
		}
		if _, err := jr.Read(128); err != io.EOF {
			t.Errorf("Read after the end: %v, want io.EOF", err)
		}
	}
}

// ReadInferred types each batch by its own records, where Read types
// later batches by the first.
func TestJSONLinesReaderReadInferred(t *testing.T) {
	data := "{\"a\": []}\n{\"a\": []}\n{\"a\": [1, 2]}\n{\"a\": [3]}\n"
	dtypes := func(read func(*JSONLinesReader, int) (Value, error)) []string {
		jr, err := NewJSONLinesReader(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			v, err := read(jr, 2)
			if err == io.EOF {
				return got
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := v.(*StructTensor).FieldValue("a")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a.(*Ragged).Values().DType().String())
		}
	}
	if got := strings.Join(dtypes((*JSONLinesReader).Read), " "); got != "float32 float32" {
		t.Errorf("Read: dtypes %s, want float32 float32", got)
	}
	if got := strings.Join(dtypes((*JSONLinesReader).ReadInferred), " "); got != "float32 int64" {
		t.Errorf("ReadInferred: dtypes %s, want float32 int64", got)
	}

	// A reader's own spec is neither used nor changed.
	spec := &StructSpec{Shape: Shape{Unknown}, Fields: []FieldSpec{{Name: "a", Spec: &RaggedSpec{DType: Float64, Shape: Shape{Unknown, Unknown}, RaggedRank: 1}}}}
	jr, err := NewJSONLinesReader(strings.NewReader("{\"a\": [1]}\n"), spec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jr.ReadInferred(10)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := v.(*StructTensor).FieldValue("a"); a.(*Ragged).Values().DType() != Int64 || jr.Spec() != Spec(spec) {
		t.Errorf("ReadInferred with a spec: %v, reader spec %v", v.Spec(), jr.Spec())
	}
}

func TestJSONLinesReaderErrors(t *testing.T) {
	// A bad record in a later batch is reported at its place in the whole
	// input, as FromJSONLines reports it.
	var in bytes.Buffer
	for i := 0; i < 300; i++ {
		if i == 250 {
			in.WriteString("{\"a\": \"x\"}\n\n")
			continue
		}
		fmt.Fprintf(&in, "{\"a\": %d}\n", i)
	}
	_, wholeErr := FromJSONLines(in.Bytes())
	jr, err := NewJSONLinesReader(bytes.NewReader(in.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var readErr error
	for readErr == nil {
		_, readErr = jr.Read(100)
	}
	const where = `field "a" at [250]: int64 vs string`
	for _, err := range []error{wholeErr, readErr} {
		if err == nil || !strings.Contains(err.Error(), "line 251, byte offset 2646: "+where) {
			t.Errorf("error %v, want line 251, byte offset 2646: %s", err, where)
		}
	}
	if _, again := jr.Read(100); again != readErr {
		t.Errorf("error not sticky: %v", again)
	}
	// Lines longer than the reader's buffer.
	long := strings.Repeat("x", 200000)
	jr, _ = NewJSONLinesReader(strings.NewReader("[\"" + long + "\"]\n[\"y\"]"))
	v, err := jr.Read(10)
	if err != nil || v.NumRows() != 2 || len(ToValue(v).([]any)[0].([]any)[0].(string)) != len(long) {
		t.Errorf("long line: %v", err)
	}
	// Empty input.
	jr, _ = NewJSONLinesReader(strings.NewReader("\n \n"))
	if _, err := jr.Read(10); err != io.EOF {
		t.Errorf("empty input: %v, want io.EOF", err)
	}
	if _, err := NewJSONLinesReader(strings.NewReader(""), nil, nil); !errors.Is(err, ErrSpec) {
		t.Errorf("two specs: %v", err)
	}
}

// checkBatches reads data with a JSONLinesReader in batches of 3 records
// with whole's spec: if that succeeds (it fails where a record spans
// lines), the batches hold the same rows as whole.
func checkBatches(t *testing.T, data []byte, whole Value) {
	jr, err := NewJSONLinesReader(bytes.NewReader(data), AnyRows(whole.Spec()))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for {
		v, err := jr.Read(3)
		if err == io.EOF {
			break
		}
		if err != nil {
			return
		}
		b, err := ToJSONLines(v)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if want, _ := ToJSONLines(whole); !bytes.Equal(got, want) {
		t.Fatalf("batches give %q, FromJSONLines %q", got, want)
	}
}

// checkInferredBatches checks what convert's streaming relies on: if
// every batch, its spec inferred alone (ReadInferred), infers the same
// spec, FromJSONLines of the whole input (whole, err) infers it too and
// reads the same records.
func checkInferredBatches(t *testing.T, data []byte, whole Value, wholeErr error) {
	jr, err := NewJSONLinesReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var first Spec
	var got []byte
	for {
		v, err := jr.ReadInferred(2)
		if err == io.EOF {
			break
		}
		if err != nil {
			return
		}
		if first == nil {
			first = AnyRows(v.Spec())
		} else if !AnyRows(v.Spec()).Equal(first) {
			return
		}
		b, err := ToJSONLines(v)
		if err != nil {
			return // not writable as JSON lines (a rank-0 field, ...)
		}
		got = append(got, b...)
	}
	if first == nil {
		return
	}
	if wholeErr != nil {
		t.Fatalf("every batch infers %v, the whole input fails: %v", first, wholeErr)
	}
	if !AnyRows(whole.Spec()).Equal(first) {
		t.Fatalf("every batch infers %v, the whole input %v", first, whole.Spec())
	}
	if want, err := ToJSONLines(whole); err == nil && !bytes.Equal(got, want) {
		t.Fatalf("batches give %q, FromJSONLines %q", got, want)
	}
}

// TestJSONSeparatorErrors: what may follow an element of a list or an
// object, and where the error points when it is something else.
func TestJSONSeparatorErrors(t *testing.T) {
	for in, want := range map[string]string{
		`[1 2]`:         "byte offset 3: expected , or ] in a list, got '2'",
		`[[1],[2]x`:     "byte offset 8: expected , or ] in a list, got 'x'",
		`[1`:            "byte offset 2: unexpected end of input in a list",
		`[1 , 2 ,`:      "byte offset 8: at [2]: unexpected end of input",
		`{"a":1 "b":2}`: `byte offset 7: expected , or } in an object, got '"'`,
		`{"a":1`:        "byte offset 6: unexpected end of input in an object",
		`{"a":1 , `:     "byte offset 9: expected a field name in quotes",
	} {
		_, err := FromJSON([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FromJSON(%s) = %v, want an error with %q", in, err, want)
		}
	}
	if v, err := FromJSON([]byte(` [ 1 , 2 ] `)); err != nil || v.NumRows() != 2 {
		t.Errorf("spaces around commas: %v, %v", v, err)
	}
}

// A line of white space JSON does not allow (a vertical tab) after the
// last record is an error for the reader, as for FromJSONLines, not a
// blank line.
func TestJSONLinesReaderOtherWhiteSpace(t *testing.T) {
	data := []byte("0\n0\n\v\n")
	if _, err := FromJSONLines(data); err == nil {
		t.Fatal("FromJSONLines accepted a vertical tab")
	}
	jr, err := NewJSONLinesReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := jr.Read(2)
		if err == io.EOF {
			t.Fatal("the reader dropped the line with a vertical tab")
		}
		if err != nil {
			if !strings.Contains(err.Error(), "line 3") {
				t.Errorf("error %q does not name line 3", err)
			}
			break
		}
	}
}
