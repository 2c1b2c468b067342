package structtensor

import (
	"fmt"
	"strconv"
	"strings"
)

// Shape is a list of dimension sizes, outermost first. In a Spec a dimension
// may be Unknown (-1): not known ahead of data, or ragged. The shape of a
// concrete Tensor is always fully known; the shape of a Ragged value or a
// StructTensor has Unknown at its ragged dimensions.
type Shape []int

// Unknown marks a dimension whose size is not fixed.
const Unknown = -1

// Rank returns the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// NumElements returns the product of the dimensions, or -1 if any is Unknown.
func (s Shape) NumElements() int {
	n := 1
	for _, d := range s {
		if d < 0 {
			return -1
		}
		n *= d
	}
	return n
}

// IsFullyKnown reports whether no dimension is Unknown.
func (s Shape) IsFullyKnown() bool { return s.NumElements() >= 0 }

// Equal reports whether s and o have the same rank and the same dimensions
// (Unknown equals only Unknown).
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// IsCompatibleWith reports whether s and o have the same rank and agree on
// every dimension known in both.
func (s Shape) IsCompatibleWith(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] >= 0 && o[i] >= 0 && s[i] != o[i] {
			return false
		}
	}
	return true
}

// String formats the shape as TensorFlow does: [2, None, 3].
func (s Shape) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		if d < 0 {
			b.WriteString("None")
		} else {
			b.WriteString(strconv.Itoa(d))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func (s Shape) clone() Shape { return append(Shape(nil), s...) }

func checkShape(s Shape) error {
	for i, d := range s {
		if d < 0 {
			return fmt.Errorf("%w: dimension %d of concrete shape %v is negative", ErrShape, i, s)
		}
	}
	return nil
}
