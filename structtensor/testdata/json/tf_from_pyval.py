"""Reads each JSON file named on the command line (or each line of the
file after --lines) with TensorFlow's StructuredTensor.from_pyval and
prints one JSON line per value describing
the result (kinds, shapes, ragged ranks, row partitions and to_pyval), or
the exception it raised. structtensor's TestFromValueAgainstTensorFlow
compares these lines with FromJSON on the same files."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops.structured.structured_tensor import StructuredTensor  # noqa: E402


def shape(s):
    return [None if d is None else int(d) for d in s.as_list()]


def dtype_class(dt):
    if dt.is_integer:
        return "int"
    if dt.is_floating:
        return "float"
    if dt == tf.string:
        return "string"
    if dt == tf.bool:
        return "bool"
    return dt.name


def describe(v):
    if isinstance(v, StructuredTensor):
        return {"kind": "struct", "shape": shape(v.shape),
                "partitions": [p.row_splits().numpy().tolist() for p in v.row_partitions],
                "fields": {k: describe(f) for k, f in v._fields.items()}}
    if isinstance(v, tf.RaggedTensor):
        return {"kind": "ragged", "shape": shape(v.shape), "ragged_rank": v.ragged_rank,
                "dtype": dtype_class(v.dtype)}
    return {"kind": "tensor", "shape": shape(v.shape), "dtype": dtype_class(v.dtype)}


def plain(x):
    if isinstance(x, bytes):
        return x.decode("utf-8")
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if hasattr(x, "tolist"):
        return plain(x.tolist())
    return x


def inputs(args):
    """Yields (name, value) for each file named, and for each line of the
    file after --lines."""
    args = list(args)
    while args:
        path = args.pop(0)
        if path == "--lines":
            path = args.pop(0)
            with open(path) as f:
                for i, line in enumerate(f):
                    yield "%s line %d" % (os.path.basename(path), i + 1), json.loads(line)
            continue
        with open(path) as f:
            yield os.path.basename(path), json.load(f)


for name, pyval in inputs(sys.argv[1:]):
    out = {"file": name}
    try:
        st = StructuredTensor.from_pyval(pyval)
        out["value"] = describe(st)
        if isinstance(st, StructuredTensor):
            out["pyval"] = plain(st.to_pyval())
        elif isinstance(st, tf.RaggedTensor):
            out["pyval"] = plain(st.to_list())
        else:
            out["pyval"] = plain(st.numpy())
    except Exception as e:  # from_pyval raises ValueError, KeyError, ...
        out["error"] = type(e).__name__
    print(json.dumps(out), flush=True)
