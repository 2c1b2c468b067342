package starrow

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupported marks an Arrow type or a value with no StructTensor
	// (or Arrow) counterpart, such as a union or decimal column.
	ErrUnsupported = errors.New("structtensor/arrow: unsupported type")
	// ErrInvalid marks Arrow data whose buffers, offsets or lengths are
	// inconsistent.
	ErrInvalid = errors.New("structtensor/arrow: invalid arrow data")
	// ErrNull marks a null where the caller asked for nulls to be refused
	// (see FromArrowOptions).
	ErrNull = errors.New("structtensor/arrow: null value")
)

// joinPath appends a field name to a dotted column path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// pathName formats a column path for an error message.
func pathName(path string) string {
	if path == "" {
		return "value"
	}
	return fmt.Sprintf("column %q", path)
}

func pathErr(path string, err error) error {
	return fmt.Errorf("%s: %w", pathName(path), err)
}
