package structtensor

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// FromValue builds a Value from a Go value, following TensorFlow's
// StructuredTensor.from_pyval:
//
//   - a map[string]any (or any map with string keys) is a scalar
//     StructTensor;
//   - lists ([]any or any slice or array but []byte) nested d deep whose
//     leaves are maps are a StructTensor of rank d, every map with the same
//     keys; ragged nesting gives ragged partitions;
//   - a list of scalars is a dense Tensor; scalars nested deeper are a
//     Ragged (even when the inner lists happen to have equal lengths);
//   - every scalar of one field sits at the same depth, and lists of
//     different lengths or empty lists are fine;
//   - scalars: int, int8, int16, int64 -> int64; int32 -> int32; uint8,
//     uint16, uint32 -> uint32; uint, uint64 -> uint64; float64 ->
//     float64; float32 -> float32; bool -> bool; string and []byte ->
//     string; json.Number -> int64 when it is an integer literal that fits
//     (else uint64, else float64);
//   - int64 and float64 in one field widen to float64 (so do uint64 and
//     float64, and int64 and uint64 when no int64 is negative); any other
//     mix of types is an error;
//   - an empty list, or lists with no scalar at all, are float32 (as in
//     TensorFlow);
//   - inferred struct fields are in name order (Go maps have no order;
//     FromJSON keeps the order in which keys first appear instead).
//
// Errors wrap ErrInference and name the path and the conflict, e.g.
// `field "a" at [1]: int64 vs string`. A nil value is an error.
//
// With a spec, the value must match it exactly (dense dimensions of the
// given sizes, the spec's fields and no others) and scalars are converted
// to the spec's dtypes where that loses nothing (an int to int32 if it fits,
// to float32 or float64, the strings "NaN", "Infinity" and "-Infinity" to
// floats); mismatches wrap ErrSpec and name the path.
//
// FromValue(ToValue(x), x.Spec()) equals x for every value x, and so does
// FromValue(ToValue(x)) when x is in the form inference produces.
func FromValue(v any, spec ...Spec) (Value, error) {
	n, err := rootNode(spec, true)
	if err != nil {
		return nil, err
	}
	var w goWalker
	if e := w.value(n, 0, v); e != nil {
		return nil, e
	}
	val, err := n.value(true, 1, true)
	if err != nil {
		return nil, err
	}
	return checkSpec(val, spec)
}

// goWalker feeds Go values to the builders.
type goWalker struct {
	nest int // maps and lists entered: bounds recursion on cyclic values
}

// value feeds one Go value at depth d of n.
func (w *goWalker) value(n *node, d int, v any) *buildError {
	if w.nest++; w.nest > maxJSONDepth {
		return n.fail("nested more than %d deep (a cyclic value?)", maxJSONDepth)
	}
	defer func() { w.nest-- }()
	switch x := v.(type) {
	case nil:
		return n.fail("nil value")
	case map[string]any:
		s, err := n.beginStruct(d)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, err := s.field([]byte(k))
			if err != nil {
				return err
			}
			if err := w.value(f.node, 0, x[k]); err != nil {
				return err.atKey(k)
			}
		}
		return s.end()
	case []any:
		if err := n.beginList(d); err != nil {
			return err
		}
		for i, e := range x {
			if err := w.value(n, d+1, e); err != nil {
				return err.atIndex(i)
			}
		}
		return n.endList(d)
	case bool:
		return n.leafBool(d, x)
	case int:
		return n.leafInt64(d, int64(x))
	case int8:
		return n.leafTyped(d, Int32, int32(x))
	case int16:
		return n.leafTyped(d, Int32, int32(x))
	case int32:
		return n.leafTyped(d, Int32, x)
	case int64:
		return n.leafInt64(d, x)
	case uint8:
		return n.leafTyped(d, Uint32, uint32(x))
	case uint16:
		return n.leafTyped(d, Uint32, uint32(x))
	case uint32:
		return n.leafTyped(d, Uint32, x)
	case uint:
		return n.leafUint64(d, uint64(x))
	case uint64:
		return n.leafUint64(d, x)
	case float32:
		return n.leafTyped(d, Float32, x)
	case float64:
		return n.leafFloat64(d, x)
	case string:
		return n.leafString(d, []byte(x))
	case []byte:
		return n.leafString(d, x)
	case json.Number:
		return n.leafNumber(d, []byte(x), isFloatLiteral(string(x)))
	case []int64:
		return walkSlice(n, d, x, n.leafInt64)
	case []int:
		return walkSlice(n, d, x, func(d int, v int) *buildError { return n.leafInt64(d, int64(v)) })
	case []float64:
		return walkSlice(n, d, x, n.leafFloat64)
	case []string:
		return walkSlice(n, d, x, func(d int, v string) *buildError { return n.leafString(d, []byte(v)) })
	case []map[string]any:
		return walkSlice(n, d, x, func(d int, v map[string]any) *buildError { return w.value(n, d, v) })
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if err := n.beginList(d); err != nil {
			return err
		}
		for i := 0; i < rv.Len(); i++ {
			if err := w.value(n, d+1, rv.Index(i).Interface()); err != nil {
				return err.atIndex(i)
			}
		}
		return n.endList(d)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return n.fail("map with %v keys (field names must be strings)", rv.Type().Key())
		}
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return w.value(n, d, m)
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return n.fail("nil value")
		}
		return w.value(n, d, rv.Elem().Interface())
	case reflect.String:
		return n.leafString(d, []byte(rv.String()))
	case reflect.Bool:
		return n.leafBool(d, rv.Bool())
	case reflect.Int, reflect.Int64:
		return n.leafInt64(d, rv.Int())
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return n.leafTyped(d, Int32, int32(rv.Int()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return n.leafTyped(d, Uint32, uint32(rv.Uint()))
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return n.leafUint64(d, rv.Uint())
	case reflect.Float32:
		return n.leafTyped(d, Float32, float32(rv.Float()))
	case reflect.Float64:
		return n.leafFloat64(d, rv.Float())
	}
	return n.fail("unsupported Go type %T", v)
}

func walkSlice[T any](n *node, d int, xs []T, leaf func(int, T) *buildError) *buildError {
	if err := n.beginList(d); err != nil {
		return err
	}
	for i, x := range xs {
		if err := leaf(d+1, x); err != nil {
			return err.atIndex(i)
		}
	}
	return n.endList(d)
}

func isFloatLiteral(s string) bool {
	return strings.ContainsAny(s, ".eE")
}
