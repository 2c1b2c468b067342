package main

import (
	"bytes"
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

// batchError turns TensorFlow's error for a batch of records into the one
// the Go path gives: the batch is decoded again with the same plan and
// engine, whose *decode.RecordError numbers the record in the whole
// stream. TensorFlow's message is multi-line, and numbers records in the
// batch; it is the answer only when the Go path finds nothing wrong.
func batchError(plan *decode.Plan, b *tfrecord.Batch, tfErr error) error {
	if plan != nil {
		if _, err := plan.DecodeContiguous(b.Data, b.Offsets); err != nil {
			var re *decode.RecordError
			if errors.As(err, &re) {
				re.Record += b.Start
			}
			return err
		}
	}
	msg := tfErr.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("records %d to %d: %s", b.Start, b.Start+int64(b.Len())-1, msg)
}

// recordOutput is the output half that "decode" and "dataview run" share:
// --to (spec, or one of decodeWriters) and -o, so both commands keep one
// output contract.
type recordOutput struct {
	to   string
	path string
}

func addRecordOutputFlags(cmd *cobra.Command) *recordOutput {
	o := &recordOutput{}
	choiceFlag(cmd, &o.to, "to", "", "json", "output", append([]string{"spec"}, writerNames()...))
	outputFlag(cmd, &o.path, "write to `FILE` (a regular file is replaced only once complete) instead of standard output")
	return o
}

// isSpec reports whether only the spec is asked for (no records are read).
func (o *recordOutput) isSpec() bool { return o.to == "spec" }

// check validates --to before any input is read.
func (o *recordOutput) check() error {
	if o.isSpec() {
		return nil
	}
	if _, ok := decodeWriters[o.to]; !ok {
		return fmt.Errorf("unknown --to %q (want spec, %s)", o.to, strings.Join(writerNames(), ", "))
	}
	return nil
}

// writeSpec writes spec as JSON, the form "convert --to spec" writes and
// "convert --spec" reads.
func (o *recordOutput) writeSpec(stdout io.Writer, spec structtensor.Spec) error {
	return writeOutput(o.path, stdout, func(w io.Writer) error {
		b, err := structtensor.MarshalSpec(spec)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
}

// open opens -o (or stdout) and the --to writer, before any input is read.
func (o *recordOutput) open(stdout io.Writer) (*recordSink, error) {
	out, err := createOutput(o.path, stdout)
	if err != nil {
		return nil, err
	}
	return &recordSink{out: out, w: decodeWriters[o.to](out)}, nil
}

// recordSink writes decoded batches to the output as they come, so that
// memory holds one batch whatever the input's size.
type recordSink struct {
	out *output
	w   batchWriter
	n   int
}

// write writes one batch.
func (s *recordSink) write(st *structtensor.StructTensor) error {
	s.n++
	return s.w.write(st)
}

// commit ends the output (with the value of no records, from empty, when
// no batch came) and puts it in place.
func (s *recordSink) commit(empty func() (*structtensor.StructTensor, error)) error {
	if s.n == 0 {
		st, err := empty()
		if err != nil {
			return err
		}
		if err := s.w.write(st); err != nil {
			return err
		}
	}
	if err := s.w.close(); err != nil {
		return err
	}
	return s.out.Commit()
}

// abort discards the output (see output.Abort).
func (s *recordSink) abort() { s.out.Abort() }

// batchWriter writes the batches of one output, each a rank-1
// StructTensor of the same spec, as one value: the output of all the
// batches concatenated.
type batchWriter interface {
	write(*structtensor.StructTensor) error
	close() error
}

// jsonArrayWriter writes the batches' rows as the elements of one JSON
// array (the form of structtensor.WriteJSON of the whole).
type jsonArrayWriter struct {
	w    io.Writer
	rows int
	buf  bytes.Buffer
}

func (j *jsonArrayWriter) write(st *structtensor.StructTensor) error {
	j.buf.Reset()
	if err := structtensor.WriteJSONLines(&j.buf, st); err != nil {
		return err
	}
	// Rows are one line each (JSON text holds no raw newline): the
	// newlines become the array's commas.
	b := j.buf.Bytes()
	for i := range b {
		if b[i] == '\n' {
			b[i] = ','
		}
	}
	if len(b) == 0 {
		return nil
	}
	sep := byte(',')
	if j.rows == 0 {
		sep = '['
	}
	j.rows += st.NumRows()
	if _, err := j.w.Write([]byte{sep}); err != nil {
		return err
	}
	_, err := j.w.Write(b[:len(b)-1])
	return err
}

func (j *jsonArrayWriter) close() error {
	end := "]\n"
	if j.rows == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(j.w, end)
	return err
}

// jsonLinesWriter writes each batch's rows as JSON lines.
type jsonLinesWriter struct{ w io.Writer }

func (j jsonLinesWriter) write(st *structtensor.StructTensor) error {
	return structtensor.WriteJSONLines(j.w, st)
}

func (jsonLinesWriter) close() error { return nil }
