"""Parity with the anchor: struct2tensor decodes the same records to the same
leaves as our decoder, up to the documented mapping differences.

struct2tensor cannot run in the TensorFlow 2.21 virtualenv. The newest
struct2tensor on PyPI, 0.52.0, cannot run on this machine at all: its Linux
wheel needs glibc 2.38 (manylinux_2_39; Debian here has 2.36) and ships none
of the decode-op libraries its Python wrappers load. So this file runs itself
as a script under .venv-s2t (struct2tensor 0.48.1 on TensorFlow 2.17, see
python/requirements-struct2tensor.txt), which decodes each case's records for
every leaf path with create_expression_from_file_descriptor_set + project +
calculate_prensors + get_ragged_tensors and writes values and row splits as
JSON. The pytest side (in .venv) compares them with what Go's decoder
produced for the same records (savedmodel/internal/dvfixture, see
test_dataview.py).

The mapping table makes two kinds of fields differ, and the test converts
ours into struct2tensor's form explicitly before comparing:

  * proto3 implicit scalars (no presence): ours is a scalar per parent, the
    default when absent; struct2tensor's is an optional list of 0 or 1
    values, empty when the field was not on the wire. A writer never puts an
    implicit field holding its default on the wire (protobuf's rule, which
    the Go encoder that made these records follows), so the conversion is:
    present iff the value is not the default (bitwise for floats: -0.0 is
    written).
  * proto2 required fields and the key/value of map entries (which every
    protobuf encoder writes): ours is a scalar per parent; struct2tensor's
    an optional list that always holds one value, i.e. one more partition
    with every row of length 1.

Repeated fields, maps (lists of key/value entries), message fields and
scalars with presence (proto3 `optional`, oneof members) have the same form
in both.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
S2T_PYTHON = os.path.join(ROOT, ".venv-s2t", "bin", "python")
DESCRIPTORS = os.path.join(ROOT, "testdata", "proto", "testdata.pb")


# ---------------------------------------------------------------------------
# The struct2tensor side (runs under .venv-s2t).

def s2t_decode(pairs):
    """Decodes each (CASE.json, OUT.json) pair in this one process, which
    pays for TensorFlow's import once."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, os.path.join(ROOT, "python", "bench"))
    for case_json, out_json in pairs:
        s2t_decode_case(case_json, out_json)


def s2t_decode_case(case_json, out_json):
    import tensorflow as tf
    import struct2tensor as s2t
    from google.protobuf import descriptor_pb2
    from s2t_decode import needed_files  # the bench harness's file selection

    with open(case_json) as f:
        case = json.load(f)
    with open(DESCRIPTORS, "rb") as f:
        fds = needed_files(descriptor_pb2.FileDescriptorSet.FromString(f.read()), case["message"])
    paths = sorted(case["leaves"])
    records = tf.constant([base64.b64decode(r) for r in case["records"]], dtype=tf.string)
    expr = s2t.create_expression_from_file_descriptor_set(records, case["message"], fds)
    s2t_paths = [s2t.create_path(p) for p in paths]
    [prensor] = s2t.calculate_prensors([expr.project(s2t_paths)])
    ragged = prensor.get_ragged_tensors()
    out = {}
    for p, sp in zip(paths, s2t_paths):
        rt = ragged[sp]
        values = rt.flat_values.numpy()
        if values.dtype == object:
            values = [base64.b64encode(v).decode() for v in values]
        else:
            values = values.tolist()
        out[p] = {"dtype": rt.dtype.name, "values": values,
                  "nested_row_splits": [s.numpy().tolist() for s in rt.nested_row_splits]}
    with open(out_json, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) < 4 or len(sys.argv) % 2 != 0 or sys.argv[1] != "s2t-decode":
        sys.exit("usage: test_struct2tensor_parity.py s2t-decode CASE.json OUT.json [CASE.json OUT.json ...]")
    s2t_decode(list(zip(sys.argv[2::2], sys.argv[3::2])))
    sys.exit(0)


# ---------------------------------------------------------------------------
# The pytest side (runs under .venv, next to test_dataview.py).

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from google.protobuf import descriptor_pb2  # noqa: E402

from test_dataview import go_fixture, cases  # noqa: E402

FDP = descriptor_pb2.FieldDescriptorProto

# How a field's values look, per the mapping table.
LIST = "list"            # repeated, map, or singular with presence: same in both
IMPLICIT = "implicit"    # ours: scalar (default when absent); s2t: 0/1 list by wire presence
ALWAYS = "always"        # ours: scalar; s2t: 0/1 list that always holds the value


