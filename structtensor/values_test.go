package structtensor_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
)

func TestValuesDTypeMismatch(t *testing.T) {
	ints, _ := structtensor.NewTensor(nil, []int64{1, 2})
	strs, _ := structtensor.NewTensor(nil, []string{"a", "bc"})
	if v, err := structtensor.Values[int64](ints); err != nil || !slices.Equal(v, []int64{1, 2}) {
		t.Errorf("Values[int64] of int64: %v, %v", v, err)
	}
	for name, err := range map[string]error{
		"Values[int32] of int64":    second(structtensor.Values[int32](ints)),
		"Values[float64] of int64":  second(structtensor.Values[float64](ints)),
		"Values[int64] of string":   second(structtensor.Values[int64](strs)),
		"Values[int64] of nil":      second(structtensor.Values[int64](nil)),
		"Strings of int64":          second(structtensor.Strings(ints)),
		"CopyStrings of int64":      second(structtensor.CopyStrings(ints)),
		"CopyValues[bool] of int64": second(structtensor.CopyValues[bool](ints)),
	} {
		if !errors.Is(err, structtensor.ErrDType) {
			t.Errorf("%s: %v, want ErrDType", name, err)
		}
	}
	if s, err := structtensor.CopyStrings(strs); err != nil || !slices.Equal(s, []string{"a", "bc"}) {
		t.Errorf("CopyStrings: %q, %v", s, err)
	}
}

// The copying forms leave the tensor's storage alone.
func TestCopyValuesIsACopy(t *testing.T) {
	ints, _ := structtensor.NewTensor(nil, []int64{1, 2})
	c, err := structtensor.CopyValues[int64](ints)
	if err != nil {
		t.Fatal(err)
	}
	c[0] = 99
	if v, _ := structtensor.Values[int64](ints); v[0] != 1 {
		t.Errorf("writing a CopyValues result changed the tensor: %v", v)
	}
}

func second[T any](_ T, err error) error { return err }

// Values reads a tensor's flat values as the Go type of its dtype, with an
// error (not a nil slice) when the type is wrong.
func ExampleValues() {
	t, _ := structtensor.NewTensor(structtensor.Shape{2, 2}, []float32{1, 2, 3, 4})
	v, err := structtensor.Values[float32](t)
	fmt.Println(v, err)
	_, err = structtensor.Values[int64](t)
	fmt.Println(err)
	// Output:
	// [1 2 3 4] <nil>
	// structtensor: dtype mismatch: tensor of float32 read as []int64
}
