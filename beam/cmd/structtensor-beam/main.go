// Command structtensor-beam decodes and converts record files on Apache
// Beam: on Prism in this process by default, or on any runner Beam's Go
// SDK knows (--runner, --endpoint, --worker_binary and Beam's other flags
// are passed through).
//
//	structtensor-beam decode --input GLOB --output PREFIX --descriptor_set FILE --message NAME [--format parquet|arrow]
//	structtensor-beam convert --input GLOB --output PREFIX [--input_format delimited]
//	structtensor-beam convert --input GLOB --output PREFIX --input_format parquet [--format parquet|arrow] [--paths P,...]
//	structtensor-beam stats --input GLOB --output PREFIX --descriptor_set FILE --message NAME [--paths P,...]
//
// decode writes the decoded rows as Parquet or Arrow IPC shards; convert
// rewrites the records (TFRecord, compressed or not, or varint-delimited)
// as uncompressed TFRecord shards, or the rows of Parquet files (read row
// group by row group, the row groups in parallel) as Parquet or Arrow IPC
// shards; stats writes the statistics of the decoded records (package
// stats: per field path, counts, list lengths, numbers' moments and
// quantiles, strings' distinct counts and most frequent values) as
// PREFIX.json and as tensorflow_metadata's DatasetFeatureStatisticsList in
// PREFIX.pb and PREFIX.pbtxt, the files TFDV reads. Record inputs are read
// in --read_parts parts (ReadParts; default the STRUCTTENSOR_BEAM_PROCESSES
// worker count, else 1), flattened before the one sink or combine. The binary is also the pipeline's
// worker: built with cgo (make worker), it is what --worker_binary names.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	stbeam "github.com/structtensor/structtensor-go/beam"
)

var (
	input         = flag.String("input", "", "input files (a glob)")
	output        = flag.String("output", "", "output prefix: files PREFIX-SSSSS-of-NNNNN.EXT (stats: PREFIX.json, PREFIX.pb, PREFIX.pbtxt)")
	inputFormat   = flag.String("input_format", "tfrecord", "input framing: tfrecord or delimited; or parquet (convert only)")
	compression   = flag.String("compression", "auto", "input compression: auto, none, gzip or zlib")
	whole         = flag.Bool("whole", false, "read every file from its start, never split (for records that hold TFRecord frames)")
	descriptorSet = flag.String("descriptor_set", "", "decode, stats: a serialized FileDescriptorSet with the message (read here; its bytes travel with the pipeline)")
	message       = flag.String("message", "", "decode, stats: the records' message, a full name")
	paths         = flag.String("paths", "", "decode, stats, convert of parquet: comma-separated field paths to keep (default all)")
	format        = flag.String("format", "parquet", "decode, convert of parquet: output format, parquet or arrow")
	shards        = flag.Int("shards", 16, "number of output shards (at most)")
	readParts     = flag.Int("read_parts", 0, "read the input in this many parts, one stage each, which Prism runs side by side (0: the worker count of STRUCTTENSOR_BEAM_PROCESSES, else 1)")
)

const usage = `usage: structtensor-beam decode|convert|stats --input GLOB --output PREFIX [flags] [Beam flags]`

func main() {
	// A runner starts this binary as its worker (--worker_binary, or the
	// command of a PROCESS environment): then it serves as one and exits.
	stbeam.WorkerMain()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "structtensor-beam:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	if err := flag.CommandLine.Parse(args); err != nil {
		return err
	}
	beamsdk.Init()
	if cmd == "" {
		return errors.New(usage)
	}
	if err := checkWorker(); err != nil {
		return err
	}
	if *input == "" || *output == "" {
		return errors.New("--input and --output are required\n" + usage)
	}
	p, s := beamsdk.NewPipelineWithRoot()
	if *inputFormat == "parquet" {
		convert := convertParquet
		if cmd == "stats" {
			convert = statsOfParquet
		}
		if err := convert(cmd, s); err != nil {
			return err
		}
		return runPipeline(p)
	}
	parts, err := stbeam.ReadParts(s, *input, partCount(), stbeam.ReadOptions{Format: stbeam.Format(*inputFormat), Compression: *compression, Whole: *whole})
	if err != nil {
		return err
	}
	// The parts join before the one sink (or the one statistics combine),
	// so its temporary names and finalisation stay one: no partial or
	// duplicate files.
	batches := beamsdk.Flatten(s, parts...)
	switch cmd {
	case "decode", "stats":
		rows, err := decodeRows(cmd, s, batches)
		if err != nil {
			return err
		}
		if cmd == "stats" {
			if err := writeStats(s, rows); err != nil {
				return err
			}
			break
		}
		if _, err := stbeam.WriteRows(s, rows, *output, stbeam.SinkFormat(*format), stbeam.WriteOptions{Shards: *shards}); err != nil {
			return err
		}
	case "convert":
		stbeam.WriteRecords(s, batches, *output, stbeam.WriteOptions{Shards: *shards})
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	return runPipeline(p)
}

// runPipeline runs p in a temporary directory of its own
// (stbeam.WithPrivateTempDir): nothing of a run is kept there.
func runPipeline(p *beamsdk.Pipeline) error {
	return stbeam.WithPrivateTempDir(func() error { return beamx.Run(context.Background(), p) })
}

// partCount is --read_parts, or when it is 0 the number of worker
// processes STRUCTTENSOR_BEAM_PROCESSES asks for (else 1): on Prism one
// Read runs on one worker, and n parts are n stages run side by side.
func partCount() int {
	if *readParts > 0 {
		return *readParts
	}
	if n, err := strconv.Atoi(os.Getenv(stbeam.ProcessesEnv)); err == nil && n > 0 {
		return n
	}
	return 1
}

// decodeRows decodes the batches by --descriptor_set and --message.
func decodeRows(cmd string, s beamsdk.Scope, batches beamsdk.PCollection) (beamsdk.PCollection, error) {
	if *descriptorSet == "" || *message == "" {
		return beamsdk.PCollection{}, fmt.Errorf("%s needs --descriptor_set and --message", cmd)
	}
	fds, err := os.ReadFile(*descriptorSet)
	if err != nil {
		return beamsdk.PCollection{}, err
	}
	var ps []string
	if *paths != "" {
		ps = strings.Split(*paths, ",")
	}
	return stbeam.Decode(s, batches, stbeam.DecodeOptions{DescriptorSet: fds, Message: *message, Paths: ps})
}

// checkWorker refuses a run whose workers Beam would build itself: its
// build uses CGO_ENABLED=0, which cannot link the decoding engine.
func checkWorker() error {
	local := (*runners.Runner == "" || *runners.Runner == "prism" || *runners.Runner == "direct") && *jobopts.Endpoint == ""
	loopback := strings.EqualFold(*jobopts.EnvironmentType, "loopback")
	if local || loopback || *jobopts.WorkerBinary != "" {
		return nil
	}
	return fmt.Errorf("runner %q (endpoint %q) runs workers apart from this process, and needs --worker_binary: "+
		"decoding runs the C++ engine through cgo, and Beam's own worker build uses CGO_ENABLED=0, which cannot link it. "+
		"Build the worker with `make worker` (bin/structtensor-beam-worker, linux/amd64, libstdc++ linked statically) "+
		"and pass --worker_binary=bin/structtensor-beam-worker", *runners.Runner, *jobopts.Endpoint)
}
