package starrow

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// FromArrowTable converts an Arrow table (chunked columns) to a rank-1
// StructTensor with the default options. See FromArrowOptions.Table.
func FromArrowTable(tbl arrow.Table) (*st.StructTensor, error) {
	return FromArrowOptions{}.Table(tbl)
}

// Table converts an Arrow table to a rank-1 StructTensor. A column of one
// chunk is shared as FromArrowOptions.Record shares it; a column of several
// chunks is concatenated (copied) first, since a StructTensor field is one
// flat buffer.
func (o FromArrowOptions) Table(tbl arrow.Table) (*st.StructTensor, error) {
	schema := tbl.Schema()
	cols := make([]arrow.Array, tbl.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	mem := memory.NewGoAllocator()
	for i := range cols {
		name := schema.Field(i).Name
		chunks := tbl.Column(i).Data().Chunks()
		switch len(chunks) {
		case 0:
			b := array.NewBuilder(mem, schema.Field(i).Type)
			cols[i] = b.NewArray()
			b.Release()
		case 1:
			chunks[0].Retain()
			cols[i] = chunks[0]
		default:
			for j, c := range chunks {
				if err := validateFull(c); err != nil {
					return nil, fmt.Errorf("column %q chunk %d: %w: %v", name, j, ErrInvalid, err)
				}
			}
			c, err := array.Concatenate(chunks, mem)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w: %w", name, ErrInvalid, err)
			}
			cols[i] = c
		}
	}
	rec := array.NewRecordBatch(schema, cols, tbl.NumRows())
	defer rec.Release()
	return o.Record(rec)
}
