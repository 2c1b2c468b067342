// Package unchecked builds structtensor values from buffers that are valid
// by construction, skipping the linear checks of structtensor's public
// constructors. Package decode uses it for the engine's outputs: row splits
// that start at 0 and never decrease, string offsets likewise, because the
// engine writes them that way (its differential and property tests hold it
// to that). The public constructors read every split and offset again to
// check it, a second pass over outputs that can be many times the size of
// the input (a wide sparse record has a split per field per record), which
// the TensorFlow op, handing the same buffers to TensorFlow, does not make.
//
// Package structtensor sets the functions (in its init), since only it can
// build its values; their results are *structtensor.RowPartition and
// *structtensor.Tensor. Built with -tags invariants, the values are
// re-validated as every constructor's are.
package unchecked

// RowSplits returns the partition of splits (a *structtensor.RowPartition),
// sharing them. splits must be non-empty, start at 0 and never decrease.
var RowSplits func(splits []int64) any

// StringTensor returns the vector of strings data[offsets[i]:offsets[i+1]]
// (a *structtensor.Tensor), sharing data and offsets. offsets must be
// non-empty, start at 0 or more, never decrease and end within data;
// utf8 says every string is valid UTF-8.
var StringTensor func(data []byte, offsets []int64, utf8 bool) any
