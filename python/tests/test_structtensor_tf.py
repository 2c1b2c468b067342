"""The structtensor_tf wheel (make wheel): installed into a fresh target
directory, `import structtensor_tf` registers the op, load_dataview loads
the DataViews Go exported (savedmodel/internal/dvcases) after its checks,
and its StructuredTensor, leaves and components equal Go's decoder. Each
check runs in a subprocess: the op must be registered once per process,
and test_dataview.py registers it from build/ in this one."""
import glob
import json
import os
import subprocess
import sys
import tempfile

import pytest

from scratch import scratch_dir
from test_dataview import ROOT, cases, go_fixture

WHEEL_DIR = os.path.join(ROOT, "build", "wheel")

CHECK = r'''
import base64, json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import structtensor_tf as stf
assert stf.OPS_LIBRARY.startswith(sys.argv[1]), stf.OPS_LIBRARY
fixture, names = sys.argv[2], sys.argv[3:]
NP = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "uint32": np.uint32,
      "uint64": np.uint64, "float32": np.float32, "float64": np.float64}
for name in names:
    d = os.path.join(fixture, name)
    case = json.load(open(os.path.join(d, "case.json")))
    records = [base64.b64decode(r) for r in case["records"]]
    dv = stf.load_dataview(os.path.join(d, "dataview"), digest=case["digest"])
    assert dv.digest == case["digest"], (dv.digest, case["digest"])  # Go's savedmodel.Digest
    st = dv(records)
    assert isinstance(st, tf.experimental.StructuredTensor), type(st)
    assert st.shape.rank == 1 and st.nrows().numpy() == len(records)
    leaves = dv.leaves(records)
    for c in dv.metadata["components"]:
        assert stf.component_key(*stf.parse_component_key(c["key"])) == c["key"]
        assert stf.parse_component_key(c["key"]) == (c["path"], c["kind"], c.get("partition", 0))
    for path, want in case["leaves"].items():
        got = st.field_value(tuple(path.split(".")))
        splits = [s.numpy() for s in got.nested_row_splits] if isinstance(got, tf.RaggedTensor) else []
        flat = got.flat_values.numpy() if isinstance(got, tf.RaggedTensor) else got.numpy()
        assert len(splits) == len(want["nested_row_splits"]), (name, path, len(splits))
        for g, w in zip(splits, want["nested_row_splits"]):
            np.testing.assert_array_equal(g, np.array(w, dtype=np.int64), err_msg=f"{name} {path}")
        if want["dtype"] == "string":
            assert list(flat.reshape(-1)) == [base64.b64decode(v) for v in want["values"]], (name, path)
        else:
            np.testing.assert_array_equal(flat.reshape(-1), np.array(want["values"], dtype=NP[want["dtype"]]), err_msg=f"{name} {path}")
        leaf = leaves[path]
        lflat = leaf.flat_values.numpy() if isinstance(leaf, tf.RaggedTensor) else leaf.numpy()
        if want["dtype"] == "bool":
            assert lflat.dtype == np.uint8
        assert lflat.size == flat.size, (name, path)
    print(json.dumps({"case": name, "digest": dv.digest}))
'''

SHAPES = r'''
import base64, json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import structtensor_tf as stf
n = 0
for case in json.load(open(sys.argv[2])):
    records = [base64.b64decode(r) for r in case["records"]]
    plan, layout = base64.b64decode(case["plan"]), base64.b64decode(case["layout"])
    dtypes = [tf.as_dtype(c["dtype"]) for c in case["components"]]
    raw = stf.struct_tensor_decode_example(tf.constant(records), plan=plan, layout=layout, component_dtypes=dtypes)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def traced(r):
        outs = stf.decode_example(r, plan, layout, dtypes)
        for c, o in zip(case["components"], outs):
            # Every rank known; a FixedLen feature's dims after the batch.
            assert o.shape.rank is not None, c
            if c["kind"] == "values" and o.shape.rank > 1:
                assert all(d is not None for d in o.shape[1:]), (c, o.shape)
        return outs
    eager = stf.decode_example(records, plan, layout, dtypes)
    assert len(eager) == len(raw) == len(dtypes)
    for c, g, t, w in zip(case["components"], eager, traced(tf.constant(records)), raw):
        assert t.shape == w.shape and g.shape == w.shape, (c, t.shape, w.shape)
        for x in (g, t):  # bitwise: the values hold NaNs
            same = tf.bitcast(x, tf.int32) == tf.bitcast(w, tf.int32) if x.dtype == tf.float32 else x == w
            assert tf.reduce_all(same).numpy(), c
        n += 1
try:
    stf.decode_example([b""], b"", b"STEL\x01\x01", [tf.int64])
except ValueError as e:
    print(json.dumps({"components": n, "bad_layout": str(e)}))
'''

