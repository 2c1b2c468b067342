package beam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/structtensor/structtensor-go/tfrecord"
)

func init() {
	beamsdk.RegisterType(reflect.TypeOf((*File)(nil)).Elem())
	beamsdk.RegisterType(reflect.TypeOf((*fileRange)(nil)).Elem())
	beamsdk.RegisterType(reflect.TypeOf((*RecordBatch)(nil)).Elem())
	beamsdk.RegisterType(reflect.TypeOf((*splitSpan)(nil)).Elem())
	register.DoFn3x1[context.Context, []byte, func(fileRange), error](&matchFn{})
	register.DoFn5x1[context.Context, *sdf.LockRTracker, fileRange, func(RecordBatch), func(splitSpan), error](&readFn{})
	register.Function1x2[splitSpan, string, splitSpan](keySpan)
	register.Function2x1[string, func(*splitSpan) bool, error](checkSpans)
	register.Emitter1[fileRange]()
	register.Emitter1[RecordBatch]()
	register.Emitter1[splitSpan]()
	register.Iter1[splitSpan]()
}

// Format names a record framing.
type Format string

const (
	// TFRecord files: length, length CRC, data, data CRC per record.
	TFRecord Format = "tfrecord"
	// Delimited files: a base-128 varint length before each record.
	Delimited Format = "delimited"
)

// ReadOptions configure Read. The zero value reads TFRecord files with
// the compression detected per file, split in 64 MiB ranges.
type ReadOptions struct {
	// Format is the framing (default TFRecord).
	Format Format
	// Compression is the files' compression, by tfrecord.ParseCompression's
	// names; "" or "auto" (the default) detects it per file from its
	// first bytes.
	Compression string
	// Whole reads every file from its start by one reader, never split:
	// for TFRecord files whose payloads can themselves hold valid frames
	// (a record that is a TFRecord file), which a reader starting mid-file
	// cannot tell from record boundaries. Compressed and delimited files
	// are always read whole.
	Whole bool
	// SplitSize is the size of the byte ranges an uncompressed TFRecord
	// file is first split into (default 64 MiB). Runners may split further.
	SplitSize int64
	// BatchBytes bounds the data of one RecordBatch (default 4 MiB; a
	// batch always holds at least one record).
	BatchBytes int64
	// MaxRecordSize is the longest record accepted (default
	// tfrecord.DefaultMaxRecordSize); a longer one fails the read.
	MaxRecordSize int64
}

func (o ReadOptions) withDefaults() (ReadOptions, tfrecord.Compression, error) {
	c := tfrecord.CompressionAuto
	if o.Compression != "" {
		var err error
		if c, err = tfrecord.ParseCompression(o.Compression); err != nil {
			return o, c, fmt.Errorf("structtensor/beam: %w", err)
		}
	}
	if o.Format == "" {
		o.Format = TFRecord
	}
	if o.SplitSize <= 0 {
		o.SplitSize = 64 << 20
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 4 << 20
	}
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = tfrecord.DefaultMaxRecordSize
	}
	return o, c, nil
}

// File is one input file as matched, with how it is read.
type File struct {
	Path        string
	Size        int64
	Compression tfrecord.Compression // resolved: never CompressionAuto
	Whole       bool                 // read by one reader from the start
}

// RecordBatch is a run of records of one file in one buffer: record i is
// Data[Offsets[i]:Offsets[i+1]], and its framing starts at byte
// Positions[i] of the file (of the uncompressed stream when Compressed).
// Decode hands Data and Offsets to the engine as they are.
type RecordBatch struct {
	File       string
	Compressed bool
	Data       []byte
	Offsets    []int64
	Positions  []int64
}

// Len returns the number of records in the batch.
func (b RecordBatch) Len() int { return len(b.Positions) }

