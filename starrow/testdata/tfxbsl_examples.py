"""Compares Go's tf.Example decode, as Arrow IPC (starrow.WriteIPC), with
tfx-bsl's ExamplesToRecordBatchDecoder on the same records.

argv[1] is a JSON file of cases: {"records": [base64...], "schema": text
or null, "ipc": path of Go's Arrow stream, "columns": {Go field: feature
key}}. Prints one JSON line per case: {"ok": bool, "errors": [...],
"columns": n}.

The two layouts differ by design in three ways, and only those are
normalised:
  - tfx-bsl gives every feature one list per record (null where the record
    lacks it); Go gives a FixedLen feature as a dense [records, shape...]
    value (a fixed-size list per dimension) and a VarLen one as a list.
    Both are compared record by record as the flat list of the record's
    values; a null of tfx-bsl equals Go's empty list (VarLen: absent reads
    as no values).
  - Go marks a string column holding valid UTF-8 as utf8, tfx-bsl's are
    always binary: values compare as bytes.
  - Without a schema tfx-bsl keeps a column of type null for a feature
    that holds no list in any record; Go's inference leaves such a feature
    out. Those columns are dropped before the column sets are compared.
"""
import base64
import json
import math
import struct
import sys

import pyarrow as pa
from tfx_bsl.coders import example_coder
from tensorflow_metadata.proto.v0 import schema_pb2
from google.protobuf import text_format


def flat(v):
    if v is None:
        return []
    if isinstance(v, list):
        out = []
        for e in v:
            out.extend(flat(e))
        return out
    return [v]


def canon(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return struct.unpack("<I", struct.pack("<f", x))[0]  # float32 bits (-0.0 kept)
    if isinstance(x, str):
        return x.encode()
    return x


def check(case):
    records = [base64.b64decode(r) for r in case["records"]]
    if case["schema"] is not None:
        schema = text_format.Parse(case["schema"], schema_pb2.Schema())
        dec = example_coder.ExamplesToRecordBatchDecoder(schema.SerializeToString())
    else:
        dec = example_coder.ExamplesToRecordBatchDecoder()
    want = dec.DecodeBatch(records)
    with pa.ipc.open_stream(case["ipc"]) as r:
        got = r.read_all()
    errors = []
    want_cols = {n for n, f in zip(want.schema.names, want.schema) if not pa.types.is_null(f.type)}
    got_keys = set(case["columns"].values())
    if want_cols != got_keys:
        errors.append(f"columns: tfx-bsl {sorted(want_cols)}, Go {sorted(got_keys)}")
    for name, key in case["columns"].items():
        if key not in want.schema.names:
            continue
        w = want.column(want.schema.get_field_index(key)).to_pylist()
        g = got.column(name).to_pylist()
        if len(w) != len(g):
            errors.append(f"{key}: {len(w)} rows vs {len(g)}")
            continue
        for i, (a, b) in enumerate(zip(w, g)):
            if [canon(x) for x in flat(a)] != [canon(x) for x in flat(b)]:
                errors.append(f"{key} record {i}: tfx-bsl {a!r:.200}, Go {b!r:.200}")
                break
    return {"ok": not errors, "errors": errors, "columns": len(case["columns"])}


for c in json.load(open(sys.argv[1])):
    print(json.dumps(check(c)))
