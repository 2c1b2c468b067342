package gostructs

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	st "github.com/structtensor/structtensor-go/structtensor"
)

type Ingredient struct {
	Name    string   `structtensor:"name"`
	Grams   float32  `structtensor:"grams"`
	Aliases []string `structtensor:"aliases"`
}

type Recipe struct {
	ID          int64        `structtensor:"id"`
	Title       string       `structtensor:"title"`
	Minutes     *int32       `structtensor:"minutes"`
	Embedding   [3]float32   `structtensor:"embedding"`
	Ingredients []Ingredient `structtensor:"ingredients"`
	Photo       []byte       `structtensor:"photo"`
	Ratings     [][]uint16   `structtensor:"ratings"`
	Best        *Ingredient  `structtensor:"best"`
	Flags       struct{ A, B bool }
	Secret      string `structtensor:"-"`
	unexported  int
}

func TestSpec(t *testing.T) {
	s, err := FromStructs([]Recipe{{}, {}})
	if err != nil {
		t.Fatal(err)
	}
	want := "StructSpec([2], {id: TensorSpec([2], int64), title: TensorSpec([2], string), " +
		"minutes: RaggedTensorSpec([2, None], int32, ragged_rank=1), embedding: TensorSpec([2, 3], float32), " +
		"ingredients: StructSpec([2, None], {name: RaggedTensorSpec([2, None], string, ragged_rank=1), " +
		"grams: RaggedTensorSpec([2, None], float32, ragged_rank=1), aliases: RaggedTensorSpec([2, None, None], string, ragged_rank=2)}), " +
		"photo: TensorSpec([2], string), ratings: RaggedTensorSpec([2, None, None], uint32, ragged_rank=2), " +
		"best: StructSpec([2, None], {name: RaggedTensorSpec([2, None], string, ragged_rank=1), " +
		"grams: RaggedTensorSpec([2, None], float32, ragged_rank=1), aliases: RaggedTensorSpec([2, None, None], string, ragged_rank=2)}), " +
		"Flags: StructSpec([2], {A: TensorSpec([2], bool), B: TensorSpec([2], bool)})})"
	if got := s.Spec().String(); got != want {
		t.Errorf("spec\n got %s\nwant %s", got, want)
	}
}

func TestRoundTripFixed(t *testing.T) {
	m := int32(25)
	rows := []Recipe{
		{ID: 1, Title: "bread", Minutes: &m, Embedding: [3]float32{1, 2, 3},
			Ingredients: []Ingredient{{Name: "flour", Grams: 500, Aliases: []string{"wheat"}}, {Name: "salt", Grams: 5}},
			Photo:       []byte{0xff, 0}, Ratings: [][]uint16{{5, 4}, nil, {65535}},
			Best: &Ingredient{Name: "flour"}, Flags: struct{ A, B bool }{true, false}},
		{ID: 2, Title: "tea"},
	}
	s, err := FromStructs(rows)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ToStructs[Recipe](s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rows) {
		t.Errorf("round trip\n got %+v\nwant %+v", back, rows)
	}
}

