// Package savedmodel exports and loads TensorFlow SavedModels: any graph a
// Go program builds (Export, Load), and DataViews, the protobuf decoder of
// a decode.Plan saved as a SavedModel that Go (LoadDataView), Python
// TensorFlow (tf.saved_model.load), TF Serving and TFX (tfx_bsl's
// load_decoder, TFXIO's RecordToTensorTFXIO) all load.
//
// # Exporting a graph
//
// Export saves a Model: a tfbridge.Graph (built with the op wrappers),
// named Signatures whose inputs are placeholders of it and whose outputs
// are its tensors, and the Variables they read (NewVariable: a
// VarHandleOp whose Go value goes to the checkpoint). Each input or
// output is a Value: Tensor (a dense tensor) or Ragged (flat values and
// row splits, which Python sees as a tf.RaggedTensor). Each signature
// becomes one function of the graph's operations between its inputs and
// outputs (tfbridge.Subgraph, TF_GraphToFunction), taking the handles of
// the variables it reads as captured inputs, so one graph serves several
// signatures and runs in a Go session as it is (run the variables'
// initializers first). The SavedModel is the same object-based format as
// a DataView's: TensorFlow's C API loader (TF Serving), Python's
// tf.saved_model.load (loaded.signatures[key], variables as attributes
// along their names: loaded.dense.kernel) and Load read it.
//
// Load loads any SavedModel tagged "serve" (also one Python exported),
// after checks that apply to every SavedModel: regular files only, in
// the SavedModel layout, each under a size limit; a digest the caller
// pinned; no op that reads or writes files, reaches other processes or
// runs code outside the saver's own checkpoint paths; asset names that
// stay inside assets/. LoadedModel.Run feeds and fetches Tensors and
// RaggedTensors by signature key. What Load cannot check, LoadDataView
// can: a DataView is rebuilt from its plan and compared byte for byte,
// while a general graph has no description to compare with, so Load
// bounds what a model reaches, not what it computes (memory, time,
// variable values).
//
// # Layout
//
//	DIR/saved_model.pb                          object-based SavedModel, one MetaGraphDef tagged "serve"
//	DIR/variables/variables.index               checkpoint: the object graph (no variables)
//	DIR/variables/variables.data-00000-of-00001
//	DIR/assets/dataview.json                    Metadata: message, spec, plan, components, leaves, fingerprint
//	DIR/assets/tensor_representations.pb        TensorRepresentationGroup of the leaves (binary)
//	DIR/assets/tensor_representations.pbtxt     the same (text)
//
// # What loads it, and what it sees
//
// The root object has one child, decode_fun: a concrete function taking
// records (string [None]) and returning a dict with one batch-aligned
// tensor per projected leaf, keyed by the leaf's field path
// ("ingredients.name"): a RaggedTensor with int64 row splits (one ragged
// dimension per repeated field on the way to the leaf, outermost first)
// or, for a leaf with none, a dense tensor. That is TFX's
// TFGraphRecordDecoder interface: tfx_bsl.coders.tf_graph_record_decoder
// .load_decoder(DIR) loads it, and TFXIO names Arrow columns after the
// keys.
//
// Uniform partitions (a tf.Example RaggedFeature's UniformRowLength): the
// innermost run of them becomes dimensions of the values, which decode_fun
// reshapes (Reshape), as tf.io.parse_example shapes them; with the
// values' own inner dimensions (a FixedLenSequence feature's step) they
// are the leaf's inner shape, each a uniform_row_length partition of
// its TensorRepresentation. TFXIO's converter takes known dimensions only
// below the ragged ones, so a uniform partition above a ragged one stays
// row splits, of unknown length in decode_fun's spec.
//
// Bools: TFXIO refuses bool tensors (its Arrow conversion has no bool
// column type it can map back). decode_fun therefore returns a bool leaf
// as uint8, 1 for true and 0 for false, the mapping TFXIO's error
// message asks for; Metadata.Leaves records the uint8 dtype. The
// signatures keep bool.
//
// The assets tensor_representations.pb and .pbtxt hold the
// tensorflow_metadata TensorRepresentationGroup TFXIO derives from
// decode_fun (TensorRepresentations): a dense_tensor for a leaf without
// ragged dimension, else a ragged_tensor with int64 row partitions, each
// named by the leaf's path.
//
// # Arrow: the same columns as TFXIO
//
// DataView.ToArrow (and `structtensor dataview run --to arrow`) gives a
// decoded batch as TFXIO's BeamSource gives the same records: one column
// per leaf, in path order, named by its path; large_list per ragged
// dimension over the values, the innermost holding whole rows of the
// inner dimensions (a dense leaf: one large_list level, one list per
// row); strings large_binary; bools uint8 with the mapping above.
// The nested layout of package arrow (structs, bool columns) is what
// `structtensor decode --to arrow` writes.
//
// The signatures "decode" and "serving_default" (identical, method
// tensorflow/serving/predict) take "records" and return every component
// under its key, graphst.ComponentSpec.Name(): "<path>/values" for a
// leaf's flat values and "<path>/row_splits_<i>" for a row partition.
// They are what Go's LoadDataView (TensorFlow's C API), TF Serving and
// loaded.signatures[...] run. A Python reader rebuilds each leaf with
// tf.RaggedTensor.from_nested_row_splits, taking the partitions of the
// leaf's ancestors, outermost first; Metadata.Components lists them in
// that order.
//
// Python needs the decode op registered before loading: tf.load_op_library
// of build/libstructtensor_ops.so (make ops-lib). So does any exported
// graph that uses graphst.ReduceRows (its StructTensorReduceRows op).
//
// # Writing a SavedModel without Python
//
// The decoder graph is built with tfbridge (the TensorFlow C API) and
// turned into a FunctionDef (TF_GraphToFunction); decode_fun is a second
// FunctionDef calling it. Package internal/objectgraph writes the object
// graph, signatures and TF1 graph nodes around them, and
// internal/bundle the checkpoint TensorFlow's TF2 loader requires even
// without variables (package docs describe both formats).
//
// # Loading runs a program: the loader's checks
//
// A SavedModel is a program: loading runs its graph, init ops included.
// LoadDataView therefore checks a DataView before anything of it runs:
//
//   - files: only regular files (no symbolic links, FIFOs or devices),
//     only the files above, each read without following links or
//     blocking and at most LoadOptions.MaxFileBytes;
//   - fingerprint: the SHA-256 of every file, recorded in the metadata;
//   - graph: it rebuilds the DataView the metadata's plan exports and
//     requires the SavedModel and the TensorRepresentation assets to be
//     that one's (up to what TensorFlow
//     versions vary: version strings and "_"-prefixed internal
//     attributes): the same plan attribute, signatures, objects, saver
//     and checkpoint, only the DataView's ops (an allowlist, checked
//     first so the error names a foreign op), no collections (so no main
//     or init op); and the metadata's message, components and leaves
//     equal to what the plan gives (ErrGraph otherwise);
//   - TensorFlow then loads a private copy of the checked bytes, so a file
//     swapped after the check never runs.
//
// The fingerprint is integrity, not trust: whoever can edit the files can
// recompute it. Trust comes from a digest the caller obtained from a
// source it trusts: Digest (printed by `structtensor dataview export` and
// `inspect`) hashes every file, metadata included, and
// LoadDataView(dir, LoadOptions{Digest: d}) (`dataview run --digest`) refuses any
// other DataView with ErrFingerprint. The graph checks bound what even an
// unpinned DataView can do to running the decode op of its own plan.
//
// DataViews of format version 1 (a TF1-style graph without object graph
// or checkpoint, which TFX cannot load) and 2 (without the
// TensorRepresentation assets) are refused with ErrOldFormat; the error
// says how to re-export.
//
// # Fingerprint
//
// TensorFlow's fingerprint.pb holds hashes of regularized protos computed
// by its C++ runtime, which an exporter outside TensorFlow cannot
// reproduce faithfully; a made-up one would mislead tools that trust it.
// A DataView has none; its metadata records SHA-256s instead.
package savedmodel
