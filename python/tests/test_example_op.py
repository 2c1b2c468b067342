"""The example decode op (StructTensorDecodeExample, from
build/libstructtensor_ops.so) against tf.io.parse_example and
tf.io.parse_sequence_example on the same random records.

The Go side (cops/internal/exfixture) writes random feature specs of every
kind and dtype (FixedLen with and without defaults and of several shapes,
VarLen, FixedLenSequence, Ragged with row_splits, row_lengths and uniform
partitions; SequenceExample context and feature lists) with records in
which features are absent, lists empty and values extreme, plus the op's
attributes compiled by Go for each spec. Here TensorFlow parses the records
with the same spec and the op decodes them; their values must be equal.

Where the two shape a feature differently by design, the comparison
converts TensorFlow's form, and only that: a VarLen feature is a
SparseTensor in TensorFlow and ragged in the op (compared as indices and
values); a FixedLenSequence feature is padded to a dense tensor by
TensorFlow and ragged in the op (the op's is padded with TensorFlow's
zeros before comparing).
"""
import base64
import json
import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

from test_dataview import ROOT  # noqa: E402
from scratch import scratch_dir  # noqa: E402
from tfio_reference import assert_same  # noqa: E402

_cases = None


def cases():
    """Runs the Go fixture writer once per session; returns its cases."""
    global _cases
    if _cases is None:
        out = os.path.join(scratch_dir("example-op-"), "cases.jsonl")
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.path.join(ROOT, "build", "pkgconfig") + os.pathsep + env.get("PKG_CONFIG_PATH", "")
        subprocess.run(["go", "run", "./cops/internal/exfixture", "-o", out, "-n", "150"], cwd=ROOT, env=env, check=True)
        with open(out) as f:
            _cases = [json.loads(line) for line in f]
    return _cases


TF_DTYPES = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}


def default_of(f):
    d = f["default"]
    if d is None:
        return None
    if f["dtype"] == "float32":
        v = np.array(d, dtype=np.uint32).view(np.float32)
    elif f["dtype"] == "string":
        v = np.array([bytes(b) for b in d], dtype=object)
    else:
        v = np.array(d, dtype=np.int64)
    return v.reshape(f["shape"])


def tf_feature(f):
    dtype = TF_DTYPES[f["dtype"]]
    kind = f["kind"]
    if kind == "fixed_len":
        return tf.io.FixedLenFeature(f["shape"], dtype, default_value=default_of(f))
    if kind == "fixed_len_sequence":
        return tf.io.FixedLenSequenceFeature(f["shape"], dtype, allow_missing=True)
    if kind == "var_len":
        return tf.io.VarLenFeature(dtype)
    parts = []
    kinds = {"row_splits": tf.io.RaggedFeature.RowSplits, "row_lengths": tf.io.RaggedFeature.RowLengths,
             "value_rowids": tf.io.RaggedFeature.ValueRowIds, "row_starts": tf.io.RaggedFeature.RowStarts,
             "row_limits": tf.io.RaggedFeature.RowLimits}
    for p in f["partitions"]:
        if p["kind"] == "uniform_row_length":
            parts.append(tf.io.RaggedFeature.UniformRowLength(p["length"]))
        else:
            parts.append(kinds[p["kind"]](p["key"]))
    return tf.io.RaggedFeature(dtype, value_key=f["key"], partitions=parts, row_splits_dtype=tf.int64)


def parse_with_tf(case, records):
    """tf.io's outputs by field name."""
    spec = {}
    seq = {}
    for f in case["features"]:
        key = f["key"] if f["kind"] != "ragged" else f["name"]
        (seq if f["sequence"] else spec)[(f["name"], key)] = tf_feature(f)
    # tf.io keys its outputs by feature key (RaggedFeature: by the dict key,
    # reading value_key); the fixture's keys are unique per case.
    ctx_spec = {k: v for (_, k), v in spec.items()}
    seq_spec = {k: v for (_, k), v in seq.items()}
    if case["sequence"]:
        ctx, lists, _ = tf.io.parse_sequence_example(records, context_features=ctx_spec or None,
                                                     sequence_features=seq_spec or None)
        out = {n: ctx[k] for (n, k) in spec}
        out.update({n: lists[k] for (n, k) in seq})
        return out
    got = tf.io.parse_example(records, ctx_spec)
    return {n: got[k] for (n, k) in spec}


