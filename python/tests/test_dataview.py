"""Python TensorFlow runs the DataViews Go exported, and gets what Go got.

The Go side (savedmodel/internal/dvfixture) exports a SavedModel DataView
per case, generates deterministic random records, and writes what Go's own
decoder (decode.Plan.Decode, no TensorFlow) produced for them, leaf by leaf.
Here TensorFlow 2.21 loads build/libstructtensor_ops.so and each SavedModel,
runs the `decode` signature on the same records, rebuilds a tf.RaggedTensor
per leaf from the component tensors (the ancestors' row splits, the leaf's
own, its values), and compares values and row partitions with Go's.

Run by `make test` (which builds the ops library first):
    .venv/bin/python -m pytest python/tests
"""
import base64
import gc
import json
import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

import tfio_reference  # noqa: E402
from scratch import scratch_dir  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPS_LIB = os.path.join(ROOT, "build", "libstructtensor_ops.so")

_fixture_dir = None


def go_fixture():
    """Runs the Go fixture writer once per test session; returns its dir."""
    global _fixture_dir
    if _fixture_dir is None:
        out = scratch_dir("dataview-fixture-")
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.path.join(ROOT, "build", "pkgconfig") + os.pathsep + env.get("PKG_CONFIG_PATH", "")
        subprocess.run(["go", "run", "./savedmodel/internal/dvfixture", "-o", out],
                       cwd=ROOT, env=env, check=True)
        _fixture_dir = out
    return _fixture_dir


EXAMPLE_MESSAGES = {"tensorflow.Example", "tensorflow.SequenceExample"}


def cases(protobuf_only=False):
    """The fixture's case names; protobuf_only leaves out the DataViews of
    tf.Example records by feature spec (message tensorflow.Example or
    SequenceExample), which have no protobuf schema to compare by path."""
    with open(os.path.join(go_fixture(), "cases.json")) as f:
        return [c["name"] for c in json.load(f) if not (protobuf_only and c["message"] in EXAMPLE_MESSAGES)]


def load_case(name):
    d = os.path.join(go_fixture(), name)
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    case["records"] = [base64.b64decode(r) for r in case["records"]]
    with open(os.path.join(d, "dataview", "assets", "dataview.json")) as f:
        case["metadata"] = json.load(f)
    case["dir"] = os.path.join(d, "dataview")
    return case


NP_DTYPES = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "uint32": np.uint32,
             "uint64": np.uint64, "float32": np.float32, "float64": np.float64}


def go_values(leaf):
    if leaf["dtype"] == "string":
        return [base64.b64decode(v) for v in leaf["values"]]
    return np.array(leaf["values"], dtype=NP_DTYPES[leaf["dtype"]])


def assert_values_equal(got, want, what):
    if isinstance(want, list):  # strings
        assert list(got) == want, what
    else:
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=what)


def ancestors(path):
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def ragged_leaves(outputs, metadata):
    """Rebuilds every leaf as a tf.Tensor or tf.RaggedTensor from the
    signature's component outputs, using the component list of the
    DataView metadata (graphst.Components order)."""
    splits = {}  # path -> its own row_splits, outermost first
    leaves = {}
    for c in metadata["components"]:
        t = outputs[c["key"]]
        if c["kind"] == "row_splits":
            splits.setdefault(c["path"], []).append(t)
        else:
            leaves[c["path"]] = t
    out = {}
    for path, values in leaves.items():
        nested = []
        for a in ancestors(path) + [path]:
            nested.extend(splits.get(a, []))
        out[path] = tf.RaggedTensor.from_nested_row_splits(values, nested, validate=True) if nested else values
    return out


@pytest.fixture(scope="module")
def ops():
    assert os.path.exists(OPS_LIB), f"{OPS_LIB} is missing: run `make ops-lib`"
    return tf.load_op_library(OPS_LIB)