func TestErrors(t *testing.T) {
	type bad struct{ M map[string]int }
	if _, err := FromStructs([]bad{{}}); !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "field M") {
		t.Errorf("map field: err = %v", err)
	}
	// An int32 column read into int8 is range checked, naming row and field.
	type wide struct {
		X int32 `structtensor:"x"`
	}
	type narrow struct {
		X int8 `structtensor:"x"`
	}
	s, err := FromStructs([]wide{{1}, {300}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ToStructs[narrow](s)
	if !errors.Is(err, ErrRange) || err.Error() != "row 1: structtensor/gostructs: value out of range: field x: 300 does not fit int8" {
		t.Errorf("narrowing: err = %v", err)
	}
	// A missing field is named with the fields present.
	type other struct {
		Y int32 `structtensor:"y"`
	}
	_, err = ToStructs[other](s)
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "field y: no such field in the StructTensor (fields: x)") {
		t.Errorf("missing field: err = %v", err)
	}
	// A dtype that does not fit.
	type str struct {
		X string `structtensor:"x"`
	}
	_, err = ToStructs[str](s)
	if !errors.Is(err, ErrType) {
		t.Errorf("dtype mismatch: err = %v", err)
	}
	// An optional value holding two values.
	type opt struct {
		X *int32 `structtensor:"x"`
	}
	type many struct {
		X []int32 `structtensor:"x"`
	}
	m, err := FromStructs([]many{{[]int32{1}}, {[]int32{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ToStructs[opt](m)
	if !errors.Is(err, ErrRange) || !strings.HasPrefix(err.Error(), "row 1: ") {
		t.Errorf("optional with two values: err = %v", err)
	}
}

// Everything, for the property test: each Go kind, nested, optional,
// fixed-size and ragged.
type Leaf struct {
	B   bool
	I8  int8
	I16 int16
	I32 int32
	I   int
	U8  uint8
	U16 uint16
	U32 uint32
	U   uint
	U64 uint64
	F32 float32
	F64 float64
	S   string
	Raw []byte
}

type Node struct {
	Leaf   Leaf
	Opt    *Leaf
	List   []Leaf
	Deep   [][]*int64
	Fixed  [2][]string
	OptOpt *[]float64
}

func genLeaf(t *rapid.T) Leaf {
	l := Leaf{
		B: rapid.Bool().Draw(t, "b"), I8: rapid.Int8().Draw(t, "i8"), I16: rapid.Int16().Draw(t, "i16"),
		I32: rapid.Int32().Draw(t, "i32"), I: rapid.Int().Draw(t, "i"), U8: rapid.Uint8().Draw(t, "u8"),
		U16: rapid.Uint16().Draw(t, "u16"), U32: rapid.Uint32().Draw(t, "u32"), U: rapid.Uint().Draw(t, "u"),
		U64: rapid.Uint64().Draw(t, "u64"), F32: float32(rapid.Float64Range(-1e6, 1e6).Draw(t, "f32")),
		F64: rapid.Float64Range(-1e300, 1e300).Draw(t, "f64"), S: rapid.String().Draw(t, "s"),
		Raw: rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "raw"),
	}
	if len(l.Raw) == 0 {
		l.Raw = nil
	}
	return l
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func genNode(t *rapid.T) Node {
	n := Node{Leaf: genLeaf(t)}
	if rapid.Bool().Draw(t, "hasOpt") {
		l := genLeaf(t)
		n.Opt = &l
	}
	n.List = nilIfEmpty(rapid.SliceOfN(rapid.Custom(genLeaf), 0, 3).Draw(t, "list"))
	for i, k := 0, rapid.IntRange(0, 3).Draw(t, "deep"); i < k; i++ {
		var row []*int64
		for j, m := 0, rapid.IntRange(0, 3).Draw(t, "deepRow"); j < m; j++ {
			if rapid.Bool().Draw(t, "present") {
				x := rapid.Int64().Draw(t, "x")
				row = append(row, &x)
			} else {
				row = append(row, nil)
			}
		}
		n.Deep = append(n.Deep, row)
	}
	for i := range n.Fixed {
		n.Fixed[i] = nilIfEmpty(rapid.SliceOfN(rapid.String(), 0, 2).Draw(t, "fixed"))
	}
	if rapid.Bool().Draw(t, "hasOptOpt") {
		f := nilIfEmpty(rapid.SliceOfN(rapid.Float64Range(-10, 10), 0, 3).Draw(t, "optopt"))
		n.OptOpt = &f
	}
	return n
}

func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := rapid.SliceOfN(rapid.Custom(genNode), 0, 5).Draw(t, "rows")
		s, err := FromStructs(rows)
		if err != nil {
			t.Fatal(err)
		}
		if s.NumRows() != len(rows) {
			t.Fatalf("%d rows, want %d", s.NumRows(), len(rows))
		}
		back, err := ToStructs[Node](s)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			rows = []Node{}
		}
		if !reflect.DeepEqual(back, rows) {
			t.Fatalf("round trip\n got %+v\nwant %+v", back, rows)
		}
	})
}

// The column layout agrees with a naive per-row reference: field "List"
// row i holds len(rows[i].List) structs, and its flat S values are the
// rows' strings in order.
func TestColumnsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := rapid.SliceOfN(rapid.Custom(genNode), 0, 5).Draw(t, "rows")
		s, err := FromStructs(rows)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := s.Field("List")
		ls := list.(*st.StructTensor)
		var want []string
		for i, r := range rows {
			if got := ls.Partitions()[0].RowLength(i); got != len(r.List) {
				t.Fatalf("row %d: %d list entries, want %d", i, got, len(r.List))
			}
			for _, l := range r.List {
				want = append(want, l.S)
			}
		}
		flat, _ := ls.Fields()[12].Value.(*st.Tensor), 0
		for k, w := range want {
			if got := string(flat.StringAt(k)); got != w {
				t.Fatalf("List.S[%d] = %q, want %q", k, got, w)
			}
		}
	})
}

func TestToStructsNeedsStructsAndRankOne(t *testing.T) {
	type row struct {
		X int32 `structtensor:"x"`
	}
	s, err := FromStructs([]row{{1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ToStructs[int](s); !errors.Is(err, ErrType) {
		t.Errorf("ToStructs[int]: %v, want ErrType", err)
	}
	if _, err := ToStructs[row](nil); !errors.Is(err, ErrType) {
		t.Errorf("ToStructs of nil: %v, want ErrType", err)
	}
}
