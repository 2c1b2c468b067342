# Decodes the cases of a JSON file with tf.io.parse_example or
# tf.io.parse_sequence_example and prints one JSON line per case: the
# outputs in a canonical form (floats as their float32 bits, bytes as hex),
# or the error, its category and the first record that fails on its own.
import json
import os
import re
import struct
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

DTYPES = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}


def canon(x):
    if isinstance(x, list):
        return [canon(e) for e in x]
    if isinstance(x, bytes):
        return x.hex()
    if isinstance(x, float):
        return struct.unpack("<I", struct.pack("<f", x))[0]
    return int(x)


def tf_feature(f, sequence_section):
    dt = DTYPES[f["dtype"]]
    kind = f["kind"]
    shape = f.get("shape", [])
    if kind == "fixed_len":
        d = f.get("default")
        if d is not None:
            np_dt = {"int64": np.int64, "float32": np.float32, "string": object}[f["dtype"]]
            if f["dtype"] == "string":
                d = [s.encode() for s in (d if isinstance(d, list) else [d])]
            d = np.reshape(np.array(d, dtype=np_dt), shape)
        return tf.io.FixedLenFeature(shape, dt, default_value=d)
    if kind == "var_len":
        return tf.io.VarLenFeature(dt)
    if kind == "fixed_len_sequence":
        return tf.io.FixedLenSequenceFeature(shape, dt, allow_missing=(not sequence_section) or f.get("allow_missing", False))
    if kind == "ragged":
        parts = []
        for p in f.get("partitions", []):
            if p["kind"] == "row_splits":
                parts.append(tf.io.RaggedFeature.RowSplits(p["key"]))
            elif p["kind"] == "row_lengths":
                parts.append(tf.io.RaggedFeature.RowLengths(p["key"]))
            elif p["kind"] == "row_starts":
                parts.append(tf.io.RaggedFeature.RowStarts(p["key"]))
            elif p["kind"] == "row_limits":
                parts.append(tf.io.RaggedFeature.RowLimits(p["key"]))
            elif p["kind"] == "value_rowids":
                parts.append(tf.io.RaggedFeature.ValueRowIds(p["key"]))
            else:
                parts.append(tf.io.RaggedFeature.UniformRowLength(p["length"]))
        return tf.io.RaggedFeature(dt, value_key=f.get("key") or None, partitions=parts,
                                   row_splits_dtype=tf.int64, validate=True)
    raise ValueError(kind)


def output(v):
    if isinstance(v, tf.SparseTensor):
        return {"sparse": {"indices": v.indices.numpy().tolist(), "values": canon(v.values.numpy().tolist())}}
    if isinstance(v, tf.RaggedTensor):
        return {"list": canon(v.to_list())}
    return {"dense": canon(v.numpy().tolist()), "shape": v.shape.as_list()}


def category(msg):
    # (A required context feature absent from some records of a batch
    # gives "Inconsistent max number of elements".)
    if ("could not be found" in msg or "is required but" in msg or "Missing" in msg
            or "Inconsistent max number of elements" in msg):
        return "missing"
    if "Data types don't match" in msg:
        return "type"
    if ("values != expected" in msg or "not a multiple" in msg or "Number of" in msg
            or "row_splits" in msg.lower() or "row_lengths" in msg.lower() or "partition" in msg.lower()
            or "uniform_row_length" in msg or "must" in msg or "Input to reshape" in msg
            or "do not form a valid RaggedTensor" in msg or re.search(r"Shapes \(\d+,\) and \(\d+,\) are incompatible", msg)):
        return "shape"
    if "Could not parse" in msg or "codec can't decode" in msg:
        return "malformed"
    return "other"


def run(case, records):
    spec = case["spec"]
    feats = {(f.get("key") or n if f["kind"] != "ragged" else n): tf_feature(f, False)
             for n, f in spec.get("features", {}).items()}
    names = {(f.get("key") or n if f["kind"] != "ragged" else n): n for n, f in spec.get("features", {}).items()}
    data = tf.constant(records, dtype=tf.string)
    if case["sequence"]:
        seq = {(f.get("key") or n if f["kind"] != "ragged" else n): tf_feature(f, True)
               for n, f in spec.get("sequence_features", {}).items()}
        for n, f in spec.get("sequence_features", {}).items():
            names[(f.get("key") or n if f["kind"] != "ragged" else n)] = n
        ctx, sq, _ = tf.io.parse_sequence_example(data, context_features=feats or None, sequence_features=seq or None)
        out = dict(ctx)
        out.update(sq)
    else:
        out = tf.io.parse_example(data, feats)
    return {names[k]: output(v) for k, v in out.items()}


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    for case in cases:
        records = [bytes.fromhex(r) for r in case["records"]]
        try:
            values = run(case, records)
            # TensorFlow validates ragged partitions on the batch, where one
            # record's surplus can hide another's shortfall: list the
            # records that fail alone.
            alone = []
            if any(f.get("partitions") for f in case["spec"].get("features", {}).values()) and len(records) > 1:
                for i, r in enumerate(records):
                    try:
                        run(case, [r])
                    except (tf.errors.InvalidArgumentError, ValueError):
                        alone.append(i)
            print(json.dumps({"values": values, "fail_alone": alone}))
        except (tf.errors.InvalidArgumentError, ValueError, UnicodeDecodeError) as e:
            # (TensorFlow's message on an unparsable record quotes its
            # bytes, which may fail to decode as UTF-8.)
            msg = str(e)
            first, cat = -1, category(msg)
            if case["sequence"]:
                # The SequenceExample parser checks the batch in several
                # passes (types everywhere, then what is missing), so its
                # choice among bad records differs: give each record's
                # error alone.
                alone = {}
                for i, r in enumerate(records):
                    try:
                        run(case, [r])
                    except (tf.errors.InvalidArgumentError, ValueError, UnicodeDecodeError) as e1:
                        alone[i] = category(str(e1))
                print(json.dumps({"error": cat, "record": -1, "message": msg[-300:], "alone": alone}))
                continue
            m = re.search(r"Index: (\d+)\.", msg)
            if m:
                print(json.dumps({"error": cat, "record": int(m.group(1)), "message": msg[-300:]}))
                continue
            # Otherwise the first record that fails the same way alone.
            for i, r in enumerate(records):
                try:
                    run(case, [r])
                except (tf.errors.InvalidArgumentError, ValueError, UnicodeDecodeError) as e1:
                    if category(str(e1)) == cat:
                        first = i
                        break
            print(json.dumps({"error": cat, "record": first, "message": msg[-300:]}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
