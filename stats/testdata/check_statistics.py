"""tensorflow_metadata reads the statistics Go wrote, with Go's values.

Run by stats/tfdv_test.go in .venv-tfx:
    python -c "$(cat check_statistics.py)" DIR [DIR...]
Each DIR holds summary.json (Summary.WriteJSON), stats.pb
(MarshalStatistics) and stats.pbtxt (MarshalStatisticsText). For each, the
binary and the text form parse with tensorflow_metadata's statistics_pb2
into equal messages, and every quantity of the message equals the JSON
summary's (floats exactly, "float" proto fields to float32). Prints one
line per DIR: "DIR ok N features".
"""
import json
import math
import os
import struct
import sys

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import statistics_pb2


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def num(x):
    if isinstance(x, str):
        return {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf}[x]
    return float(x)


def same(a, b, what):
    a, b = float(a), float(b)
    if math.isnan(a) and math.isnan(b):
        return
    assert a == b, f"{what}: proto {a!r} vs Go {b!r}"


def eq(a, b, what):
    assert a == b, f"{what}: proto {a!r} vs Go {b!r}"


def check_histogram(h, lengths, what):
    eq(h.type, statistics_pb2.Histogram.STANDARD, what + " type")
    eq(len(h.buckets), len(lengths["histogram"]), what + " buckets")
    for b, g in zip(h.buckets, lengths["histogram"]):
        same(b.low_value, g["low"], what + " low")
        same(b.high_value, g["high"], what + " high")
        same(b.sample_count, g["count"], what + " count")