// Read returns the records of the files matching glob (any path Beam's
// filesystems know) as a PCollection of RecordBatch. A file that cannot be
// read, or a corrupt record, fails the pipeline with an error naming the
// file and the byte offset; see the package documentation for how split
// reads prove that they covered every byte.
func Read(s beamsdk.Scope, glob string, opts ReadOptions) (beamsdk.PCollection, error) {
	parts, err := readParts(s.Scope("structtensor.Read"), glob, 1, opts)
	if err != nil {
		return beamsdk.PCollection{}, err
	}
	return parts[0], nil
}

// ReadParts is Read with the files' bytes divided into n parts of about
// equal size, each read by a separate branch of the pipeline: the result
// holds each part's RecordBatch elements. Steps applied to one part are
// fused with its read, so the parts' decoding runs in n stages of their
// own, which a runner that runs a stage's pending elements as one bundle
// (Prism) runs side by side on its workers; flatten the parts once they
// are small (counted, summarised), not before the costly steps. A file
// may be cut between parts: its byte ranges are read and checked for
// coverage as splits of one read are (compressed, delimited and
// ReadOptions.Whole files are never cut, and go to the part where their
// first byte falls). Each part lists the glob itself when the pipeline
// runs. See "Parallel reads" in the package documentation.
func ReadParts(s beamsdk.Scope, glob string, n int, opts ReadOptions) ([]beamsdk.PCollection, error) {
	if n < 1 {
		return nil, fmt.Errorf("structtensor/beam: ReadParts: %d parts (want at least 1)", n)
	}
	return readParts(s.Scope("structtensor.ReadParts"), glob, n, opts)
}

func readParts(s beamsdk.Scope, glob string, n int, opts ReadOptions) ([]beamsdk.PCollection, error) {
	opts, compression, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.Format != TFRecord && opts.Format != Delimited {
		return nil, fmt.Errorf("structtensor/beam: unknown format %q (want %q or %q)", opts.Format, TFRecord, Delimited)
	}
	read := &readFn{Format: opts.Format, SplitSize: opts.SplitSize, BatchBytes: opts.BatchBytes, MaxRecordSize: opts.MaxRecordSize}
	out := make([]beamsdk.PCollection, n)
	spans := make([]beamsdk.PCollection, n)
	for part := range n {
		ps := s
		if n > 1 {
			ps = s.Scope(fmt.Sprintf("part%d", part))
		}
		ranges := beamsdk.ParDo(ps, &matchFn{Glob: glob, Format: opts.Format, Compression: compression, Whole: opts.Whole,
			Part: part, Parts: n}, beamsdk.Impulse(ps))
		out[part], spans[part] = beamsdk.ParDo2(ps, read, ranges)
	}
	all := spans[0]
	if n > 1 {
		all = beamsdk.Flatten(s, spans...)
	}
	beamsdk.ParDo0(s, checkSpans, beamsdk.GroupByKey(s, beamsdk.ParDo(s, keySpan, all)))
	return out, nil
}

// matchFn expands the glob, decides per file how it is read and emits the
// byte ranges of part Part of Parts (see partRanges).
type matchFn struct {
	Glob        string
	Format      Format
	Compression tfrecord.Compression
	Whole       bool
	Part, Parts int
}

// fileRange is a file and the bytes [Start, End) of it one read covers:
// all of it for a file read whole.
type fileRange struct {
	File       File
	Start, End int64
}

func (fn *matchFn) ProcessElement(ctx context.Context, _ []byte, emit func(fileRange)) error {
	type listed struct {
		path string
		size int64
	}
	var files []listed
	var fs filesystem.Interface
	err := matchFiles(ctx, fn.Glob, func(f filesystem.Interface, p string) error {
		size, err := f.Size(ctx, p)
		if err != nil {
			return fmt.Errorf("structtensor/beam: %s: %w", p, err)
		}
		fs = f
		files = append(files, listed{p, size})
		return nil
	})
	if err != nil {
		return err
	}
	sizes := make([]int64, len(files))
	for i, f := range files {
		sizes[i] = f.size
	}
	return partRanges(sizes, fn.Part, max(fn.Parts, 1), func(i int, start, end int64, first bool) error {
		f, err := fn.file(ctx, fs, files[i].path, files[i].size)
		if err != nil {
			return err
		}
		switch {
		case !f.Whole:
			emit(fileRange{File: f, Start: start, End: end})
		case first:
			emit(fileRange{File: f, Start: 0, End: f.Size})
		}
		return nil
	})
}

