package starrow_test

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"pgregory.net/rapid"

	"github.com/structtensor/structtensor-go/gostructs"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// Row covers every dtype and dimension kind: scalars, strings and bytes,
// ragged lists, optional values (0/1 lists), fixed-size dimensions and
// structs nested inside lists.
type Row struct {
	B     bool
	I32   int32
	I64   int64
	U32   uint32
	U64   uint64
	F32   float32
	F64   float64
	S     string
	Raw   []byte
	Opt   *int64
	List  []Item
	Deep  [][]string
	Fixed [3]int32
	Grid  [2][2]float64
	Inner struct{ X []uint64 }
}

type Item struct {
	Name string
	Tags []string
	At   *Item2
}

type Item2 struct{ V []float32 }

// RandomRows draws rows whose StructTensor form exercises the mapping.
func RandomRows(t *rapid.T) []Row {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Row {
		r := Row{
			B: rapid.Bool().Draw(t, "b"), I32: rapid.Int32().Draw(t, "i32"), I64: rapid.Int64().Draw(t, "i64"),
			U32: rapid.Uint32().Draw(t, "u32"), U64: rapid.Uint64().Draw(t, "u64"),
			F32: float32(rapid.Float64Range(-1e9, 1e9).Draw(t, "f32")), F64: rapid.Float64().Draw(t, "f64"),
			S: rapid.String().Draw(t, "s"), Raw: rapid.SliceOfN(rapid.Byte(), 0, 5).Draw(t, "raw"),
		}
		if rapid.Bool().Draw(t, "opt") {
			x := rapid.Int64().Draw(t, "optv")
			r.Opt = &x
		}
		r.List = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Item {
			it := Item{Name: rapid.String().Draw(t, "name"), Tags: rapid.SliceOfN(rapid.StringN(0, 3, -1), 0, 3).Draw(t, "tags")}
			if rapid.Bool().Draw(t, "at") {
				it.At = &Item2{V: rapid.SliceOfN(rapid.Float32(), 0, 3).Draw(t, "v")}
			}
			return it
		}), 0, 3).Draw(t, "list")
		r.Deep = rapid.SliceOfN(rapid.SliceOfN(rapid.StringN(0, 2, -1), 0, 2), 0, 3).Draw(t, "deep")
		for i := range r.Fixed {
			r.Fixed[i] = rapid.Int32().Draw(t, "fixed")
		}
		r.Grid[1][0] = rapid.Float64().Draw(t, "grid")
		r.Inner.X = rapid.SliceOfN(rapid.Uint64(), 0, 3).Draw(t, "x")
		return r
	}), 0, 6).Draw(t, "rows")
}

// TestRoundTripProperty: random values survive ToArrow/FromArrow (and
// slicing), the IPC stream and Parquet unchanged.
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, err := gostructs.FromStructs(RandomRows(t))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := starrow.ToArrow(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := array.ValidateFull(array.RecordToStructArray(rec)); err != nil {
			t.Fatalf("exported batch is invalid: %v", err)
		}
		back, err := starrow.FromArrow(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Equal(back, s) {
			t.Fatalf("Arrow round trip differs:\n got %v\nwant %v", back, s)
		}
		// Slices of the batch read as the same rows.
		if n := s.NumRows(); n > 1 {
			lo := rapid.IntRange(0, n-1).Draw(t, "lo")
			hi := rapid.IntRange(lo, n).Draw(t, "hi")
			part, err := starrow.FromArrow(rec.NewSlice(int64(lo), int64(hi)))
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.Get(st.Slice{Start: &lo, Stop: &hi})
			if err != nil {
				t.Fatal(err)
			}
			if !st.Equal(part, want) {
				t.Fatalf("slice [%d, %d) differs:\n got %v\nwant %v", lo, hi, part, want)
			}
		}
		if s.NumRows() == 0 {
			return
		}
		var buf bytes.Buffer
		if err := starrow.WriteIPC(&buf, s); err != nil {
			t.Fatal(err)
		}
		back, err = starrow.ReadIPC(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Equal(back, s) {
			t.Fatalf("IPC round trip differs")
		}
		// And through Parquet (package stparquet builds on this one; the
		// generator lives here).
		buf.Reset()
		if err := stparquet.Write(&buf, s); err != nil {
			t.Fatal(err)
		}
		back, err = stparquet.Read(bytes.NewReader(buf.Bytes()), stparquet.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !st.Equal(back, s) {
			t.Fatalf("Parquet round trip differs:\n got %v\nwant %v", back, s)
		}
	})
}
