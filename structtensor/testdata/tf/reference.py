"""TensorFlow reference for the structtensor Go tests (tfcompare_test.go).

Reads a JSON list of cases on stdin and writes one JSON result per case:
{"ok": true, "value": RESULT} or {"ok": false, "error": "..."}, results as
nested lists and dicts (strings decoded from UTF-8).

  {"op": "getitem", "value": V, "ragged": R, "keys": [K...]}
      V built by StructuredTensor.from_pyval (tf.ragged.constant if R),
      then V[K...]. A key is a field name, an int, or
      {"slice": [start, stop, step]} with nulls for omitted bounds.
  {"op": "with_updates", "value": V, "updates": [[PATH, U, RAGGED], ...]}
      StructuredTensor.from_pyval(V).with_updates({tuple(PATH): U'},
      validate=True), U' = tf.ragged.constant(U) if RAGGED, tf.constant(U)
      otherwise, None to remove.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops.structured import structured_tensor  # noqa: E402

StructuredTensor = structured_tensor.StructuredTensor


def to_py(x):
    if isinstance(x, StructuredTensor):
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


def getitem(case):
    if case.get("ragged"):
        v = tf.ragged.constant(case["value"])
    else:
        v = StructuredTensor.from_pyval(case["value"])
    return v[tuple(key(k) for k in case["keys"])]


def with_updates(case):
    st = StructuredTensor.from_pyval(case["value"])
    updates = {}
    for path, u, ragged in case["updates"]:
        if u is None:
            updates[tuple(path)] = None
        elif ragged:
            updates[tuple(path)] = tf.ragged.constant(u)
        else:
            updates[tuple(path)] = tf.constant(u)
    return st.with_updates(updates, validate=True)


def main():
    ops = {"getitem": getitem, "with_updates": with_updates}
    out = []
    for case in json.load(sys.stdin):
        try:
            out.append({"ok": True, "value": plain(to_py(ops[case["op"]](case)))})
        except Exception as e:  # TensorFlow raises several kinds.
            msg = str(e).splitlines()[0] if str(e) else ""
            out.append({"ok": False, "error": "%s: %s" % (type(e).__name__, msg)})
    json.dump(out, sys.stdout)


main()
