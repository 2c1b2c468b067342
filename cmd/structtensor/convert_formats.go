package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// The columnar formats of "convert": arrow (an Arrow IPC stream, what
// pyarrow.ipc.open_stream reads) and parquet. Both hold a table, so the
// value written must be a StructTensor of rank >= 1 (one column per field)
// or any other value of rank >= 1, written as a table of one column named
// "value".
func init() {
	registerFormat("arrow",
		func(r io.Reader) (structtensor.Value, error) { return starrow.ReadIPC(r) },
		func(w io.Writer, v structtensor.Value) error {
			s, err := asTable(v)
			if err != nil {
				return err
			}
			return starrow.WriteIPC(w, s)
		})
	// An Arrow IPC stream converts record batch by record batch (memory
	// holds one of the producer's batches).
	formats["arrow"].batches = func(r io.Reader, _ structtensor.Spec) (func(int) (structtensor.Value, error), error) {
		ir, err := starrow.NewIPCReader(r, starrow.FromArrowOptions{})
		if err != nil {
			return nil, err
		}
		return func(int) (structtensor.Value, error) {
			s, err := ir.Next()
			if err != nil {
				ir.Release()
				return nil, err
			}
			return s, nil
		}, nil
	}
	registerFormat("parquet",
		func(r io.Reader) (structtensor.Value, error) {
			// Parquet's footer is at the end: the reader needs random access.
			b, err := io.ReadAll(r)
			if err != nil {
				return nil, err
			}
			return stparquet.Read(bytes.NewReader(b), stparquet.ReadOptions{})
		},
		func(w io.Writer, v structtensor.Value) error {
			s, err := asTable(v)
			if err != nil {
				return err
			}
			return stparquet.Write(w, s)
		})
	// Parquet converts row group by row group (a file's footer fixes
	// every row group's spec and says where each is).
	formats["parquet"].batches = parquetBatches
	formats["parquet"].schemaSpec = true
	formats["parquet"].finalErrors = true
	formats["parquet"].needsFile = true
	formats["arrow"].schemaSpec = true
}

// asTable returns v as a StructTensor of rank >= 1.
func asTable(v structtensor.Value) (*structtensor.StructTensor, error) {
	if s, ok := v.(*structtensor.StructTensor); ok && s.Rank() >= 1 {
		return s, nil
	}
	if v.Rank() == 0 {
		return nil, fmt.Errorf("a table format needs a value of rank >= 1 (records), got %v", v.Spec())
	}
	return structtensor.NewStructFromFieldValues(1, structtensor.Field{Name: "value", Value: v})
}
