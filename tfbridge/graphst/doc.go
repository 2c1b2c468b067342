// Package graphst is the StructTensor inside a TensorFlow graph: the value
// (Struct, and Ragged for its leaves), feeding and running it, and the
// ops on it, the graph-plane twins of package ops, built with the
// generated wrappers of package op under an op.Scope. The name reads
// "graph StructTensor"; package tfbridge below it is only the binding of
// TensorFlow's C API.
//
// # The value
//
// A Struct is a StructTensor in a graph: the Outputs holding its component
// tensors plus its structtensor.StructSpec. Field selects a field by path,
// in full shape: a *Struct for a nested struct, a Ragged for a leaf. A
// Ragged is row splits (outermost first) plus flat values, a dense tensor
// when it has no row splits; per-row ops take and return it, and
// NewRagged makes one from any outputs. Both are a Value.
//
// Placeholders and Feed let a Go program feed ragged, nested StructTensors
// to a graph; NewStruct wraps the outputs of an op (the decode op of
// package cops) that produces components. Run fetches a Value and rebuilds
// the concrete structtensor.Value with the value model's constructors, so
// every invariant is checked on the way back (bad row splits are errors,
// not panics); a caller that fetched the components itself (Session.Run
// with Components(), to hand them on or to fetch them with other outputs)
// rebuilds with Struct.Value or Ragged.Value.
//
// # Component order
//
// A StructTensor of spec S is carried by a flat list of tensors, in this
// order (Components(S) lists it, with names, dtypes and shapes; a decode op
// must produce its outputs in exactly this order):
//
//   - Walk the spec depth first, fields in their order.
//   - At each struct level: first the row_splits of the partitions the
//     struct adds (for the root of rank r, its r-1 partitions, outermost
//     first; for a nested struct, the partitions its full shape has beyond
//     its parent's), then its fields.
//   - At each leaf (Tensor or Ragged field): first the row_splits of the
//     partitions it adds beyond its struct's (RaggedRank minus the struct's
//     partitions), outermost first, then its flat values.
//
// Row splits are int64 vectors [N+1]. Flat values hold one row per
// innermost element: shape [N, inner dense dims...], the leaf's dtype; a
// leaf of a scalar (rank-0) struct is its full value. Fields are stored
// flat, as in the value model: a struct's partitions appear once, never
// per field. A dimension the spec knows (not None) rebuilds as a uniform
// partition. Component names (ComponentSpec.Name) are "<path>/row_splits_<i>"
// and "<path>/values", the path being field names joined by ".".
//
// For records of a message {id: int64; items: repeated {name: string; qty:
// repeated int32}; tags: repeated string} decoded to a rank-1 struct [B],
// the components are:
//
//	id/values                 int64  [B]
//	items/row_splits_0        int64  [B+1]       items per record
//	items.name/values         string [I]         I = total items
//	items.qty/row_splits_0    int64  [I+1]       qty per item
//	items.qty/values          int32  [Q]
//	tags/row_splits_0         int64  [B+1]
//	tags/values               string [T]
//
// # Outer-dimension ops
//
// Gather, BooleanMask, Concat and Stack act on the outer dimension of a
// whole StructTensor and return one of the same spec (outer dimension
// aside). They work on the component layout directly: every component is
// indexed by the rows of one "level" (the outer dimension, or the rows a
// row partition creates). A selection of outer rows becomes, partition by
// partition, a RaggedRange over the row splits, which yields at once the new
// row splits and the selection of the next level's rows; every values
// component is then one GatherV2 by its level's selection. So each
// partition is processed once, shared by all the fields below it, as in
// package ops. Concat concatenates each component, shifting each input's
// row splits by the values before it; Stack adds the new outer partition.
//
// # Path ops
//
// Promote, Broadcast, Map and MapValues add a field to a struct inside the
// root and return the root with it, as their twins in package ops (and
// struct2tensor) do, for leaf sources. They work on the flat form of the
// layout: a field of struct P is the row splits it adds to P's elements
// plus its flat values, so each op computes only the new field's
// components; the others are the input's, passed through Identity.
// Promote composes the parent's row splits with the source's first ones
// (a gather of splits by splits), merging the dimensions into one; a dense
// first dimension of d values merges as splits times d. Broadcast gathers
// the source's rows by the row ids of the sibling's elements (RaggedRange
// over each of the source's own partitions, as the outer-dimension ops
// select rows). Map and MapValues keep the sources' partitions and take
// the new flat values from a function the caller builds with op wrappers,
// where package ops calls a Go function per value; Map asserts at run time
// that its sources' partitions are equal.
//
// # tf.Example features
//
// ExampleFeature selects a feature by key from tf.Example records decoded
// generically (the features.feature map as a list of {key, value}
// entries, cops.DecodeGraph of tensorflow.Example): each record's value
// list as a Ragged, what tf.io.parse_example gives for a RaggedFeature and
// decode.ExamplePlan on the value plane. The last entry of a key counts,
// as protobuf reads a map; a list of another kind is an error of the run.
//
// # Per-row ops on ragged leaves
//
// ReduceRows (sum, mean, min, max, count, any, all), RowLengths, RowIDs and
// ToDense act on a Ragged (a leaf field, or any NewRagged). ReduceRows reduces
// the innermost ragged dimension with the StructTensorReduceRows kernel of
// the project's op library (package cops/reduceop): one pass over the row
// splits, as package ops loops. TensorFlow's own ops took three passes
// (row ids by a scatter and a running sum, then a segment reduction) and
// their unsorted min and max are slow: the graph ran at 13-32% of the
// value plane's speed, and runs at 85% or more with the kernel
// (BenchmarkReduceRows). A graph using it needs the op where it runs: in
// Go, reduceop.Register (ReduceRows calls it); elsewhere,
// libstructtensor_ops.so, as for the decode op. The empty-row values are
// TensorFlow's (0 for sum, the dtype's extremes for min and max, NaN for
// a mean), and ops.ReduceRows, its value-plane twin, gives the same.
// RowIDs marks the row starts with a scatter and takes a running sum.
// ToDense is RaggedTensorToTensor, padding with a default value and
// truncating to a shape.
//
// # Control flow
//
// Cond and While take and return Values: a StructTensor whose every field
// changes in a loop, a ragged feature that grows by a value per row per
// iteration, a plain counter (a Ragged without row splits). TensorFlow's
// functional control flow works on flat lists of tensors, so each Value
// crosses into a branch and back as its components, in component order,
// the way TensorFlow flattens its composite tensors (RaggedTensor,
// StructuredTensor) for tf.cond and tf.while_loop; the spec rebuilds it on
// the other side. A branch, a loop condition or a body is Go code run once,
// when Cond or While is called, on placeholders in a graph of its own: its
// operations become a graph function (TF_GraphToFunction), added to the
// enclosing graph's library under a name derived from a hash of its
// definition, so the same function traced twice is stored once and two
// different ones never collide. The operation is StatelessIf or
// StatelessWhile, or If and While when a function holds a stateful
// operation (TensorFlow may prune or reorder stateless ones). Functions
// called inside a branch (nested Cond and While) travel with it. A
// SavedModel exported from the graph carries its library, so TensorFlow's
// C API loader and Python load it as they load their own.
//
// A branch sees only its inputs: an Output of the enclosing graph used
// inside it is an error of the scope (pass it as one more input), as in
// any graph function. Branches must agree on what they return, value by
// value (kind, dtypes, ranks, fields); the results take the most specific
// spec both fit. A loop variable keeps its spec from one iteration to the
// next, ragged dimensions being unknown in any spec; a variable whose
// known dimensions change (a struct gaining rows, a dense tensor growing)
// declares so with WhileOptions.ShapeInvariants. Every mismatch is
// ErrBranch, found when the graph is built.
//
// # Errors
//
// Every op records its error in the scope (op.Scope's discipline: the first
// error is kept and later ops add nothing) and returns a nil or zero value:
// ErrSpec for a spec the op cannot take, ErrRank for a value without the
// dimension the op needs, ErrBranch for control flow whose functions do
// not agree, TensorFlow's own errors for a graph it rejects.
// Building, feeding and fetching a Struct wrap tfbridge's sentinels
// (ErrShape, ErrDType, ErrGraph) and structtensor's (ErrSpec, ErrNoField,
// and the constructors' errors for bad fetched components).
// Bad data (an index out of range, a mask of the wrong length) is an
// InvalidArgument error of the Run, never a crash.
//
// Tests run each op in a session on random values and compare with its
// twin in package ops, and the per-row ops with Python TensorFlow's
// tf.reduce_* on RaggedTensors, row_lengths, value_rowids and to_tensor,
// Promote with StructuredTensor.promote, ExampleFeature with
// decode.ExamplePlan and tf.io.parse_example; Cond and While with the same
// computation on values in Go and with tf.cond and tf.while_loop on a
// StructuredTensor.
package graphst
