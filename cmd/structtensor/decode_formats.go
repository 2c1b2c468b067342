package main

import (
	"io"

	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// "decode --to arrow" writes an Arrow IPC stream of one record batch per
// decoded batch, "--to parquet" a nested Parquet file of one row group per
// decoded batch: the decoded columns are exported without copying.
func init() {
	decodeWriters["arrow"] = func(w io.Writer) batchWriter { return ipcBatchWriter{starrow.NewIPCWriter(w)} }
	decodeWriters["parquet"] = func(w io.Writer) batchWriter { return parquetBatchWriter{stparquet.NewWriter(w)} }
}

type ipcBatchWriter struct{ w *starrow.IPCWriter }

func (b ipcBatchWriter) write(s *structtensor.StructTensor) error { return b.w.Write(s) }
func (b ipcBatchWriter) close() error                             { return b.w.Close() }

type parquetBatchWriter struct{ w *stparquet.Writer }

func (b parquetBatchWriter) write(s *structtensor.StructTensor) error { return b.w.Write(s) }
func (b parquetBatchWriter) close() error                             { return b.w.Close() }
