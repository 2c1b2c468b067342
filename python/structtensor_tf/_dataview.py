"""Loading DataViews, with the checks of the Go loader that need no Go.

A DataView is a SavedModel, and loading a SavedModel runs its graph, init
ops included. load_dataview checks before TensorFlow sees the directory:

  * only regular files (no symbolic links, FIFOs or devices), only the
    DataView's files, each opened without following links or blocking and
    read up to max_file_bytes;
  * the pinned digest (digest=), computed as the Go loader computes it;
  * the metadata's format and version, the SHA-256 of every file;
  * the TensorRepresentationGroup assets: the bytes Go writes for the
    metadata's leaves;
  * the graph: only the DataView's ops (an allowlist) in the graph and its
    functions, no collections (so no main or init op), the signatures
    "decode" and "serving_default" only, one decode op whose plan (and,
    for tf.Example records, layout) is the metadata's, and a root object
    holding only decode_fun and the signatures.

The Go loader goes further: it rebuilds the DataView from the metadata's
plan and requires the SavedModel to be that one. The fingerprint is
integrity, not trust: whoever can edit the files can recompute it; a digest
obtained from a trusted source is what proves the origin.
"""
import base64
import hashlib
import json
import os
import stat

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

FORMAT = "structtensor.dataview"
FORMAT_VERSION = 3
DEFAULT_MAX_FILE_BYTES = 256 << 20
FILES = (
    "saved_model.pb",
    "variables/variables.index",
    "variables/variables.data-00000-of-00001",
    "assets/dataview.json",
    "assets/tensor_representations.pb",
    "assets/tensor_representations.pbtxt",
)
ALLOWED_OPS = {"StructTensorDecodeProto", "Identity", "Cast", "PartitionedCall", "Placeholder", "Const", "NoOp",
               "StructTensorDecodeExample", "EnsureShape", "Reshape"}
# A DataView of tf.Example records (metadata message below) decodes with
# the example op, whose outputs state their shapes through EnsureShape;
# any other with the proto decode op. decode_fun reshapes the values of a
# leaf whose innermost partitions are uniform to its inner dimensions.
EXAMPLE_MESSAGES = {"tensorflow.Example", "tensorflow.SequenceExample"}
SIGNATURES = {"decode", "serving_default"}


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _quote(s):
    out = []
    for c in s.encode():
        if c in (0x22, 0x5C):
            out.append("\\" + chr(c))
        elif c == 0x0A:
            out.append("\\n")
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append("\\%03o" % c)
    return '"' + "".join(out) + '"'


def tensor_representations(leaves):
    """The TensorRepresentationGroup (tensorflow_metadata) of a DataView's
    leaves, as Go writes it to assets/tensor_representations.pb and .pbtxt:
    (binary, text). The loader requires the assets to be these bytes."""
    binary, text = b"", []
    for leaf in leaves:
        path, rank, shape = leaf["path"], leaf["ragged_rank"], leaf["shape"]
        inner = shape[rank + 1:]
        text.append(f"tensor_representation {{\n  key: {_quote(path)}\n  value {{\n")
        if rank == 0:
            dense = _field(1, path.encode())
            text.append(f"    dense_tensor {{\n      column_name: {_quote(path)}\n")
            if inner:
                dims = b"".join(_field(2, _varint(1 << 3) + _varint(d)) for d in inner)
                dense += _field(2, dims)
                text.append("      shape {\n" + "".join(f"        dim {{\n          size: {d}\n        }}\n" for d in inner) + "      }\n")
            rep = _field(1, dense)
        else:
            ragged = _field(1, _field(1, path.encode())) + _varint(2 << 3) + _varint(1)
            ragged += b"".join(_field(3, _varint(1 << 3) + _varint(d)) for d in inner)
            text.append(f"    ragged_tensor {{\n      feature_path {{\n        step: {_quote(path)}\n      }}\n      row_partition_dtype: INT64\n")
            text.append("".join(f"      partition {{\n        uniform_row_length: {d}\n      }}\n" for d in inner))
            rep = _field(4, ragged)
        text.append("    }\n  }\n}\n")
        binary += _field(1, _field(1, path.encode()) + _field(2, rep))
    return binary, "".join(text).encode()


class DataViewError(ValueError):
    """A directory that is not a DataView this loader accepts."""


def component_key(path, kind, partition=0):
    """The signature output key of a component, as Go names it:
    "<path>/values" or "<path>/row_splits_<i>", without "<path>/" for the
    root."""
    name = "values" if kind == "values" else f"row_splits_{partition}"
    return f"{path}/{name}" if path else name


