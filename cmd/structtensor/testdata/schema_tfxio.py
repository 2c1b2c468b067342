"""TFXIO by a schema's tensor_representation_group, against the DataView
`structtensor dataview export --schema` makes of the same schema.

Run by cmd/structtensor's TestDataViewExportSchemaTFXIO in .venv-tfx:
    schema_tfxio.py write DIR
writes DIR/schema.pbtxt (a tensorflow_metadata Schema in text form, as
TFDV and TFX write it) whose default tensor_representation_group holds a
dense_tensor with a default, a varlen_sparse_tensor, ragged_tensors with
row_length and uniform_row_length partitions, representations named
after their feature and not, beside features that no representation
reads; and DIR/records.tfrecord, random tf.Examples valid for it.
    schema_tfxio.py check OPS_LIB DIR DATAVIEW
reads the records with tfx_bsl's TFExampleRecord(schema=...) (one
TensorFlowDataset batch, what TFX trains on) and through the DataView
(tf.saved_model.load, decode_fun), and compares them tensor by tensor
(python/tests/tfio_reference.py); prints one JSON line.
"""
import json
import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow_metadata.proto.v0 import schema_pb2  # noqa: E402

N = 40


def schema():
    s = schema_pb2.Schema()

    def feature(name, typ, shape=None):
        f = s.feature.add(name=name, type=typ)
        if shape is not None:
            f.shape.dim.extend([schema_pb2.FixedShape.Dim(size=d) for d in shape])
            f.presence.min_fraction = 1.0
        return f
    feature("age", schema_pb2.INT)
    feature("emb", schema_pb2.FLOAT)
    feature("lang", schema_pb2.BYTES)
    feature("ids", schema_pb2.INT)
    feature("tokens", schema_pb2.BYTES)
    feature("token_lengths", schema_pb2.INT)
    feature("grid", schema_pb2.FLOAT)
    feature("cells", schema_pb2.INT)
    feature("cell_rows", schema_pb2.INT)
    feature("price", schema_pb2.FLOAT)  # no representation: inferred, VarLen
    feature("country", schema_pb2.BYTES, shape=[1])  # inferred, dense
    reps = s.tensor_representation_group[""].tensor_representation
    TR = schema_pb2.TensorRepresentation
    reps["age"].dense_tensor.column_name = "age"
    reps["age"].dense_tensor.default_value.int_value = -1
    reps["embedding"].dense_tensor.column_name = "emb"
    reps["embedding"].dense_tensor.shape.dim.add(size=2)
    reps["embedding"].dense_tensor.default_value.float_value = 0.5
    reps["language"].dense_tensor.column_name = "lang"
    reps["language"].dense_tensor.default_value.bytes_value = b"en"
    reps["ids"].varlen_sparse_tensor.column_name = "ids"
    q = reps["query"].ragged_tensor
    q.feature_path.step.append("tokens")
    q.partition.add(row_length="token_lengths")
    q.row_partition_dtype = TR.RowPartitionDType.INT64
    g = reps["grid2"].ragged_tensor
    g.feature_path.step.append("grid")
    g.partition.add(uniform_row_length=2)
    c = reps["cells"].ragged_tensor
    c.feature_path.step.append("cells")
    c.partition.add(row_length="cell_rows")
    c.partition.add(uniform_row_length=3)
    return s


def example(r):
    def ints(v):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=v))

    def floats(v):
        return tf.train.Feature(float_list=tf.train.FloatList(value=v))

    def strs(v):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
    f = {"country": strs([r.choice([b"DE", b"FR", b"US"])])}
    if r.random() < 0.7:
        f["age"] = ints([r.randrange(0, 100)])
    if r.random() < 0.7:
        f["emb"] = floats([r.uniform(-1, 1) for _ in range(2)])
    if r.random() < 0.5:
        f["lang"] = strs([r.choice([b"de", b"fr"])])
    if r.random() < 0.8:
        f["ids"] = ints([r.randrange(-5, 1 << 40) for _ in range(r.randrange(0, 4))])
    lengths = [r.randrange(0, 3) for _ in range(r.randrange(0, 4))]
    f["token_lengths"] = ints(lengths)
    f["tokens"] = strs([bytes(r.choice("abc") * r.randrange(0, 30), "ascii") for _ in range(sum(lengths))])
    f["grid"] = floats([r.uniform(-9, 9) for _ in range(2 * r.randrange(0, 4))])
    rows = [r.randrange(0, 3) for _ in range(r.randrange(0, 3))]
    f["cell_rows"] = ints(rows)
    f["cells"] = ints([r.randrange(0, 9) for _ in range(3 * sum(rows))])
    if r.random() < 0.5:
        f["price"] = floats([r.uniform(0, 100)])
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def write(d):
    with open(os.path.join(d, "schema.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(schema()))
    r = random.Random(12)
    with tf.io.TFRecordWriter(os.path.join(d, "records.tfrecord")) as w:
        for _ in range(N):
            w.write(example(r))


def check(ops_lib, d, dataview):
    tf.load_op_library(ops_lib)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(ops_lib))), "python", "tests"))
    import tfio_reference
    from tfx_bsl.tfxio import dataset_options, tf_example_record

    s = text_format.Parse(open(os.path.join(d, "schema.pbtxt")).read(), schema_pb2.Schema())
    path = os.path.join(d, "records.tfrecord")
    tfxio = tf_example_record.TFExampleRecord(path, ["structtensor", "schema"], schema=s)
    batch = next(iter(tfxio.TensorFlowDataset(dataset_options.TensorFlowDatasetOptions(batch_size=N, shuffle=False, num_epochs=1))))
    records = [r.numpy() for r in tf.data.TFRecordDataset(path)]
    out = tf.saved_model.load(dataview).decode_fun(tf.constant(records, dtype=tf.string))
    n = tfio_reference.check_against_tf("TFXIO", out, batch)
    print(json.dumps({"tensors": sorted(batch), "compared": n, "records": len(records)}))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        check(*sys.argv[2:5])
