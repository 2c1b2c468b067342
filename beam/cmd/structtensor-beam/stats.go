package main

import (
	"flag"
	"strings"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"

	stbeam "github.com/structtensor/structtensor-go/beam"
)

var datasetName = flag.String("dataset_name", "", "stats: the dataset's name in the DatasetFeatureStatisticsList")

// writeStats builds the rest of "stats": the statistics of the rows,
// gathered in --shards partial statistics and merged, written as
// PREFIX.json, PREFIX.pb and PREFIX.pbtxt.
func writeStats(s beamsdk.Scope, rows beamsdk.PCollection) error {
	st, err := stbeam.Stats(s, rows, stbeam.StatsOptions{Shards: *shards})
	if err != nil {
		return err
	}
	stbeam.WriteStats(s, st, *output, stbeam.WriteStatsOptions{DatasetName: *datasetName})
	return nil
}

// statsOfParquet builds "stats --input_format parquet": the statistics of
// the rows of Parquet files (--paths selects columns).
func statsOfParquet(_ string, s beamsdk.Scope) error {
	var columns []string
	if *paths != "" {
		columns = strings.Split(*paths, ",")
	}
	return writeStats(s, stbeam.ReadParquet(s, *input, stbeam.ParquetOptions{Columns: columns}))
}
