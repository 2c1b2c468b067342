"""Times struct2tensor decoding a TFRecord file, for the bench harness.

The Go harness (bench/, `make bench`) runs this under the struct2tensor
virtualenv (.venv-s2t) as the `struct2tensor` decoder. It reads every record
of FILE into one string tensor, builds struct2tensor's expression for
MESSAGE from the FileDescriptorSet, projects PATHS (struct2tensor path
syntax, the leaf paths the Go decoders produce) and computes their ragged
tensors in a tf.function, so the graph is traced once and each timed call is
only the decode. The timed loop runs until it has used --min-time seconds of
process CPU time (at least --min-iters calls). It prints one JSON object
per job (a job is one --message, --paths, --file triple; the harness runs
one job per process, so peak RSS is per dataset; tests batch several to pay
for the TensorFlow import once):

  {"records": n, "bytes": payload bytes per call, "iters": calls,
   "cpu_s": process CPU seconds of the calls, "wall_s": wall seconds,
   "out_bytes": bytes of one call's output tensors,
   "base_rss": peak RSS before the first decode, "peak_rss": peak RSS at the end,
   "leaves": {path: {"n": number of flat values, "sha": their SHA-256}}}

RSS figures are bytes, the kernel's VmHWM of this process (see
bench/measure.go for why not ru_maxrss).

CPU time is time.process_time() (user + system of every thread of this
process), the same quantity the Go decoders measure with getrusage.
"""
import argparse
import hashlib
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
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


def leaf_digest(values):
    """The flat values' count and SHA-256, each value little-endian in its
    dtype's width, bool as one byte, a string as a uint64 length and its
    bytes: the form bench/leaves.go computes from our StructTensor."""
    a = values.numpy()
    h = hashlib.sha256()
    if a.dtype == object:
        for x in a:
            h.update(len(x).to_bytes(8, "little"))
            h.update(x)
    elif a.dtype == np.bool_:
        h.update(a.astype(np.uint8).tobytes())
    else:
        h.update(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())
    return {"n": int(a.shape[0]), "sha": h.hexdigest()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--descriptors", required=True)
    ap.add_argument("--message", required=True, action="append",
                    help="message type; repeat --message, --paths and --file for several jobs")
    ap.add_argument("--paths", required=True, action="append", help="comma-separated leaf paths")
    ap.add_argument("--file", required=True, action="append", help="uncompressed TFRecord file")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-iters", type=int, default=2)
    ap.add_argument("--no-graph-optimizer", action="store_true",
                    help="run the graphs as traced, without TensorFlow's graph optimizer "
                         "(for checks of the values only: it takes seconds on each "
                         "struct2tensor graph and changes no value)")
    args = ap.parse_args()
    if args.no_graph_optimizer:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    if not len(args.message) == len(args.paths) == len(args.file):
        sys.exit("s2t_decode: give --message, --paths and --file once per job")
    with open(args.descriptors, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    for message, paths, file in zip(args.message, args.paths, args.file):
        result = run_job(fds, message, paths.split(","), file, args.min_time, args.min_iters)
        json.dump(result, sys.stdout)
        print(flush=True)


def run_job(fds, message, path_strs, file, min_time, min_iters):
    """Times struct2tensor on one file and returns the measurement."""
    fds = needed_files(fds, message)
    paths = [s2t.create_path(p) for p in path_strs]
    records = list(tf.data.TFRecordDataset(file).as_numpy_iterator())
    payload = sum(len(r) for r in records)
    batch = tf.constant(records, dtype=tf.string)
    del records

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def decode(protos):
        expr = s2t.create_expression_from_file_descriptor_set(protos, message, fds)
        [prensor] = s2t.calculate_prensors([expr.project(paths)])
        ragged = prensor.get_ragged_tensors()
        # Every path's flat values and row splits, so nothing is pruned.
        return [[ragged[p].flat_values, *ragged[p].nested_row_splits] for p in paths]

    # Trace, and warm up on the whole batch; measure the output's size and
    # digest each path's flat values.
    base_rss = peak_rss()
    out_bytes = 0
    first = decode(batch)
    leaves = {str(p): leaf_digest(tensors[0]) for p, tensors in zip(paths, first)}
    for t in (t for tensors in first for t in tensors):
        a = t.numpy()
        if a.dtype == object:  # strings: the bytes plus one int64 offset each
            out_bytes += sum(len(x) for x in a) + 8 * a.size
        else:
            out_bytes += a.nbytes
    del first

    iters = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while True:
        result = decode(batch)
        # decode() returns eager tensors computed by then; touch one to be sure.
        _ = result[0][0].shape
        del result
        iters += 1
        cpu = time.process_time() - cpu0
        if cpu >= min_time and iters >= min_iters:
            break
    wall = time.perf_counter() - wall0
    return {"records": int(batch.shape[0]), "bytes": payload, "iters": iters,
            "cpu_s": cpu, "wall_s": wall, "out_bytes": out_bytes,
            "base_rss": base_rss, "peak_rss": peak_rss(), "leaves": leaves}


if __name__ == "__main__":
    main()
