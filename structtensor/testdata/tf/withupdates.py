"""Evaluates TensorFlow StructuredTensor.with_updates for the Go tests:
reads JSON cases [{"value": V, "updates": [[PATH, U, RAGGED], ...]}] on
stdin, builds V with StructuredTensor.from_pyval, each U with
tf.ragged.constant (RAGGED true), tf.constant, or None (removal), applies
st.with_updates({tuple(PATH): U, ...}, validate=True) and writes one JSON
result per case: {"ok": true, "value": st.to_pyval()} or {"ok": false,
"error": "..."}."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops.structured import structured_tensor  # noqa: E402


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


def main():
    out = []
    for case in json.load(sys.stdin):
        try:
            st = structured_tensor.StructuredTensor.from_pyval(case["value"])
            updates = {}
            for path, u, ragged in case["updates"]:
                if u is None:
                    val = None
                elif ragged:
                    val = tf.ragged.constant(u)
                else:
                    val = tf.constant(u)
                updates[tuple(path)] = val
            res = st.with_updates(updates, validate=True)
            out.append({"ok": True, "value": plain(res.to_pyval())})
        except Exception as e:  # TensorFlow raises several kinds.
            out.append({"ok": False, "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")})
    json.dump(out, sys.stdout)


main()
