"""Runs path-op cases through struct2tensor for ops/tf_test.go.

Reads a JSON list of cases from stdin, each {"op", "args", "input",
"check", "optional"}: input is a list of records in which every field is a
list (a repeated field: a list of records or of scalars; the leaves named
in optional are optional fields, lists of at most one), op and args name a
struct2tensor expression, and check is the path whose values are
compared. Writes a JSON list of {"value": <nested lists>} or
{"error": "<message>"}: the ragged tensor of check in the result,
as prensor.get_ragged_tensor gives it.
"""
import json
import sys

import struct2tensor as s2t
import tensorflow as tf
from struct2tensor import path, prensor
from struct2tensor.expression_impl import (broadcast, filter_expression, index, project, promote,
                                           promote_and_broadcast, reroot, size, slice_expression)


def build_prensor(records, optional):
    nodes = {path.Path([]): prensor.RootNodeTensor(tf.constant(len(records), dtype=tf.int64))}

    def add(prefix, parents):
        # parents: list of (parent index, record) for the records at prefix.
        names = sorted({k for _, r in parents for k in r})
        for name in names:
            p = prefix.get_child(name)
            parent_index, children, values = [], [], []
            for i, r in parents:
                for e in r.get(name, []):
                    parent_index.append(i)
                    if isinstance(e, dict):
                        children.append((len(parent_index) - 1, e))
                    else:
                        values.append(e)
            is_struct = any(isinstance(e, dict) for _, r in parents for e in r.get(name, []))
            pi = tf.constant(parent_index, dtype=tf.int64)
            if is_struct:
                nodes[p] = prensor.ChildNodeTensor(pi, True)
                add(p, children)
            else:
                dtype = tf.bool if values and all(isinstance(v, bool) for v in values) else tf.int64
                nodes[p] = prensor.LeafNodeTensor(pi, tf.constant(values, dtype=dtype), str(p) not in optional)

    add(path.Path([]), list(enumerate(records)))
    return prensor.create_prensor_from_descendant_nodes(nodes)


def p(s):
    return path.create_path(s) if s else path.Path([])


def run(case):
    a = case["args"]
    expr = s2t.create_expression_from_prensor(build_prensor(case["input"], set(case.get("optional") or [])))
    op = case["op"]
    if op == "promote":
        out = promote.promote(expr, p(a["src"]), a["new"])
    elif op == "broadcast":
        out = broadcast.broadcast(expr, p(a["src"]), a["sibling"], a["new"])
    elif op == "promote_and_broadcast":
        out = promote_and_broadcast.promote_and_broadcast(expr, {a["new"]: p(a["src"])}, p(a["dest"]))
    elif op == "reroot":
        out = reroot.reroot(expr, p(a["path"]))
        if a.get("index"):
            out = reroot.create_proto_index_field(out, a["index"])
    elif op == "project":
        out = project.project(expr, [p(s) for s in a["paths"].split(",")])
    elif op == "slice":
        end = int(a["end"]) if "end" in a else None
        out = slice_expression.slice_expression(expr, p(a["path"]), a["new"], int(a.get("begin", 0)), end)
    elif op == "truncate":
        out = slice_expression.slice_expression(expr, p(a["path"]), a["new"], None, int(a["limit"]))
    elif op == "size_field":
        out = size.size(expr, p(a["path"]), a["new"])
    elif op == "has_field":
        out = size.has(expr, p(a["path"]), a["new"])
    elif op == "positional_index":
        out, _ = index.get_positional_index(expr, p(a["path"]), a["new"])
    elif op == "positional_index_from_end":
        out, _ = index.get_index_from_end(expr, p(a["path"]), a["new"])
    elif op == "filter_by_child":
        out = filter_expression.filter_by_child(expr, p(a["path"]), a["child"], a["new"])
    elif op == "filter_by_sibling":
        out = filter_expression.filter_by_sibling(expr, p(a["path"]), a["sibling"], a["new"])
    else:
        raise ValueError("unknown op " + op)
    check = p(case["check"])
    result = s2t.calculate_prensors([out.project([check])])[0]
    return result.get_ragged_tensor(check).to_list()


def main():
    out = []
    for case in json.load(sys.stdin):
        try:
            out.append({"value": run(case)})
        except Exception as e:  # struct2tensor raises many types; the message is reported
            out.append({"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
