# Writes a tensorflow_metadata Schema as schema.pbtxt (text_format, as
# TFDV's write_schema_text and TFX's SchemaGen write it) to argv[1], and
# prints, as one JSON object, the tf.io feature spec tfx-bsl makes of it:
# tfx_bsl.tfxio.tensor_representation_util infers each feature's tensor
# representation from the schema and CreateTfExampleParserConfig turns it
# into a FixedLenFeature, VarLenFeature or RaggedFeature. The schema holds
# fields that do not bear on decoding (domains, value counts, drift
# comparators, annotations) as real schemas do. A feature list (a child
# of the STRUCT feature) is printed as {"kind": "sequence"}.
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.tfxio import tensor_representation_util as tru

s = schema_pb2.Schema()
s.default_environment.extend(["TRAINING", "SERVING"])


def feature(name, typ, shape=None, min_fraction=None, **kw):
    f = s.feature.add(name=name, type=typ)
    if shape is not None:
        f.shape.dim.extend([schema_pb2.FixedShape.Dim(size=d) for d in shape])
    if min_fraction is not None:
        f.presence.min_fraction = min_fraction
        f.presence.min_count = 1
    for k, v in kw.items():
        if k == "value_count":
            f.value_count.min, f.value_count.max = v
        elif k == "lifecycle_stage":
            f.lifecycle_stage = v
        elif k == "deprecated":
            f.deprecated = v
        elif k == "not_in_environment":
            f.not_in_environment.extend(v)
        elif k == "int_domain":
            f.int_domain.min, f.int_domain.max = v
        elif k == "string_domain":
            f.string_domain.value.extend(v)
        else:
            raise KeyError(k)
    return f


feature("age", schema_pb2.INT, shape=[], min_fraction=1.0, int_domain=(0, 130))
feature("emb", schema_pb2.FLOAT, shape=[4], min_fraction=1.0)
feature("grid", schema_pb2.FLOAT, shape=[2, 3], min_fraction=1.0)
feature("country", schema_pb2.BYTES, shape=[1], min_fraction=1.0, string_domain=["DE", "FR", "US"])
feature("tags", schema_pb2.BYTES, min_fraction=0.5, value_count=(0, 10))
feature("ids", schema_pb2.INT, value_count=(1, 5))
feature("price", schema_pb2.FLOAT, min_fraction=0.9)
feature("user/query-terms", schema_pb2.BYTES)
feature("label", schema_pb2.INT, shape=[], min_fraction=1.0, not_in_environment=["SERVING"])
feature("old", schema_pb2.INT, deprecated=True)
feature("planned", schema_pb2.FLOAT, lifecycle_stage=schema_pb2.PLANNED)
feature("beta", schema_pb2.FLOAT, lifecycle_stage=schema_pb2.BETA)
s.feature[0].drift_comparator.infinity_norm.threshold = 0.01
s.feature[1].annotation.tag.append("embedding")
seq = s.feature.add(name="##SEQUENCE##", type=schema_pb2.STRUCT)
for name, typ in [("item", schema_pb2.INT), ("dwell", schema_pb2.FLOAT), ("token", schema_pb2.BYTES)]:
    seq.struct_domain.feature.add(name=name, type=typ)

with open(sys.argv[1], "w") as f:
    f.write(text_format.MessageToString(s))

types = {f.name: f.type for f in s.feature}
for f in seq.struct_domain.feature:
    types["##SEQUENCE##." + f.name] = f.type
out = {}
for name, tr in tru.InferTensorRepresentationsFromSchema(s).items():
    # A struct child's representation names its path; its type is the child's.
    if tr.WhichOneof("kind") == "ragged_tensor" and len(tr.ragged_tensor.feature_path.step) == 2:
        # A feature list: tfx-bsl represents it as a ragged tensor of the
        # struct's path (it makes no tf.io parser config of one).
        step = tr.ragged_tensor.feature_path.step
        out[name] = {"kind": "sequence", "key": step[1],
                     "dtype": {schema_pb2.INT: "int64", schema_pb2.FLOAT: "float32",
                               schema_pb2.BYTES: "string"}[types[".".join(step)]]}
        continue
    cfg = tru.CreateTfExampleParserConfig(tr, types[name])
    entry = {"dtype": {tf.int64: "int64", tf.float32: "float32", tf.string: "string"}[cfg.dtype]}
    if isinstance(cfg, tf.io.FixedLenFeature):
        entry["kind"] = "fixed_len"
        entry["shape"] = list(cfg.shape)
        entry["default"] = cfg.default_value is not None
    elif isinstance(cfg, tf.io.VarLenFeature):
        entry["kind"] = "var_len"
    elif isinstance(cfg, tf.io.RaggedFeature):
        entry["kind"] = "ragged"
        entry["key"] = cfg.value_key
    else:
        raise TypeError(type(cfg))
    out[name] = entry
print(json.dumps(out, sort_keys=True))
