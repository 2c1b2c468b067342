package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/structtensor/structtensor-go/structtensor"
)

// format is one data format "convert" reads or writes. Formats register
// themselves from init (this file: json, jsonl, spec; others in their own
// files), so adding one touches no shared code.
type format struct {
	// read reads one value; nil if the format cannot be read.
	read func(io.Reader) (structtensor.Value, error)
	// readSpec reads one value of a given spec; nil if the format takes no
	// spec (convert --spec is then an error).
	readSpec func(io.Reader, structtensor.Spec) (structtensor.Value, error)
	// write writes one value; nil if the format cannot be written.
	write func(io.Writer, structtensor.Value) error
	// batches reads the input in batches of at most n records, each read
	// with spec if it is not nil (its dimension 0 free) and inferred from
	// its own records otherwise; nil if the format is only read whole. It
	// returns io.EOF after the last batch.
	batches func(r io.Reader, spec structtensor.Spec) (next func(n int) (structtensor.Value, error), err error)
	// schemaSpec marks a format whose schema, read before any record,
	// fixes every batch's spec (Arrow IPC, Parquet): no pass infers it.
	schemaSpec bool
	// finalErrors marks a format whose batch errors are what the whole
	// read reports (Parquet's name the row group and column), so a failing
	// input is not read again whole to word its error.
	finalErrors bool
	// needsFile marks a format read from a file only (Parquet's footer is
	// at its end): standard input is first copied to a temporary file.
	needsFile bool
}

var formats = map[string]*format{}

// registerFormat adds a format that convert can read (read != nil) and/or
// write (write != nil).
func registerFormat(name string, read func(io.Reader) (structtensor.Value, error), write func(io.Writer, structtensor.Value) error) {
	if _, dup := formats[name]; dup {
		panic("structtensor: format registered twice: " + name)
	}
	formats[name] = &format{read: read, write: write}
}

// registerSpecReader lets format name read a value of a given spec
// (convert --spec FILE).
func registerSpecReader(name string, read func(io.Reader, structtensor.Spec) (structtensor.Value, error)) {
	f, ok := formats[name]
	if !ok {
		panic("structtensor: spec reader for unregistered format " + name)
	}
	f.readSpec = read
}

func init() {
	registerFormat("json",
		func(r io.Reader) (structtensor.Value, error) { return structtensor.ReadJSON(r) },
		func(w io.Writer, v structtensor.Value) error {
			if err := structtensor.WriteJSON(w, v); err != nil {
				return err
			}
			_, err := io.WriteString(w, "\n")
			return err
		})
	registerSpecReader("json", func(r io.Reader, s structtensor.Spec) (structtensor.Value, error) {
		return structtensor.ReadJSON(r, s)
	})
	registerFormat("jsonl",
		func(r io.Reader) (structtensor.Value, error) { return structtensor.ReadJSONLines(r) },
		structtensor.WriteJSONLines)
	registerSpecReader("jsonl", func(r io.Reader, s structtensor.Spec) (structtensor.Value, error) {
		return structtensor.ReadJSONLines(r, s)
	})
	formats["jsonl"].batches = jsonLinesBatches
	formats["json"].batches = jsonArrayBatches
	registerFormat("spec", nil, func(w io.Writer, v structtensor.Value) error {
		b, err := structtensor.MarshalSpec(v.Spec())
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
	register("convert", newConvertCommand)
}

func formatNames(can func(*format) bool) string {
	return strings.Join(formatList(can), ", ")
}

func canRead(f *format) bool  { return f.read != nil }
func canWrite(f *format) bool { return f.write != nil }

func formatList(can func(*format) bool) []string {
	var names []string
	for n, f := range formats {
		if can(f) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func newConvertCommand() *cobra.Command {
	var from, to, outPath, specPath string
	cmd := &cobra.Command{
		Use:   "convert [FILE|-]",
		Short: "convert data between formats (json, jsonl, arrow, parquet, spec)",
		Long: `convert reads one value (a JSON document, JSON lines, an Arrow IPC stream or
a Parquet file) and writes it in another format, or writes its spec (--to
spec, the JSON form --spec reads). Without --spec the spec is inferred from
the data. JSON lines and a JSON array of objects (4096 records at a time),
an Arrow IPC stream (a record batch at a time) and a Parquet file (a row
group at a time) are converted batch by batch, so memory holds one batch
whatever the input's size; standard input is read as a stream where the
output is known before its end (--spec given, or Arrow), else copied to
a temporary file first. -o FILE is written to a temporary file renamed over
FILE only once complete.`,
		Example: `  structtensor convert --from jsonl in.jsonl --to parquet -o out.parquet
  structtensor convert in.jsonl --from jsonl --to spec -o spec.json
  structtensor convert --from jsonl --spec spec.json --to arrow < in.jsonl > out.arrows
  structtensor convert --from parquet out.parquet --to json`,
		Args: maxInputs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd, args, from, to, outPath, specPath)
		},
	}
	choiceFlag(cmd, &from, "from", "", "json", "input format", formatList(canRead))
	choiceFlag(cmd, &to, "to", "", "json", "output format", formatList(canWrite))
	outputFlag(cmd, &outPath, "write to `FILE` (a regular file is replaced only once complete) instead of standard output")
	cmd.Flags().StringVar(&specPath, "spec", "", "read the input with the spec in `FILE` (as written by --to spec) instead of inferring it")
	cmd.MarkFlagFilename("spec", "json")
	return cmd
}

// maxInputs accepts at most n positional arguments, with the error the
// CLI has always given.
func maxInputs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			if n == 1 {
				return fmt.Errorf("one input file at most, got %d (%q)", len(args), args)
			}
			return fmt.Errorf("%d arguments at most, got %d (%q)", n, len(args), args)
		}
		return nil
	}
}

