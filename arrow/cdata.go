package arrow

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// ExportCData exports s through the Arrow C Data Interface: out receives a
// struct array of one child per field (a record batch) and outSchema its
// schema. The consumer sees our buffers, not copies, and calls the
// structures' release callbacks when done; until then the Go memory stays
// pinned.
func ExportCData(s *st.StructTensor, out *cdata.CArrowArray, outSchema *cdata.CArrowSchema) error {
	rec, err := ToArrow(s)
	if err != nil {
		return err
	}
	defer rec.Release()
	cdata.ExportArrowRecordBatch(rec, out, outSchema)
	return nil
}

// ImportCData imports a record batch exported through the C Data Interface
// (taking ownership of arr and schema, as the interface requires) as a
// rank-1 StructTensor sharing the producer's buffers. The value is valid
// until release is called; release hands the buffers back to the producer.
func ImportCData(arr *cdata.CArrowArray, schema *cdata.CArrowSchema, opts FromArrowOptions) (s *st.StructTensor, release func(), err error) {
	rec, err := cdata.ImportCRecordBatch(arr, schema)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: arrow c data: %w", ErrInvalid, err)
	}
	s, err = opts.Record(rec)
	if err != nil {
		rec.Release()
		return nil, nil, err
	}
	return s, rec.Release, nil
}
