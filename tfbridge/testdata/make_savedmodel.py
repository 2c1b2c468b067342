"""Writes a small SavedModel with Python TensorFlow for tfbridge's tests.

Usage: python make_savedmodel.py DIR

Signatures (both take x: int64[None], s: string[None]):
  serving_default, double -> {"doubled": x * 2, "joined": s + "-" + s}
A variable (the factor 2) is saved too, so loading restores a checkpoint.
"""
import sys

import tensorflow as tf


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.factor = tf.Variable(2, dtype=tf.int64, name="factor")

    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.int64, name="x"),
        tf.TensorSpec([None], tf.string, name="s"),
    ])
    def run(self, x, s):
        return {
            "doubled": x * self.factor,
            "joined": tf.strings.join([s, s], separator="-"),
        }


def main():
    m = Model()
    tf.saved_model.save(m, sys.argv[1], signatures={"serving_default": m.run, "double": m.run})


if __name__ == "__main__":
    main()
