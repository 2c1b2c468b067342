# Measures an anchor decoder on a file of length-prefixed tf.Example
# records (8-byte little-endian length, then the record) and prints one
# JSON line: {"decoder": ..., "mb_per_cpu_s": ...}. CPU time is the
# process's (time.process_time), over repeated whole-batch decodes of at
# least --min-time seconds after one untimed warm-up.
#   tf:   tf.io.parse_example in a tf.function, one intra-op and one
#         inter-op thread, with the feature spec of --spec (our JSON form).
#   tfx:  tfx_bsl's ExamplesToRecordBatchDecoder (no schema: every
#         feature, types from the data).
# With --sequence the records are tf.SequenceExamples: tf.io.
# parse_sequence_example with the spec's features (context) and
# sequence_features, and tfx_bsl's SequenceExamplesToRecordBatchDecoder.
import argparse
import json
import os
import struct
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def read_records(path):
    out = []
    with open(path, "rb") as f:
        data = f.read()
    i = 0
    while i < len(data):
        (n,) = struct.unpack_from("<Q", data, i)
        out.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return out


def measure(fn, nbytes, min_time):
    fn()
    used, t0 = 0.0, time.process_time()
    iters = 0
    while used < min_time or iters < 3:
        fn()
        iters += 1
        used = time.process_time() - t0
    return nbytes * iters / used / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--decoder", required=True)
    ap.add_argument("--records", required=True)
    ap.add_argument("--spec")
    ap.add_argument("--sequence", action="store_true")
    ap.add_argument("--min-time", type=float, default=2.0)
    a = ap.parse_args()
    records = read_records(a.records)
    nbytes = sum(len(r) for r in records)
    if a.decoder == "tf":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from parse_example import tf_feature
        with open(a.spec) as f:
            spec = json.load(f)
        feats = {(f.get("key") or n): tf_feature(f, False) for n, f in spec["features"].items()}
        batch = tf.constant(records)
        if a.sequence:
            seq = {(f.get("key") or n): tf_feature(f, True) for n, f in spec["sequence_features"].items()}

            def parse(x):
                ctx, sq, _ = tf.io.parse_sequence_example(x, context_features=feats, sequence_features=seq)
                out = dict(ctx)
                out.update(sq)
                return out
            fn = tf.function(parse)
        else:
            fn = tf.function(lambda x: tf.io.parse_example(x, feats))

        def run():
            out = fn(batch)
            for v in out.values():  # make sure the work is done
                (v.flat_values if hasattr(v, "flat_values") else v.values if hasattr(v, "values") else v).numpy()
        rate = measure(run, nbytes, a.min_time)
    elif a.decoder == "tfx":
        if a.sequence:
            from tfx_bsl.coders import sequence_example_coder
            dec = sequence_example_coder.SequenceExamplesToRecordBatchDecoder("##SEQUENCE##")
        else:
            from tfx_bsl.coders import example_coder
            dec = example_coder.ExamplesToRecordBatchDecoder()
        rate = measure(lambda: dec.DecodeBatch(records), nbytes, a.min_time)
    else:
        raise SystemExit("unknown decoder " + a.decoder)
    print(json.dumps({"decoder": a.decoder, "mb_per_cpu_s": rate}))


if __name__ == "__main__":
    main()