func runConvert(cmd *cobra.Command, args []string, from, to, outPath, specPath string) error {
	stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	in, spec, err := inputFormat(from, specPath)
	if err != nil {
		return err
	}
	out, ok := formats[to]
	if !ok || out.write == nil {
		return fmt.Errorf("cannot write format %q (writable: %s)", to, formatNames(canWrite))
	}

	// The output is opened first: an unwritable -o is reported before the
	// input is read.
	w, err := createOutput(outPath, stdout)
	if err != nil {
		return err
	}
	defer w.Abort()
	name, r := "stdin", stdin
	if len(args) == 1 && args[0] != "-" {
		name = args[0]
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	if in.batches != nil && !convertReadWhole {
		src, progressTo := streamInputOf(r), stderr
		if src == nil {
			// Standard input (or a pipe): read as a stream in one pass
			// where the output is known from the start, else copied to a
			// temporary file first. Either way there is no size to show
			// progress against.
			var cleanup func()
			var err error
			src, r, cleanup, err = pipeInput(r, in, spec, to)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			defer cleanup()
			progressTo = io.Discard
		}
		done, err := convertStream(in, src, spec, to, w, progressTo)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if done {
			return w.Commit()
		}
	}
	v, err := readInput(r, in, spec, stderr)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}

	if err := out.write(w, v); err != nil {
		return err
	}
	return w.Commit()
}

// readInput reads the value r holds in format in (with spec, if not
// nil), whole. A regular file shows the bytes read so far as progress on
// stderr when that is a terminal.
// inputFormat returns the readable format named from and, when specPath
// is given, the spec read from it (for the formats that take one).
func inputFormat(from, specPath string) (*format, structtensor.Spec, error) {
	in, ok := formats[from]
	if !ok || in.read == nil {
		return nil, nil, fmt.Errorf("cannot read format %q (readable: %s)", from, formatNames(canRead))
	}
	if specPath == "" {
		return in, nil, nil
	}
	if in.readSpec == nil {
		return nil, nil, fmt.Errorf("format %q does not take a spec", from)
	}
	b, err := os.ReadFile(specPath)
	if err != nil {
		return nil, nil, err
	}
	spec, err := structtensor.UnmarshalSpec(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", specPath, err)
	}
	return in, spec, nil
}

func readInput(r io.Reader, in *format, spec structtensor.Spec, stderr io.Writer) (structtensor.Value, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			start, _ := f.Seek(0, io.SeekCurrent)
			pr := &progressReader{r: f, progress: newConvertProgress(stderr, fi.Size()-start), step: (fi.Size() - start) / 100}
			v, err := readWhole(in, pr, spec)
			pr.progress.done()
			return v, err
		}
	}
	return readWhole(in, r, spec)
}

// progressReader shows the bytes read through it, once per step bytes
// (1% of the input, at least 1 MiB) and at the end, so a large file costs
// a hundred updates, not one per read.
type progressReader struct {
	r        io.Reader
	progress *progress
	n, next  int64
	step     int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n >= p.next || err != nil {
		p.progress.update(-1, p.n)
		p.next = p.n + max(p.step, 1<<20)
	}
	return n, err
}

func readWhole(in *format, r io.Reader, spec structtensor.Spec) (structtensor.Value, error) {
	if spec != nil {
		return in.readSpec(bufio.NewReader(r), spec)
	}
	return in.read(bufio.NewReader(r))
}

// convertReadWhole makes convert read every input whole (a test's
// reference for the streamed conversions).
var convertReadWhole bool

// newConvertProgress is decode's progress bar (decode.go); a variable so
// that tests can stand in for a terminal.
var newConvertProgress = newProgress

// jsonlBatchRecords is how many records convert parses at a time from a
// JSON-lines file: memory holds one batch, not the whole file.
var jsonlBatchRecords = 4096

func jsonLinesBatches(r io.Reader, spec structtensor.Spec) (func(int) (structtensor.Value, error), error) {
	if spec == nil {
		jr, err := structtensor.NewJSONLinesReader(r)
		if err != nil {
			return nil, err
		}
		return jr.ReadInferred, nil
	}
	jr, err := structtensor.NewJSONLinesReader(r, structtensor.AnyRows(spec))
	if err != nil {
		return nil, err
	}
	return jr.Read, nil
}
