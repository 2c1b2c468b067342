package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// exampleDecode is "decode --example-spec": tf.Example (or, with
// --sequence-example, tf.SequenceExample) records decoded by a feature
// spec, one field per feature, to any output format of decode.
type exampleDecode struct {
	specPath   string
	schemaPath string // --schema: a tensorflow_metadata schema.pbtxt instead
	sequence   bool
	input      *recordInputFlags
	threads    int
	batch      int
}

func (d *exampleDecode) run(input string, stdin io.Reader, stdout, stderr io.Writer, out *recordOutput) error {
	flag, path, parse := "--example-spec", d.specPath, decode.ParseExampleSpec
	if d.schemaPath != "" {
		flag, path = "--schema", d.schemaPath
		parse = func(b []byte) (*decode.ExampleSpec, error) { return decode.ExampleSpecFromSchema(b) }
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	spec, err := parse(b)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	compile := decode.CompileExample
	if d.sequence || len(spec.SequenceFeatures) > 0 {
		compile = decode.CompileSequenceExample
	}
	plan, err := compile(spec)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if out.isSpec() {
		return out.writeSpec(stdout, plan.Spec())
	}
	if err := out.check(); err != nil {
		return err
	}
	sink, err := out.open(stdout)
	if err != nil {
		return err
	}
	defer sink.abort()
	in, size, err := openRecordInput(input, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	counter := &countingReader{r: in}
	progress := newProgress(stderr, size)
	defer progress.done()
	records, err := d.input.reader(counter)
	if err != nil {
		return err
	}
	var batch tfrecord.Batch
	var done int64
	for {
		err := records.ReadBatch(&batch, d.batch)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		st, err := plan.DecodeContiguous(batch.Data, batch.Offsets, decode.DecodeOptions{Threads: d.threads})
		if err != nil {
			// Name the record by its place in the stream, not the batch.
			var re *decode.RecordError
			if errors.As(err, &re) {
				re.Record += batch.Start
			}
			return err
		}
		if err := sink.write(st); err != nil {
			return err
		}
		done += int64(batch.Len())
		progress.update(done, counter.n)
	}
	return sink.commit(func() (*structtensor.StructTensor, error) { return plan.Decode(nil) })
}