def parse_component_key(key):
    """The inverse of component_key: (path, kind, partition)."""
    path, _, name = key.rpartition("/")
    if name == "values":
        return path, "values", 0
    if name.startswith("row_splits_") and name[len("row_splits_"):].isdigit():
        return path, "row_splits", int(name[len("row_splits_"):])
    raise DataViewError(f"{key!r} is not a component key")


def _read_regular(path, limit):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataViewError(f"{path} is not a regular file")
        if st.st_size > limit:
            raise DataViewError(f"{path} has {st.st_size} bytes, more than the limit of {limit}")
        chunks, n = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            n += len(b)
            if n > limit:
                raise DataViewError(f"{path} grew past the limit of {limit} bytes")
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_files(directory, limit):
    files = {}
    for root, dirs, names in os.walk(directory, followlinks=False):
        rel_root = os.path.relpath(root, directory)
        for d in dirs:
            rel = os.path.normpath(os.path.join(rel_root, d))
            if os.path.islink(os.path.join(root, d)):
                raise DataViewError(f"{directory}: {rel} is a symbolic link; a DataView holds regular files only")
            if rel not in ("variables", "assets"):
                raise DataViewError(f"{directory}: unexpected directory {rel}")
        for name in names:
            p = os.path.join(root, name)
            rel = os.path.normpath(os.path.join(rel_root, name)).replace(os.sep, "/")
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                raise DataViewError(f"{directory}: {rel} is a symbolic link; a DataView holds regular files only")
            if not stat.S_ISREG(st.st_mode):
                raise DataViewError(f"{directory}: {rel} is not a regular file")
            if rel not in FILES:
                raise DataViewError(f"{directory}: unexpected file {rel}")
            files[rel] = _read_regular(p, limit)
    if "assets/dataview.json" not in files:
        raise DataViewError(f"{directory}: assets/dataview.json is missing")
    return files


