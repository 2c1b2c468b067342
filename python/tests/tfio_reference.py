"""tf.io as the reference of a DataView of tf.Example records: the tf.io
features of a feature spec in its JSON form (decode.ParseExampleSpec's,
the DataView metadata's example_spec), tf.io's parse of records by it,
and the comparison of a DataView's outputs with tf.io's.

Shared by test_dataview.py and savedmodel/testdata/tfx_check.py (TFXIO).
"""
import numpy as np
import tensorflow as tf

TF_DTYPES = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}
PARTITIONS = {"row_splits": "RowSplits", "row_lengths": "RowLengths", "value_rowids": "ValueRowIds",
              "row_starts": "RowStarts", "row_limits": "RowLimits"}


def tf_feature(name, f, in_feature_list):
    """The tf.io feature of one feature of a DataView's feature spec (the
    metadata's example_spec JSON), with the key parse_example outputs it
    by."""
    dtype = TF_DTYPES[f["dtype"]]
    kind, shape, key = f["kind"], f.get("shape", []), f.get("key") or name
    if kind == "fixed_len":
        default = f.get("default")
        if default is not None:
            default = np.reshape(np.array(default, dtype=object if dtype == tf.string else dtype.as_numpy_dtype), shape)
        return key, tf.io.FixedLenFeature(shape, dtype, default_value=default)
    if kind == "fixed_len_sequence":
        # parse_example reads a tf.Example's as allow_missing, zero steps.
        return key, tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=f.get("allow_missing", False) or not in_feature_list)
    if kind == "var_len":
        return key, tf.io.VarLenFeature(dtype)
    parts = []
    for p in f.get("partitions", []):
        if p["kind"] == "uniform_row_length":
            parts.append(tf.io.RaggedFeature.UniformRowLength(p["length"]))
        else:
            parts.append(getattr(tf.io.RaggedFeature, PARTITIONS[p["kind"]])(p["key"]))
    return name, tf.io.RaggedFeature(dtype, value_key=key, partitions=parts, row_splits_dtype=tf.int64)


def parse(spec, sequence, records):
    """tf.io.parse_example (parse_sequence_example when sequence) of
    records with spec, by output field name."""
    records = tf.constant(records, dtype=tf.string)
    ctx = {n: tf_feature(n, f, False) for n, f in spec.get("features", {}).items()}
    seq = {n: tf_feature(n, f, True) for n, f in spec.get("sequence_features", {}).items()}
    if sequence:
        c, s, _ = tf.io.parse_sequence_example(records, context_features=dict(ctx.values()) or None,
                                               sequence_features=dict(seq.values()) or None)
        out = {n: c[k] for n, (k, _) in ctx.items()}
        out.update({n: s[k] for n, (k, _) in seq.items()})
        return out
    got = tf.io.parse_example(records, dict(ctx.values()))
    return {n: got[k] for n, (k, _) in ctx.items()}


def bits(a):
    """a's values, float32 ones as their bits (NaNs compare)."""
    a = np.asarray(a)
    return a.view(np.uint32) if a.dtype == np.float32 else a


def assert_same(got, want, what):
    """Equal shapes and values, floats bit for bit."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, tf.io {want.shape}"
    if want.dtype == object:
        assert got.tolist() == want.tolist(), what
    else:
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=what)


def check_against_tf(name, outputs, want):
    """The DataView's outputs equal tf.io's for every feature: a
    RaggedFeature's RaggedTensor exactly (ragged rank, every row
    partition, the values with their inner uniform dimensions); where
    tf.io gives another form by design, TensorFlow's is compared in ours:
    a VarLen SparseTensor by its indices and values, a FixedLenSequence
    padded dense tensor by padding ours the same."""
    assert set(outputs) == set(want), f"{name}: outputs {sorted(outputs)}, tf.io {sorted(want)}"
    for path, w in want.items():
        g, what = outputs[path], f"{name} {path} against tf.io"
        if isinstance(w, tf.SparseTensor):
            sp = g.to_sparse()
            assert_same(sp.indices, w.indices, what + " indices")
            assert_same(sp.values, w.values, what + " values")
        elif isinstance(w, tf.RaggedTensor):
            assert isinstance(g, tf.RaggedTensor), f"{what}: {type(g)}"
            assert g.ragged_rank == w.ragged_rank, f"{what}: ragged rank {g.ragged_rank}, tf.io {w.ragged_rank}"
            for i, (gs, ws) in enumerate(zip(g.nested_row_splits, w.nested_row_splits)):
                assert_same(gs, ws, f"{what} row_splits {i}")
            assert_same(g.flat_values, w.flat_values, what + " values")
        else:
            if isinstance(g, tf.RaggedTensor):
                g = g.to_tensor(default_value=b"" if g.dtype == tf.string else 0, shape=w.shape)
            assert_same(g, w, what)
    return len(want)
