package stparquet

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// File is a Parquet file opened for reading row group by row group: Open
// reads and checks its footer only, and each ReadRowGroup reads the
// column chunks of one row group, so memory holds one row group's pages
// and values, whatever the file's size. A File is not safe for concurrent
// use.
type File struct {
	pf     *file.Reader
	fr     *pqarrow.FileReader
	leaves []int
	opts   ReadOptions
	// firstRow[rg] is the number of rows the footer claims before row
	// group rg (for error messages only: claims are never allocated).
	firstRow []int64
	closer   io.Closer
}

// Open opens the Parquet file held in r's first size bytes, reading only
// its footer. The footer is untrusted: its length is checked against
// size before it is read (so Open allocates at most size bytes for it),
// every column chunk's byte range must lie inside the file, and the Arrow
// schema it stores is validated before it is decoded; a footer that fails
// is ErrCorrupt. opts.Columns that name no column are ErrNoColumn.
func Open(r io.ReaderAt, size int64, opts ReadOptions) (f *File, err error) {
	defer recoverCorrupt(&err, opts.Name, "footer")
	if size < 0 {
		return nil, fmt.Errorf("%w: %sfile size %d", ErrCorrupt, prefix(opts.Name), size)
	}
	if err := readFooter(r, size); err != nil {
		return nil, fmt.Errorf("%w: %s%w", ErrCorrupt, prefix(opts.Name), err)
	}
	pf, err := file.NewParquetReader(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, fmt.Errorf("%w: %s%w", ErrCorrupt, prefix(opts.Name), err)
	}
	f = &File{pf: pf, opts: opts}
	if err := checkStoredSchema(pf, opts.Name); err != nil {
		return nil, err
	}
	if err := checkChunks(pf, size, opts.Name); err != nil {
		return nil, err
	}
	// Batches of readBatchRows: arrow-go reserves the rows it is asked for
	// before decoding a page, so asking for a row group's claimed count
	// would allocate whatever the footer says. In batches, memory follows
	// the values the pages actually hold.
	f.fr, err = pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, memory.NewGoAllocator())
	if err != nil {
		return nil, fmt.Errorf("%w: %sschema: %w", ErrCorrupt, prefix(opts.Name), err)
	}
	if f.leaves, err = projectLeaves(f.fr.Manifest, opts.Columns, opts.Name); err != nil {
		return nil, err
	}
	if f.leaves == nil {
		f.leaves = make([]int, pf.MetaData().Schema.NumColumns())
		for i := range f.leaves {
			f.leaves[i] = i
		}
	}
	md := pf.MetaData()
	f.firstRow = make([]int64, md.NumRowGroups()+1)
	for rg := range md.NumRowGroups() {
		f.firstRow[rg+1] = f.firstRow[rg] + md.RowGroup(rg).NumRows()
	}
	return f, nil
}

// OpenFile opens the Parquet file at path (see Open); Close closes it.
func OpenFile(path string, opts ReadOptions) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = path
	}
	f, err := Open(fd, fi.Size(), opts)
	if err != nil {
		fd.Close()
		return nil, err
	}
	f.closer = fd
	return f, nil
}

// Close closes the file OpenFile opened; for a File of Open it does
// nothing (the caller owns r).
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// NumRowGroups returns the number of row groups in the file.
func (f *File) NumRowGroups() int { return f.pf.NumRowGroups() }

// RowGroupRows returns the number of rows the footer claims for row group
// rg (ReadRowGroup checks the claim against the pages).
func (f *File) RowGroupRows(rg int) int64 { return f.pf.MetaData().RowGroup(rg).NumRows() }

// NumRows returns the number of rows the footer claims for the whole file.
func (f *File) NumRows() int64 { return f.firstRow[len(f.firstRow)-1] }

