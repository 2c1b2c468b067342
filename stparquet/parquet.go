package stparquet

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/structtensor/structtensor-go/starrow"
	st "github.com/structtensor/structtensor-go/structtensor"
)

var (
	// ErrNoColumn marks a projected path that names no column of the file.
	ErrNoColumn = errors.New("structtensor/parquet: no such column")
	// ErrCorrupt marks a file that is not valid Parquet or whose data
	// cannot be decoded.
	ErrCorrupt = errors.New("structtensor/parquet: corrupt file")
	// ErrTooDeep marks a schema nested deeper than Parquet readers accept
	// (see MaxNesting).
	ErrTooDeep = errors.New("structtensor/parquet: schema nested too deep")
)

// MaxNesting bounds the nesting Write accepts, so that every file it
// writes can be read back: a field holds at most MaxNesting levels of
// lists and structs under it (the bound Read applies to the Arrow schema
// a file stores), and a Parquet schema path has at most
// MaxParquetSchemaDepth nodes counting the root and the leaf (Arrow C++'s
// and so pyarrow's default limit; a list takes two nodes, a struct one).
const (
	MaxNesting            = 64
	MaxParquetSchemaDepth = 100
)

// Write writes s (rank >= 1) to w as a Parquet file of one row group per
// Writer.Write call, with the nested schema of its Arrow form (see
// starrow.ToArrow) and snappy compression.
func Write(w io.Writer, s *st.StructTensor) error {
	pw := NewWriter(w)
	if err := pw.Write(s); err != nil {
		return err
	}
	return pw.Close()
}

// Writer writes StructTensors of one schema as the row groups of a
// Parquet file.
type Writer struct {
	w      io.Writer
	fw     *pqarrow.FileWriter
	schema *arrow.Schema
	n      int
}

// NewWriter returns a Writer to w. The file's schema is that of the first
// batch written.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write appends s as a row group.
func (w *Writer) Write(s *st.StructTensor) error {
	rec, err := starrow.ToArrow(s)
	if err != nil {
		return err
	}
	defer rec.Release()
	return w.WriteRecord(rec)
}

// WriteRecord appends an Arrow record batch as a row group.
func (w *Writer) WriteRecord(rec arrow.RecordBatch) error {
	if w.fw == nil {
		if err := checkNesting(rec.Schema()); err != nil {
			return err
		}
		props := pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Snappy), pq.WithMaxRowGroupLength(1<<62))
		fw, err := pqarrow.NewFileWriter(rec.Schema(), w.w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return fmt.Errorf("parquet schema: %w", err)
		}
		w.fw, w.schema = fw, rec.Schema()
	} else if !w.schema.Equal(rec.Schema()) {
		return fmt.Errorf("structtensor/parquet: batch %d has schema %v, the file has %v", w.n, rec.Schema(), w.schema)
	}
	if err := w.fw.Write(rec); err != nil {
		return fmt.Errorf("parquet row group %d: %w", w.n, err)
	}
	w.n++
	return nil
}

// Close writes the footer. A file with no batch cannot be written: its
// schema is unknown.
func (w *Writer) Close() error {
	if w.fw == nil {
		return errors.New("structtensor/parquet: nothing written, so no schema for the file")
	}
	return w.fw.Close()
}

// checkNesting refuses a schema that Parquet readers would not read back
// (see MaxNesting), naming the field.
func checkNesting(schema *arrow.Schema) error {
	for _, f := range schema.Fields() {
		arrowDepth, pqDepth := nesting(f.Type)
		// The Parquet path: the root, the field's own nodes.
		if arrowDepth > MaxNesting || 1+pqDepth > MaxParquetSchemaDepth {
			return fmt.Errorf("%w: field %q holds %d levels of lists and structs (%d Parquet schema nodes); Parquet readers accept %d (%d nodes)",
				ErrTooDeep, f.Name, arrowDepth, 1+pqDepth, MaxNesting, MaxParquetSchemaDepth)
		}
	}
	return nil
}

