package beam

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/structtensor"
)

func init() {
	beamsdk.RegisterCoder(reflect.TypeOf((*Rows)(nil)).Elem(), EncodeRows, DecodeRows)
	register.DoFn3x1[context.Context, RecordBatch, func(Rows), error](&decodeFn{})
	register.Emitter1[Rows]()
	beamsdk.RegisterType(reflect.TypeOf((*BadRecord)(nil)).Elem())
	register.DoFn4x1[context.Context, RecordBatch, func(Rows), func(BadRecord), error](&decodeDeadLetterFn{})
	register.Emitter1[BadRecord]()
}

// BadRecord is a record that did not decode, sent to the dead-letter
// output of DecodeWithDeadLetters: where it is, its bytes and the error
// (which names the byte inside the record and the field path).
type BadRecord struct {
	File     string
	Position int64 // byte offset of the record's framing in File
	Record   []byte
	Error    string
}

// Rows is a batch of decoded records: a rank-1 StructTensor with one row
// per record, and where each record came from (its file and the byte
// offset of its framing, as in RecordBatch; for rows read from Parquet by
// ReadParquet, its row number in the file). Between pipeline steps it
// travels as Arrow IPC (EncodeRows).
type Rows struct {
	File      string
	Positions []int64
	Tensor    *structtensor.StructTensor
}

// DecodeOptions configure Decode.
type DecodeOptions struct {
	// DescriptorSet is a serialized google.protobuf.FileDescriptorSet
	// holding Message and its imports. The bytes travel with the
	// pipeline, so workers need no access to the launcher's files.
	DescriptorSet []byte
	// Message is the full name of the records' message type.
	Message string
	// Paths project the decoded fields (none: every field).
	Paths []string
	// Threads is the engine's threads per batch (default 1: Beam already
	// runs one bundle per core).
	Threads int
}

// Decode decodes each RecordBatch into Rows with one compiled plan per
// worker. A record that does not decode fails the pipeline with an error
// naming the file, the byte offset and the field path.
func Decode(s beamsdk.Scope, batches beamsdk.PCollection, opts DecodeOptions) (beamsdk.PCollection, error) {
	s = s.Scope("structtensor.Decode")
	// Compile once here too, so a bad schema fails at construction, not
	// on the workers.
	if _, err := compilePlan(opts.DescriptorSet, opts.Message, opts.Paths); err != nil {
		return beamsdk.PCollection{}, err
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = 1
	}
	fn := &decodeFn{DescriptorSet: opts.DescriptorSet, Message: opts.Message, Paths: opts.Paths, Threads: threads}
	return beamsdk.ParDo(s, fn, batches), nil
}

// DecodeWithDeadLetters is Decode where a record that does not decode
// goes, with its context, to the second output (a PCollection of
// BadRecord) instead of failing the pipeline; the other records of its
// batch are decoded as usual. Nothing is dropped: every record is in
// exactly one of the two outputs.
func DecodeWithDeadLetters(s beamsdk.Scope, batches beamsdk.PCollection, opts DecodeOptions) (rows, bad beamsdk.PCollection, err error) {
	s = s.Scope("structtensor.DecodeWithDeadLetters")
	if _, err := compilePlan(opts.DescriptorSet, opts.Message, opts.Paths); err != nil {
		return rows, bad, err
	}
	fn := &decodeDeadLetterFn{decodeFn{DescriptorSet: opts.DescriptorSet, Message: opts.Message, Paths: opts.Paths, Threads: max(opts.Threads, 1)}}
	rows, bad = beamsdk.ParDo2(s, fn, batches)
	return rows, bad, nil
}

func compilePlan(descriptorSet []byte, message string, paths []string) (*decode.Plan, error) {
	d, err := decode.LoadDescriptorSet(descriptorSet)
	if err != nil {
		return nil, fmt.Errorf("structtensor/beam: %w", err)
	}
	p, err := decode.Compile(d, message, paths...)
	if err != nil {
		return nil, fmt.Errorf("structtensor/beam: %w", err)
	}
	return p, nil
}

type decodeFn struct {
	DescriptorSet []byte
	Message       string
	Paths         []string
	Threads       int

	plan *decode.Plan
}

// Setup compiles the plan once per DoFn instance (per worker thread).
func (fn *decodeFn) Setup() error {
	var err error
	fn.plan, err = compilePlan(fn.DescriptorSet, fn.Message, fn.Paths)
	return err
}