@pytest.mark.parametrize("name", cases())
def test_saved_model_decode_equals_go(ops, name):
    case = load_case(name)
    model = tf.saved_model.load(case["dir"], tags=["serve"])
    assert set(model.signatures.keys()) == {"decode", "serving_default"}
    decode = model.signatures["decode"]
    records = tf.constant(case["records"], dtype=tf.string)
    # The kernel's first batch is copied out of engine memory; later ones
    # are decoded straight into blocks that become the output tensors
    # (strings longer than 22 bytes as views that own a reference to
    # their block). Check the second batch, read after the model is gone,
    # and string outputs copied by another op (tf.reverse copies each
    # element) after the op's own outputs are gone.
    decode(records=records)
    outputs = decode(records=records)
    copies = {k: tf.reverse(v, axis=[0]) for k, v in outputs.items() if v.dtype == tf.string}
    del model, decode
    gc.collect()
    for k, v in copies.items():
        outputs[k] = tf.reverse(v, axis=[0])
    del copies
    gc.collect()
    assert set(outputs.keys()) == {c["key"] for c in case["metadata"]["components"]}
    leaves = ragged_leaves(outputs, case["metadata"])
    assert set(leaves) == set(case["leaves"])
    nrecords = len(case["records"])
    for path, want in case["leaves"].items():
        got = leaves[path]
        if isinstance(got, tf.RaggedTensor):
            assert got.nrows().numpy() == nrecords, path
            got_splits = [s.numpy() for s in got.nested_row_splits]
            # A FixedLenSequence feature's steps of several values are
            # inner dimensions of its values.
            flat = got.flat_values.numpy().reshape(-1)
            flat = list(flat) if got.dtype == tf.string else flat
        else:
            got_splits = []
            # Go's leaves are flat; a dense leaf of a feature spec's
            # FixedLen feature has the feature's shape after the batch.
            assert got.shape[0] == nrecords, path
            flat = got.numpy().reshape(-1) if got.dtype != tf.string else list(got.numpy().reshape(-1))
        assert len(got_splits) == len(want["nested_row_splits"]), f"{path}: ragged rank"
        for i, (g, w) in enumerate(zip(got_splits, want["nested_row_splits"])):
            np.testing.assert_array_equal(g, np.array(w, dtype=np.int64), err_msg=f"{path} row_splits {i}")
        assert_values_equal(flat, go_values(want), f"{path} values")


def test_serving_default_is_decode(ops):
    case = load_case("recipe")
    model = tf.saved_model.load(case["dir"], tags=["serve"])
    records = tf.constant(case["records"][:5], dtype=tf.string)
    a = model.signatures["decode"](records=records)
    b = model.signatures["serving_default"](records=records)
    for k in a:
        assert a[k].dtype == b[k].dtype
        if a[k].dtype == tf.string:
            assert list(a[k].numpy()) == list(b[k].numpy()), k
        else:
            np.testing.assert_array_equal(a[k].numpy(), b[k].numpy(), err_msg=k)


def test_op_directly_in_a_tf_function(ops):
    """The op from Python, with the plan from the metadata, matches the
    SavedModel's outputs."""
    case = load_case("recipe_projected")
    meta = case["metadata"]
    plan = base64.b64decode(meta["plan"])
    splits_keys = [c["key"] for c in meta["components"] if c["kind"] == "row_splits"]
    value_comps = [c for c in meta["components"] if c["kind"] == "values"]
    dtypes = [tf.as_dtype(c["dtype"]) for c in value_comps]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def run(records):
        out = ops.struct_tensor_decode_proto(records, plan=plan, num_partitions=len(splits_keys), value_dtypes=dtypes)
        for t in list(out.row_splits) + list(out.values):
            assert t.shape.as_list() == [None]
        return out

    out = run(tf.constant(case["records"], dtype=tf.string))
    model = tf.saved_model.load(case["dir"], tags=["serve"])
    want = model.signatures["decode"](records=tf.constant(case["records"], dtype=tf.string))
    for k, t in zip(splits_keys, out.row_splits):
        np.testing.assert_array_equal(t.numpy(), want[k].numpy(), err_msg=k)
    for c, t in zip(value_comps, out.values):
        if t.dtype == tf.string:
            assert list(t.numpy()) == list(want[c["key"]].numpy()), c["key"]
        else:
            np.testing.assert_array_equal(t.numpy(), want[c["key"]].numpy(), err_msg=c["key"])