// ReadRowGroup reads row group rg (0 <= rg < NumRowGroups) as a rank-1
// StructTensor of the projected columns. Errors are ErrCorrupt naming the
// file, the row group, its rows and the column.
func (f *File) ReadRowGroup(ctx context.Context, rg int) (*st.StructTensor, error) {
	if rg < 0 || rg >= f.NumRowGroups() {
		return nil, fmt.Errorf("structtensor/parquet: %srow group %d of %d", prefix(f.opts.Name), rg, f.NumRowGroups())
	}
	return f.read(ctx, []int{rg})
}

// RowGroups returns an iterator over the file's row groups in order, each
// read by ReadRowGroup, so memory holds one row group at a time. It ends
// after the last row group, or after yielding an error with a nil value
// (ctx's error once ctx is done).
func (f *File) RowGroups(ctx context.Context) iter.Seq2[*st.StructTensor, error] {
	return func(yield func(*st.StructTensor, error) bool) {
		for rg := range f.NumRowGroups() {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			s, err := f.ReadRowGroup(ctx, rg)
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// read reads the row groups groups (in order) as one StructTensor.
func (f *File) read(ctx context.Context, groups []int) (s *st.StructTensor, err error) {
	// The Parquet decoder is third-party code working on untrusted bytes;
	// a panic there is reported as corrupt input, never passed on.
	defer recoverCorrupt(&err, f.opts.Name, "data")
	var schema *arrow.Schema
	var chunks [][]arrow.Array
	release := func() {
		for _, cs := range chunks {
			for _, c := range cs {
				c.Release()
			}
		}
	}
	var rows int64
	for _, rg := range groups {
		n := f.RowGroupRows(rg)
		got, err := readRowGroup(ctx, f.fr, f.leaves, rg, func(rec arrow.RecordBatch) {
			if schema == nil {
				schema = rec.Schema()
				chunks = make([][]arrow.Array, rec.NumCols())
			}
			for i := range chunks {
				chunks[i] = append(chunks[i], retyped(rec.Column(i)))
			}
		})
		if err == nil && got != n {
			err = fmt.Errorf(": the footer claims %d rows, the pages hold %d", n, got)
		} else if err != nil {
			if ctx.Err() != nil {
				release()
				return nil, ctx.Err()
			}
			err = fmt.Errorf("%s: %w", failingColumn(ctx, f.fr, f.leaves, rg), err)
		}
		if err != nil {
			release()
			return nil, fmt.Errorf("%w: %srow group %d (rows %d to %d)%s", ErrCorrupt, prefix(f.opts.Name), rg, f.firstRow[rg], f.firstRow[rg]+n, err)
		}
		rows += n
	}
	if schema == nil {
		// No row groups, or none with a batch: an empty table of the file's (projected) schema.
		var empty []arrow.Array
		if schema, empty, err = emptyColumns(ctx, f.fr, f.leaves, groups, f.opts.Name); err != nil {
			return nil, err
		}
		chunks = make([][]arrow.Array, len(empty))
		for i, c := range empty {
			chunks[i] = []arrow.Array{c}
		}
	}
	fields := make([]arrow.Field, len(chunks))
	for i := range fields {
		fields[i] = schema.Field(i)
		if len(chunks[i]) > 0 {
			fields[i].Type = chunks[i][0].DataType()
		}
	}
	schema = arrow.NewSchema(fields, nil)
	cols := make([]arrow.Column, len(chunks))
	for i := range cols {
		ch := arrow.NewChunked(schema.Field(i).Type, chunks[i])
		cols[i] = *arrow.NewColumn(schema.Field(i), ch)
		ch.Release()
	}
	release()
	tbl := array.NewTable(schema, cols, rows)
	for i := range cols {
		cols[i].Release()
	}
	defer tbl.Release()
	return f.opts.FromArrow.Table(tbl)
}

// recoverCorrupt turns a panic of the Parquet decoder (third-party code
// working on untrusted bytes) into ErrCorrupt naming the file and what was
// being read.
func recoverCorrupt(err *error, name, what string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%w: %s%s: %v", ErrCorrupt, prefix(name), what, p)
	}
}

// prefix is "name: ", or nothing for a file without a name.
func prefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}
