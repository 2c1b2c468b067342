"""Runs array-op cases through TensorFlow for ops/tf_test.go.

Reads a JSON list of cases from stdin, each {"op", "args", "inputs"} where
inputs and the value-like args are JSON values, and writes a JSON list of
results: {"value": <nested value>} or {"error": "<message>"} or
{"unsupported": "<why>"} when TensorFlow has no such op for the input kind.
Values become StructuredTensor (when they hold records), RaggedTensor
(nested lists) or Tensor (flat lists and scalars), as
StructuredTensor.from_pyval and tf.ragged.constant infer them.
"""
import json
import sys

import tensorflow as tf
from tensorflow.python.ops.structured import structured_array_ops  # noqa: F401 registers dispatchers

ST = tf.experimental.StructuredTensor


def has_dict(x):
    if isinstance(x, dict):
        return True
    if isinstance(x, list):
        return any(has_dict(e) for e in x)
    return False


def depth(x):
    d = 0
    while isinstance(x, list):
        d += 1
        x = x[0] if x else None
    return d


def to_tf(x):
    if has_dict(x):
        return ST.from_pyval(x)
    if depth(x) >= 2:
        return tf.ragged.constant(x)
    if isinstance(x, list) and not x:
        return tf.constant([], dtype=tf.int64)
    return tf.constant(x)


def from_tf(v):
    if isinstance(v, ST):
        return clean(v.to_pyval())
    if isinstance(v, tf.RaggedTensor):
        return clean(v.to_list())
    return clean(v.numpy().tolist())


def clean(x):
    if isinstance(x, dict):
        return {k: clean(e) for k, e in x.items()}
    if isinstance(x, list):
        return [clean(e) for e in x]
    if isinstance(x, bytes):
        return x.decode("utf-8")
    if hasattr(x, "item"):
        return clean(x.item())
    return x


def run(case):
    op, args, ins = case["op"], case["args"], [to_tf(x) for x in case["inputs"]]
    is_struct = any(isinstance(v, ST) for v in ins)

    def val(key):
        return to_tf(json.loads(args[key]))

    def num(key, default=0):
        return int(args.get(key, default))

    if op == "gather":
        return tf.gather(ins[0], val("indices"), axis=num("axis"), batch_dims=num("batch_dims"))
    if op == "expand_dims":
        return tf.expand_dims(ins[0], num("axis"))
    if op == "concat":
        return tf.concat(ins, num("axis"))
    if op == "merge_dims":
        return ins[0].merge_dims(num("outer"), num("inner"))
    if op == "partition_outer_dimension":
        splits = tf.constant([int(s) for s in args["splits"].split(",")], dtype=tf.int64)
        if is_struct:
            return ins[0].partition_outer_dimension(tf.experimental.RowPartition.from_row_splits(splits))
        return tf.RaggedTensor.from_row_splits(ins[0], splits)
    if op == "size":
        return tf.size(ins[0])
    if op == "rank":
        return tf.rank(ins[0])
    if is_struct:
        return None
    if op == "gather_nd":
        return tf.gather_nd(ins[0], val("indices"), batch_dims=num("batch_dims"))
    if op == "boolean_mask":
        mask = val("mask")
        if mask.shape.rank == num("axis") + 1:
            return tf.ragged.boolean_mask(ins[0], mask)
        data = ins[0]
        if isinstance(data, tf.RaggedTensor):
            # tf.boolean_mask takes a shared 1-D mask only on dense data.
            if data.ragged_rank != 1 or len(set(data.row_lengths().numpy().tolist())) > 1:
                return None
            data = data.to_tensor()
        return tf.boolean_mask(data, mask, axis=num("axis"))
    if op == "stack":
        return tf.stack(ins, num("axis"))
    if op == "squeeze":
        return tf.squeeze(ins[0], [num("axis")])
    if op == "tile":
        return tf.tile(ins[0], [int(s) for s in args["multiples"].split(",")])
    if op == "where":
        return tf.where(val("cond"), ins[0], ins[1])
    return None


def main():
    out = []
    for case in json.load(sys.stdin):
        try:
            v = run(case)
            if v is None:
                out.append({"unsupported": "no TensorFlow op for %s on these inputs" % case["op"]})
            else:
                out.append({"value": from_tf(v)})
        except Exception as e:  # TensorFlow raises many types; the message is what is compared
            out.append({"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
