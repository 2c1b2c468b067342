package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

func init() {
	register("dataview", newDataViewCommand)
}

func newDataViewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dataview",
		Short: "export a protobuf decoder as a TensorFlow SavedModel DataView, run records through one, or inspect one",
		Long: `A DataView is a TensorFlow SavedModel whose decode_fun decodes serialized
protobuf records of one message type into a StructTensor (TFX loads it as a
TFXIO decoder). "dataview export" writes one, "dataview run" decodes records
through TensorFlow with one, "dataview inspect" prints what one is after the
loader's checks. These commands load the TensorFlow runtime.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			cmd.Usage()
			return errors.New("dataview needs a subcommand: export, run or inspect")
		},
	}
	cmd.AddCommand(newDataViewExportCommand(), newDataViewRunCommand(), newDataViewInspectCommand())
	return cmd
}

func newDataViewExportCommand() *cobra.Command {
	var (
		schema  *planFlags
		outDir  string
		threads int
		example exampleDecode // --example-spec, --schema, --sequence-example
	)
	cmd := &cobra.Command{
		Use:   "export -o DIR",
		Short: "export the decoder of a protobuf message as a SavedModel DataView",
		Example: `  structtensor dataview export --descriptor-set testdata/proto/testdata.pb \
      --message structtensor.testdata.recipe.Recipe --path title --path ingredients.name -o recipe-dv
  structtensor dataview export --proto recipe.proto -I testdata/proto \
      --message structtensor.testdata.recipe.Recipe -o recipe-dv
  structtensor dataview export --example-spec features.json -o examples-dv
  structtensor dataview export --schema schema.pbtxt -o examples-dv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("dataview export takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if example.specPath != "" || example.schemaPath != "" {
				return runExampleDataViewExport(cmd.OutOrStdout(), schema, &example, outDir, threads)
			}
			if example.sequence {
				return errors.New("--sequence-example needs --example-spec")
			}
			return runDataViewExport(cmd.OutOrStdout(), schema, outDir, threads)
		},
	}
	schema = addPlanFlags(cmd)
	cmd.Flags().StringVar(&example.specPath, "example-spec", "", "export the decoder of tf.Example records by the feature spec in `FILE` (JSON: decode.ParseExampleSpec) instead of a protobuf message: its signature replaces tf.io.parse_example")
	cmd.Flags().StringVar(&example.schemaPath, "schema", "", "export the decoder of tf.Example records by the tensorflow_metadata schema in `FILE` (schema.pbtxt)")
	cmd.Flags().StringVar(&example.environment, "schema-environment", "", "with --schema: keep the features of this `NAME`d environment only")
	cmd.Flags().BoolVar(&example.sequence, "sequence-example", false, "with --example-spec: the records are tf.SequenceExample")
	cmd.MarkFlagFilename("example-spec", "json")
	cmd.MarkFlagFilename("schema", "pbtxt")
	outputFlag(cmd, &outDir, "`DIR`ectory to write the SavedModel to (must not exist or be empty)")
	cmd.MarkFlagDirname("output")
	countFlag(cmd, &threads, "threads", 0, 0, "engine threads per run of the op (0: all cores)")
	return cmd
}

