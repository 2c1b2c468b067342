package stparquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// withFooter returns data (a Parquet file) with its footer replaced by
// edit's change of the parsed footer, re-serialized.
func withFooter(t testing.TB, data []byte, edit func(md *metadata.FileMetaData)) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	start := len(data) - 8 - n
	md, err := metadata.NewFileMetaData(data[start:len(data)-8], nil)
	if err != nil {
		t.Fatal(err)
	}
	edit(md)
	var foot bytes.Buffer
	if _, err := md.WriteTo(&foot, nil); err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), data[:start]...)
	out = append(out, foot.Bytes()...)
	out = binary.LittleEndian.AppendUint32(out, uint32(foot.Len()))
	out = append(out, "PAR1"...)
	if _, err := file.NewParquetReader(bytes.NewReader(out)); err != nil {
		t.Fatalf("crafted footer does not parse: %v", err)
	}
	return out
}

// allocated returns the bytes the Go heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A footer's claims are checked against the pages before anything of the
// claimed size is allocated: claims of billions of rows or values in a
// small file give ErrCorrupt naming the row group, and reading them
// allocates about what reading the honest file does.
func TestFooterClaims(t *testing.T) {
	data := writeBytes(t, recipes(t))
	honest := allocated(func() { must(Read(bytes.NewReader(data), ReadOptions{})) })
	cases := map[string]func(md *metadata.FileMetaData){
		"rows 2^27":      func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = 1 << 27 },
		"rows 2^31":      func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = 1 << 31 },
		"rows 2^40":      func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = 1 << 40 },
		"rows 2^62":      func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = 1 << 62 },
		"rows negative":  func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = -1 },
		"fewer rows":     func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = 1 },
		"file rows 2^40": func(md *metadata.FileMetaData) { md.NumRows = 1 << 40 },
		"values 2^40":    func(md *metadata.FileMetaData) { md.RowGroups[0].Columns[0].MetaData.NumValues = 1 << 40 },
		"uncompressed 2^40": func(md *metadata.FileMetaData) {
			md.RowGroups[0].Columns[2].MetaData.TotalUncompressedSize = 1 << 40
		},
		"compressed 2^40": func(md *metadata.FileMetaData) {
			md.RowGroups[0].Columns[2].MetaData.TotalCompressedSize = 1 << 40
		},
		"offset 2^40": func(md *metadata.FileMetaData) { md.RowGroups[0].Columns[1].MetaData.DataPageOffset = 1 << 40 },
		"offset negative": func(md *metadata.FileMetaData) {
			md.RowGroups[0].Columns[1].MetaData.DataPageOffset = -100
		},
		"row group 2^40 bytes": func(md *metadata.FileMetaData) { md.RowGroups[0].TotalByteSize = 1 << 40 },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			bad := withFooter(t, data, edit)
			var err error
			n := allocated(func() { _, err = Read(bytes.NewReader(bad), ReadOptions{}) })
			t.Logf("%v (%d bytes allocated, %d for the honest file)", err, n, honest)
			if n > 4*honest+(16<<20) {
				t.Errorf("reading allocated %d bytes; the honest file takes %d", n, honest)
			}
			if name == "file rows 2^40" || name == "row group 2^40 bytes" || name == "uncompressed 2^40" || name == "values 2^40" {
				return // claims a reader need not believe: a value or an error
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), "row group 0") {
				t.Errorf("error does not name the row group: %v", err)
			}
		})
	}
}

// FuzzParquetFooter replaces the footer of a valid file with arbitrary
// bytes (the fuzzer starts from the real footer): every footer gives a
// value or an error, never a crash, and never an allocation far beyond the
// file's size.
func FuzzParquetFooter(f *testing.F) {
	data := writeBytes(f, recipes(f))
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	body, footer := data[:len(data)-8-n], data[len(data)-8-n:len(data)-8]
	f.Add(footer)
	f.Add(withFooter(f, data, func(md *metadata.FileMetaData) { md.RowGroups[0].NumRows = 1 << 40 })[len(body) : len(data)-8])
	f.Fuzz(func(t *testing.T, footer []byte) {
		file := append(append([]byte(nil), body...), footer...)
		file = binary.LittleEndian.AppendUint32(file, uint32(len(footer)))
		file = append(file, "PAR1"...)
		var v *st.StructTensor
		var err error
		used := allocated(func() { v, err = Read(bytes.NewReader(file), ReadOptions{}) })
		if err == nil && v == nil {
			t.Fatal("nil value without an error")
		}
		if used > 256<<20 {
			t.Fatalf("a %d-byte file made Read allocate %d bytes (err %v)", len(file), used, err)
		}
	})
}