// partRanges calls each with the byte ranges of the files (of the given
// sizes, in order) that fall in part part of parts: the files' bytes laid
// end to end are cut into parts of equal length, and part k holds the
// bytes [k*total/parts, (k+1)*total/parts) of that sequence. first says
// that the range holds the file's first byte (for an empty file, that the
// file's place in the sequence is in this part), the part that reads a
// file which cannot be cut. Every byte of every file is in exactly one
// part's ranges, and every file has its first byte in exactly one part.
func partRanges(sizes []int64, part, parts int, each func(i int, start, end int64, first bool) error) error {
	var total int64
	for _, n := range sizes {
		total += n
	}
	// cut(k) is total*k/parts rounded down, computed without the
	// product total*k, which could overflow.
	cut := func(k int) int64 {
		q, r := total/int64(parts), total%int64(parts)
		return q*int64(k) + r*int64(k)/int64(parts)
	}
	lo, hi := cut(part), cut(part+1)
	var at int64 // where file i starts in the sequence
	for i, n := range sizes {
		start, end := max(lo-at, 0), min(hi-at, n)
		// The file's first byte (its place, when it is empty) is in this
		// part; the last part also takes empty files at the very end.
		first := at >= lo && (at < hi || part == parts-1 && at == hi)
		if start < end || first {
			if err := each(i, start, max(start, end), first); err != nil {
				return err
			}
		}
		at += n
	}
	return nil
}

// matchFiles calls each for every file glob matches, in path order (so a
// pipeline's files, and their errors, come in the same order on every
// run); a glob matching nothing is an error, not an empty input.
func matchFiles(ctx context.Context, glob string, each func(fs filesystem.Interface, path string) error) error {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return err
	}
	defer fs.Close()
	paths, err := fs.List(ctx, glob)
	if err != nil {
		return fmt.Errorf("structtensor/beam: listing %q: %w", glob, err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("structtensor/beam: no file matches %q", glob)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := each(fs, p); err != nil {
			return err
		}
	}
	return nil
}

func (fn *matchFn) file(ctx context.Context, fs filesystem.Interface, path string, size int64) (File, error) {
	f := File{Path: path, Size: size, Compression: fn.Compression, Whole: fn.Whole || fn.Format == Delimited}
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		return f, fmt.Errorf("structtensor/beam: %s: %w", path, err)
	}
	defer rc.Close()
	if f.Compression == tfrecord.CompressionAuto {
		head := make([]byte, 12)
		n, err := io.ReadFull(rc, head)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return f, fmt.Errorf("structtensor/beam: %s: %w", path, err)
		}
		f.Compression = tfrecord.SniffCompression(head[:n], fn.Format == Delimited)
	}
	// Splitting needs random access (io.ReaderAt), which local files have.
	if _, ok := rc.(io.ReaderAt); !ok || f.Compression != tfrecord.CompressionNone {
		f.Whole = true
	}
	return f, nil
}

// splitSpan is what one split read reports about the byte range it
// covered: its final restriction [Start, End), the record boundary it
// synchronised on (Sync, the first frame at or after Start) and the
// boundary where its chain of records crossed End (Cross). Err is the read
// error of the record at Cross, if there was one.
type splitSpan struct {
	File             string
	Size, Start, End int64
	Sync, Cross      int64
	Err              string
}

// readFn is the splittable reader. A whole-file read has the restriction
// [0, 1) (one position, so it cannot be split) and reads the file through;
// a split read has its range's bytes (all the file's, [0, Size), unless
// ReadParts cut it) and claims each record by the byte offset where its
// framing starts.
type readFn struct {
	Format        Format
	SplitSize     int64
	BatchBytes    int64
	MaxRecordSize int64
}

