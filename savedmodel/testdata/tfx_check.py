"""TFX (tfx-bsl 1.21.0) loads the DataViews Go exported and gets what Go got.

Run by savedmodel's TestTFX in the .venv-tfx virtualenv:
    tfx_check.py OPS_LIB FIXTURE_DIR CASE...
For each case (written by savedmodel/internal/dvcases) it loads the
DataView with tfx_bsl's load_decoder, checks the decoder's output specs
against the case's leaves (a RaggedTensor with int64 row splits per
repeated leaf, a dense tensor otherwise, bools as uint8), decodes the
case's records and compares every leaf's values and row partitions with
what Go's decoder produced. It then writes the records to a TFRecord file
and reads it through TFRecordToTensorTFXIO(saved_decoder_path=DataView):
its TensorRepresentations against the DataView's assets, its
TensorFlowDataset against Go's decoder, and (all cases in one pipeline on
Beam's DirectRunner) the RecordBatches of BeamSource() against the Arrow
Go's DataView wrote for the same records. For a DataView of tf.Example or
SequenceExample records, load_decoder's and TensorFlowDataset's outputs
are also compared with tf.io.parse_example (parse_sequence_example) of
the same records by the DataView's feature spec. Prints one JSON line per
case ("tf_io": how many outputs were compared with tf.io's).
"""
import base64
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# The tf.io reference the Python tests share, in python/tests beside the
# module root's build/ (argv[1] is build/libstructtensor_ops.so).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[1]))), "python", "tests"))
import tfio_reference  # noqa: E402

NP_DTYPES = {"bool": np.uint8, "int32": np.int32, "int64": np.int64, "uint32": np.uint32,
             "uint64": np.uint64, "float32": np.float32, "float64": np.float64}


def load_case(fixture, name):
    d = os.path.join(fixture, name)
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    case["records"] = [base64.b64decode(r) for r in case["records"]]
    case["dir"] = os.path.join(d, "dataview")
    case["example"] = case["message"] in ("tensorflow.Example", "tensorflow.SequenceExample")
    return case


def check_leaf(path, got, want):
    # Innermost uniform partitions are dimensions of decode_fun's values.
    want_splits = want["nested_row_splits"][:len(want["nested_row_splits"]) - want["inner_uniform"]]
    if want_splits:
        assert isinstance(got, tf.RaggedTensor), f"{path}: {type(got)}, want a RaggedTensor"
        assert got.row_splits.dtype == tf.int64, f"{path}: row splits {got.row_splits.dtype}"
        splits = [s.numpy() for s in got.nested_row_splits]
        assert len(splits) == len(want_splits), f"{path}: ragged rank {len(splits)}"
        for i, (g, w) in enumerate(zip(splits, want_splits)):
            np.testing.assert_array_equal(g, np.array(w, dtype=np.int64), err_msg=f"{path} row_splits {i}")
        flat = got.flat_values.numpy()
    else:
        assert isinstance(got, tf.Tensor), f"{path}: {type(got)}, want a dense Tensor"
        flat = got.numpy()
    if want["dtype"] == "string":
        assert list(flat.reshape(-1)) == [base64.b64decode(v) for v in want["values"]], f"{path} values"
    else:
        w = np.array(want["values"], dtype=NP_DTYPES[want["dtype"]])
        assert flat.dtype == w.dtype, f"{path}: dtype {flat.dtype}, want {w.dtype}"
        np.testing.assert_array_equal(flat.reshape(-1), w.reshape(-1), err_msg=f"{path} values")


def parse_with_tf(case):
    """tf.io's parse of the case's records by the DataView's feature spec."""
    with open(os.path.join(case["dir"], "assets", "dataview.json")) as f:
        meta = json.load(f)
    return tfio_reference.parse(meta["example_spec"], meta["message"] == "tensorflow.SequenceExample", case["records"])


def check_tensor_representations(name, case, tfxio):
    """TFXIO's TensorRepresentations equal the DataView's assets, the binary
    and the text TensorRepresentationGroup, each parsed (serializations
    differ in map order between protobuf implementations)."""
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    group = schema_pb2.TensorRepresentationGroup()
    for k, v in tfxio.TensorRepresentations().items():
        group.tensor_representation[k].CopyFrom(v)
    assets = os.path.join(case["dir"], "assets")
    binary = schema_pb2.TensorRepresentationGroup()
    with open(os.path.join(assets, "tensor_representations.pb"), "rb") as f:
        binary.ParseFromString(f.read())
    with open(os.path.join(assets, "tensor_representations.pbtxt")) as f:
        text = text_format.Parse(f.read(), schema_pb2.TensorRepresentationGroup())
    assert len(group.tensor_representation) == len(case["leaves"]), name
    assert binary == group, f"{name}: TFXIO's TensorRepresentations {group} differ from the binary asset {binary}"
    assert text == group, f"{name}: TFXIO's TensorRepresentations {group} differ from the text asset {text}"