// nesting returns the levels of nested types under t and the number of
// Parquet schema nodes on its deepest path (t's own included). It walks
// iteratively, so any depth costs time linear in the type's size.
func nesting(t arrow.DataType) (levels, nodes int) {
	type item struct {
		t             arrow.DataType
		levels, nodes int
	}
	stack := []item{{t, 0, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var children []arrow.Field
		own, step := 1, 1
		switch x := it.t.(type) {
		case *arrow.MapType:
			// A map's entries are a struct level in Arrow but share the
			// repeated group in Parquet.
			own, step = 2, 2
			children = []arrow.Field{x.KeyField(), x.ItemField()}
		case arrow.ListLikeType: // list, large list, fixed-size list
			own = 2 // the annotated group and its repeated group
			children = []arrow.Field{x.ElemField()}
		case *arrow.StructType:
			children = x.Fields()
		}
		n := it.nodes + own
		nodes = max(nodes, n)
		levels = max(levels, it.levels)
		for _, c := range children {
			stack = append(stack, item{c.Type, it.levels + step, n})
		}
	}
	return levels, nodes
}

// ReadOptions selects what Read returns.
type ReadOptions struct {
	// Columns are dotted field paths ("ingredients.name") to read; only
	// the Parquet leaf columns under them are decoded. Empty means all.
	// List levels are passed through: "ingredients.name" reaches the name
	// field of the structs inside the ingredients list.
	Columns []string
	// FromArrow configures the conversion of Arrow nulls.
	FromArrow starrow.FromArrowOptions
	// Name names the file in errors; ReadFile and OpenFile default it to
	// the path.
	Name string
}

// ReadFile reads the Parquet file at path. See Read.
func ReadFile(path string, opts ReadOptions) (*st.StructTensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opts.Name == "" {
		opts.Name = path
	}
	return Read(f, opts)
}

// Read reads a Parquet file as one rank-1 StructTensor: all its row groups
// in order, the projected columns only. Errors name the row group, its
// rows and the column. File reads the same file a row group at a time.
func Read(r pq.ReaderAtSeeker, opts ReadOptions) (*st.StructTensor, error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	f, err := Open(r, size, opts)
	if err != nil {
		return nil, err
	}
	groups := make([]int, f.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	return f.read(context.Background(), groups)
}

// checkStoredSchema validates the Arrow schema a file stores under
// ARROW:schema (an IPC schema message) before pqarrow deserializes it:
// arrow-go allocates what the message claims, so a corrupt one could
// exhaust memory.
func checkStoredSchema(pf *file.Reader, name string) error {
	kv := pf.MetaData().KeyValueMetadata()
	if kv == nil {
		return nil
	}
	v := kv.FindValue("ARROW:schema")
	if v == nil {
		return nil
	}
	var raw []byte
	var err error
	if len(*v)%4 == 0 {
		raw, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(raw) == 0 || err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(*v); err != nil {
			return fmt.Errorf("%w: %sARROW:schema metadata is not base64: %v", ErrCorrupt, prefix(name), err)
		}
	}
	if err := starrow.ValidateIPC(raw, 0); err != nil {
		return fmt.Errorf("%w: %sARROW:schema metadata: %w", ErrCorrupt, prefix(name), err)
	}
	return nil
}

// checkChunks checks the footer's row group and column chunk metadata
// against the file: pqarrow decodes columns on goroutines of its own, where
// a panic on a negative length cannot be recovered, so every range it will
// read must be known to lie inside the file first.
func checkChunks(pf *file.Reader, size int64, name string) error {
	md := pf.MetaData()
	var start int64
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		g := md.RowGroup(rg)
		if g.NumRows() < 0 {
			return fmt.Errorf("%w: %srow group %d has %d rows", ErrCorrupt, prefix(name), rg, g.NumRows())
		}
		if g.NumColumns() != md.Schema.NumColumns() {
			return fmt.Errorf("%w: %srow group %d has %d column chunks for %d columns", ErrCorrupt, prefix(name), rg, g.NumColumns(), md.Schema.NumColumns())
		}
		for c := 0; c < g.NumColumns(); c++ {
			cc, err := g.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%w: %srow group %d (rows %d to %d) column %d: %w", ErrCorrupt, prefix(name), rg, start, start+g.NumRows(), c, err)
			}
			from, n := cc.DataPageOffset(), cc.TotalCompressedSize()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < from {
				from = cc.DictionaryPageOffset()
			}
			if data := cc.DataPageOffset(); from < 0 || n < 0 || from > size || n > size-from || cc.NumValues() < 0 || data < from || data >= from+max(n, 1) {
				return fmt.Errorf("%w: %srow group %d (rows %d to %d) column %q: chunk [%d, +%d) (data pages at %d) of %d values outside a file of %d bytes",
					ErrCorrupt, prefix(name), rg, start, start+g.NumRows(), md.Schema.Column(c).Path(), from, n, cc.DataPageOffset(), cc.NumValues(), size)
			}
		}
		start += g.NumRows()
	}
	return nil
}

// readBatchRows is the number of rows Read asks arrow-go for at a time.
const readBatchRows = 1 << 16

// readRowGroup reads the leaves of row group rg batch by batch, passing
// each to add (which must retain what it keeps), and returns the number
// of rows read.
func readRowGroup(ctx context.Context, fr *pqarrow.FileReader, leaves []int, rg int, add func(arrow.RecordBatch)) (int64, error) {
	rr, err := fr.GetRecordReader(ctx, leaves, []int{rg})
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		rec := rr.RecordBatch()
		n += rec.NumRows()
		add(rec)
	}
	return n, rr.Err()
}