def test_bad_record_is_invalid_argument(ops):
    case = load_case("recipe")
    model = tf.saved_model.load(case["dir"], tags=["serve"])
    records = case["records"][:3] + [b"\x12\x05\x0a\x01"]  # ingredients: length past the end
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        model.signatures["decode"](records=tf.constant(records, dtype=tf.string))
    msg = str(e.value)
    assert "record 3" in msg and "byte offset" in msg and "ingredients" in msg, msg


def test_library_load_is_idempotent(ops):
    again = tf.load_op_library(OPS_LIB)
    assert hasattr(again, "struct_tensor_decode_proto")


@pytest.mark.parametrize("name", cases())
def test_decode_fun_equals_go(ops, name):
    """The object-based export: tf.saved_model.load restores the root
    object with decode_fun (TFX's TFGraphRecordDecoder interface), which
    returns one tensor per leaf keyed by its path: a RaggedTensor with
    int64 row splits, or a dense tensor; bools as uint8."""
    case = load_case(name)
    model = tf.saved_model.load(case["dir"])
    out = model.decode_fun(tf.constant(case["records"], dtype=tf.string))
    assert isinstance(model.decode_fun.structured_outputs, dict)
    assert set(out) == set(case["leaves"]) == {l["path"] for l in case["metadata"]["leaves"]}
    for path, want in case["leaves"].items():
        got = out[path]
        # Innermost uniform partitions are dimensions of the values.
        want_splits = want["nested_row_splits"][:len(want["nested_row_splits"]) - want["inner_uniform"]]
        if want_splits:
            assert isinstance(got, tf.RaggedTensor), path
            assert got.row_splits.dtype == tf.int64, path
            splits = [s.numpy() for s in got.nested_row_splits]
            assert len(splits) == len(want_splits), path
            for i, (g, w) in enumerate(zip(splits, want_splits)):
                np.testing.assert_array_equal(g, np.array(w, dtype=np.int64), err_msg=f"{path} row_splits {i}")
            flat = got.flat_values.numpy()
        else:
            assert isinstance(got, tf.Tensor), path
            flat = got.numpy()
        w = go_values(want)
        if want["dtype"] == "bool":
            assert flat.dtype == np.uint8, path
            w = w.astype(np.uint8)
        assert_values_equal(flat.reshape(-1) if not isinstance(w, list) else list(flat.reshape(-1)), w, f"{path} values")


@pytest.mark.parametrize("name", [n for n in cases() if load_case(n)["metadata"]["message"] in EXAMPLE_MESSAGES])
def test_example_decode_fun_equals_tf_io(ops, name):
    """A DataView of tf.Example (SequenceExample) records loaded by
    tf.saved_model.load: decode_fun's outputs equal tf.io.parse_example's
    (parse_sequence_example's) for the same records and feature spec,
    RaggedFeatures with uniform partitions in every position and
    FixedLenSequence steps of several values included; their static shapes
    agree with tf.io's wherever TFXIO can carry them (inner uniform
    dimensions, below the ragged ones)."""
    case = load_case(name)
    meta = case["metadata"]
    model = tf.saved_model.load(case["dir"])
    out = model.decode_fun(tf.constant(case["records"], dtype=tf.string))
    want = tfio_reference.parse(meta["example_spec"], meta["message"] == "tensorflow.SequenceExample", case["records"])
    assert tfio_reference.check_against_tf(name, out, want) == len(meta["leaves"])
    for path, w in want.items():
        if isinstance(w, tf.RaggedTensor):
            assert out[path].flat_values.shape[1:] == w.flat_values.shape[1:], path
    if meta["message"] == "tensorflow.Example":
        assert any(isinstance(w, tf.RaggedTensor) and w.flat_values.shape.rank > 1 for w in want.values())
