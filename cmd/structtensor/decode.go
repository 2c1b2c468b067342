package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// decodeWriters are the output formats of "decode --to" and "dataview
// run --to": each makes a writer that gets the decoded batches one by one.
// Other files add formats from init (parquet, arrow), so adding one
// touches no shared code.
var decodeWriters = map[string]func(io.Writer) batchWriter{
	"json":  func(w io.Writer) batchWriter { return &jsonArrayWriter{w: w} },
	"jsonl": func(w io.Writer) batchWriter { return jsonLinesWriter{w} },
}

func init() {
	register("decode", newDecodeCommand)
}

func newDecodeCommand() *cobra.Command {
	var (
		threads, batch  int
		exampleSpec     string
		exampleSchema   string
		schemaEnv       string
		inferSchema     bool
		inferSample     int
		sequenceExample bool
		schema          *planFlags
		input           *recordInputFlags
		out             *recordOutput
	)
	cmd := &cobra.Command{
		Use:   "decode [FILE|-]",
		Short: "decode serialized protobuf or tf.Example records (TFRecord or delimited) into a StructTensor",
		Long: `decode reads serialized protobuf records, framed as a TFRecord file (optionally
compressed) or as length-delimited messages, and writes them decoded: as
JSON, JSON lines, an Arrow IPC stream or a Parquet file, or only their spec
(--to spec). The schema comes from a FileDescriptorSet (--descriptor-set) or
from .proto files (--proto, -I), the record type from --message, the fields
from --path (default every field). With --example-spec the records are
tf.Example (or, with --sequence-example, tf.SequenceExample) decoded by a
feature spec instead; --schema reads the spec from a tensorflow_metadata
schema.pbtxt (keeping the features of --schema-environment when given),
and --infer-schema infers it from the input's first --infer-sample records
(as TFDV types features and gives them a shape) before decoding them all. Batches of --batch records are written as they are
decoded, so memory holds one batch whatever the input's size.`,
		Example: `  structtensor decode --descriptor-set testdata/proto/testdata.pb \
      --message structtensor.testdata.recipe.Recipe testdata/decode/recipes.tfrecord
  structtensor decode testdata/decode/recipes.tfrecord -o recipes.parquet --to parquet \
      --proto recipe.proto -I testdata/proto --message structtensor.testdata.recipe.Recipe \
      --path title --path ingredients.name
  structtensor decode --example-spec features.json --to jsonl examples.tfrecord.gz
  structtensor decode --schema schema.pbtxt --schema-environment SERVING -o out.parquet --to parquet examples.tfrecord
  structtensor decode --infer-schema --infer-sample 10000 --to spec examples.tfrecord`,
		Args: maxInputs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var name string
			if len(args) == 1 {
				name = args[0]
			}
			stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			specs := 0
			for _, set := range []bool{exampleSpec != "", exampleSchema != "", inferSchema} {
				if set {
					specs++
				}
			}
			if specs > 1 {
				return errors.New("--example-spec, --schema and --infer-schema exclude each other")
			}
			if schemaEnv != "" && exampleSchema == "" {
				return errors.New("--schema-environment needs --schema")
			}
			if cmd.Flags().Changed("infer-sample") && !inferSchema {
				return errors.New("--infer-sample needs --infer-schema")
			}
			if specs == 1 {
				d := &exampleDecode{specPath: exampleSpec, schemaPath: exampleSchema, environment: schemaEnv,
					infer: inferSchema, inferSample: inferSample, sequence: sequenceExample, input: input,
					threads: threads, batch: batch}
				return d.run(name, stdin, stdout, stderr, out)
			}
			if sequenceExample {
				return errors.New("--sequence-example needs --example-spec or --infer-schema")
			}
			return runDecode(name, stdin, stdout, stderr, schema, input, out, threads, batch)
		},
	}
	schema = addPlanFlags(cmd)
	input = addRecordInputFlags(cmd)
	out = addRecordOutputFlags(cmd)
	countFlag(cmd, &threads, "threads", 0, 0, "decode threads (0: all cores)")
	countFlag(cmd, &batch, "batch", 8192, 1, "records per decoded batch")
	cmd.Flags().StringVar(&exampleSpec, "example-spec", "", "decode tf.Example records by the feature spec in `FILE` (JSON: decode.ParseExampleSpec), one field per feature, instead of by descriptor")
	cmd.Flags().BoolVar(&sequenceExample, "sequence-example", false, "with --example-spec or --infer-schema: the records are tf.SequenceExample")
	cmd.Flags().StringVar(&exampleSchema, "schema", "", "decode tf.Example records by the tensorflow_metadata Schema in `FILE` (schema.pbtxt, as TFDV and TFX write it: decode.ExampleSpecFromSchema); SequenceExample when it has a STRUCT feature")
	cmd.Flags().StringVar(&schemaEnv, "schema-environment", "", "with --schema: keep the features of environment `NAME` (SERVING, TRAINING...), by the schema's default_environment, in_environment and not_in_environment; default every feature")
	cmd.Flags().BoolVar(&inferSchema, "infer-schema", false, "decode tf.Example records (tf.SequenceExample with --sequence-example) by a feature spec inferred from the first --infer-sample records, as TFDV infers a schema: a feature with the same number of values in every sampled record is fixed_len, any other var_len")
	countFlag(cmd, &inferSample, "infer-sample", 1000, 1, "with --infer-schema: the number of records the spec is inferred from (read before anything is written)")
	cmd.MarkFlagFilename("example-spec", "json")
	return cmd
}

