package ops_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// value builds a Value from a JSON literal through structtensor.FromValue
// (integers become int64).
func value(t testing.TB, js string) st.Value {
	t.Helper()
	v, err := st.FromValue(parseJSON(t, js))
	if err != nil {
		t.Fatalf("FromValue(%s): %v", js, err)
	}
	return v
}

func structValue(t testing.TB, js string) *st.StructTensor {
	t.Helper()
	s, ok := value(t, js).(*st.StructTensor)
	if !ok {
		t.Fatalf("%s is not a struct", js)
	}
	return s
}

// canon turns a nested Go value (ToValue form or decoded JSON) into a
// comparable form: numbers become their decimal text, nil slices empty.
func canon(x any) any {
	switch v := x.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = canon(e)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canon(e)
		}
		return out
	case string:
		return "s:" + v
	case bool:
		return v
	case nil:
		return nil
	}
	return fmt.Sprint(x)
}

// parseJSON decodes a JSON literal, keeping numbers as json.Number.
func parseJSON(t testing.TB, js string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(js))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		t.Fatalf("bad JSON %s: %v", js, err)
	}
	return x
}

// checkValue compares v's nested form with the JSON literal want.
func checkValue(t testing.TB, v st.Value, want string) {
	t.Helper()
	got := canon(st.ToValue(v))
	w := canon(parseJSON(t, want))
	if !reflect.DeepEqual(got, w) {
		t.Errorf("got %s\nwant %s", show(st.ToValue(v)), want)
	}
}

func show(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

func ints(t testing.TB, xs ...int64) *st.Tensor {
	t.Helper()
	v, err := st.NewTensor(nil, xs)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
