// Package memview views the memory of a numeric slice as bytes, without
// copying: for handing a column to something that takes bytes (an Arrow
// buffer, a file) and for comparing columns with one bytes.Equal, which
// compares a word or a vector at a time where a loop compares an element
// (and, under the race detector, checks every element's read on its own).
package memview

import "unsafe"

// Bytes returns the bytes of s's elements, in memory order, sharing s's
// backing array (which they keep alive); nil for an empty s.
func Bytes[T bool | int32 | int64 | uint32 | uint64 | float32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}