// Teardown frees the plan's engine memory.
func (fn *decodeFn) Teardown() {
	if fn.plan != nil {
		fn.plan.Close()
	}
}

func (fn *decodeFn) ProcessElement(ctx context.Context, b RecordBatch, emit func(Rows)) error {
	t, err := fn.plan.DecodeContiguousContext(ctx, b.Data, b.Offsets, decode.DecodeOptions{Threads: fn.Threads})
	if err != nil {
		return decodeError(b, err)
	}
	emit(Rows{File: b.File, Positions: b.Positions, Tensor: t})
	return nil
}

type decodeDeadLetterFn struct{ decodeFn }

func (fn *decodeDeadLetterFn) ProcessElement(ctx context.Context, b RecordBatch, emit func(Rows), bad func(BadRecord)) error {
	for b.Len() > 0 {
		t, err := fn.plan.DecodeContiguousContext(ctx, b.Data, b.Offsets, decode.DecodeOptions{Threads: fn.Threads})
		if err == nil {
			emit(Rows{File: b.File, Positions: b.Positions, Tensor: t})
			return nil
		}
		var re *decode.RecordError
		if !errors.As(err, &re) || re.Record < 0 || int(re.Record) >= b.Len() {
			return decodeError(b, err)
		}
		k := int(re.Record)
		if k > 0 {
			// The records before the bad one decode: emit them as a batch.
			t, err := fn.plan.DecodeContiguousContext(ctx, b.Data, b.Offsets[:k+1], decode.DecodeOptions{Threads: fn.Threads})
			if err != nil {
				return decodeError(b, err)
			}
			emit(Rows{File: b.File, Positions: b.Positions[:k], Tensor: t})
		}
		bad(BadRecord{File: b.File, Position: b.Positions[k],
			Record: slices.Clone(b.Data[b.Offsets[k]:b.Offsets[k+1]]), Error: decodeError(b, err).Error()})
		// Go on after it: the offsets of the rest still index b.Data.
		b.Offsets, b.Positions = b.Offsets[k+1:], b.Positions[k+1:]
	}
	return nil
}

// decodeError names the file and the record's byte offset in it.
func decodeError(b RecordBatch, err error) error {
	var re *decode.RecordError
	if !errors.As(err, &re) || re.Record < 0 || int(re.Record) >= b.Len() {
		return fmt.Errorf("structtensor/beam: %s: %w", b.File, err)
	}
	stream := ""
	if b.Compressed {
		stream = " of the uncompressed stream"
	}
	return fmt.Errorf("structtensor/beam: %s: record at byte offset %d%s: %w", b.File, b.Positions[re.Record], stream, err)
}

// EncodeRows is the Beam coder of Rows: the file name and positions, then
// the StructTensor as an Arrow IPC stream.
func EncodeRows(r Rows) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(binary.AppendUvarint(nil, uint64(len(r.File))))
	buf.WriteString(r.File)
	buf.Write(binary.AppendUvarint(nil, uint64(len(r.Positions))))
	for _, p := range r.Positions {
		buf.Write(binary.AppendVarint(nil, p))
	}
	if err := starrow.WriteIPC(&buf, r.Tensor); err != nil {
		return nil, fmt.Errorf("structtensor/beam: encoding rows of %s: %w", r.File, err)
	}
	return buf.Bytes(), nil
}

// DecodeRows is the inverse of EncodeRows.
func DecodeRows(b []byte) (Rows, error) {
	var r Rows
	bad := func(what string) (Rows, error) {
		return Rows{}, fmt.Errorf("structtensor/beam: decoding rows: bad %s", what)
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return bad("file name")
	}
	r.File, b = string(b[k:k+int(n)]), b[k+int(n):]
	n, k = binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return bad("position count")
	}
	b = b[k:]
	r.Positions = make([]int64, n)
	for i := range r.Positions {
		v, k := binary.Varint(b)
		if k <= 0 {
			return bad("position")
		}
		r.Positions[i], b = v, b[k:]
	}
	t, err := starrow.ReadIPC(bytes.NewReader(b))
	if err != nil {
		return Rows{}, fmt.Errorf("structtensor/beam: decoding rows of %s: %w", r.File, err)
	}
	if t.NumRows() != len(r.Positions) {
		return Rows{}, fmt.Errorf("structtensor/beam: decoding rows of %s: %d rows for %d positions", r.File, t.NumRows(), len(r.Positions))
	}
	r.Tensor = t
	return r, nil
}
