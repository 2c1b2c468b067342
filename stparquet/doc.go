// Package stparquet writes StructTensors to nested Parquet files and reads
// them back, through arrow-go's pqarrow.
//
// A StructTensor already has Parquet's shape: a record of named fields,
// repeated fields as ragged dimensions, groups as nested structs. The
// mapping therefore goes through Arrow (package starrow of this module) and
// adds nothing of its own: Write exports the value to an Arrow record batch
// (zero-copy) and pqarrow shreds it into repetition and definition levels;
// Read assembles Arrow arrays from the levels and imports them. The Arrow
// schema is stored in the file, so large_list, large_utf8 and fixed-size
// dimensions come back as they were written; files written by other tools
// (pyarrow's list<struct<list<...>>> with int32 offsets and nullable
// fields) read with offsets widened and nulls mapped as package starrow
// documents.
//
// Projection is by field path: ReadOptions.Columns = ["ingredients.name"]
// reads only the Parquet leaf columns under that path, passing through list
// levels, so a wide file costs only what is asked for.
//
// Parquet bytes are untrusted input: a corrupt file returns ErrCorrupt
// naming the row group (and its rows) and the column. pqarrow decodes on
// goroutines of its own and allocates what headers claim, so before it
// runs, Read walks the footer's Thrift encoding (footer.go: no list, map
// or string may claim more than the bytes after it, since arrow-go
// reserves what a list claims before reading it), checks the footer
// against the file (every column chunk's
// range inside it) and verifies the stored Arrow schema message
// (starrow.ValidateIPC); a panic that still escapes the decoder on the
// calling goroutine is reported as ErrCorrupt. The footer's row counts are
// claims, not sizes to allocate: Read asks pqarrow for rows in batches of
// a bounded size, so memory follows the values the pages actually hold,
// and a row group whose pages hold another number of rows than its footer
// claims is ErrCorrupt. (Pages can still expand: a run-length encoded page
// of a few bytes may hold millions of rows, which Read returns; Read holds
// the whole file's value, so its memory is proportional to that value.)
//
// File reads a file row group by row group: Open (an io.ReaderAt and the
// file's size) reads and checks only the footer, with the same checks,
// and File.RowGroups yields one StructTensor per row group, so memory
// holds one row group whatever the file's size. The row groups, joined,
// are Read's value; errors name the file (ReadOptions.Name), the row
// group, its rows and the column.
//
// Write refuses, before writing a byte, a schema that Parquet readers do
// not read back (ErrTooDeep): more than MaxNesting levels of lists and
// structs under a field, or Parquet schema paths longer than
// MaxParquetSchemaDepth nodes (a list takes two, so about 49 nested lists).
//
// The package is named stparquet (StructTensor <-> Parquet), not parquet,
// so that it does not clash with arrow-go's parquet packages, which callers
// often import alongside; see package starrow for the convention.
package stparquet