func (fn *readFn) CreateInitialRestriction(r fileRange) offsetrange.Restriction {
	if r.File.Whole {
		return offsetrange.Restriction{Start: 0, End: 1}
	}
	return offsetrange.Restriction{Start: r.Start, End: r.End}
}

func (fn *readFn) SplitRestriction(r fileRange, rest offsetrange.Restriction) []offsetrange.Restriction {
	if r.File.Whole {
		return []offsetrange.Restriction{rest}
	}
	return rest.SizedSplits(fn.SplitSize)
}

func (fn *readFn) RestrictionSize(r fileRange, rest offsetrange.Restriction) float64 {
	if r.File.Whole {
		return float64(r.File.Size)
	}
	return rest.Size()
}

func (fn *readFn) CreateTracker(rest offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(rest))
}

func (fn *readFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, r fileRange, emit func(RecordBatch), emitSpan func(splitSpan)) error {
	f := r.File
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("structtensor/beam: %s: %w", f.Path, err)
	}
	defer rc.Close()
	if f.Whole {
		return fn.readWhole(rt, f, rc, emit)
	}
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		return fmt.Errorf("structtensor/beam: %s: the filesystem gives no random access, so the file cannot be split", f.Path)
	}
	return fn.readSplit(rt, f, ra, emit, emitSpan)
}

func (fn *readFn) options(f File) tfrecord.Options {
	return tfrecord.Options{Compression: f.Compression, MaxBatchBytes: fn.BatchBytes, MaxRecordSize: fn.MaxRecordSize}
}

// framing returns the bytes of framing around a record of n data bytes.
func (fn *readFn) framing(n int64) int64 {
	if fn.Format == Delimited {
		k := int64(1)
		for v := uint64(n); v >= 0x80; v >>= 7 {
			k++
		}
		return k
	}
	return 16
}

func (fn *readFn) readWhole(rt *sdf.LockRTracker, f File, r io.Reader, emit func(RecordBatch)) error {
	if !rt.TryClaim(int64(0)) {
		return nil
	}
	var rr tfrecord.RecordReader
	if fn.Format == Delimited {
		rr = tfrecord.NewDelimitedReader(r, fn.options(f))
	} else {
		rr = tfrecord.NewReader(r, fn.options(f))
	}
	var pos int64
	for {
		var b tfrecord.Batch
		err := rr.ReadBatch(&b, 0)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readError(f, err)
		}
		var out RecordBatch
		out, pos = fn.batch(f, &b, pos)
		emit(out)
	}
}

// batch wraps b, whose first record's framing starts at pos, and returns
// the position after its last record.
func (fn *readFn) batch(f File, b *tfrecord.Batch, pos int64) (RecordBatch, int64) {
	out := RecordBatch{File: f.Path, Compressed: f.Compression != tfrecord.CompressionNone,
		Data: b.Data, Offsets: b.Offsets, Positions: make([]int64, b.Len())}
	for i := range out.Positions {
		out.Positions[i] = pos
		n := b.Offsets[i+1] - b.Offsets[i]
		pos += fn.framing(n) + n
	}
	return out, pos
}