func runDecode(name string, stdin io.Reader, stdout, stderr io.Writer, schema *planFlags, input *recordInputFlags, out *recordOutput, threads, batch int) error {
	if schema.message == "" {
		return errors.New("--message is required (or --example-spec)")
	}
	plan, err := schema.compile()
	if err != nil {
		return err
	}
	if out.isSpec() {
		return out.writeSpec(stdout, plan.Spec())
	}
	if err := out.check(); err != nil {
		return err
	}
	opts := decode.StreamOptions{BatchSize: batch, Decode: decode.DecodeOptions{Threads: threads}, MaxRecordSize: *input.maxRecordSize}
	switch input.framing {
	case "tfrecord":
		opts.Framing = decode.TFRecord
	case "delimited":
		opts.Framing = decode.Delimited
	default:
		return fmt.Errorf("unknown --input-format %q (want tfrecord or delimited)", input.framing)
	}
	if opts.Compression, err = tfrecord.ParseCompression(input.compression); err != nil {
		return err
	}

	sink, err := out.open(stdout)
	if err != nil {
		return err
	}
	defer sink.abort()
	in, size, err := openRecordInput(name, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	counter := &countingReader{r: in}
	progress := newProgress(stderr, size)
	defer progress.done()
	stream := plan.NewStream(counter, opts)
	for {
		st, err := stream.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := sink.write(st); err != nil {
			return err
		}
		progress.update(stream.Records(), counter.n)
	}
	return sink.commit(func() (*structtensor.StructTensor, error) { return plan.Decode(nil) })
}

func writerNames() []string {
	names := make([]string, 0, len(decodeWriters))
	for n := range decodeWriters {
		names = append(names, n)
	}
	// Stable order for help text.
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && names[j] < names[j-1]; j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
	return names
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// progress draws a one-line progress bar on a terminal and nothing when
// stderr is piped or redirected.
type progress struct {
	w     io.Writer
	size  int64
	shown bool
}

func newProgress(w io.Writer, size int64) *progress {
	p := &progress{w: w, size: size}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return p
		}
	}
	p.w = nil
	return p
}

// update shows the records and bytes read so far; records < 0 when only
// bytes are known (a format read whole).
func (p *progress) update(records, bytes int64) {
	if p.w == nil {
		return
	}
	p.shown = true
	if p.size > 0 {
		const width = 30
		frac := float64(bytes) / float64(p.size)
		if frac > 1 {
			frac = 1
		}
		n := int(frac * width)
		if records < 0 {
			fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %.1f MB", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, float64(bytes)/1e6)
			return
		}
		fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %d records", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, records)
		return
	}
	fmt.Fprintf(p.w, "\r%d records, %.1f MB", records, float64(bytes)/1e6)
}

func (p *progress) done() {
	if p.w != nil && p.shown {
		fmt.Fprintln(p.w)
	}
}