func runDataViewExport(stdout io.Writer, schema *planFlags, out string, threads int) error {
	if schema.message == "" || out == "" {
		return errors.New("--message and -o are required")
	}
	plan, err := schema.compile()
	if err != nil {
		return err
	}
	if err := savedmodel.ExportDataView(out, plan, savedmodel.Options{Threads: threads}); err != nil {
		return err
	}
	digest, err := savedmodel.Digest(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote DataView %s: %s\nspec: %v\ndigest: %s\n", out, plan, plan.Spec(), digest)
	return err
}

// runExampleDataViewExport is "dataview export --example-spec/--schema":
// the DataView of tf.Example records by a feature spec.
func runExampleDataViewExport(stdout io.Writer, schema *planFlags, d *exampleDecode, out string, threads int) error {
	if out == "" {
		return errors.New("-o is required")
	}
	if schema.message != "" {
		return errors.New("--message and --example-spec/--schema exclude each other")
	}
	if d.specPath != "" && d.schemaPath != "" {
		return errors.New("--example-spec and --schema exclude each other")
	}
	spec, _, _, err := d.specFromFile()
	if err != nil {
		return err
	}
	plan, err := d.compile(spec)
	if err != nil {
		return err
	}
	if err := savedmodel.ExportExampleDataView(out, plan, savedmodel.Options{Threads: threads}); err != nil {
		return err
	}
	digest, err := savedmodel.Digest(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote DataView %s: tf.Example features\nspec: %v\ndigest: %s\n", out, plan.Spec(), digest)
	return err
}

func newDataViewRunCommand() *cobra.Command {
	var (
		input  *recordInputFlags
		out    *recordOutput
		batch  int
		digest string
	)
	cmd := &cobra.Command{
		Use:   "run DIR [FILE|-]",
		Short: "decode records through TensorFlow with a DataView",
		Long: `dataview run loads the DataView in DIR (checked against --digest when given)
and runs the records of FILE through its decode_fun in TensorFlow, --batch
records at a time, writing each batch as it is decoded, as "decode" does.
--to arrow writes TFXIO's layout (what TFXIO's BeamSource gives over the
DataView): one column per leaf named by its path, a large_list per ragged
dimension, strings large_binary, bools uint8.`,
		Example: `  structtensor dataview run recipe-dv testdata/decode/recipes.tfrecord --to jsonl
  structtensor dataview run recipe-dv --digest sha256:0123... --to parquet -o recipes.parquet < recipes.tfrecord`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("dataview run needs the DataView directory")
			}
			if len(args) > 2 {
				return fmt.Errorf("one input file at most, got %d (%q)", len(args)-1, args[1:])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var name string
			if len(args) == 2 {
				name = args[1]
			}
			return runDataViewRun(args[0], name, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), input, out, batch, digest)
		},
	}
	input = addRecordInputFlags(cmd)
	out = addRecordOutputFlags(cmd)
	countFlag(cmd, &batch, "batch", 8192, 1, "records per TensorFlow run")
	cmd.Flags().StringVar(&digest, "digest", "", "load the DataView only if its digest (dataview inspect) is this `sha256:HEX`")
	return cmd
}