def digest_of(files):
    """The digest Go's savedmodel.Digest computes: SHA-256 of the sorted
    "<path>\\0<sha256 hex>\\n" lines of every file."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(f"{name}\0{hashlib.sha256(files[name]).hexdigest()}\n".encode())
    return "sha256:" + h.hexdigest()


def _check(files, digest):
    got = digest_of(files)
    if digest is not None and digest != got:
        raise DataViewError(f"fingerprint mismatch: the DataView's digest is {got}, the caller pinned {digest}")
    meta = json.loads(files["assets/dataview.json"])
    if meta.get("format") != FORMAT:
        raise DataViewError(f"dataview.json: format {meta.get('format')!r}, want {FORMAT!r}")
    if meta.get("version") != FORMAT_VERSION:
        raise DataViewError(
            f"dataview.json: version {meta.get('version')} (this loader reads version {FORMAT_VERSION}); "
            "re-export it from its schema: structtensor dataview export --descriptor-set FILE "
            f"--message {meta.get('message') or 'NAME'} [--path P]... -o NEWDIR")
    for f in FILES:
        if f not in files:
            raise DataViewError(f"{f} is missing")
    fp = meta.get("fingerprint", {})
    if fp.get("algorithm") != "sha256" or set(fp.get("files", {})) != set(FILES) - {"assets/dataview.json"}:
        raise DataViewError("dataview.json: the fingerprint does not cover the DataView's files")
    for name, want in fp["files"].items():
        if hashlib.sha256(files[name]).hexdigest() != want:
            raise DataViewError(f"fingerprint mismatch: {name}")
    binary, text = tensor_representations(meta.get("leaves", []))
    if files["assets/tensor_representations.pb"] != binary or files["assets/tensor_representations.pbtxt"] != text:
        raise DataViewError("assets/tensor_representations.pb(txt) is not the TensorRepresentationGroup of the metadata's leaves")
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString(files["saved_model.pb"])
    if len(sm.meta_graphs) != 1:
        raise DataViewError(f"{len(sm.meta_graphs)} meta graphs, want 1")
    mg = sm.meta_graphs[0]
    if len(mg.collection_def):
        raise DataViewError("the graph has collections, such as a main or init op")
    if set(mg.signature_def) != SIGNATURES:
        raise DataViewError(f"signatures {sorted(mg.signature_def)}, want {sorted(SIGNATURES)}")
    plan = base64.b64decode(meta["plan"])
    example = meta.get("example_spec") is not None
    if example != (meta.get("message") in EXAMPLE_MESSAGES):
        raise DataViewError(f"dataview.json: message {meta.get('message')!r} and the presence of a feature spec disagree")
    # The example op's kernel reads its layout attribute as well as its
    # plan: both must be the metadata's.
    layout = base64.b64decode(meta.get("layout") or "")
    if example and not layout:
        raise DataViewError("dataview.json: a DataView of tf.Example records without the decode op's layout")
    decode_op = "StructTensorDecodeExample" if example else "StructTensorDecodeProto"
    other_op = "StructTensorDecodeProto" if example else "StructTensorDecodeExample"
    decode_ops = 0
    nodes = [(None, n) for n in mg.graph_def.node]
    for f in mg.graph_def.library.function:
        nodes += [(f.signature.name, n) for n in f.node_def]
    for fn, n in nodes:
        if n.op not in ALLOWED_OPS:
            where = f"function {fn}: " if fn else ""
            raise DataViewError(f"{where}node {n.name!r} runs op {n.op}, not a DataView op")
        if n.op == other_op or (n.op == "EnsureShape" and not example):
            raise DataViewError(f"node {n.name!r} runs op {n.op}, not one of this DataView's")
        if n.op == decode_op:
            decode_ops += 1
            if n.attr["plan"].s != plan:
                raise DataViewError(f"the decode op's plan is not the metadata's plan")
            if example and n.attr["layout"].s != layout:
                raise DataViewError(f"the decode op's layout is not the metadata's layout")
    if decode_ops != 1:
        raise DataViewError(f"{decode_ops} decode ops, want 1")
    root = mg.object_graph_def.nodes[0]
    if sorted(c.local_name for c in root.children) != ["decode_fun", "signatures"]:
        raise DataViewError("the root object is not a DataView's")
    return meta, got


class DataView:
    """A loaded DataView: call it on a string vector of serialized records
    to get a tf.experimental.StructuredTensor of shape [len(records)];
    leaves() gives decode_fun's dict of tensors, components() the
    signature's."""

    def __init__(self, directory, model, metadata, digest):
        self.directory = directory
        self.metadata = metadata
        self.digest = digest
        self._model = model
        self._decode = model.signatures["decode"]

    def components(self, records):
        return self._decode(records=tf.convert_to_tensor(records, dtype=tf.string))

    def leaves(self, records):
        """decode_fun: {leaf path: tf.Tensor or tf.RaggedTensor}, bools as uint8."""
        return self._model.decode_fun(tf.convert_to_tensor(records, dtype=tf.string))

    def __call__(self, records):
        comps = self.components(records)
        splits, leaves, order = {}, {}, []
        for c in self.metadata["components"]:
            t = comps[c["key"]]
            if c["kind"] == "row_splits":
                splits.setdefault(c["path"], []).append(t)
            else:
                leaves[c["path"]] = t
            if c["path"] not in order:
                order.append(c["path"])
        nrows = tf.shape(tf.convert_to_tensor(records, dtype=tf.string), out_type=tf.int64)[0]
        return self._struct("", [], splits, leaves, order, nrows)

    def _struct(self, path, outer, splits, leaves, order, nrows):
        own = splits.get(path, [])
        parts = outer + own
        fields = {}
        prefix = path + "." if path else ""
        for p in order:
            if not p.startswith(prefix) or p == path:
                continue
            name = p[len(prefix):]
            if "." in name:
                name = name.split(".", 1)[0]
                if name in fields:
                    continue
                sub = prefix + name
                if sub in leaves:
                    continue
                fields[name] = self._struct(sub, parts, splits, leaves, order, nrows)
            elif p in leaves:
                nested = parts + splits.get(p, [])
                v = leaves[p]
                fields[name] = tf.RaggedTensor.from_nested_row_splits(v, nested, validate=False) if nested else v
        rank = 1 + len(parts)
        row_partitions = [tf.experimental.RowPartition.from_row_splits(s, validate=False) for s in parts]
        return tf.experimental.StructuredTensor.from_fields(
            fields, shape=[None] * rank, nrows=nrows, row_partitions=row_partitions, validate=False)


def load_dataview(directory, digest=None, max_file_bytes=DEFAULT_MAX_FILE_BYTES):
    """Checks (module documentation) and loads the DataView in directory.
    digest pins the DataView (`structtensor dataview inspect` prints it)."""
    import structtensor_tf  # noqa: F401  (registers the op)
    files = _read_files(directory, max_file_bytes)
    meta, got = _check(files, digest)
    # TensorFlow loads a private copy of the checked bytes, so that a file
    # swapped in the directory after the check never runs.
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="structtensor-dataview-")
    try:
        for name, b in files.items():
            p = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(b)
        model = tf.saved_model.load(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return DataView(directory, model, meta, got)
