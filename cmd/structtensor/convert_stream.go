package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/structtensor/structtensor-go/structtensor"
)

// streamInput is an input convert streams: a regular file, or standard
// input as a stream.
type streamInput struct {
	r    io.Reader
	at   io.ReaderAt // random access from the start (files only)
	size int64       // bytes from the start (files), -1 if unknown
	// rewind goes back to the start; false if it cannot.
	rewind func() bool
	// written is called after each batch written: a stream stops keeping
	// what it read for a rewind.
	written func()
}

// fileInput is the regular file f from its current offset, or nil when f
// is not a regular file.
func fileInput(f *os.File) *streamInput {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	size := fi.Size() - start
	return &streamInput{
		r:       f,
		at:      io.NewSectionReader(f, start, size),
		size:    size,
		rewind:  func() bool { _, err := f.Seek(start, io.SeekStart); return err == nil },
		written: func() {},
	}
}

// convertStream converts the input src, of a format read in batches
// (format.batches), batch by batch: memory holds one batch of records
// and the output writer's buffers, whatever the input's size. It reports
// done = false, with src back at its start, when the input is better
// read whole: it holds no records or values that are not records (a
// StructTensor of rank 1 per batch), or its batches infer different
// specs. Then the whole read decides what the input is, so that a
// streamed conversion's output, and its error, are always what reading
// the whole input at once gives.
//
// Without a spec, a file of a format whose records carry no schema (JSON
// lines, JSON) is read twice: a first pass infers each batch's spec and
// checks that every batch infers the first one's (the whole input then
// infers that spec too; reading later batches with the first one's spec
// instead would type them differently from the whole read, e.g. integers
// in lists all empty in the first batch); the second pass writes. With
// --spec (or --to spec), one pass does. A format whose schema comes
// first (Arrow IPC, Parquet) still does not fix every batch's spec: a
// nullable column is a scalar in a batch without nulls and an optional
// value (a list of 0 or 1) in a batch with some, as in the whole read of
// that batch alone. So a file of such a format is scanned first too, and
// read whole when its batches differ; standard input, read once, is
// written batch by batch and stops at the first batch that differs. An error in a
// JSON batch is worded from the batch's view, so on such an error the
// whole read is done, where the input can be rewound, to report the
// error it gives. On standard output, the batches before an error stay
// written.
func convertStream(in *format, src *streamInput, spec structtensor.Spec, to string, w *output, stderr io.Writer) (done bool, err error) {
	size := src.size
	newWriter := decodeWriters[to]
	if to != "spec" && newWriter == nil {
		return false, nil
	}
	rewind := src.rewind
	// wholeError reads the input whole to report its error (err when
	// that read succeeds, or when the input cannot be read again).
	wholeError := func(err error) error {
		if in.finalErrors || !rewind() {
			return err
		}
		if _, werr := readWhole(in, src.r, spec); werr != nil {
			return werr
		}
		return err
	}
	// open starts reading batches from the input's start.
	open := func(counter *countingReader) (func(int) (structtensor.Value, error), error) {
		return in.batches(&batchSource{countingReader: counter, at: src.at, size: size}, spec)
	}

	// Pass 1: the spec of every batch (and their records), unless a spec
	// is given and records are to be written.
	var batchSpec structtensor.Spec
	var records int64
	if (spec == nil && (!in.schemaSpec || src.at != nil)) || to == "spec" {
		var progress *progress
		counter := &countingReader{r: src.r}
		if to == "spec" {
			progress = newConvertProgress(stderr, size)
		}
		batchSpec, records, err = scanBatches(open, counter, func(records int64) {
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
			b, err := structtensor.MarshalSpec(structtensor.WithRows(batchSpec, int(records)))
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
	counter := &countingReader{r: src.r}
	next, err := open(counter)
	if err != nil {
		if errors.Is(err, errNotRecords) && rewind() {
			return false, nil
		}
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
			if errors.Is(err, errNotRecords) && written == 0 && rewind() {
				return false, nil
			}
			return true, wholeError(err)
		}
		st, ok := v.(*structtensor.StructTensor)
		if !ok || st.Rank() != 1 {
			if written == 0 && rewind() {
				return false, nil
			}
			return true, fmt.Errorf("records %d..: not a batch of records (%v)", written, v.Spec())
		}
		if in.schemaSpec && spec == nil {
			// The schema fixes every batch's spec; a batch that differs
			// would type the whole read otherwise.
			s := structtensor.AnyRows(st.Spec())
			if batchSpec == nil {
				batchSpec = s
			} else if !s.Equal(batchSpec) {
				return true, fmt.Errorf("records %d..: spec %v, the first batch's %v", written, s, batchSpec)
			}
		}
		if err := bw.write(st); err != nil {
			return true, err
		}
		src.written()
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
		// Worded as the whole read words it (for an input read once).
		return true, wholeError(fmt.Errorf("%w: built %v, want %v", structtensor.ErrSpec, structtensor.WithRows(spec, int(written)), spec))
	}
	return true, bw.close()
}

// batchSource is what a format's batches read: the input, counting the
// bytes read (for progress), with random access to a file for a format
// that needs it (Parquet's footer is at its end).
type batchSource struct {
	*countingReader
	at   io.ReaderAt
	size int64
}

// errNeedsFile is a batch reader's refusal of an input without random access.
var errNeedsFile = errors.New("the format needs random access (a file)")

// ReadAt reads from the input's start, counting the bytes read.
func (b *batchSource) ReadAt(p []byte, off int64) (int, error) {
	if b.at == nil {
		return 0, errNeedsFile
	}
	n, err := b.at.ReadAt(p, off)
	b.n += int64(n)
	return n, err
}

// Size is the input's size, -1 if unknown (not a file).
func (b *batchSource) Size() int64 {
	if b.at == nil {
		return -1
	}
	return b.size
}

// errNotRecords is a batch reader's finding that the input is not a
// sequence of records (a JSON document that is not an array of
// objects): the whole read decides what it is.
var errNotRecords = errors.New("not a sequence of records")

// convertBatchWritten, when not nil, is called after each batch convert
// streams to its output with the input bytes read so far (a test's probe).
var convertBatchWritten func(inputRead int64)

// scanBatches reads every batch, checking that all have the first one's
// spec (less its number of rows), and returns that spec and the number
// of records.
func scanBatches(open func(*countingReader) (func(int) (structtensor.Value, error), error), r *countingReader, batch func(int64)) (structtensor.Spec, int64, error) {
	next, err := open(r)
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