// TestCheckFooter walks hand-made compact-protocol encodings: each claim
// larger than the bytes after it is an error naming where it was read;
// the footers of files this package writes pass.
func TestCheckFooter(t *testing.T) {
	data := writeBytes(t, recipes(t))
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	if err := checkFooter(data[len(data)-8-n : len(data)-8]); err != nil {
		t.Fatalf("a written file's footer: %v", err)
	}
	deep := bytes.Repeat([]byte{0x1c}, maxFooterNesting+1) // field 1, struct, nested
	tests := []struct {
		name string
		in   []byte
		at   string // "byte N" in the error; "" when it passes
	}{
		{"empty struct", []byte{0x00}, ""},
		{"bytes after the struct are not read", []byte{0x00, 0xff, 0xff}, ""},
		{"i32 field, binary field", []byte{0x15, 0x02, 0x18, 0x02, 'a', 'b', 0x00}, ""},
		{"bool fields carry their value in the header", []byte{0x11, 0x12, 0x00}, ""},
		{"list of three i32s", []byte{0x19, 0x35, 0x02, 0x04, 0x06, 0x00}, ""},
		{"list with its size in a varint, 16 i32s in 1 byte", []byte{0x19, 0xf5, 0x10, 0x00}, "byte 1"},
		{"list of structs claiming 2^20", []byte{0x19, 0xfc, 0x80, 0x80, 0x40, 0x00}, "byte 1"},
		{"list of doubles claiming 2 in 8 bytes", append([]byte{0x19, 0x27}, make([]byte, 8)...), "byte 1"},
		{"string past the end", []byte{0x18, 0x05, 'a', 'b'}, "byte 1"},
		{"map of 2^30 entries", []byte{0x1b, 0x80, 0x80, 0x80, 0x80, 0x04, 0x88, 0x00}, "byte 1"},
		{"map of an unknown type", []byte{0x1b, 0x01, 0x8e, 0x02, 0x00}, "byte 1"},
		{"empty list of an unknown type", []byte{0x19, 0x0e, 0x00}, ""},
		{"list of an unknown type", []byte{0x19, 0x1e, 0x00, 0x00}, "byte 1"},
		{"map of one entry", []byte{0x1b, 0x01, 0x85, 0x01, 'k', 0x02, 0x00}, ""},
		{"field of an unknown type", []byte{0x1d, 0x00}, "byte 0"},
		{"truncated", []byte{0x15}, "byte 1"},
		{"no stop", []byte{0x15, 0x02}, "byte 2"},
		{"long field id", []byte{0x05, 0x80, 0x01, 0x02, 0x00}, ""},
		{"nested too deep", deep, fmt.Sprintf("byte %d", maxFooterNesting)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkFooter(tc.in)
			if tc.at == "" {
				if err != nil {
					t.Fatalf("checkFooter: %v", err)
				}
				return
			}
			if !errors.Is(err, errFooterEncoding) || !strings.Contains(err.Error(), tc.at+" of the footer") {
				t.Fatalf("checkFooter = %v, want an error at %s", err, tc.at)
			}
		})
	}
}

// FuzzCheckFooter: any bytes give nil or an error wrapping
// errFooterEncoding, never a panic, and the walk allocates nothing that
// grows with a claim.
func FuzzCheckFooter(f *testing.F) {
	data := writeBytes(f, recipes(f))
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	f.Add(data[len(data)-8-n : len(data)-8])
	f.Add([]byte{0x19, 0xfc, 0x80, 0x80, 0x40, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var err error
		if used := allocated(func() { err = checkFooter(b) }); used > 64<<10 {
			t.Fatalf("checking %d bytes allocated %d", len(b), used)
		}
		if err != nil && !errors.Is(err, errFooterEncoding) {
			t.Fatalf("error wraps no sentinel: %v", err)
		}
	})
}
