package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// streamInputOf is r as a regular file convert streams, or nil.
func streamInputOf(r io.Reader) *streamInput {
	if f, ok := r.(*os.File); ok {
		return fileInput(f)
	}
	return nil
}

// pipeInput returns standard input (r, not a regular file) as an input
// to stream, and the reader a whole read then reads (what is left of r,
// from its start). Where the output is known before the input ends (a
// spec given and records to write; a format whose schema comes first),
// r is read as a stream in one pass, keeping the bytes read until the
// first batch is written, so that an input that turns out to need the
// whole read (no records) can still be read whole. Otherwise (the spec
// is inferred from all the records, or the format needs a file) r is
// first copied to a temporary file, removed by cleanup: memory holds a
// batch either way, the disk the input in the second case.
func pipeInput(r io.Reader, in *format, spec structtensor.Spec, to string) (*streamInput, io.Reader, func(), error) {
	if to != "spec" && !in.needsFile && (spec != nil || in.schemaSpec) {
		rr := &replayReader{r: r, keep: true}
		return &streamInput{r: rr, size: -1, rewind: rr.rewind, written: rr.stopKeeping}, rr, func() {}, nil
	}
	tmp, err := os.CreateTemp("", "structtensor-stdin-*")
	if err != nil {
		return nil, nil, nil, err
	}
	// Unlinked at once where the system allows it (Unix): the open file
	// stays readable, and the copy of the input, as large as the input,
	// is gone however the process ends (a signal, a crash), not only
	// through cleanup.
	unlinked := os.Remove(tmp.Name()) == nil
	cleanup := func() {
		tmp.Close()
		if !unlinked {
			os.Remove(tmp.Name())
		}
	}
	if _, err := io.Copy(tmp, r); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return fileInput(tmp), tmp, cleanup, nil
}

// replayReader reads r, keeping what it has read until stopKeeping, so
// that rewind can start it over from the beginning.
type replayReader struct {
	r      io.Reader
	kept   []byte
	keep   bool
	replay bytes.Reader
}

func (p *replayReader) Read(b []byte) (int, error) {
	if p.replay.Len() > 0 {
		return p.replay.Read(b)
	}
	n, err := p.r.Read(b)
	if p.keep {
		p.kept = append(p.kept, b[:n]...)
	}
	return n, err
}

// rewind starts the input over, once, if its start was kept.
func (p *replayReader) rewind() bool {
	if !p.keep {
		return false
	}
	p.keep = false
	p.replay.Reset(p.kept)
	p.kept = nil
	return true
}

// stopKeeping drops what was kept: the input can no longer start over.
func (p *replayReader) stopKeeping() { p.keep, p.kept = false, nil }

// jsonArrayBatches reads a JSON document that is an array of objects
// element by element (encoding/json's tokens), each object a record of a
// JSON-lines stream read in batches as jsonLinesBatches reads one. A
// document of another shape is errNotRecords (convert reads it whole).
func jsonArrayBatches(r io.Reader, spec structtensor.Spec) (func(int) (structtensor.Value, error), error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("%w: the document is not an array", errNotRecords)
	}
	return jsonLinesBatches(&jsonArrayLines{dec: dec}, spec)
}

// jsonArrayLines reads the elements of a JSON array (after its '[') as
// JSON lines: each element compacted onto a line of its own.
type jsonArrayLines struct {
	dec   *json.Decoder
	line  bytes.Buffer
	raw   json.RawMessage
	index int
	err   error
}

func (a *jsonArrayLines) Read(p []byte) (int, error) {
	for a.line.Len() == 0 {
		if a.err != nil {
			return 0, a.err
		}
		a.err = a.next()
	}
	return a.line.Read(p)
}

// next puts the next element, as a line, into a.line; io.EOF after the
// array's end (and nothing after it).
func (a *jsonArrayLines) next() error {
	if !a.dec.More() {
		if _, err := a.dec.Token(); err != nil { // ']'
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if _, err := a.dec.Token(); err != io.EOF {
			return fmt.Errorf("data after the JSON array (byte %d)", a.dec.InputOffset())
		}
		return io.EOF
	}
	a.raw = a.raw[:0]
	if err := a.dec.Decode(&a.raw); err != nil {
		return err
	}
	if len(a.raw) == 0 || a.raw[0] != '{' {
		return fmt.Errorf("%w: element %d is not an object", errNotRecords, a.index)
	}
	a.index++
	// An element spread over lines is compacted onto one; the common
	// element without a newline (none can be inside a string) is copied
	// as it is, saving a second scan.
	if bytes.IndexByte(a.raw, '\n') < 0 {
		a.line.Write(a.raw)
	} else if err := json.Compact(&a.line, a.raw); err != nil {
		return err
	}
	a.line.WriteByte('\n')
	return nil
}

// parquetBatches reads a Parquet file row group by row group (a batch is
// a row group, whatever the number of records asked for).
func parquetBatches(r io.Reader, _ structtensor.Spec) (func(int) (structtensor.Value, error), error) {
	src, ok := r.(interface {
		io.ReaderAt
		Size() int64
	})
	if !ok || src.Size() < 0 {
		return nil, errNeedsFile
	}
	f, err := stparquet.Open(src, src.Size(), stparquet.ReadOptions{})
	if err != nil {
		return nil, err
	}
	rg := 0
	return func(int) (structtensor.Value, error) {
		if rg == f.NumRowGroups() {
			return nil, io.EOF
		}
		s, err := f.ReadRowGroup(context.Background(), rg)
		rg++
		if err != nil {
			return nil, err
		}
		return s, nil
	}, nil
}