def tfxio_for(name, case):
    import tempfile
    from tfx_bsl.tfxio import record_to_tensor_tfxio

    path = os.path.join(tempfile.mkdtemp(prefix="tfxio-"), "records.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for r in case["records"]:
            w.write(r)
    return record_to_tensor_tfxio.TFRecordToTensorTFXIO(path, case["dir"], ["structtensor", name])


def check_dataset(name, case, tfxio):
    """TensorFlowDataset: one batch of all records, equal to Go's decoder."""
    from tfx_bsl.tfxio import dataset_options

    n = len(case["records"])
    ds = tfxio.TensorFlowDataset(dataset_options.TensorFlowDatasetOptions(batch_size=n, shuffle=False, num_epochs=1))
    batch = next(iter(ds))
    assert set(batch) == set(case["leaves"])
    for path, want in case["leaves"].items():
        check_leaf(f"{name} TensorFlowDataset {path}", batch[path], want)
    if case["example"]:
        case["tf_io"] += tfio_reference.check_against_tf(f"{name} TensorFlowDataset", batch, parse_with_tf(case))


def go_arrow(case_dir):
    import pyarrow as pa
    with pa.ipc.open_stream(os.path.join(case_dir, "arrow.ipc")) as r:
        return r.read_all()


def check_beam_sources(cases):
    """BeamSource of every case in one pipeline on the DirectRunner: the
    RecordBatches equal, column names, types and values, the Arrow that
    Go's DataView wrote for the same records (DataView.ToArrow)."""
    import apache_beam as beam
    import pyarrow as pa
    from apache_beam.testing import util as beam_util

    def checker(name, want):
        def check(batches):
            got = pa.Table.from_batches(batches).combine_chunks()
            assert got.schema.equals(want.schema), f"{name}: TFXIO schema\n{got.schema}\nGo's\n{want.schema}"
            assert got.num_rows == want.num_rows, (name, got.num_rows, want.num_rows)
            for col in want.column_names:
                g, w = got.column(col).to_pylist(), want.column(col).to_pylist()
                assert g == w, f"{name} column {col}: TFXIO {g[:3]}..., Go {w[:3]}..."
        return check

    with beam.Pipeline() as p:
        for name, case, tfxio in cases:
            batches = p | f"Read {name}" >> tfxio.BeamSource(batch_size=len(case["records"]))
            beam_util.assert_that(batches, checker(name, go_arrow(os.path.dirname(case["dir"]))), label=f"Check {name}")


def main():
    ops_lib, fixture = sys.argv[1], sys.argv[2]
    tf.load_op_library(ops_lib)
    from tfx_bsl.coders import tf_graph_record_decoder
    tfxios = []
    for name in sys.argv[3:]:
        case = load_case(fixture, name)
        dec = tf_graph_record_decoder.load_decoder(case["dir"])
        specs = dec.output_type_specs()
        assert set(specs) == set(case["leaves"]), f"{name}: outputs {sorted(specs)}, leaves {sorted(case['leaves'])}"
        assert dec.record_index_tensor_name is None
        out = dec.decode_record(tf.constant(case["records"], dtype=tf.string))
        assert set(out) == set(specs)
        for path, want in case["leaves"].items():
            got = out[path]
            assert specs[path].is_compatible_with(got), f"{name} {path}: {got} does not match {specs[path]}"
            check_leaf(f"{name} {path}", got, want)
        case["tf_io"] = 0
        if case["example"]:
            case["tf_io"] += tfio_reference.check_against_tf(f"{name} load_decoder", out, parse_with_tf(case))
        tfxio = tfxio_for(name, case)
        check_tensor_representations(name, case, tfxio)
        check_dataset(name, case, tfxio)
        tfxios.append((name, case, tfxio))
    check_beam_sources(tfxios)
    for name, case, _ in tfxios:
        print(json.dumps({"case": name, "leaves": len(case["leaves"]), "records": len(case["records"]), "tfxio": True,
                          "tf_io": case["tf_io"]}))


if __name__ == "__main__":
    main()
