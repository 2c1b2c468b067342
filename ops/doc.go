// Package ops implements operations on StructTensors and on the Tensor and
// Ragged values of their fields: TensorFlow's array ops (Gather,
// BooleanMask, Concat, Stack, Tile, Where, MergeDims, ...) and
// struct2tensor's path ops (Promote, Broadcast, Reroot, Project, Map,
// Filter, Slice, ...), on concrete values, in pure Go.
//
// # Flat storage and shared partitions
//
// Every op here is written against one picture of a value. A value of rank
// r >= 1 is a number of outer rows, then r-1 row partitions, outermost
// first, each splitting the values of the one above into rows, then the
// flat storage: one dense Tensor for a Ragged value, one flat value per
// field for a StructTensor (each with one row per innermost structure). A
// dense dimension is a uniform partition that is never materialised.
// structtensor.SplitOuterDims and JoinOuterDims move between the full view
// and the (partitions, flat) view without copying, so an op chooses the
// depth it works at: MergeDims composes a run of partitions into one and
// rejoins; ExpandDims inserts a uniform partition of length 1; Squeeze
// drops one whose rows all have one element; PartitionOuterDimension adds
// one on top. None of these touches the flat storage. As in
// JoinOuterDims, a leaf whose partitions all end up uniform is given back
// as the equivalent dense Tensor.
//
// Ops that select rows (Gather, BooleanMask, Tile, Where, Concat, Slice,
// Broadcast) do it in two steps. First the selection is pushed down the
// partitions: a range of rows at one level covers one contiguous range of
// values at the next, so a list of ranges stays a list of ranges all the
// way down, adjacent ranges merge, and each level's new partition is
// written in one pass (a uniform partition stays uniform and costs
// nothing). Then every flat value copies its ranges with copy(), or a
// typed loop for short ones, in kernels generic over the element slice
// type (package ops/internal/kernel): no element is boxed in an interface
// and no row allocates. For a StructTensor the partitions, shared by all
// fields, are processed once, and each field then copies the same ranges
// of its own storage; a field that is itself a struct recurses with the
// ranges it was given. A String column is one byte buffer plus offsets, so
// it too copies ranges of bytes and rebases its offsets.
//
// Path ops act on a struct's elements, never on its outer dimensions.
// Each field of a struct holds one row per element; a nested struct field
// has its own partitions (the lists each element holds) and its own flat
// fields. Promote is a MergeDims of the leaf's full value relative to the
// grandparent: only row splits are composed and the leaf's values are
// shared. Broadcast is a Gather of the source's rows by the parent index of
// each element of the sibling. Reroot reuses the nested struct's flat
// fields as the fields of a new rank-1 root. Adding the result rebuilds
// only the structs along the path; every other field is carried over by
// reference.
//
// # Why buffers are shared
//
// Values are immutable (structtensor's contract), so a buffer can be held
// by any number of values at once, and an op that does not change a buffer
// has no reason to copy it. That makes the structural ops (ExpandDims,
// Squeeze, MergeDims, PartitionOuterDimension, Promote, Reroot, Project,
// and Gather of a single contiguous range) O(partitions) instead of
// O(values), makes a path op cost only the field it adds, and keeps the
// memory of a feature pipeline proportional to what it computes rather
// than to how many steps it takes. It is also what Arrow and TensorFlow
// expect: row splits and flat values can be handed over as they are. The
// price is that a result can keep a large input alive through one shared
// slice; copying a value (Gather with every index) releases it.
//
// # Errors
//
// Bad arguments never panic: every op returns an error wrapping one of
// the sentinels below (ErrAxis, ErrIndex, ErrShape, ErrSchema, ErrPath,
// ErrFieldExists, ErrArgument), with the axis, index, row or field path
// that caused it, e.g. `ops: schema mismatch: field "a" is missing from
// input 1`.
package ops