func (fn *readFn) readSplit(rt *sdf.LockRTracker, f File, ra io.ReaderAt, emit func(RecordBatch), emitSpan func(splitSpan)) error {
	start := rt.GetRestriction().(offsetrange.Restriction).Start
	sync := start
	if start > 0 {
		var err error
		if sync, err = tfrecord.FindRecord(ra, start, f.Size, fn.MaxRecordSize); err != nil {
			return fmt.Errorf("structtensor/beam: %s: %w", f.Path, err)
		}
	}
	r := tfrecord.NewReader(io.NewSectionReader(ra, sync, f.Size-sync), fn.options(f))
	pos := sync
	var readErr string
	for {
		var b tfrecord.Batch
		err := r.ReadBatch(&b, 0)
		if err == io.EOF {
			rt.TryClaim(f.Size) // past every restriction: marks this one done
			break
		}
		if err != nil {
			if rt.TryClaim(pos) {
				if start > 0 {
					err = fmt.Errorf("%w (this split read from byte %d, the first valid frame at or after byte %d; "+
						"if a record's payload holds a valid TFRecord frame, read such files whole: ReadOptions.Whole)", shiftOffset(err, sync), sync, start)
				}
				return readError(f, err)
			}
			readErr = shiftOffset(err, sync).Error()
			break
		}
		out, next := fn.batch(f, &b, pos)
		n := 0
		for n < out.Len() && rt.TryClaim(out.Positions[n]) {
			n++
		}
		if pos = next; n < out.Len() {
			pos = out.Positions[n]
		}
		if n > 0 {
			out.Positions, out.Offsets = out.Positions[:n], out.Offsets[:n+1]
			out.Data = out.Data[:out.Offsets[n]]
			emit(out)
		}
		if n < len(b.Offsets)-1 {
			break
		}
	}
	rest := rt.GetRestriction().(offsetrange.Restriction)
	emitSpan(splitSpan{File: f.Path, Size: f.Size, Start: rest.Start, End: rest.End, Sync: sync, Cross: pos, Err: readErr})
	return nil
}

// shiftOffset makes a read error's offset, relative to a reader that
// started at byte base of the file, absolute.
func shiftOffset(err error, base int64) error {
	var re *tfrecord.RecordError
	if errors.As(err, &re) {
		c := *re
		c.Offset += base
		return &c
	}
	return err
}

// readError names the file in a read error.
func readError(f File, err error) error {
	where := ""
	if f.Compression != tfrecord.CompressionNone {
		where = fmt.Sprintf(" (%v; offsets in the uncompressed stream)", f.Compression)
	}
	return fmt.Errorf("structtensor/beam: %s%s: %w", f.Path, where, err)
}

func keySpan(s splitSpan) (string, splitSpan) { return s.File, s }

// ErrUncovered reports split reads of a file whose record chains do not
// meet: bytes between two splits were skipped, because they are corrupt
// or because a record's payload holds a valid TFRecord frame.
var ErrUncovered = errors.New("structtensor/beam: split reads do not cover the file")

// checkSpans proves that the split reads of one file together read every
// record exactly once: their ranges tile [0, Size), and each split's chain
// of records ends exactly where the next split synchronised. Records are
// claimed by start offset, so the tiling alone shows no record was read
// twice; the meeting chains show that no bytes were skipped.
func checkSpans(path string, iter func(*splitSpan) bool) error {
	var spans []splitSpan
	var s splitSpan
	for iter(&s) {
		spans = append(spans, s)
	}
	slices.SortFunc(spans, func(a, b splitSpan) int { return int(min(max(a.Start-b.Start, -1), 1)) })
	var end, cross int64
	for i, s := range spans {
		if s.Start != end {
			return fmt.Errorf("%w: %s: the split reads cover bytes up to %d, then from %d", ErrUncovered, path, end, s.Start)
		}
		if i > 0 && s.Sync != cross {
			return uncovered(path, spans[i-1], s.Sync)
		}
		end, cross = s.End, s.Cross
	}
	last := spans[len(spans)-1]
	if end != last.Size {
		return fmt.Errorf("%w: %s: the split reads end at byte %d of %d", ErrUncovered, path, end, last.Size)
	}
	if cross != last.Size {
		return uncovered(path, last, last.Size)
	}
	return nil
}

func uncovered(path string, before splitSpan, next int64) error {
	if before.Err != "" {
		return fmt.Errorf("%w: %s: %s", ErrUncovered, path, before.Err)
	}
	return fmt.Errorf("%w: %s: the records before byte %d lead to a record at byte %d, but the next valid frame after it is at byte %d: "+
		"either the bytes in between are corrupt, or a record's payload holds a valid TFRecord frame (read such files whole: ReadOptions.Whole)",
		ErrUncovered, path, before.End, before.Cross, next)
}
