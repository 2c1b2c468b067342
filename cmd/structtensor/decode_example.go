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
// spec, one field per feature, to any output format of decode. The spec
// comes from a JSON file, from a schema.pbtxt (--schema), or is inferred
// from the input's first records (--infer-schema).
type exampleDecode struct {
	specPath    string
	schemaPath  string // --schema: a tensorflow_metadata schema.pbtxt instead
	environment string // --schema-environment
	infer       bool   // --infer-schema
	inferSample int    // --infer-sample: records the inference reads
	sequence    bool
	input       *recordInputFlags
	threads     int
	batch       int
}

// specFromFile reads the spec of --example-spec or --schema; the flag
// and path name it in errors.
func (d *exampleDecode) specFromFile() (spec *decode.ExampleSpec, flag, path string, err error) {
	flag, path, parse := "--example-spec", d.specPath, decode.ParseExampleSpec
	if d.schemaPath != "" {
		flag, path = "--schema", d.schemaPath
		parse = func(b []byte) (*decode.ExampleSpec, error) {
			return decode.ExampleSpecFromSchema(b, decode.SchemaOptions{Environment: d.environment})
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, flag, path, fmt.Errorf("%s: %w", flag, err)
	}
	spec, err = parse(b)
	if err != nil {
		return nil, flag, path, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return spec, flag, path, nil
}

func (d *exampleDecode) compile(spec *decode.ExampleSpec) (*decode.ExamplePlan, error) {
	if d.sequence || len(spec.SequenceFeatures) > 0 {
		return decode.CompileSequenceExample(spec)
	}
	return decode.CompileExample(spec)
}

func (d *exampleDecode) run(input string, stdin io.Reader, stdout, stderr io.Writer, out *recordOutput) error {
	var plan *decode.ExamplePlan
	if !d.infer {
		spec, flag, path, err := d.specFromFile()
		if err != nil {
			return err
		}
		if plan, err = d.compile(spec); err != nil {
			return fmt.Errorf("%s %s: %w", flag, path, err)
		}
		if out.isSpec() {
			return out.writeSpec(stdout, plan.Spec())
		}
	}
	if err := out.check(); err != nil {
		return err
	}
	in, size, err := openRecordInput(input, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	counter := &countingReader{r: in}
	records, err := d.input.reader(counter)
	if err != nil {
		return err
	}
	// With --infer-schema the first --infer-sample records are read
	// before anything is written: the spec is inferred from them, then
	// they are decoded like the rest, --batch records at a time.
	var sample []*tfrecord.Batch
	var sampled int
	if d.infer {
		var recs [][]byte
		for sampled < d.inferSample {
			b, err := records.NextBatch(d.inferSample - sampled)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			sample = append(sample, b)
			sampled += b.Len()
			recs = append(recs, b.Records()...)
		}
		spec, err := decode.InferExampleSpec(recs, d.sequence)
		if err != nil {
			return fmt.Errorf("--infer-schema: inferring the spec from the first %d records: %w", sampled, err)
		}
		if plan, err = d.compile(spec); err != nil {
			return fmt.Errorf("--infer-schema: %w", err)
		}
		if out.isSpec() {
			return out.writeSpec(stdout, plan.Spec())
		}
	}
	sink, err := out.open(stdout)
	if err != nil {
		return err
	}
	defer sink.abort()
	progress := newProgress(stderr, size)
	defer progress.done()
	var done int64
	decodeBatch := func(b *tfrecord.Batch, start int64) error {
		st, err := plan.DecodeContiguous(b.Data, b.Offsets, decode.DecodeOptions{Threads: d.threads})
		if err != nil {
			// Name the record by its place in the stream, not the batch.
			var re *decode.RecordError
			if errors.As(err, &re) {
				re.Record += start
				if d.infer && re.Record >= int64(sampled) {
					return fmt.Errorf("%w (the spec was inferred from the first %d records: --infer-sample sets how many)", err, sampled)
				}
			}
			return err
		}
		if err := sink.write(st); err != nil {
			return err
		}
		done += int64(b.Len())
		progress.update(done, counter.n)
		return nil
	}
	for len(sample) > 0 {
		b := sample[0]
		sample[0], sample = nil, sample[1:] // drop each as it is done
		for lo := 0; lo < b.Len(); lo += d.batch {
			hi := min(lo+d.batch, b.Len())
			part := tfrecord.Batch{Data: b.Data, Offsets: b.Offsets[lo : hi+1]}
			if err := decodeBatch(&part, b.Start+int64(lo)); err != nil {
				return err
			}
		}
	}
	var batch tfrecord.Batch
	for {
		err := records.ReadBatch(&batch, d.batch)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := decodeBatch(&batch, batch.Start); err != nil {
			return err
		}
	}
	return sink.commit(func() (*structtensor.StructTensor, error) { return plan.Decode(nil) })
}
