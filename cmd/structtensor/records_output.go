package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/structtensor"
)

// openRecordInput opens the records of "decode" and "dataview run": the
// file name, or stdin for "" or "-". size is the file's size when it is a
// regular file (for the progress bar), else -1.
func openRecordInput(name string, stdin io.Reader) (in io.ReadCloser, size int64, err error) {
	if name == "" || name == "-" {
		return io.NopCloser(stdin), -1, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, -1, err
	}
	size = -1
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, nil
}

// recordOutput is the output half that "decode" and "dataview run" share:
// --to (spec, or one of decodeWriters) and -o, so both commands keep one
// output contract.
type recordOutput struct {
	to   *string
	path *string
}

func addRecordOutputFlags(fs *flag.FlagSet) recordOutput {
	return recordOutput{
		to:   fs.String("to", "json", "output: spec, "+strings.Join(writerNames(), ", ")),
		path: fs.String("o", "", "write to `FILE` (replaced only once complete) instead of standard output"),
	}
}

// isSpec reports whether only the spec is asked for (no records are read).
func (o recordOutput) isSpec() bool { return *o.to == "spec" }

// check validates --to before any input is read.
func (o recordOutput) check() error {
	if o.isSpec() {
		return nil
	}
	if _, ok := decodeWriters[*o.to]; !ok {
		return fmt.Errorf("unknown --to %q (want spec, %s)", *o.to, strings.Join(writerNames(), ", "))
	}
	return nil
}

// emit writes through -o when given, else to stdout.
func (o recordOutput) emit(stdout io.Writer, write func(io.Writer) error) error {
	if *o.path == "" {
		return write(stdout)
	}
	return writeFileAtomic(*o.path, write)
}

// writeSpec writes spec as JSON, the form "convert --to spec" writes and
// "convert --spec" reads.
func (o recordOutput) writeSpec(stdout io.Writer, spec structtensor.Spec) error {
	return o.emit(stdout, func(w io.Writer) error {
		b, err := structtensor.MarshalSpec(spec)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
}

// writeBatches joins the decoded batches into one StructTensor (empty, the
// result of decoding no records, when there are none) and writes it.
func (o recordOutput) writeBatches(stdout io.Writer, batches []structtensor.Value, empty func() (*structtensor.StructTensor, error)) error {
	var all *structtensor.StructTensor
	switch len(batches) {
	case 0:
		var err error
		if all, err = empty(); err != nil {
			return err
		}
	case 1:
		all = batches[0].(*structtensor.StructTensor)
	default:
		v, err := ops.Concat(batches, 0)
		if err != nil {
			return err
		}
		all = v.(*structtensor.StructTensor)
	}
	write := decodeWriters[*o.to]
	return o.emit(stdout, func(w io.Writer) error { return write(w, all) })
}