func runDataViewRun(dir, name string, stdin io.Reader, stdout, stderr io.Writer, input *recordInputFlags, out *recordOutput, batch int, digest string) error {
	if err := out.check(); err != nil {
		return err
	}
	if _, err := tfrecord.ParseCompression(input.compression); err != nil {
		return err
	}
	// -o is opened before the DataView loads: an unwritable path fails at
	// once.
	var sink *recordSink
	if !out.isSpec() {
		var err error
		if sink, err = out.open(stdout); err != nil {
			return err
		}
		defer sink.abort()
	}
	var loadOpts []savedmodel.LoadOptions
	if digest != "" {
		loadOpts = append(loadOpts, savedmodel.LoadOptions{Digest: digest})
	}
	dv, err := savedmodel.LoadDataView(dir, loadOpts...)
	if err != nil {
		return err
	}
	defer dv.Close()
	if out.isSpec() {
		return out.writeSpec(stdout, dv.Spec())
	}
	if out.to == "arrow" {
		// A DataView's Arrow output is TFXIO's layout (DataView.ToArrow):
		// one column per leaf named by its path, bools as uint8.
		sink.w = dataViewArrowWriter{dv: dv, w: starrow.NewIPCWriter(sink.out)}
	}

	in, size, err := openRecordInput(name, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	counter := &countingReader{r: in}
	rr, err := input.reader(counter)
	if err != nil {
		return err
	}
	progress := newProgress(stderr, size)
	var records int64
	for {
		b, err := rr.NextBatch(batch)
		if err == io.EOF {
			break
		}
		if err != nil {
			progress.done()
			return err
		}
		t, err := structtensor.NewStringTensor(structtensor.Shape{b.Len()}, b.Data, b.Offsets, false)
		if err != nil {
			progress.done()
			return err
		}
		st, err := dv.DecodeTensor(t)
		if err != nil {
			progress.done()
			return batchError(dv.Plan(), b, err)
		}
		if err := sink.write(st); err != nil {
			progress.done()
			return err
		}
		records += int64(b.Len())
		progress.update(records, counter.n)
	}
	progress.done()
	return sink.commit(func() (*structtensor.StructTensor, error) { return dv.Decode(nil) })
}

func newDataViewInspectCommand() *cobra.Command {
	var digest string
	cmd := &cobra.Command{
		Use:   "inspect DIR",
		Short: "print what a DataView is (format, message, spec, outputs, fingerprint, digest) after the loader's checks",
		Example: `  structtensor dataview inspect recipe-dv
  structtensor dataview inspect recipe-dv --digest sha256:0123...`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("dataview inspect needs the DataView directory")
			case len(args) > 1:
				return fmt.Errorf("dataview inspect takes one directory, got also %q", args[1:])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDataViewInspect(args[0], digest, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&digest, "digest", "", "check the DataView's digest against this `sha256:HEX`")
	return cmd
}

// runDataViewInspect prints what a DataView is, after the loader's checks
// (LoadDataView: the graph is checked against the metadata's plan), or
// why it is refused.
func runDataViewInspect(dir, digest string, stdout io.Writer) error {
	var loadOpts []savedmodel.LoadOptions
	if digest != "" {
		loadOpts = append(loadOpts, savedmodel.LoadOptions{Digest: digest})
	}
	dv, err := savedmodel.LoadDataView(dir, loadOpts...)
	if err != nil {
		if errors.Is(err, savedmodel.ErrOldFormat) {
			fmt.Fprintf(stdout, "DataView %s\nformat: old (not loadable by TFX): %v\n", dir, err)
		}
		return err
	}
	defer dv.Close()
	m := dv.Metadata()
	w := &errWriter{w: stdout}
	w.printf("DataView %s\n", dir)
	w.printf("format: %s version %d (object-based SavedModel, tag %q)\n", m.Format, m.Version, savedmodel.Tag)
	w.printf("loadable by TFX: yes (tfx_bsl load_decoder: root.%s, records: string[None])\n", savedmodel.DecodeFun)
	w.printf("message: %s\n", m.Message)
	w.printf("spec: %v\n", dv.Spec())
	w.printf("exported with TensorFlow %s, decode threads %d\n", m.TensorFlowVersion, m.Threads)
	w.printf("signatures %q, input %q; components:\n", m.Signatures, m.Input)
	for _, c := range m.Components {
		w.printf("  %-40s %s\n", c.Key, c.DType)
	}
	w.printf("decode_fun outputs (TFXIO tensor representations, column = key):\n")
	for _, l := range m.Leaves {
		kind := "dense_tensor"
		if l.RaggedRank > 0 {
			kind = fmt.Sprintf("ragged_tensor (ragged rank %d, int64 row splits)", l.RaggedRank)
		}
		w.printf("  %-40s %-8s %v %s\n", l.Path, l.DType, l.Shape, kind)
	}
	_, text := savedmodel.TensorRepresentations(m.Leaves)
	w.printf("tensor representations (TensorRepresentationGroup, assets/%s and %s):\n", savedmodel.TensorRepresentationsTextFile, savedmodel.TensorRepresentationsFile)
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(text), "\n"), "\n") {
		w.printf("  %s", line)
	}
	w.printf("\n")
	w.printf("fingerprint (%s):\n", m.Fingerprint.Algorithm)
	for _, name := range sortedKeys(m.Fingerprint.Files) {
		w.printf("  %-40s %s\n", name, m.Fingerprint.Files[name])
	}
	w.printf("digest: %s\n", dv.Digest())
	return w.err
}

// dataViewArrowWriter writes the batches of "dataview run --to arrow" as
// the record batches of one Arrow IPC stream in TFXIO's layout.
type dataViewArrowWriter struct {
	dv *savedmodel.DataView
	w  *starrow.IPCWriter
}

func (a dataViewArrowWriter) write(st *structtensor.StructTensor) error {
	rec, err := a.dv.ToArrow(st)
	if err != nil {
		return err
	}
	defer rec.Release()
	return a.w.WriteRecord(rec)
}

func (a dataViewArrowWriter) close() error { return a.w.Close() }

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