// failingColumn names the first leaf column of row group rg that does not
// decode on its own, to locate an error the decoder reports without one.
func failingColumn(ctx context.Context, fr *pqarrow.FileReader, leaves []int, rg int) string {
	want := fr.ParquetReader().MetaData().RowGroup(rg).NumRows()
	for _, leaf := range leaves {
		n, err := readRowGroup(ctx, fr, []int{leaf}, rg, func(arrow.RecordBatch) {})
		if err != nil || n != want {
			return fmt.Sprintf(" column %q", fr.ParquetReader().MetaData().Schema.Column(leaf).Path())
		}
	}
	return ""
}

// emptyColumns returns the projected columns of the row groups groups
// (all if nil) as empty arrays, for a read that found no rows: pqarrow's
// schema keeps a list's stored element type, so the types come from
// arrays its readers build (retyped), as for rows read.
func emptyColumns(ctx context.Context, fr *pqarrow.FileReader, leaves, groups []int, name string) (*arrow.Schema, []arrow.Array, error) {
	readers, schema, err := fr.GetFieldReaders(ctx, leaves, groups)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s%w", ErrCorrupt, prefix(name), err)
	}
	cols := make([]arrow.Array, len(readers))
	fields := make([]arrow.Field, len(readers))
	for i, r := range readers {
		ch, err := r.NextBatch(0)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %scolumn %q: %w", ErrCorrupt, prefix(name), schema.Field(i).Name, err)
		}
		fields[i] = schema.Field(i)
		if len(ch.Chunks()) > 0 {
			cols[i] = retyped(ch.Chunks()[0])
			fields[i].Type = cols[i].DataType()
		} else {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, fields[i].Type, 0)
		}
		ch.Release()
	}
	return arrow.NewSchema(fields, nil), cols, nil
}

// projectLeaves maps dotted paths to the Parquet leaf column indices under
// them, in file order; nil paths select every leaf (nil).
func projectLeaves(m *pqarrow.SchemaManifest, paths []string, name string) ([]int, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	set := map[int]bool{}
	for _, p := range paths {
		names := strings.Split(p, ".")
		fields := m.Fields
		var node *pqarrow.SchemaField
		for i, name := range names {
			node = nil
			for k := range fields {
				if fields[k].Field.Name == name {
					node = &fields[k]
					break
				}
			}
			if node == nil {
				avail := make([]string, len(fields))
				for k := range fields {
					avail[k] = fields[k].Field.Name
				}
				return nil, fmt.Errorf("%w: %s%q (at %q: fields %s)", ErrNoColumn, prefix(name), p, strings.Join(names[:i+1], "."), strings.Join(avail, ", "))
			}
			if i == len(names)-1 {
				break
			}
			// Pass through list levels to the struct of the next name.
			inner := node
			for isList(inner) && len(inner.Children) == 1 {
				inner = &inner.Children[0]
			}
			if inner.Field.Type.ID() != arrow.STRUCT {
				return nil, fmt.Errorf("%w: %s%q: %q is a %v, not a struct", ErrNoColumn, prefix(name), p, strings.Join(names[:i+1], "."), node.Field.Type)
			}
			fields = inner.Children
		}
		collectLeaves(node, set)
	}
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Ints(out)
	return out, nil
}

func isList(f *pqarrow.SchemaField) bool {
	switch f.Field.Type.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		return true
	}
	return false
}

func collectLeaves(f *pqarrow.SchemaField, set map[int]bool) {
	if f.IsLeaf() {
		set[f.ColIndex] = true
	}
	for i := range f.Children {
		collectLeaves(&f.Children[i], set)
	}
}

// retyped returns a (retained) array whose list types are recomputed from
// their children. pqarrow projects the children of a list of structs but
// keeps the list's stored, unprojected element type, which fails
// validation; the data itself is right.
func retyped(a arrow.Array) arrow.Array {
	d := retypeData(a.Data())
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData) arrow.ArrayData {
	children := d.Children()
	if len(children) == 0 {
		d.Retain()
		return d
	}
	nc := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		nc[i] = retypeData(c)
	}
	typ := d.DataType()
	switch t := typ.(type) {
	case *arrow.ListType:
		typ = arrow.ListOfField(arrow.Field{Name: t.ElemField().Name, Type: nc[0].DataType(), Nullable: t.ElemField().Nullable})
	case *arrow.LargeListType:
		typ = arrow.LargeListOfField(arrow.Field{Name: t.ElemField().Name, Type: nc[0].DataType(), Nullable: t.ElemField().Nullable})
	case *arrow.FixedSizeListType:
		typ = arrow.FixedSizeListOfField(t.Len(), arrow.Field{Name: t.ElemField().Name, Type: nc[0].DataType(), Nullable: t.ElemField().Nullable})
	case *arrow.StructType:
		if t.NumFields() == len(nc) {
			fs := make([]arrow.Field, len(nc))
			for i := range fs {
				fs[i] = t.Field(i)
				fs[i].Type = nc[i].DataType()
			}
			typ = arrow.StructOf(fs...)
		}
	}
	out := array.NewData(typ, d.Len(), d.Buffers(), nc, d.NullN(), d.Offset())
	for _, c := range nc {
		c.Release()
	}
	return out
}