class Schemas:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        self.messages = {}  # full name -> (DescriptorProto, syntax)

        def add(prefix, msgs, syntax):
            for m in msgs:
                full = f"{prefix}.{m.name}" if prefix else m.name
                self.messages[full] = (m, syntax)
                add(full, m.nested_type, syntax)

        for f in self.fds.file:
            add(f.package, f.message_type, f.syntax or "proto2")

    def steps(self, message, path):
        """Yields (kind, field, is_message) for each step of path."""
        msg, syntax = self.messages[message]
        names = path.split(".")
        for i, name in enumerate(names):
            field = next((f for f in msg.field if f.name == name), None)
            assert field is not None, f"{message}: no field {name} in {path}"
            is_msg = field.type in (FDP.TYPE_MESSAGE, FDP.TYPE_GROUP)
            map_entry = msg.options.map_entry
            if field.label == FDP.LABEL_REPEATED:
                kind = LIST
            elif field.label == FDP.LABEL_REQUIRED or map_entry:
                kind = ALWAYS
            elif is_msg or syntax == "proto2" or field.HasField("oneof_index") or field.proto3_optional:
                kind = LIST  # has presence
            else:
                kind = IMPLICIT
            yield kind, field, is_msg
            if is_msg:
                msg, syntax = self.messages[field.type_name.lstrip(".")]


def is_default(v, field):
    if field.type in (FDP.TYPE_STRING, FDP.TYPE_BYTES):
        return v == b""
    if field.type in (FDP.TYPE_FLOAT, FDP.TYPE_DOUBLE):
        return v == 0 and math.copysign(1.0, v) > 0
    return v == 0 or v is False


def go_to_s2t(schemas, message, path, leaf, nrecords):
    """Converts one of our leaves to struct2tensor's form (see the module
    comment): returns (values, nested_row_splits)."""
    values = leaf["values"]
    if leaf["dtype"] == "string":
        values = [base64.b64decode(v) for v in values]
    ours = [list(s) for s in leaf["nested_row_splits"]]
    out, j, n = [], 0, nrecords  # n: elements at the current level
    steps = list(schemas.steps(message, path))
    for i, (kind, field, is_msg) in enumerate(steps):
        last = i == len(steps) - 1
        if kind == LIST:
            out.append(ours[j])
            n = ours[j][-1]
            j += 1
        elif kind == ALWAYS or (kind == IMPLICIT and not last):
            assert kind == ALWAYS or is_msg is False, path
            out.append(list(range(n + 1)))
        else:  # an implicit leaf: present iff not the default
            assert len(values) == n, f"{path}: {len(values)} values for {n} parents"
            present = [not is_default(v, field) for v in values]
            out.append([0] + np.cumsum(present, dtype=np.int64).tolist())
            values = [v for v, p in zip(values, present) if p]
    assert j == len(ours), f"{path}: {len(ours)} partitions, {j} used"
    return values, out


@pytest.fixture(scope="module")
def schemas():
    return Schemas(DESCRIPTORS)


@pytest.fixture(scope="module")
def s2t_outputs():
    """struct2tensor's decode of every case, by case name: one process for
    all of them (TensorFlow's import is most of a case's time)."""
    names = cases(protobuf_only=True)
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for name in names:
            args += [os.path.join(go_fixture(), name, "case.json"), os.path.join(tmp, name + ".json")]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
        subprocess.run([S2T_PYTHON, os.path.abspath(__file__), "s2t-decode", *args], check=True, env=env)
        out = {}
        for name in names:
            with open(os.path.join(tmp, name + ".json")) as f:
                out[name] = json.load(f)
    return out


@pytest.mark.skipif(not os.path.exists(S2T_PYTHON), reason="no .venv-s2t (scripts/setup-python.sh s2t)")
@pytest.mark.parametrize("name", cases(protobuf_only=True))
def test_struct2tensor_parity(schemas, s2t_outputs, name):
    with open(os.path.join(go_fixture(), name, "case.json")) as f:
        case = json.load(f)
    theirs = s2t_outputs[name]
    nrecords = len(case["records"])
    assert set(theirs) == set(case["leaves"])
    converted = 0
    for path, leaf in sorted(case["leaves"].items()):
        want_values, want_splits = go_to_s2t(schemas, case["message"], path, leaf, nrecords)
        got = theirs[path]
        if got["dtype"] == "string":
            got_values = [base64.b64decode(v) for v in got["values"]]
        else:
            got_values = got["values"]
        assert len(got["nested_row_splits"]) == len(want_splits), f"{path}: ragged rank"
        for k, (g, w) in enumerate(zip(got["nested_row_splits"], want_splits)):
            assert g == w, f"{path}: row_splits {k} differ"
        if leaf["dtype"] in ("float32", "float64"):
            dt = np.float32 if leaf["dtype"] == "float32" else np.float64
            np.testing.assert_array_equal(np.array(got_values, dtype=dt), np.array(want_values, dtype=dt), err_msg=path)
        else:
            assert got_values == list(want_values), f"{path}: values differ"
        converted += len(leaf["nested_row_splits"]) != len(want_splits)
    # Wherever the schema has an implicit or always-present step (proto3
    # scalars, proto2 required fields, map entries) the conversion must have
    # been exercised, not skipped; a schema of lists only has none.
    expected = sum(any(kind != LIST for kind, _, _ in schemas.steps(case["message"], path))
                   for path in case["leaves"])
    assert converted == expected
