"""TensorFlow bindings of structtensor: the StructTensorDecodeProto,
StructTensorDecodeExample (decode_example shapes its outputs) and
StructTensorReduceRows ops (the second is what Go graphs' per-row
reductions, graphst.ReduceRows, run on) and a loader of DataViews (SavedModels that `structtensor dataview export` and
the Go package savedmodel write).

Importing the package registers the ops (it loads the op library shipped in
the package), so `import structtensor_tf` in a Beam worker is enough for
TFX's load_decoder and TFXIO to load a DataView.

    import structtensor_tf
    dv = structtensor_tf.load_dataview("recipe-dataview", digest="sha256:...")
    st = dv(records)            # tf.experimental.StructuredTensor, shape [len(records)]
    leaves = dv.leaves(records) # {"ingredients.name": tf.RaggedTensor, ...}
"""
import os as _os

import tensorflow as _tf

from structtensor_tf._dataview import (  # noqa: F401
    DataView,
    DataViewError,
    component_key,
    load_dataview,
    parse_component_key,
)
from structtensor_tf._example import decode_example, example_component_shapes  # noqa: F401

OPS_LIBRARY = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "libstructtensor_ops.so")
# tf.load_op_library is idempotent: importing twice registers once.
ops = _tf.load_op_library(OPS_LIBRARY)
struct_tensor_decode_proto = ops.struct_tensor_decode_proto
struct_tensor_reduce_rows = ops.struct_tensor_reduce_rows
# The raw example op; decode_example gives its outputs static shapes.
struct_tensor_decode_example = ops.struct_tensor_decode_example
