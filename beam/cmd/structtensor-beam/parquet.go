package main

import (
	"errors"
	"strings"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"

	stbeam "github.com/structtensor/structtensor-go/beam"
)

// convertParquet builds "convert --input_format parquet": the rows of the
// Parquet files, read row group by row group (stbeam.ReadParquet), written
// as Parquet or Arrow IPC shards. Parquet holds rows, not serialized
// records, so only convert takes it.
func convertParquet(cmd string, s beamsdk.Scope) error {
	if cmd != "convert" {
		return errors.New("--input_format parquet is for convert: Parquet files hold rows, not records to decode")
	}
	var columns []string
	if *paths != "" {
		columns = strings.Split(*paths, ",")
	}
	rows := stbeam.ReadParquet(s, *input, stbeam.ParquetOptions{Columns: columns})
	_, err := stbeam.WriteRows(s, rows, *output, stbeam.SinkFormat(*format), stbeam.WriteOptions{Shards: *shards})
	return err
}
