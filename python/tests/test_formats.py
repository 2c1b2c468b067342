"""pyarrow and the structtensor CLI agree on Arrow IPC streams and Parquet.

Go writes (convert --to arrow|parquet) and pyarrow 26 reads the same values;
pyarrow writes (nested lists of structs of lists, nulls, dictionaries, int32
offsets, sliced tables) and Go reads what the StructTensor mapping promises:
a null list is an empty row, any other null an optional value (a list of
0 or 1 values), a dictionary its decoded values.

Run by `make test`:
    .venv/bin/python -m pytest python/tests/test_formats.py
"""
import json
import math
import os
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scratch import scratch_dir

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECIPES = os.path.join(ROOT, "testdata", "recipe", "recipes.json")
SPEC = os.path.join(ROOT, "testdata", "recipe", "recipes.spec.json")

_cli = None


def cli():
    """Builds the structtensor command once per session."""
    global _cli
    if _cli is None:
        d = scratch_dir("structtensor-cli-")  # the binary is 60 MB: leave no copy behind
        out = os.path.join(d, "structtensor")
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.path.join(ROOT, "build", "pkgconfig") + os.pathsep + env.get("PKG_CONFIG_PATH", "")
        subprocess.run(["go", "build", "-o", out, "./cmd/structtensor"], cwd=ROOT, env=env, check=True)
        _cli = out
    return _cli


def convert(*args, stdin=None):
    r = subprocess.run([cli(), "convert", *args], input=stdin, capture_output=True, check=False)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def close(a, b, path="$"):
    """Equal JSON-like values, floats to float32 precision."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: {a!r} vs {b!r}"
        for k in a:
            close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6), f"{path}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def recipe_rows():
    with open(RECIPES) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_pyarrow_reads_what_go_writes(fmt, tmp_path):
    out = tmp_path / f"recipes.{fmt}"
    convert("--from", "jsonl", "--spec", SPEC, "--to", fmt, "-o", str(out), RECIPES)
    if fmt == "arrow":
        with open(out, "rb") as f:
            table = pa.ipc.open_stream(f).read_all()
    else:
        table = pq.read_table(out)
    table.validate(full=True)
    # The spec's types survive: float32 leaves, a fixed-size embedding,
    # 64-bit offsets.
    assert table.schema.field("user_embedding").type == pa.list_(pa.field("item", pa.float32(), nullable=False), 6)
    recipe = table.schema.field("recipe").type
    assert recipe.field("ingredients").type.id == pa.large_list(pa.int8()).id
    close(table.to_pylist(), recipe_rows())


def go_reads(table, tmp_path, fmt):
    path = tmp_path / f"in.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=2)
    else:
        with pa.ipc.new_stream(path, table.schema) as w:
            for batch in table.to_batches(max_chunksize=2):
                w.write_batch(batch)
    out = convert("--from", fmt, "--to", "jsonl", str(path))
    return [json.loads(line) for line in out.decode().splitlines()]


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_go_reads_what_pyarrow_writes(fmt, tmp_path):
    step = pa.struct([("text", pa.string()), ("tools", pa.list_(pa.string()))])
    table = pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "title": pa.array(["a", None, "c", "d"]),                 # nullable string
        "tags": pa.array([["x"], None, [], ["y", "z"]]),            # null list
        "steps": pa.array([                                         # list<struct<list>>
            [{"text": "mix", "tools": ["bowl", "whisk"]}, {"text": "bake", "tools": []}],
            [],
            [{"text": "rest", "tools": None}],
            None,
        ], pa.list_(step)),
        "unit": pa.array(["g", "cup", "g", "g"]).dictionary_encode(),
        "score": pa.array([0.5, None, None, 2.0], pa.float32()),
    })
    got = go_reads(table, tmp_path, fmt)
    want = []
    for row in table.to_pylist():
        want.append({
            "id": row["id"],
            "title": [] if row["title"] is None else [row["title"]],
            "tags": row["tags"] or [],
            "steps": [{"text": s["text"], "tools": s["tools"] or []} for s in (row["steps"] or [])],
            "unit": row["unit"],
            "score": [] if row["score"] is None else [row["score"]],
        })
    close(got, want)


def test_go_reads_sliced_table(tmp_path):
    table = pa.table({"v": pa.array([[1], [2, 3], [4, 5, 6], [7]])}).slice(1, 2)
    got = go_reads(table, tmp_path, "arrow")
    assert got == [{"v": [2, 3]}, {"v": [4, 5, 6]}]
