package main

import (
	"io"

	starrow "github.com/structtensor/structtensor-go/arrow"
	"github.com/structtensor/structtensor-go/parquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// "decode --to arrow" writes an Arrow IPC stream, "--to parquet" a nested
// Parquet file: the decoded columns are exported without copying.
func init() {
	decodeWriters["arrow"] = func(w io.Writer, s *structtensor.StructTensor) error { return starrow.WriteIPC(w, s) }
	decodeWriters["parquet"] = func(w io.Writer, s *structtensor.StructTensor) error { return parquet.Write(w, s) }
}
