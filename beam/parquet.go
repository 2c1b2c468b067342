package beam

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/structtensor/structtensor-go/stparquet"
)

func init() {
	beamsdk.RegisterType(reflect.TypeOf((*ParquetFile)(nil)).Elem())
	register.DoFn3x1[context.Context, []byte, func(ParquetFile), error](&matchParquetFn{})
	register.DoFn4x1[context.Context, *sdf.LockRTracker, ParquetFile, func(Rows), error](&readParquetFn{})
	register.Emitter1[ParquetFile]()
}

// ParquetOptions configure ReadParquet. The zero value reads every column,
// one row group per initial restriction.
type ParquetOptions struct {
	// Columns are dotted field paths to read (stparquet.ReadOptions.Columns);
	// none means every column.
	Columns []string
	// RowGroupsPerSplit is how many row groups an initial restriction
	// holds (default 1: a restriction per row group). Runners may split a
	// restriction of several row groups further while reading it.
	RowGroupsPerSplit int
}

// ParquetFile is one matched Parquet file: its size and the number of row
// groups its footer lists.
type ParquetFile struct {
	Path      string
	Size      int64
	RowGroups int64
}

// ReadParquet returns the rows of the Parquet files matching glob (any
// path Beam's filesystems know) as a PCollection of Rows, one element per
// row group, read by stparquet.File (memory holds one row group). A Rows'
// Positions are the row numbers in its file (there is no byte offset per
// row in Parquet). Each row group is a position of a splittable
// restriction, so the row groups of one large file are read in parallel;
// a row group is claimed by its index, so each is read exactly once
// whatever the splits. A corrupt file fails the pipeline naming the file,
// the row group and the column.
func ReadParquet(s beamsdk.Scope, glob string, opts ParquetOptions) beamsdk.PCollection {
	s = s.Scope("structtensor.ReadParquet")
	files := beamsdk.ParDo(s, &matchParquetFn{Glob: glob, Columns: opts.Columns}, beamsdk.Impulse(s))
	return beamsdk.ParDo(s, &readParquetFn{Columns: opts.Columns, RowGroupsPerSplit: int64(max(opts.RowGroupsPerSplit, 1))}, files)
}

// matchParquetFn expands the glob and reads each file's footer (checked
// as stparquet.Open checks it), so that a corrupt footer fails before any
// row is read and each file's restriction counts its row groups.
type matchParquetFn struct {
	Glob    string
	Columns []string
}

func (fn *matchParquetFn) ProcessElement(ctx context.Context, _ []byte, emit func(ParquetFile)) error {
	return matchFiles(ctx, fn.Glob, func(fs filesystem.Interface, p string) error {
		f, closeFile, err := openParquet(ctx, fs, p, fn.Columns)
		if err != nil {
			return err
		}
		emit(ParquetFile{Path: p, Size: f.size, RowGroups: int64(f.NumRowGroups())})
		closeFile()
		return nil
	})
}

// openedParquet is an open Parquet file and its size.
type openedParquet struct {
	*stparquet.File
	size int64
}

// openParquet opens path's footer through Beam's filesystem: with random
// access where the filesystem gives it (local files), else by reading the
// file into memory.
func openParquet(ctx context.Context, fs filesystem.Interface, path string, columns []string) (openedParquet, func(), error) {
	size, err := fs.Size(ctx, path)
	if err != nil {
		return openedParquet{}, nil, fmt.Errorf("structtensor/beam: %s: %w", path, err)
	}
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		return openedParquet{}, nil, fmt.Errorf("structtensor/beam: %s: %w", path, err)
	}
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		data, err := io.ReadAll(io.LimitReader(rc, size+1))
		if err != nil {
			rc.Close()
			return openedParquet{}, nil, fmt.Errorf("structtensor/beam: %s: %w", path, err)
		}
		ra, size = bytes.NewReader(data), int64(len(data))
	}
	f, err := stparquet.Open(ra, size, stparquet.ReadOptions{Columns: columns, Name: path})
	if err != nil {
		rc.Close()
		return openedParquet{}, nil, fmt.Errorf("structtensor/beam: %w", err)
	}
	return openedParquet{f, size}, func() { rc.Close() }, nil
}

// readParquetFn reads row groups: its restriction is a range of row group
// indices, and each index is claimed before its row group is read.
type readParquetFn struct {
	Columns           []string
	RowGroupsPerSplit int64
}

func (fn *readParquetFn) CreateInitialRestriction(f ParquetFile) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: f.RowGroups}
}

func (fn *readParquetFn) SplitRestriction(f ParquetFile, rest offsetrange.Restriction) []offsetrange.Restriction {
	return rest.EvenSplits(max((rest.End-rest.Start+fn.RowGroupsPerSplit-1)/fn.RowGroupsPerSplit, 1))
}

// RestrictionSize is the restriction's share of the file's bytes, so that
// runners weigh a few large row groups above many small ones.
func (fn *readParquetFn) RestrictionSize(f ParquetFile, rest offsetrange.Restriction) float64 {
	if f.RowGroups == 0 {
		return 0
	}
	return float64(f.Size) * rest.Size() / float64(f.RowGroups)
}

func (fn *readParquetFn) CreateTracker(rest offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(rest))
}

func (fn *readParquetFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, pf ParquetFile, emit func(Rows)) error {
	rest := rt.GetRestriction().(offsetrange.Restriction)
	if rest.Start >= rest.End {
		return nil
	}
	fs, err := filesystem.New(ctx, pf.Path)
	if err != nil {
		return err
	}
	defer fs.Close()
	f, closeFile, err := openParquet(ctx, fs, pf.Path, fn.Columns)
	if err != nil {
		return err
	}
	defer closeFile()
	if int64(f.NumRowGroups()) != pf.RowGroups {
		return fmt.Errorf("structtensor/beam: %s: %d row groups, %d when the file was matched (it changed during the run)", pf.Path, f.NumRowGroups(), pf.RowGroups)
	}
	var first int64 // the row number of row group rg's first row
	for rg := range rest.Start {
		first += f.RowGroupRows(int(rg))
	}
	for rg := rest.Start; rt.TryClaim(rg); rg++ {
		t, err := f.ReadRowGroup(ctx, int(rg))
		if err != nil {
			return fmt.Errorf("structtensor/beam: %w", err)
		}
		if n := t.NumRows(); n > 0 {
			positions := make([]int64, n)
			for i := range positions {
				positions[i] = first + int64(i)
			}
			emit(Rows{File: pf.Path, Positions: positions, Tensor: t})
		}
		first += f.RowGroupRows(int(rg))
	}
	return nil
}