def run_op(ops, case, records):
    """The op's outputs, rebuilt per field as a dense tf.Tensor or a
    tf.RaggedTensor from its components."""
    dtypes = [tf.as_dtype(c["dtype"]) for c in case["components"]]
    outs = ops.struct_tensor_decode_example(records, plan=base64.b64decode(case["plan"]),
                                            layout=base64.b64decode(case["layout"]), component_dtypes=dtypes)
    splits, values = {}, {}
    for c, t in zip(case["components"], outs):
        if c["kind"] == "row_splits":
            splits.setdefault(c["path"], []).append(t)
        else:
            values[c["path"]] = t
    return {p: tf.RaggedTensor.from_nested_row_splits(v, splits[p], validate=True) if p in splits else v
            for p, v in values.items()}


def all_splits(rt):
    """rt with every dimension as row splits: TensorFlow keeps innermost
    uniform rows (a Ragged feature's trailing UniformRowLength partitions)
    as dense dims of its flat values, the op as row splits like any other
    partition; the values and rows are the same."""
    flat = rt.flat_values
    if flat.shape.rank > 1:
        rt = rt.with_flat_values(tf.RaggedTensor.from_tensor(flat, ragged_rank=flat.shape.rank - 1, row_splits_dtype=tf.int64))
    return rt


def compare(f, got, want, what):
    kind = f["kind"]
    if isinstance(want, tf.SparseTensor):
        # VarLen: TensorFlow's SparseTensor against the op's ragged.
        sp = got.to_sparse()
        assert_same(sp.indices.numpy(), want.indices.numpy(), what + " indices")
        assert_same(sp.values.numpy(), want.values.numpy(), what + " values")
        return
    if kind == "fixed_len_sequence":
        # TensorFlow pads the steps to the longest; pad the op's likewise.
        pad = b"" if f["dtype"] == "string" else 0
        dense = got.to_tensor(default_value=pad, shape=want.shape)
        assert_same(dense.numpy(), want.numpy(), what)
        return
    if isinstance(want, tf.RaggedTensor):
        assert isinstance(got, tf.RaggedTensor), what
        got, want = all_splits(got), all_splits(want)
        gs, ws = got.nested_row_splits, want.nested_row_splits
        assert len(gs) == len(ws), f"{what}: ragged rank {len(gs)} vs {len(ws)}"
        for i, (g, w) in enumerate(zip(gs, ws)):
            assert_same(g.numpy(), w.numpy(), f"{what} row_splits {i}")
        assert_same(got.flat_values.numpy(), want.flat_values.numpy(), what + " values")
        return
    assert_same(got.numpy(), want.numpy(), what)


@pytest.fixture(scope="module")
def ops():
    from test_dataview import OPS_LIB
    assert os.path.exists(OPS_LIB), f"{OPS_LIB} is missing: run `make ops-lib`"
    return tf.load_op_library(OPS_LIB)


@pytest.mark.parametrize("sequence", [False, True], ids=["Example", "SequenceExample"])
def test_example_op_equals_tf_io(ops, sequence):
    n = 0
    for i, case in enumerate(c for c in cases() if c["sequence"] == sequence):
        records = tf.constant([base64.b64decode(r) for r in case["records"]], dtype=tf.string)
        want = parse_with_tf(case, records)
        got = run_op(ops, case, records)
        for f in case["features"]:
            compare(f, got[f["name"]], want[f["name"]], f"case {i} feature {f['name']} ({f['kind']}, {f['dtype']})")
            n += 1
    assert n > 100


def test_example_op_bad_record_is_invalid_argument(ops):
    case = next(c for c in cases() if not c["sequence"] and any(f["kind"] == "fixed_len" for f in c["features"]))
    f = next(f for f in case["features"] if f["kind"] == "fixed_len")
    # The feature with the other list kind than its dtype's.
    other = {"int64": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0])),
             "float32": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"x"])),
             "string": tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}[f["dtype"]]
    bad = tf.train.Example(features=tf.train.Features(feature={f["key"]: other})).SerializeToString()
    records = [base64.b64decode(r) for r in case["records"]] + [bad]
    dtypes = [tf.as_dtype(c["dtype"]) for c in case["components"]]
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        ops.struct_tensor_decode_example(records, plan=base64.b64decode(case["plan"]),
                                         layout=base64.b64decode(case["layout"]), component_dtypes=dtypes)
    msg = str(e.value)
    assert f"record {len(records) - 1}" in msg and "byte offset" in msg and f'"{f["key"]}"' in msg, msg
