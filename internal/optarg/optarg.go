// Package optarg reads the project's one option style: an options struct
// whose zero value is the default, passed by value as an optional trailing
// argument (opts ...T). Every public function taking options reads them
// here, so "at most one" is checked, and said, the same way everywhere.
package optarg

import (
	"fmt"
	"reflect"
)

// One returns the one options value given, or T's zero value (the
// defaults) when none is. More than one is a caller's mistake: the error
// wraps sentinel (the calling package's error for a bad argument) and
// names the options type.
func One[T any](opts []T, sentinel error) (T, error) {
	var zero T
	switch len(opts) {
	case 0:
		return zero, nil
	case 1:
		return opts[0], nil
	default:
		return zero, fmt.Errorf("%w: %d %s given, at most one", sentinel, len(opts), reflect.TypeFor[T]().Name())
	}
}
