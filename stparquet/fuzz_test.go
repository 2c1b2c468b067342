package stparquet

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// FuzzReadParquet feeds arbitrary bytes to Read: every input must give a
// value or an error, never a crash, and a value read must survive a
// Write/Read round trip.
func FuzzReadParquet(f *testing.F) {
	s := recipes(f)
	f.Add(writeBytes(f, s))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Read(bytes.NewReader(data), ReadOptions{})
		if err == nil && v == nil {
			t.Fatal("nil value without an error")
		}
		if err != nil {
			return
		}
		// What was read and can be written must read back the same: a
		// value Read returns is whole and well formed.
		var buf bytes.Buffer
		if err := Write(&buf, v); err != nil {
			return
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
		if err != nil || !st.Equal(back, v) {
			t.Fatalf("Read(Write(v)) = %v, %v\nwant %v", back, err, v)
		}
	})
}

// FuzzRowGroups feeds arbitrary bytes to Open and reads every row group
// (the seeds: files of several row groups, one with a footer claiming
// 2^40 rows): every input gives values or errors, never a crash or an
// allocation far beyond the file's size, and when Read accepts the file
// the row groups join to its value.
func FuzzRowGroups(f *testing.F) {
	data := writeGroups(f, raggedRows(f, 12), 3, 0, 4, 5)
	f.Add(data)
	f.Add(writeGroups(f, recipes(f), 1, 2))
	f.Add(withFooter(f, data, func(md *metadata.FileMetaData) { md.RowGroups[2].NumRows = 1 << 40 }))
	f.Fuzz(func(t *testing.T, data []byte) {
		var groups []*st.StructTensor
		var openErr, groupErr error
		used := allocated(func() {
			pf, err := Open(bytes.NewReader(data), int64(len(data)), ReadOptions{})
			if err != nil {
				openErr = err
				return
			}
			for s, err := range pf.RowGroups(context.Background()) {
				if err == nil && s == nil {
					t.Fatal("nil row group without an error")
				}
				if err != nil {
					groupErr = err
					return
				}
				groups = append(groups, s)
			}
		})
		if used > 256<<20 {
			t.Fatalf("a %d-byte file made reading allocate %d bytes", len(data), used)
		}
		whole, err := Read(bytes.NewReader(data), ReadOptions{})
		if err != nil {
			return
		}
		if openErr != nil || groupErr != nil {
			t.Fatalf("Read accepts the file, the row groups fail: %v, %v", openErr, groupErr)
		}
		var joined, want bytes.Buffer
		for _, g := range groups {
			if err := st.WriteJSONLines(&joined, g); err != nil {
				return // values JSON cannot hold (NaN): compared no further
			}
		}
		if err := st.WriteJSONLines(&want, whole); err != nil {
			return
		}
		if joined.String() != want.String() {
			t.Fatalf("row groups joined:\n%.400s\nRead:\n%.400s", joined.String(), want.String())
		}
	})
}
