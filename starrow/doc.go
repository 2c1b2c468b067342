// Package starrow moves StructTensors in and out of Apache Arrow
// (github.com/apache/arrow-go/v18): record batches and arrays, the IPC
// stream format and the C Data Interface.
//
// # The name
//
// The package is named starrow (StructTensor <-> Arrow), not arrow, because
// every file that uses it also imports arrow-go's package arrow, and two
// packages of one name force every caller to alias one of them. The prefix
// follows protobuf-go's protojson and prototext: the first half says whose
// values are mapped, the second the format they are mapped to. Package
// stparquet is named the same way.
//
// # Why the mapping is zero-copy
//
// A StructTensor is already laid out the way Arrow lays out nested data:
// every field is one flat typed buffer, strings are one data buffer plus
// int64 offsets, and every ragged dimension is a row_splits vector that
// starts at 0, never decreases and ends at the number of values below it.
// Those are exactly the buffers of Arrow's large_binary, large_utf8 and
// large_list types. Export therefore wraps our slices as Arrow buffers
// (memory.NewBufferBytes over the slice's own bytes) and never copies:
// exporting a column of a hundred million values costs the same as one of
// a million.
//
//	Tensor (numeric)            -> primitive array over the same memory
//	Tensor (bool)               -> boolean array (copied: Arrow packs bits)
//	Tensor (string, UTF-8 mark) -> large_utf8 / large_binary, same buffers
//	dense inner dimension       -> fixed_size_list<n>
//	ragged dimension            -> large_list, offsets = row_splits
//	StructTensor                -> struct array under its partitions
//
// A rank >= 1 StructTensor becomes a record batch with one column per field
// (ToArrow); any value becomes an array (ToArrowArray), a scalar as an
// array of one element.
//
// # Import: share where the layouts agree, copy only what differs
//
// FromArrow and FromArrowArray share int32/int64/uint32/uint64/float
// buffers and large_list offsets that start at 0. The rest is converted
// with the smallest copy that gives our invariants:
//
//   - list/map/binary/utf8 with int32 offsets: offsets widened to int64;
//   - offsets not starting at 0 (sliced arrays): offsets rebased, values
//     shared;
//   - 8- and 16-bit integers and float16: widened to 32 bits; dates,
//     times, timestamps and durations keep their integer values;
//   - dictionary arrays: decoded by gathering the dictionary's rows;
//   - maps: a list of {key, value} structs, the protobuf map mapping.
//
// Arrow has nulls and StructTensors do not. A null list is an empty row;
// any other null (a scalar, a string, a struct) turns its column into an
// optional value: one more ragged dimension holding 0 or 1 values per
// row, the same shape protobuf fields with presence decode to. Both can be
// refused instead (FromArrowOptions). Unions, decimals, intervals, list
// views and run-end encoded arrays have no meaningful counterpart and
// return ErrUnsupported naming the column.
//
// Sharing is limited to Go memory. A StructTensor has no Release; the
// garbage collector keeps it and every value taken from it alive, which
// keeps shared Go buffers alive too, but not buffers of a C allocator or a
// C Data import, freed at their record's last Release. An array holding
// any buffer outside Go memory is therefore copied into Go memory before
// it is converted, and the result never depends on the record: the caller
// may release it at once. ImportCData is the one import that shares C
// memory, until the release it returns is called.
//
// Imported data is validated in full before any buffer is read
// (array.ValidateFull: offsets monotone and in bounds, child and buffer
// lengths), so corrupt input returns ErrInvalid naming the column, never
// a panic.
//
// arrow-go's IPC reader allocates whatever a message header claims (a
// field count, a body length, a decompressed size) before checking it, and
// an allocation of terabytes kills the process where no recover reaches.
// ReadIPC therefore reads each message itself, verifies its flatbuffer
// metadata against the bytes actually present and bounds decompressed
// sizes (FromArrowOptions.MaxIPCBufferBytes), and only then hands it on.
//
// # Beyond one batch
//
// WriteIPC and ReadIPC speak the Arrow IPC stream format (what pyarrow's
// ipc.open_stream reads); ExportCData and ImportCData hand a batch to C or
// Python through the C Data Interface without copying.
package starrow
