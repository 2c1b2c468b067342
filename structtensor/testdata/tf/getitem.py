"""Evaluates TensorFlow StructuredTensor / RaggedTensor indexing for the Go
tests: reads JSON cases [{"value": V, "keys": [K...]}] on stdin, builds V
with StructuredTensor.from_pyval (or tf.ragged.constant for "ragged": true),
applies st[K...] and writes one JSON result per case: {"ok": true,
"value": ...} or {"ok": false, "error": "..."}. A key is a string (field
name), an int, or {"slice": [start, stop, step]} with nulls for omitted
bounds."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops.structured import structured_tensor  # noqa: E402


def to_py(x):
    if isinstance(x, structured_tensor.StructuredTensor):
        return x.to_pyval()
    if isinstance(x, tf.RaggedTensor):
        return x.to_list()
    n = x.numpy()
    return n.tolist() if hasattr(n, "tolist") else n


def plain(x):
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bytes):
        return x.decode("utf-8")
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def key(k):
    if isinstance(k, dict):
        return slice(*k["slice"])
    return k


def main():
    out = []
    for case in json.load(sys.stdin):
        try:
            if case.get("ragged"):
                v = tf.ragged.constant(case["value"])
            else:
                v = structured_tensor.StructuredTensor.from_pyval(case["value"])
            keys = tuple(key(k) for k in case["keys"])
            out.append({"ok": True, "value": plain(to_py(v[keys]))})
        except Exception as e:  # TensorFlow raises several kinds.
            out.append({"ok": False, "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")})
    json.dump(out, sys.stdout)


main()