def check_feature(p, g):
    path = ".".join(g["path"])
    eq(list(p.path.step), g["path"], "path")
    kinds = {"int": "INT", "uint": "INT", "float": "FLOAT", "string": "STRING", "bytes": "BYTES", "struct": "STRUCT"}
    eq(statistics_pb2.FeatureNameStatistics.Type.Name(p.type), kinds[g["kind"]], path + " type")
    which = p.WhichOneof("stats")
    want = {"int": "num_stats", "uint": "num_stats", "float": "num_stats", "string": "string_stats",
            "bytes": "bytes_stats", "struct": "struct_stats"}[g["kind"]]
    eq(which, want, path + " stats")
    st = getattr(p, which)
    c = st.common_stats
    eq(c.num_non_missing, g["present"], path + " num_non_missing")
    eq(c.num_missing, g["empty"] + g["missing"], path + " num_missing")
    eq(c.tot_num_values, g["values"], path + " tot_num_values")
    v = g["values_per_record"]
    if g["present"] > 0:
        eq(c.min_num_values, v["min"], path + " min_num_values")
        eq(c.max_num_values, v["max"], path + " max_num_values")
        same(c.avg_num_values, f32(num(v["mean"])), path + " avg_num_values")
        check_histogram(c.num_values_histogram, v, path + " num_values_histogram")
    levels = g["levels"]
    if len(levels) > 1:
        eq(len(c.presence_and_valency_stats), len(levels), path + " levels")
        for i, (pv, l) in enumerate(zip(c.presence_and_valency_stats, levels)):
            eq(pv.num_non_missing, l["lists"], f"{path} level {i} lists")
            eq(pv.num_missing, 0, f"{path} level {i} missing")
            if l["lists"]:
                eq((pv.min_num_values, pv.max_num_values, pv.tot_num_values), (l["min"], l["max"], l["total"]), f"{path} level {i}")
    else:
        eq(len(c.presence_and_valency_stats), 0, path + " levels")
    custom = {cs.name: cs for cs in p.custom_stats}
    same(custom["structtensor/empty"].num, g["empty"], path + " empty")
    same(custom["structtensor/missing"].num, g["missing"], path + " missing")

    if "numbers" in g:
        n = g["numbers"]
        if n["count"] > 0:
            for field, key in [("mean", "mean"), ("std_dev", "std_dev"), ("min", "min"), ("max", "max"), ("median", "median")]:
                same(getattr(st, field), num(n[key]), f"{path} {field}")
            eq(st.num_zeros, n["zeros"], path + " num_zeros")
            eq(len(st.histograms), 1, path + " histograms")
            h = st.histograms[0]
            eq(statistics_pb2.Histogram.HistogramType.Name(h.type), "QUANTILES", path + " histogram type")
            eq(h.num_nan, n["nan"], path + " num_nan")
            qs = [num(x) for x in n["quantiles"]]
            eq(len(h.buckets), len(qs) - 1, path + " quantile buckets")
            for i, b in enumerate(h.buckets):
                same(b.low_value, qs[i], f"{path} quantile {i}")
                same(b.high_value, qs[i + 1], f"{path} quantile {i + 1}")
                same(b.sample_count, n["count"] / (len(qs) - 1), f"{path} bucket {i} count")
            same(custom["structtensor/quantile_rank_error"].num, n["quantile_rank_error"], path + " rank error")
        elif n["nan"] > 0:
            eq(st.histograms[0].num_nan, n["nan"], path + " num_nan")
    if "strings" in g:
        s = g["strings"]
        eq(st.unique, s["distinct"], path + " unique")
        top = [(t.get("value"), t["count"]) for t in s["top"]]
        if g["kind"] == "string":
            same(st.avg_length, f32(s["mean_bytes"]), path + " avg_length")
            eq(st.invalid_utf8_count, s["invalid_utf8"], path + " invalid_utf8_count")
            got = [(t.value, t.frequency) for t in st.top_values]
            eq(len(got), len(top), path + " top_values")
            for (pv, pf), (gv, gc) in zip(got, top):
                if gv is not None:  # a value that is not UTF-8 is replaced in the proto
                    eq(pv, gv, path + " top value")
                same(pf, gc, path + " top frequency")
            ranks = st.rank_histogram
        else:
            same(st.avg_num_bytes, f32(s["mean_bytes"]), path + " avg_num_bytes")
            same(st.min_num_bytes, s["min_bytes"], path + " min_num_bytes")
            same(st.max_num_bytes, s["max_bytes"], path + " max_num_bytes")
            eq(st.max_num_bytes_int, s["max_bytes"], path + " max_num_bytes_int")
            ranks = custom["structtensor/top_values"].rank_histogram
        eq(len(ranks.buckets), len(top), path + " rank_histogram")
        for i, (b, (gv, gc)) in enumerate(zip(ranks.buckets, top)):
            eq((b.low_rank, b.high_rank), (i, i), path + " rank")
            if gv is not None:
                eq(b.label, gv, path + " rank label")
            same(b.sample_count, gc, path + " rank count")
        same(custom["structtensor/distinct_standard_error"].num, s["distinct_standard_error"], path + " standard error")
        same(custom["structtensor/top_max_undercount"].num, s["top_max_undercount"], path + " undercount")


def main():
    for d in sys.argv[1:]:
        with open(os.path.join(d, "summary.json")) as f:
            g = json.load(f)
        binary = statistics_pb2.DatasetFeatureStatisticsList()
        with open(os.path.join(d, "stats.pb"), "rb") as f:
            binary.ParseFromString(f.read())
        text = statistics_pb2.DatasetFeatureStatisticsList()
        with open(os.path.join(d, "stats.pbtxt")) as f:
            text_format.Parse(f.read(), text)
        # NaN != NaN, and NaN payloads differ between Go and Python: compare
        # the messages in text form, where every NaN is "nan".
        assert text_format.MessageToString(binary) == text_format.MessageToString(text), "binary and text differ"
        eq(len(binary.datasets), 1, "datasets")
        ds = binary.datasets[0]
        eq(ds.num_examples, g["records"], "num_examples")
        eq(len(ds.features), len(g["features"]), "features")
        for p, gf in zip(ds.features, g["features"]):
            check_feature(p, gf)
        print(d, "ok", len(ds.features), "features")


main()
