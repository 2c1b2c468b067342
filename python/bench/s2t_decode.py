"""Times struct2tensor decoding a TFRecord file, for the bench harness.

The Go harness (bench/, `make bench`) runs this under the struct2tensor
virtualenv (.venv-s2t) as the `struct2tensor` decoder. It reads every record
of FILE into one string tensor, builds struct2tensor's expression for
MESSAGE from the FileDescriptorSet, projects PATHS (struct2tensor path
syntax, the leaf paths the Go decoders produce) and computes their ragged
tensors in a tf.function, so the graph is traced once and each timed call is
only the decode. The timed loop runs until it has used --min-time seconds of
process CPU time (at least --min-iters calls). It prints one JSON object:

  {"records": n, "bytes": payload bytes per call, "iters": calls,
   "cpu_s": process CPU seconds of the calls, "wall_s": wall seconds,
   "out_bytes": bytes of one call's output tensors,
   "base_rss": peak RSS before the first decode, "peak_rss": peak RSS at the end}

RSS figures are bytes, the kernel's VmHWM of this process (see
bench/measure.go for why not ru_maxrss).

CPU time is time.process_time() (user + system of every thread of this
process), the same quantity the Go decoders measure with getrusage.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
from google.protobuf import descriptor_pb2  # noqa: E402
import struct2tensor as s2t  # noqa: E402


def needed_files(fds, message):
    """Returns a FileDescriptorSet with the file defining message and its
    dependencies, in dependency order (other files, such as an editions
    file this protobuf runtime may not load, are left out)."""
    by_name = {f.name: f for f in fds.file}
    package, _, _ = message.rpartition(".")
    owner = None
    for f in fds.file:
        if f.package == package and any(
                f"{f.package}.{m.name}" == message for m in f.message_type):
            owner = f
    if owner is None:
        sys.exit(f"s2t_decode: message {message} not found in the descriptor set")
    out, seen = descriptor_pb2.FileDescriptorSet(), set()

    def add(f):
        if f.name in seen:
            return
        seen.add(f.name)
        for dep in f.dependency:
            add(by_name[dep])
        out.file.append(f)

    add(owner)
    return out


def peak_rss():
    """This process's peak resident set in bytes (VmHWM, Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--descriptors", required=True)
    ap.add_argument("--message", required=True)
    ap.add_argument("--paths", required=True, help="comma-separated leaf paths")
    ap.add_argument("--file", required=True, help="uncompressed TFRecord file")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-iters", type=int, default=2)
    args = ap.parse_args()

    with open(args.descriptors, "rb") as f:
        fds = needed_files(descriptor_pb2.FileDescriptorSet.FromString(f.read()), args.message)
    paths = [s2t.create_path(p) for p in args.paths.split(",")]
    records = list(tf.data.TFRecordDataset(args.file).as_numpy_iterator())
    payload = sum(len(r) for r in records)
    batch = tf.constant(records, dtype=tf.string)
    del records

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def decode(protos):
        expr = s2t.create_expression_from_file_descriptor_set(protos, args.message, fds)
        [prensor] = s2t.calculate_prensors([expr.project(paths)])
        ragged = prensor.get_ragged_tensors()
        # Every path's flat values and row splits, so nothing is pruned.
        out = []
        for p in paths:
            rt = ragged[p]
            out.append(rt.flat_values)
            out.extend(rt.nested_row_splits)
        return out

    # Trace, and warm up on the whole batch; measure the output's size.
    base_rss = peak_rss()
    out_bytes = 0
    for t in decode(batch):
        a = t.numpy()
        if a.dtype == object:  # strings: the bytes plus one int64 offset each
            out_bytes += sum(len(x) for x in a) + 8 * a.size
        else:
            out_bytes += a.nbytes

    iters = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while True:
        result = decode(batch)
        # decode() returns eager tensors computed by then; touch one to be sure.
        _ = result[0].shape
        del result
        iters += 1
        cpu = time.process_time() - cpu0
        if cpu >= args.min_time and iters >= args.min_iters:
            break
    wall = time.perf_counter() - wall0
    json.dump({"records": int(batch.shape[0]), "bytes": payload, "iters": iters,
               "cpu_s": cpu, "wall_s": wall, "out_bytes": out_bytes,
               "base_rss": base_rss, "peak_rss": peak_rss()}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