REFUSE = r'''
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import structtensor_tf as stf
for directory, digest in json.loads(sys.argv[2]):
    try:
        stf.load_dataview(directory, digest=digest)
    except stf.DataViewError as e:
        print(json.dumps("refused: " + str(e)))
    else:
        print(json.dumps("loaded"))
'''


@pytest.fixture(scope="module")
def installed():
    wheels = glob.glob(os.path.join(WHEEL_DIR, "structtensor_tf-*.whl"))
    assert wheels, f"no wheel in {WHEEL_DIR}: run `make wheel` (make test does)"
    target = scratch_dir("structtensor-tf-")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", target, wheels[0]], check=True)
    return target


def run_python(installed, script, *args):
    env = dict(os.environ, PYTHONPATH=installed)
    return subprocess.run([sys.executable, "-c", script, installed, *args], env=env, check=True,
                          capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout


def test_load_dataview_equals_go(installed):
    names = cases()
    out = run_python(installed, CHECK, go_fixture(), *names)
    got = [json.loads(line)["case"] for line in out.strip().splitlines()]
    assert got == names


def refuse_all(installed, attempts):
    """Runs load_dataview on every (directory, digest) in one subprocess
    (one TensorFlow start); returns what each gave."""
    env = dict(os.environ, PYTHONPATH=installed)
    out = subprocess.run([sys.executable, "-c", REFUSE, installed, json.dumps(attempts)], env=env, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
    return [json.loads(line) for line in out.strip().splitlines()]


def copy_case(name):
    import shutil
    dst = os.path.join(scratch_dir("dv-"), "dv")
    shutil.copytree(os.path.join(go_fixture(), name, "dataview"), dst)
    return dst


def files_attacks(expect):
    # Symbolic link out of the directory.
    d = copy_case("recipe")
    os.remove(os.path.join(d, "variables", "variables.data-00000-of-00001"))
    os.symlink("/dev/zero", os.path.join(d, "variables", "variables.data-00000-of-00001"))
    expect(d, "symbolic link")
    # A FIFO as the metadata.
    d = copy_case("recipe")
    os.remove(os.path.join(d, "assets", "dataview.json"))
    os.mkfifo(os.path.join(d, "assets", "dataview.json"))
    expect(d, "not a regular file")
    # The plan of another message in the metadata, fingerprint kept valid.
    d = copy_case("recipe")
    other = json.load(open(os.path.join(go_fixture(), "tfexample", "dataview", "assets", "dataview.json")))
    p = os.path.join(d, "assets", "dataview.json")
    meta = json.load(open(p))
    meta["plan"] = other["plan"]
    json.dump(meta, open(p, "w"))
    expect(d, "plan")
    # A pinned digest that is not the DataView's.
    d = copy_case("recipe")
    expect(d, "fingerprint mismatch", "sha256:" + "0" * 64)
    # A file's content edited without recomputing the fingerprint.
    d = copy_case("recipe")
    with open(os.path.join(d, "variables", "variables.index"), "ab") as f:
        f.write(b"\0")
    expect(d, "fingerprint mismatch: variables/variables.index")


def refit_fingerprint(d):
    """Recomputes the metadata's fingerprint after an edit, as whoever can
    write the directory can."""
    import hashlib
    p = os.path.join(d, "assets", "dataview.json")
    meta = json.load(open(p))
    files = {}
    for name in ("saved_model.pb", "variables/variables.index", "variables/variables.data-00000-of-00001",
                 "assets/tensor_representations.pb", "assets/tensor_representations.pbtxt"):
        if os.path.exists(os.path.join(d, name)):
            files[name] = hashlib.sha256(open(os.path.join(d, name), "rb").read()).hexdigest()
    meta["fingerprint"] = {"algorithm": "sha256", "files": files}
    json.dump(meta, open(p, "w"))


def edit_saved_model(d, edit):
    from tensorflow.core.protobuf import saved_model_pb2
    p = os.path.join(d, "saved_model.pb")
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString(open(p, "rb").read())
    edit(sm.meta_graphs[0])
    open(p, "wb").write(sm.SerializeToString())
    refit_fingerprint(d)


def graph_attacks(expect):
    # An added op (a file write) in the graph, fingerprint recomputed.
    d = copy_case("recipe")

    def add_write(mg):
        n = mg.graph_def.node.add()
        n.name, n.op = "evil", "WriteFile"
        n.input.extend(["dataview_asset", "dataview_asset"])
    edit_saved_model(d, add_write)
    expect(d, "node 'evil' runs op WriteFile, not a DataView op")
    # The same op inside decode_fun's function.
    d = copy_case("recipe")

    def add_write_in_function(mg):
        n = mg.graph_def.library.function[0].node_def.add()
        n.name, n.op = "evil", "WriteFile"
    edit_saved_model(d, add_write_in_function)
    expect(d, "runs op WriteFile")
    # A main op of allowed ops.
    d = copy_case("recipe")

    def add_main_op(mg):
        n = mg.graph_def.node.add()
        n.name, n.op = "init", "NoOp"
        mg.collection_def["saved_model_main_op"].node_list.value.append("init")
    edit_saved_model(d, add_main_op)
    expect(d, "collections")
    # An extra signature.
    d = copy_case("recipe")
    edit_saved_model(d, lambda mg: mg.signature_def["__saved_model_init_op"].CopyFrom(mg.signature_def["decode"]))
    expect(d, "signatures")
    # The graph and checkpoint of another message under this metadata.
    d = copy_case("recipe")
    import shutil
    other = os.path.join(go_fixture(), "tfexample", "dataview")
    for name in ("saved_model.pb", "variables/variables.index", "variables/variables.data-00000-of-00001"):
        shutil.copy(os.path.join(other, name), os.path.join(d, name))
    refit_fingerprint(d)
    expect(d, "plan")
    # The example op's layout attribute edited (its kernel reads it as it
    # reads the plan), fingerprint recomputed; then the metadata's layout.
    d = copy_case("features")

    def edit_layout(mg):
        nodes = [n for f in mg.graph_def.library.function for n in f.node_def if n.op == "StructTensorDecodeExample"]
        assert len(nodes) == 1
        nodes[0].attr["layout"].s += b"\0"
    edit_saved_model(d, edit_layout)
    expect(d, "the decode op's layout is not the metadata's layout")
    d = copy_case("features")
    p = os.path.join(d, "assets", "dataview.json")
    meta = json.load(open(p))
    meta["layout"] = json.load(open(os.path.join(go_fixture(), "sequence_features", "dataview", "assets", "dataview.json")))["layout"]
    json.dump(meta, open(p, "w"))
    expect(d, "the decode op's layout is not the metadata's layout")
    d = copy_case("features")
    p = os.path.join(d, "assets", "dataview.json")
    meta = json.load(open(p))
    del meta["layout"]
    json.dump(meta, open(p, "w"))
    expect(d, "without the decode op's layout")
    # Tensor representations that are not the leaves'.
    d = copy_case("recipe")
    shutil.copy(os.path.join(other, "assets", "tensor_representations.pb"),
                os.path.join(d, "assets", "tensor_representations.pb"))
    refit_fingerprint(d)
    expect(d, "TensorRepresentationGroup")


def directory_attacks(expect):
    # A missing checkpoint.
    d = copy_case("recipe")
    os.remove(os.path.join(d, "variables", "variables.index"))
    refit_fingerprint(d)
    expect(d, "variables/variables.index is missing")
    # A DataView of the previous format (no TensorRepresentation assets).
    d = copy_case("recipe")
    for name in ("tensor_representations.pb", "tensor_representations.pbtxt"):
        os.remove(os.path.join(d, "assets", name))
    p = os.path.join(d, "assets", "dataview.json")
    meta = json.load(open(p))
    meta["version"] = 2
    json.dump(meta, open(p, "w"))
    refit_fingerprint(d)
    expect(d, "version 2 (this loader reads version 3); re-export it from its schema: structtensor dataview export --descriptor-set FILE --message structtensor.testdata.recipe.Recipe")
    # saved_model.pb that is a character device (/dev/zero's numbers).
    d = copy_case("recipe")
    os.remove(os.path.join(d, "saved_model.pb"))
    try:
        os.mknod(os.path.join(d, "saved_model.pb"), 0o644 | __import__("stat").S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        pass  # mknod needs privileges
    else:
        expect(d, "not a regular file")
    # An unexpected file.
    d = copy_case("recipe")
    open(os.path.join(d, "fingerprint.pb"), "wb").close()
    expect(d, "unexpected file fingerprint.pb")


def test_load_dataview_refuses(installed):
    """Each attack on a copy of a Go-exported DataView is refused before
    TensorFlow loads anything, with an error naming what is wrong."""
    attempts, wants = [], []

    def expect(d, says, digest=None):
        attempts.append((d, digest))
        wants.append(says)
    files_attacks(expect)
    graph_attacks(expect)
    directory_attacks(expect)
    got = refuse_all(installed, attempts)
    assert len(got) == len(wants), got
    for (d, _), says, out in zip(attempts, wants, got):
        assert out.startswith("refused: ") and says in out, f"{d}: {out!r}, want a refusal saying {says!r}"


def test_decode_example_shapes(installed):
    """structtensor_tf.decode_example gives the example op's outputs static
    shapes (the op's registration, through TensorFlow's C API, cannot read
    its layout attribute): every rank, and a FixedLen or FixedLenSequence
    feature's inner dimensions, known in a tf.function over records of
    unknown length; the values are the raw op's. A malformed layout is a
    ValueError naming where."""
    from test_example_op import cases as example_cases
    path = os.path.join(scratch_dir("example-shapes-"), "cases.json")
    with open(path, "w") as f:
        json.dump(example_cases()[:40], f)
    out = json.loads(run_python(installed, SHAPES, path))
    assert out["components"] > 100
    assert "layout" in out["bad_layout"], out
