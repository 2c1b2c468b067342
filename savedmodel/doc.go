// Package savedmodel exports and loads DataViews: the protobuf decoder of a
// decode.Plan saved as a TensorFlow SavedModel, which Go (LoadDataView) and
// Python TensorFlow (tf.saved_model.load, after tf.load_op_library of
// build/libstructtensor_ops.so) both run.
//
// # Layout
//
//	DIR/saved_model.pb           tensorflow.SavedModel, one MetaGraphDef tagged "serve"
//	DIR/variables/               empty: the decoder has no variables
//	DIR/assets/dataview.json     Metadata: message, StructSpec, plan, components, fingerprint
//
// The graph is records (Placeholder, string [None]) -> decode
// (StructTensorDecodeProto, package cops, with the plan as an attribute)
// -> one Identity per component, named "outputs/<key>". The signatures
// "decode" and "serving_default" (identical, method
// tensorflow/serving/predict) take "records" and return every component
// under its key, tfbridge.ComponentSpec.Name(): "<path>/values" for a
// leaf's flat values and "<path>/row_splits_<i>" for a row partition, with
// path the struct2tensor-style field path ("ingredients.name"). A Python
// reader rebuilds tf.RaggedTensors from them with
// tf.RaggedTensor.from_nested_row_splits, taking the partitions of the
// leaf's ancestors, outermost first; Metadata.Components lists them in
// that order.
//
// # Writing a SavedModel without Python
//
// The graph is built with tfbridge (the TensorFlow C API) and serialized
// with TF_GraphToGraphDef; the MetaGraphDef, SignatureDefs and SavedModel
// around it are the generated protos of github.com/wamuir/graft. TensorFlow
// 2.21 loads such a model from C (TF_LoadSessionFromSavedModel) and
// Python (tf.saved_model.load, through its TF1-model path) with an empty
// variables/ directory: its loader restores variables only when
// variables/variables.index exists.
//
// # Fingerprint
//
// TensorFlow's fingerprint.pb holds hashes of a regularized graph computed
// by its C++ runtime (Fingerprint64 over canonicalized protos), which an
// exporter outside TensorFlow cannot reproduce faithfully; a made-up one
// would mislead tools that trust it. A DataView therefore has no
// fingerprint.pb; its metadata records the SHA-256 of saved_model.pb, and
// LoadDataView refuses a model whose graph or signatures changed since
// export (ErrFingerprint).
package savedmodel
