"""Writes and reads TFRecord files with TensorFlow, for tfrecord's tests.

  write DIR   reads a JSON list of hex records on stdin and writes them with
              tf.io.TFRecordWriter to DIR/tf-none.tfrecord, DIR/tf-gzip.tfrecord
              and DIR/tf-zlib.tfrecord.
  read FILE:COMPRESSION...
              reads each FILE with tf.data.TFRecordDataset (COMPRESSION is
              none, gzip or zlib) and prints a JSON object mapping FILE to
              its list of hex records, or to {"error": message} when
              TensorFlow fails to read it.
"""
import json
import sys

import tensorflow as tf

TYPES = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}


def main():
    cmd = sys.argv[1]
    if cmd == "write":
        records = [bytes.fromhex(h) for h in json.load(sys.stdin)]
        for name, ctype in TYPES.items():
            opts = tf.io.TFRecordOptions(compression_type=ctype)
            with tf.io.TFRecordWriter(f"{sys.argv[2]}/tf-{name}.tfrecord", opts) as w:
                for r in records:
                    w.write(r)
    elif cmd == "read":
        result = {}
        for arg in sys.argv[2:]:
            path, _, comp = arg.rpartition(":")
            try:
                ds = tf.data.TFRecordDataset(path, compression_type=TYPES[comp])
                result[path] = [r.numpy().hex() for r in ds]
            except tf.errors.OpError as e:
                result[path] = {"error": e.message}
        json.dump(result, sys.stdout)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
