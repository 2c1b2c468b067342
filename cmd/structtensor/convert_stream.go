package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/structtensor/structtensor-go/structtensor"
)

// convertStream converts the regular file f, of a format read in batches
// (format.batches), batch by batch: memory holds one batch of records
// and the output writer's buffers, whatever the file's size. It reports
// done = false, with f back where it was, when the file is better read
// whole: it is not a regular file, it holds no records or values that are
// not records (a StructTensor of rank 1 per batch), or its batches infer
// different specs. Then the whole read decides what the input is, so
// that a streamed conversion's output, and its error, are always what
// reading the whole input at once gives.
//
// Without a spec, the file is read twice: a first pass infers each
// batch's spec and checks that every batch infers the first one's (the
// whole input then infers that spec too; reading later batches with the
// first one's spec instead would type them differently from the whole
// read, e.g. integers in lists all empty in the first batch); the second
// pass writes. With --spec (or --to spec) one pass does. An error in a
// batch is worded from the batch's view, so on any error the whole read
// is done to report the error it gives. On standard output, the batches
// before an error stay written.
func convertStream(in *format, f *os.File, spec structtensor.Spec, to string, w *output, stderr io.Writer) (done bool, err error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false, nil
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return false, nil
	}
	size := fi.Size() - start
	newWriter := decodeWriters[to]
	if to != "spec" && newWriter == nil {
		return false, nil
	}
	rewind := func() bool {
		_, err := f.Seek(start, io.SeekStart)
		return err == nil
	}
	// wholeError reads the input whole to report its error (err when
	// that read succeeds).
	wholeError := func(err error) error {
		if !rewind() {
			return err
		}
		if _, werr := readWhole(in, f, spec); werr != nil {
			return werr
		}
		return err
	}

	// Pass 1: the spec of every batch (and their records), unless a spec
	// is given and records are to be written.
	var batchSpec structtensor.Spec
	var records int64
	if spec == nil || to == "spec" {
		var progress *progress
		counter := &countingReader{r: f}
		if to == "spec" {
			progress = newConvertProgress(stderr, size)
		}
		batchSpec, records, err = scanBatches(in, counter, spec, func(records int64) {
			if progress != nil {
				progress.update(records, counter.n)
			}
		})
		if progress != nil {
			progress.done()
		}
		if err != nil || records == 0 || (spec != nil && !fitsRows(spec, records)) {
			return false, rewindOr(rewind)
		}
		if to == "spec" {
			b, err := structtensor.MarshalSpec(withRows(batchSpec, int(records)))
			if err != nil {
				return true, err
			}
			_, err = w.Write(append(b, '\n'))
			return true, err
		}
		if !rewind() {
			return false, errors.New("cannot seek back to the start of the input")
		}
	}

	// Pass 2: write each batch as it is read.
	counter := &countingReader{r: f}
	next, err := in.batches(counter, spec)
	if err != nil {
		return true, wholeError(err)
	}
	progress := newConvertProgress(stderr, size)
	defer progress.done()
	bw := newWriter(w)
	var written int64
	for {
		v, err := next(jsonlBatchRecords)
		if err == io.EOF {
			break
		}
		if err != nil {
			return true, wholeError(err)
		}
		st, ok := v.(*structtensor.StructTensor)
		if !ok || st.Rank() != 1 {
			if written == 0 && rewind() {
				return false, nil
			}
			return true, fmt.Errorf("records %d..: not a batch of records (%v)", written, v.Spec())
		}
		if err := bw.write(st); err != nil {
			return true, err
		}
		written += int64(st.NumRows())
		progress.update(written, counter.n)
		if convertBatchWritten != nil {
			convertBatchWritten(counter.n)
		}
	}
	if written == 0 || (spec != nil && !fitsRows(spec, written)) {
		if written == 0 && rewind() {
			return false, nil
		}
		return true, wholeError(fmt.Errorf("%w: %d records do not fit %v", structtensor.ErrSpec, written, spec))
	}
	return true, bw.close()
}

// convertBatchWritten, when not nil, is called after each batch convert
// streams to its output with the input bytes read so far (a test's probe).
var convertBatchWritten func(inputRead int64)

// scanBatches reads every batch, checking that all have the first one's
// spec (less its number of rows), and returns that spec and the number
// of records.
func scanBatches(in *format, r io.Reader, spec structtensor.Spec, batch func(int64)) (structtensor.Spec, int64, error) {
	next, err := in.batches(r, spec)
	if err != nil {
		return nil, 0, err
	}
	var first structtensor.Spec
	var records int64
	for {
		v, err := next(jsonlBatchRecords)
		if err == io.EOF {
			return first, records, nil
		}
		if err != nil {
			return nil, 0, err
		}
		s := structtensor.AnyRows(v.Spec())
		if first == nil {
			first = s
		} else if !s.Equal(first) {
			return nil, 0, fmt.Errorf("records %d..: spec %v, the first batch's %v", records, s, first)
		}
		records += int64(v.NumRows())
		batch(records)
	}
}

func rewindOr(rewind func() bool) error {
	if !rewind() {
		return errors.New("cannot seek back to the start of the input")
	}
	return nil
}

// fitsRows reports whether n records fit spec's dimension 0.
func fitsRows(spec structtensor.Spec, n int64) bool {
	sh := spec.ValueShape()
	return len(sh) == 0 || sh[0] == structtensor.Unknown || int64(sh[0]) == n
}

// withRows returns s with dimension 0, which every field of a struct of
// rank >= 1 shares, n: the spec of n rows of the batches s describes
// (structtensor.AnyRows, the other way).
func withRows(s structtensor.Spec, n int) structtensor.Spec {
	rows := func(sh structtensor.Shape) structtensor.Shape {
		sh = append(structtensor.Shape(nil), sh...)
		if len(sh) > 0 {
			sh[0] = n
		}
		return sh
	}
	switch x := s.(type) {
	case *structtensor.TensorSpec:
		return &structtensor.TensorSpec{DType: x.DType, Shape: rows(x.Shape)}
	case *structtensor.RaggedSpec:
		return &structtensor.RaggedSpec{DType: x.DType, Shape: rows(x.Shape), RaggedRank: x.RaggedRank}
	case *structtensor.StructSpec:
		out := &structtensor.StructSpec{Shape: rows(x.Shape), Fields: make([]structtensor.FieldSpec, len(x.Fields))}
		for i, f := range x.Fields {
			out.Fields[i] = structtensor.FieldSpec{Name: f.Name, Spec: withRows(f.Spec, n)}
		}
		return out
	}
	return s
}
