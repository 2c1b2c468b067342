// Package structtensor is the value model of structtensor: Tensors, row
// partitions, Ragged values and StructTensors (multi-dimensional
// collections of records with one schema), with their Specs.
//
// A StructTensor is stored column-wise as parallel flat arrays plus row
// partitions shared by all of its fields, the layout of an Arrow struct
// array under its list parents, so that export to Arrow or TensorFlow
// ragged components needs no copy.
//
// # Layout
//
// There are three kinds of Value. A *Tensor is dense: a shape and one
// typed flat slice (strings are one byte buffer plus offsets, never a
// slice of strings). A *Ragged is a dense Tensor of flat values under one
// or more RowPartitions, outermost first. A *StructTensor of rank N has N-1
// partitions and fields that are stored flat: each field holds one row per
// structure of the innermost dimension, whatever its own kind. A [2, None]
// struct with an int field and a string-list field therefore stores an
// int vector and a ragged list, both with one row per structure, and one
// set of row splits that both share.
//
// This is the RFC's "shared outer dimensions" made structural: a field
// cannot disagree with its siblings about the outer dimensions, because it
// does not hold them. StructTensor.Field returns the stored (flat) value;
// StructTensor.FieldValue re-applies the partitions (JoinOuterDims) and
// returns the full-shape value TensorFlow's StructuredTensor would hold,
// without copying. SplitOuterDims is the inverse, used to store a
// full-shape value given to NewStructFromFieldValues or WithUpdates.
//
// A uniform partition stands for a dense dimension. To keep Split and
// Join exact, a uniform partition made from a Tensor's dense dimension is
// marked, and Join folds marked partitions back into the dense values; a
// Ragged whose partitions are all uniform is the one value that does not
// survive the round trip (it comes back dense).
//
// # Indexing
//
// Get follows TensorFlow's StructuredTensor.__getitem__. On a scalar
// struct a key is a field name; on a struct of rank r the first r keys are
// dimension keys (ints, Slices, All), and the key after them is a field
// name whose full-shape value receives the first r keys followed by the
// rest. So st.Get("recipe", "ingredients", All, "name") is every
// ingredient's name. Dimension keys are evaluated in one pass over the
// dimensions that tracks, for each selected row, the range of positions
// it spans one level down; a key on a ragged dimension therefore applies
// to each row (and an index that is out of range in any row is an error
// naming that row). At the bottom the selected positions of the flat
// values are either one contiguous run, which is sliced (sharing the
// buffers), or not, and then gathered into new buffers. Only the row
// splits of the result are always new.
//
// # Updates
//
// Values are immutable, and that is what lets them share storage: the
// decoder, Arrow export and import and the TensorFlow bridge all lend
// buffers instead of copying them. Accessors that return slices (Data,
// Int64s and the other typed accessors, Values[T], StringData, StringAt,
// Strings, RowSplits, Fields, Partitions) therefore return the value's own
// storage, which must not be modified; CopyValues and CopyStrings return
// copies. Values[T] is the typed accessor that reports a dtype mismatch
// as ErrDType instead of returning nil.
//
// WithUpdates, Without and WithOnly build new
// StructTensors around the same partitions and field values: only the
// fields slice, the name index and the structs along an updated path are
// new. An update is a full-shape value; its outer dimensions must equal
// the holding struct's shape, ragged row splits included, and are then
// dropped, since the struct already holds them.
//
// # Errors and invariants
//
// Every error wraps one of the sentinel errors (ErrPartition, ErrShape,
// ErrDType, ErrFieldName, ErrNoField, ErrIndex, ErrInference, ErrSpec) and
// names where: the field path, the keys, the row. Constructors check their
// inputs and never panic on data. Building with -tags invariants adds a
// full re-validation of every value the package builds (checkInvariants),
// which make test runs over the whole test suite: a violation there is a
// bug in this package, not bad input.
//
// # Printing
//
// String on each kind gives a readable form: one line for a Tensor or a
// Ragged, with its shape and dtype, and one line per field for a
// StructTensor, nested structs indented. Dimensions longer than six items
// show the first and last three around "...", as NumPy does.
package structtensor
