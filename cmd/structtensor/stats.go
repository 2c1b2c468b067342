package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/structtensor/structtensor-go/stats"
)

func init() { register("stats", newStatsCommand) }

// statsFormats are the forms stats writes.
var statsFormats = []string{"json", "pb", "pbtxt"}

func newStatsCommand() *cobra.Command {
	var from, to, outPath, specPath, name string
	cmd := &cobra.Command{
		Use:   "stats [FILE|-]",
		Short: "statistics of a StructTensor per field path (JSON, or TFDV's DatasetFeatureStatisticsList)",
		Long: `stats reads one value as convert does (a JSON document, JSON lines, an Arrow
IPC stream or a Parquet file; its records are the rows) and writes, per field
path, the statistics of package stats: records with values, empty and missing,
list-length histograms, exact min/max/mean/standard deviation and approximate
quantiles of numbers, lengths, distinct counts and most frequent values of
strings. --to json writes the JSON layout documented in package stats; pb and
pbtxt write tensorflow_metadata's DatasetFeatureStatisticsList (binary and
text), the statistics TFDV computes. The input is read whole; structtensor-beam
stats computes the same statistics over files larger than one machine.`,
		Example: `  structtensor decode --descriptor-set schema.pb --message my.Record records.tfrecord --to arrow |
      structtensor stats --from arrow --to pbtxt -o stats.pbtxt
  structtensor stats --from jsonl events.jsonl`,
		Args: maxInputs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStats(cmd, args, from, to, outPath, specPath, name)
		},
	}
	choiceFlag(cmd, &from, "from", "", "json", "input format", formatList(canRead))
	choiceFlag(cmd, &to, "to", "", "json", "output format", statsFormats)
	outputFlag(cmd, &outPath, "write to `FILE` (a regular file is replaced only once complete) instead of standard output")
	cmd.Flags().StringVar(&specPath, "spec", "", "read the input with the spec in `FILE` (as written by convert --to spec) instead of inferring it")
	cmd.MarkFlagFilename("spec", "json")
	cmd.Flags().StringVar(&name, "dataset-name", "", "the dataset's `NAME` in the DatasetFeatureStatisticsList")
	return cmd
}

func runStats(cmd *cobra.Command, args []string, from, to, outPath, specPath, name string) error {
	in, spec, err := inputFormat(from, specPath)
	if err != nil {
		return err
	}
	var write func(io.Writer, *stats.Summary) error
	popts := stats.ProtoOptions{DatasetName: name}
	switch to {
	case "json":
		write = func(w io.Writer, s *stats.Summary) error { return s.WriteJSON(w) }
	case "pb", "pbtxt":
		write = func(w io.Writer, s *stats.Summary) error {
			marshal := s.MarshalStatistics
			if to == "pbtxt" {
				marshal = s.MarshalStatisticsText
			}
			b, err := marshal(popts)
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
	default:
		return fmt.Errorf("cannot write statistics as %q (one of json, pb, pbtxt)", to)
	}
	inputName, r := "stdin", cmd.InOrStdin()
	if len(args) == 1 && args[0] != "-" {
		inputName = args[0]
		f, err := os.Open(inputName)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	v, err := readInput(r, in, spec, cmd.ErrOrStderr())
	if err != nil {
		return fmt.Errorf("%s: %w", inputName, err)
	}
	table, err := asTable(v)
	if err != nil {
		return fmt.Errorf("%s: %w", inputName, err)
	}
	acc, err := stats.New()
	if err != nil {
		return err
	}
	if err := acc.Add(table); err != nil {
		return fmt.Errorf("%s: %w", inputName, err)
	}
	sum := acc.Summary()
	return writeOutput(outPath, cmd.OutOrStdout(), func(w io.Writer) error { return write(w, sum) })
}
