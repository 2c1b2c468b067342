"""Times an anchor decoder of tf.Example / tf.SequenceExample records
against which the bench harness (bench/, datasets tfexample-spec and
seqexample-spec) and decode's BenchmarkExampleVsAnchors measure ours.

Usage: example_decode.py --decoder tf|tfx --spec SPEC.json --file F.tfrecord
       [--sequence] [--min-time S] [--min-iters N] [--lockstep]

  tf:  tf.io.parse_example (parse_sequence_example with --sequence) in a
       tf.function, one intra-op and one inter-op thread, with the feature
       spec of --spec (decode.ParseExampleSpec's JSON form); run in .venv.
  tfx: tfx_bsl's ExamplesToRecordBatchDecoder
       (SequenceExamplesToRecordBatchDecoder with --sequence), no schema:
       every feature, types from the data; run in .venv-tfx.

The records come from an uncompressed TFRecord file, read whole before
timing. The script decodes the whole batch once untimed (warm-up; the
output's size and per-feature digests are taken from it), then repeatedly
until it has used --min-time of process CPU time and run --min-iters
times (with --lockstep: one call per line "call" read from standard
input, see lockstep's doc), and prints one JSON line in the harness's
measurement form
(bench/measure.go): records, bytes, iters, cpu_s, wall_s, out_bytes,
base_rss, peak_rss, leaves, and mb_per_cpu_s.

leaves digests each feature's flat values as bench/leaves.go does (count
and SHA-256 of the values little-endian, a string as a uint64 length and
its bytes), keyed by output field name: TensorFlow's for every feature
(a FixedLenSequence feature list unpadded by its lengths), tfx-bsl's for
the features without a default (tfx-bsl fills in no defaults: an absent
feature is a null there), but for int64 feature lists of SequenceExamples,
whose values tfx-bsl 1.21 truncates to their low 32 bits.
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402


def read_tfrecords(path):
    """The records of an uncompressed TFRecord file (CRCs not checked: the
    harness wrote the file a moment ago)."""
    with open(path, "rb") as f:
        data = f.read()
    out, i = [], 0
    while i < len(data):
        (n,) = struct.unpack_from("<Q", data, i)
        out.append(data[i + 12:i + 12 + n])
        i += 12 + n + 4
    return out


def peak_rss():
    """This process's peak resident set in bytes (VmHWM, Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def digest(a):
    """The count and SHA-256 of a flat numpy array of values."""
    h = hashlib.sha256()
    if a.dtype == object:
        for x in a:
            h.update(len(x).to_bytes(8, "little"))
            h.update(x)
    else:
        h.update(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())
    return {"n": int(a.shape[0]), "sha": h.hexdigest()}


def nbytes(a):
    if a.dtype == object:
        return sum(len(x) for x in a) + 8 * a.size
    return a.nbytes


def tf_decoder(spec, sequence):
    import tensorflow as tf
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "decode", "testdata", "example"))
    from parse_example import tf_feature

    def key(n, f):
        return f.get("key") or n
    feats = {key(n, f): tf_feature(f, False) for n, f in spec.get("features", {}).items()}
    seq = {key(n, f): tf_feature(f, True) for n, f in spec.get("sequence_features", {}).items()}
    if sequence:
        @tf.function
        def parse(x):
            return tf.io.parse_sequence_example(x, context_features=feats or None, sequence_features=seq or None)
    else:
        for n, f in spec.get("features", {}).items():
            if f["kind"] == "fixed_len_sequence":
                raise SystemExit("example_decode.py: fixed_len_sequence in a tf.Example spec is not digested (TensorFlow pads it)")

        @tf.function
        def parse(x):
            return tf.io.parse_example(x, feats), {}, {}

    def flat(v):
        if isinstance(v, tf.SparseTensor):
            return v.values
        if isinstance(v, tf.RaggedTensor):
            return v.flat_values
        return tf.reshape(v, [-1])

    def run(batch):
        ctx, sq, _ = parse(batch)
        for d in (ctx, sq):  # make sure the work is done
            for v in d.values():
                flat(v).numpy()

    def leaves(batch):
        ctx, sq, lengths = parse(batch)
        out, size = {}, 0
        for section, d in (("features", ctx), ("sequence_features", sq)):
            for n, f in spec.get(section, {}).items():
                v = d[key(n, f)]
                if section == "sequence_features" and f["kind"] == "fixed_len_sequence":
                    v = tf.RaggedTensor.from_tensor(v, lengths=lengths[key(n, f)])
                a = flat(v).numpy()
                if a.dtype == object:
                    a = np.array(list(a), dtype=object)
                out[n] = digest(a)
                size += nbytes(a)
        return out, size
    return run, leaves


