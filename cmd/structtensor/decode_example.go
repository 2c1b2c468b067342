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
	specPath string
	sequence bool
	input    *recordInputFlags
	threads  int
	batch    int
}

func (d *exampleDecode) run(input string, stdin io.Reader, stdout, stderr io.Writer, out *recordOutput) error {
	b, err := os.ReadFile(d.specPath)
	if err != nil {
		return fmt.Errorf("--example-spec: %w", err)
	}
	spec, err := decode.ParseExampleSpec(b)
	if err != nil {
		return fmt.Errorf("--example-spec %s: %w", d.specPath, err)
	}
	compile := decode.CompileExample
	if d.sequence {
		compile = decode.CompileSequenceExample
	}
	plan, err := compile(spec)
	if err != nil {
		return fmt.Errorf("--example-spec %s: %w", d.specPath, err)
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
