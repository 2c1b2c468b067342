// Package cops holds structtensor's TensorFlow custom ops, written against
// TensorFlow's ABI-stable C op and kernel API (tensorflow/c/ops.h,
// tensorflow/c/kernels.h): StructTensorDecodeProto, which runs the native
// shredding engine (package native) inside a TensorFlow graph, and
// StructTensorDecodeExample, which runs its tf.Example feature decoder
// (see "The example op" below).
//
// # The op
//
//	StructTensorDecodeProto(records: string)
//	    -> (row_splits: num_partitions * int64, values: value_dtypes)
//	attrs: plan: string             the decode.Plan in its byte form
//	       num_partitions: int >= 0
//	       value_dtypes: list(type)  one per leaf column
//	       num_threads: int = 0      engine threads per run (0 = all cores)
//
// records is a vector of serialized protobuf records. The outputs are the
// plan's partitions (row splits, one row per element of the parent
// message level) and value columns, in the engine's numbering, which
// decode.Compile assigns in pre-order of the projected fields: the same
// order in which graphst.Components visits row splits and values. LayoutOf
// maps the op's flat outputs onto the components of plan.Spec() in
// that order, and DecodeGraph hands them to graphst.NewStruct,
// so running the graph yields the StructTensor plan.Decode returns for the
// same records. Every output has shape [?] (the shape function says so).
//
// # The kernel
//
// The kernel (decode_op.cc) is C++ that calls the engine's C ABI directly:
// TensorFlow runs kernels on its own threads, which must never call into
// Go. The plan attribute is parsed once per kernel instance, when
// TensorFlow creates it; the kernel also checks there that the node's
// num_partitions and value_dtypes match the plan, so a graph whose
// attributes were edited fails to construct rather than mislabel columns.
// Each run reads the TF_TString records in place (pointer and length, no
// copy) and decodes them in one engine call, straight into the memory
// that becomes the output tensors:
//
//   - The kernel lends the engine (st_decode_into) one 64-byte-aligned
//     block per column and partition for a batch of 64 KiB or more,
//     sized by the engine's one sizing policy, which package decode's Go
//     path shares (st_plan_lend_sizes: the plan's last such batch scaled
//     to this one with room to spare, or a sample of a first one). Each
//     output the engine completed in its block is wrapped as it is
//     (TF_NewTensor with a deallocator): no copy. TF_NewTensor would copy
//     numeric data less aligned than Eigen wants, hence 64.
//   - Blocks come from a pool per kernel and go back to it when
//     TensorFlow drops the last tensor holding them, so a stream of
//     similar batches reuses memory already faulted in rather than
//     mapping fresh pages per output. The pool is reference counted by
//     the kernel and by every block still out: a tensor may outlive its
//     kernel, session and graph.
//   - A string output is an array of TF_TStrings built from the decoded
//     bytes and offsets: strings up to 22 bytes inline, longer ones views
//     into the block of bytes with an owner (TStringOwnerCApi, the shared
//     view TensorFlow's own tstring::owner uses): TensorFlow refs the owner
//     whenever it copies such a string and unrefs it when the copy dies,
//     so the bytes live as long as any string pointing into them, with no
//     allocation per string.
//   - The first batch of a kernel (nothing to size from) and any output
//     that outgrew its block are copied out of engine memory into pool
//     blocks, as before; the result is the same either way.
//
// A record the engine rejects fails the run with InvalidArgument naming
// the record index, the byte offset inside it and the field path, and no
// output; the blocks lent to it go back to the pool.
//
// # The example op
//
//	StructTensorDecodeExample(records: string) -> (components: component_dtypes)
//	attrs: plan: string    decode.ExamplePlan's byte form (MarshalBinary)
//	       layout: string  how fields are assembled from the plan's slots (MarshalLayout)
//	       component_dtypes: list(type)
//	       num_threads: int = 0
//
// records are serialized tf.Example (or tf.SequenceExample) records; the
// outputs are the components of plan.Spec() in tfbridge order, as
// tf.io.parse_example shapes the features: a FixedLen feature is one dense
// [B, shape...] tensor (defaults filled in), a VarLen, Ragged or
// FixedLenSequence feature its row splits (outermost first, uniform
// partitions included) and values. DecodeExampleGraph wraps them as a
// symbolic StructTensor, each through EnsureShape (the C shape-inference
// API cannot read the layout, so the op's own outputs have unknown shape).
// The kernel (example_op.cc) checks the layout against the plan and the
// component dtypes when TensorFlow creates it. A record the decoder
// rejects fails the run with InvalidArgument naming the record, the byte
// offset (where one exists: not for a missing feature or a partition
// that does not fit) and the feature key.
//
// Buffer ownership is simpler than the proto op's: the records are read in
// place during the engine call only, and every output is allocated by
// TensorFlow (TF_AllocateOutput) and filled by copying out of the engine's
// result, which is freed before the kernel returns; strings are TF_TStrings
// that own their bytes. No output refers to the input or to engine memory
// (TestExampleOpOutputsOutliveInput copies them through TensorFlow ops
// after the input, session and graph are gone).
//
// # Registration
//
// The same C++ sources serve two hosts:
//
//   - In a Go process, Register (called by DecodeGraph and by package
//     savedmodel before it loads a DataView) registers the op and kernel
//     in process, once.
//   - make ops-lib compiles them, with the engine and sharedlib/load.cc,
//     into build/libstructtensor_ops.so, which Python's tf.load_op_library
//     (or tfbridge.LoadLibrary) loads; load.cc registers on load.
//
// Register and the library's load hook register both ops. TensorFlow
// aborts the process when an op name is registered twice, and
// each host carries its own copy of the code, so a flag in one copy cannot
// guard the other. The guard is TensorFlow's own op registry, which every
// copy shares: registration first looks the op up (TF_GraphGetOpDef) and
// registers nothing when it is already there.
package cops
