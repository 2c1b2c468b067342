package savedmodel

import (
	"bytes"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// The assets holding the tensorflow_metadata TensorRepresentationGroup of
// decode_fun's outputs, in the binary and the text protobuf format.
const (
	TensorRepresentationsFile     = "tensor_representations.pb"
	TensorRepresentationsTextFile = "tensor_representations.pbtxt"
)

// Field numbers of tensorflow_metadata/proto/v0/schema.proto and path.proto
// (package tensorflow.metadata.v0) that a TensorRepresentationGroup of
// DataView leaves uses. The project has no Go bindings of those protos;
// the few fields are written with protowire.
const (
	groupTensorRepresentation = 1 // TensorRepresentationGroup.tensor_representation (map<string, TensorRepresentation>)
	mapKey, mapValue          = 1, 2
	repDenseTensor            = 1 // TensorRepresentation.dense_tensor
	repRaggedTensor           = 4 // TensorRepresentation.ragged_tensor
	denseColumnName           = 1 // DenseTensor.column_name
	denseShape                = 2 // DenseTensor.shape (FixedShape)
	fixedShapeDim             = 2 // FixedShape.dim
	dimSize                   = 1 // FixedShape.Dim.size
	raggedFeaturePath         = 1 // RaggedTensor.feature_path (Path)
	raggedRowPartitionDType   = 2 // RaggedTensor.row_partition_dtype
	raggedPartition           = 3 // RaggedTensor.partition
	partitionUniformRowLength = 1 // RaggedTensor.Partition.uniform_row_length
	pathStep                  = 1 // Path.step
	rowPartitionInt64         = 1 // RowPartitionDType.INT64
)

// TensorRepresentations returns the TensorRepresentationGroup of leaves,
// the one TFXIO derives from decode_fun's output signature
// (tensor_to_arrow.TensorsToRecordBatchConverter): for a leaf of ragged
// rank 0 a dense_tensor whose column is the leaf's path and whose shape
// is the leaf's inner dimensions; otherwise a ragged_tensor whose feature
// path is the one step of the leaf's path, with int64 row partitions and
// a uniform_row_length partition per inner dimension. It returns the
// binary form (map entries in key order, fields in number order, as Go's
// and C++'s deterministic serializations write them) and the text form.
func TensorRepresentations(leaves []Leaf) (binary, text []byte) {
	var b []byte
	var t bytes.Buffer
	for _, l := range leaves {
		inner := l.Shape[min(len(l.Shape), l.RaggedRank+1):]
		var rep []byte
		fmt.Fprintf(&t, "tensor_representation {\n  key: %s\n  value {\n", quoteText(l.Path))
		if l.RaggedRank == 0 {
			var dense []byte
			dense = protowire.AppendTag(dense, denseColumnName, protowire.BytesType)
			dense = protowire.AppendString(dense, l.Path)
			fmt.Fprintf(&t, "    dense_tensor {\n      column_name: %s\n", quoteText(l.Path))
			if len(inner) > 0 {
				var shape []byte
				t.WriteString("      shape {\n")
				for _, d := range inner {
					var dim []byte
					dim = protowire.AppendTag(dim, dimSize, protowire.VarintType)
					dim = protowire.AppendVarint(dim, uint64(int64(d)))
					shape = protowire.AppendTag(shape, fixedShapeDim, protowire.BytesType)
					shape = protowire.AppendBytes(shape, dim)
					fmt.Fprintf(&t, "        dim {\n          size: %d\n        }\n", d)
				}
				t.WriteString("      }\n")
				dense = protowire.AppendTag(dense, denseShape, protowire.BytesType)
				dense = protowire.AppendBytes(dense, shape)
			}
			t.WriteString("    }\n")
			rep = protowire.AppendTag(rep, repDenseTensor, protowire.BytesType)
			rep = protowire.AppendBytes(rep, dense)
		} else {
			var path, ragged []byte
			path = protowire.AppendTag(path, pathStep, protowire.BytesType)
			path = protowire.AppendString(path, l.Path)
			ragged = protowire.AppendTag(ragged, raggedFeaturePath, protowire.BytesType)
			ragged = protowire.AppendBytes(ragged, path)
			ragged = protowire.AppendTag(ragged, raggedRowPartitionDType, protowire.VarintType)
			ragged = protowire.AppendVarint(ragged, rowPartitionInt64)
			fmt.Fprintf(&t, "    ragged_tensor {\n      feature_path {\n        step: %s\n      }\n      row_partition_dtype: INT64\n", quoteText(l.Path))
			for _, d := range inner {
				var part []byte
				part = protowire.AppendTag(part, partitionUniformRowLength, protowire.VarintType)
				part = protowire.AppendVarint(part, uint64(int64(d)))
				ragged = protowire.AppendTag(ragged, raggedPartition, protowire.BytesType)
				ragged = protowire.AppendBytes(ragged, part)
				fmt.Fprintf(&t, "      partition {\n        uniform_row_length: %d\n      }\n", d)
			}
			t.WriteString("    }\n")
			rep = protowire.AppendTag(rep, repRaggedTensor, protowire.BytesType)
			rep = protowire.AppendBytes(rep, ragged)
		}
		t.WriteString("  }\n}\n")
		var entry []byte
		entry = protowire.AppendTag(entry, mapKey, protowire.BytesType)
		entry = protowire.AppendString(entry, l.Path)
		entry = protowire.AppendTag(entry, mapValue, protowire.BytesType)
		entry = protowire.AppendBytes(entry, rep)
		b = protowire.AppendTag(b, groupTensorRepresentation, protowire.BytesType)
		b = protowire.AppendBytes(b, entry)
	}
	return b, t.Bytes()
}

// quoteText quotes s as a protobuf text format string: printable ASCII
// as is, '"' and '\' escaped, every other byte in octal (what protobuf's
// C++ and Python text printers write).
func quoteText(s string) string {
	var b []byte
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c >= 0x20 && c < 0x7f:
			b = append(b, c)
		default:
			b = append(b, '\\')
			b = append(b, strconv.FormatInt(int64(c)+0o1000, 8)[1:]...)
		}
	}
	return string(append(b, '"'))
}