def tfx_decoder(spec, sequence):
    import pyarrow as pa
    if sequence:
        from tfx_bsl.coders import sequence_example_coder
        dec = sequence_example_coder.SequenceExamplesToRecordBatchDecoder("##SEQUENCE##")
    else:
        from tfx_bsl.coders import example_coder
        dec = example_coder.ExamplesToRecordBatchDecoder()

    def run(records):
        dec.DecodeBatch(records)

    def values(col, depth):
        for _ in range(depth):
            col = col.flatten()
        return col

    def leaves(records):
        rb = dec.DecodeBatch(records)
        out = {}
        for section, depth in (("features", 1), ("sequence_features", 2)):
            for n, f in spec.get(section, {}).items():
                if "default" in f:
                    continue
                if section == "sequence_features" and f["dtype"] == "int64":
                    # tfx-bsl 1.21's SequenceExample decoder keeps only the
                    # low 32 bits of int64 feature-list values (with or
                    # without a schema): not compared.
                    continue
                k = f.get("key") or n
                if section == "features":
                    col = rb.column(rb.schema.get_field_index(k))
                else:
                    seq = rb.column(rb.schema.get_field_index("##SEQUENCE##"))
                    col = seq.field(k)
                a = values(col, depth)
                if pa.types.is_binary(a.type) or pa.types.is_large_binary(a.type):
                    arr = np.array(a.to_pylist(), dtype=object)
                else:
                    arr = a.to_numpy(zero_copy_only=False)
                out[n] = digest(arr)
        return out, rb.nbytes
    return run, leaves


def lockstep(run, batch):
    """Times one call of run(batch) per line "call" read from standard
    input, each answered at once; returns the calls and their process CPU
    and wall seconds."""
    print("ready", flush=True)
    iters, cpu, wall = 0, 0.0, 0.0
    for line in sys.stdin:
        if line.strip() != "call":
            raise SystemExit("example_decode.py: lockstep: read %r, want 'call'" % line)
        c0, w0 = time.process_time(), time.perf_counter()
        run(batch)
        c, w = time.process_time() - c0, time.perf_counter() - w0
        iters, cpu, wall = iters + 1, cpu + c, wall + w
        print("done %d %d" % (int(c * 1e9), int(w * 1e9)), flush=True)
    return iters, cpu, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--decoder", required=True, choices=["tf", "tfx"])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--sequence", action="store_true")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-iters", type=int, default=2)
    ap.add_argument("--lockstep", action="store_true",
                    help="after the warm-up print 'ready', then time one call per line 'call' read from standard "
                         "input, answering 'done <cpu ns> <wall ns>', until its end (the harness's pairs, "
                         "bench/lockstep.go)")
    a = ap.parse_args()
    with open(a.spec) as f:
        spec = json.load(f)
    records = read_tfrecords(a.file)
    payload = sum(len(r) for r in records)
    if a.decoder == "tf":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        batch = tf.constant(records, dtype=tf.string)
        run, leaves = tf_decoder(spec, a.sequence)
    else:
        batch = records
        run, leaves = tfx_decoder(spec, a.sequence)
    base_rss = peak_rss()
    digests, out_bytes = leaves(batch)
    run(batch)
    if a.lockstep:
        iters, cpu, wall = lockstep(run, batch)
    else:
        iters = 0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while True:
            run(batch)
            iters += 1
            cpu = time.process_time() - cpu0
            if cpu >= a.min_time and iters >= a.min_iters:
                break
        wall = time.perf_counter() - wall0
    print(json.dumps({"records": len(records), "bytes": payload, "iters": iters, "cpu_s": cpu, "wall_s": wall,
                      "out_bytes": out_bytes, "base_rss": base_rss, "peak_rss": peak_rss(), "leaves": digests,
                      "mb_per_cpu_s": payload * iters / cpu / 1e6}))


if __name__ == "__main__":
    main()
