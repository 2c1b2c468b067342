package starrow

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	st "github.com/structtensor/structtensor-go/structtensor"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// recipes builds a rank-1 struct of 3 recipes covering every mapping:
// numerics of each dtype, bool, utf8 and binary strings, a ragged list of
// strings, a dense inner dimension, a ragged list of structs that holds a
// ragged list, and a struct field.
func recipes() *st.StructTensor {
	ingSplits := must(st.NewRowSplits([]int64{0, 2, 2, 5}))
	ing := must(st.NewPartitionedStruct(3, []*st.RowPartition{ingSplits},
		st.Field{Name: "name", Value: must(st.NewTensor(nil, []string{"flour", "egg", "salt", "oil", "water"}))},
		st.Field{Name: "grams", Value: must(st.NewTensor(nil, []float64{500, 60, 5, 20, 300}))},
		st.Field{Name: "aliases", Value: must(st.NewRaggedFromSplits(
			must(st.NewTensor(nil, []string{"wheat", "ovum", "nacl"})), []int64{0, 1, 2, 2, 2, 3}))},
	))
	info := must(st.NewStruct(3,
		st.Field{Name: "minutes", Value: must(st.NewTensor(nil, []int32{30, 5, 90}))},
		st.Field{Name: "stars", Value: must(st.NewTensor(nil, []uint32{5, 3, 4}))},
	))
	return must(st.NewStruct(3,
		st.Field{Name: "id", Value: must(st.NewTensor(nil, []int64{101, 102, 103}))},
		st.Field{Name: "title", Value: must(st.NewTensor(nil, []string{"bread", "tea", "pasta"}))},
		st.Field{Name: "blob", Value: must(st.NewTensor(nil, [][]byte{{0xff, 0}, {}, {1}}))},
		st.Field{Name: "vegan", Value: must(st.NewTensor(nil, []bool{true, true, false}))},
		st.Field{Name: "big", Value: must(st.NewTensor(nil, []uint64{1 << 63, 0, 7}))},
		st.Field{Name: "score", Value: must(st.NewTensor(nil, []float32{0.5, 1, 2}))},
		st.Field{Name: "rgb", Value: must(st.NewTensor(st.Shape{3, 2}, []int64{1, 2, 3, 4, 5, 6}))},
		st.Field{Name: "tags", Value: must(st.NewRaggedFromSplits(
			must(st.NewTensor(nil, []string{"easy", "baked", "hot"})), []int64{0, 2, 3, 3}))},
		st.Field{Name: "ingredients", Value: ing},
		st.Field{Name: "info", Value: info},
	))
}

func TestRoundTrip(t *testing.T) {
	want := recipes()
	rec, err := ToArrow(want)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if err := array.ValidateFull(array.NewStructData(array.RecordToStructArray(rec).Data().(*array.Data))); err != nil {
		t.Fatalf("exported batch does not validate: %v", err)
	}
	got, err := FromArrow(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Equal(got, want) {
		t.Errorf("round trip differs:\n got %v\nwant %v\nschema %v", got.Spec(), want.Spec(), rec.Schema())
	}
}

func TestSchema(t *testing.T) {
	rec := must(ToArrow(recipes()))
	want := map[string]string{
		"id":          "int64",
		"title":       "large_utf8",
		"blob":        "large_binary",
		"vegan":       "bool",
		"rgb":         "fixed_size_list<item: int64>[2]",
		"tags":        "large_list<item: large_utf8>",
		"ingredients": "large_list<item: struct<name: large_utf8, grams: float64, aliases: large_list<item: large_utf8>>>",
	}
	for i, f := range rec.Schema().Fields() {
		if w, ok := want[f.Name]; ok && f.Type.String() != w {
			t.Errorf("column %d %q: type %v, want %s", i, f.Name, f.Type, w)
		}
	}
}

// addr is the address of the first byte of b.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func TestExportSharesBuffers(t *testing.T) {
	s := recipes()
	rec := must(ToArrow(s))
	id, _ := s.Field("id")
	ids := id.(*st.Tensor).Int64s()
	if got := addr(rec.Column(0).Data().Buffers()[1].Bytes()); got != uintptr(unsafe.Pointer(&ids[0])) {
		t.Errorf("int64 column copied: buffer at %#x, slice at %p", got, &ids[0])
	}
	title, _ := s.Field("title")
	data, offsets := title.(*st.Tensor).StringData()
	b := rec.Column(1).Data().Buffers()
	if addr(b[1].Bytes()) != uintptr(unsafe.Pointer(&offsets[0])) || addr(b[2].Bytes()) != addr(data) {
		t.Errorf("string column copied")
	}
	tags, _ := s.Field("tags")
	splits := tags.(*st.Ragged).Partitions()[0].RowSplits()
	if got := addr(rec.Column(7).Data().Buffers()[1].Bytes()); got != uintptr(unsafe.Pointer(&splits[0])) {
		t.Errorf("row_splits copied: offsets buffer at %#x, splits at %p", got, &splits[0])
	}
	ing, _ := s.Field("ingredients")
	isplits := ing.(*st.StructTensor).Partitions()[0].RowSplits()
	if got := addr(rec.Column(8).Data().Buffers()[1].Bytes()); got != uintptr(unsafe.Pointer(&isplits[0])) {
		t.Errorf("struct row_splits copied")
	}
}

func TestImportSharesBuffers(t *testing.T) {
	rec := must(ToArrow(recipes()))
	s := must(FromArrow(rec))
	id, _ := s.Field("id")
	if addr(rec.Column(0).Data().Buffers()[1].Bytes()) != uintptr(unsafe.Pointer(&id.(*st.Tensor).Int64s()[0])) {
		t.Error("int64 column copied on import")
	}
	tags, _ := s.Field("tags")
	splits := tags.(*st.Ragged).Partitions()[0].RowSplits()
	if addr(rec.Column(7).Data().Buffers()[1].Bytes()) != uintptr(unsafe.Pointer(&splits[0])) {
		t.Error("large_list offsets copied on import")
	}
}

func TestToArrowArrayScalar(t *testing.T) {
	s := must(st.NewScalarStruct(
		st.Field{Name: "x", Value: must(st.NewScalar(int64(7)))},
		st.Field{Name: "v", Value: must(st.NewTensor(nil, []float32{1, 2, 3}))},
	))
	a := must(ToArrowArray(s))
	if a.Len() != 1 || a.DataType().String() != "struct<x: int64, v: fixed_size_list<item: float32>[3]>" {
		t.Fatalf("scalar struct exported as %v of length %d", a.DataType(), a.Len())
	}
	back := must(FromArrowArray(a)).(*st.StructTensor)
	v := must(back.FieldValue("v"))
	if !st.Equal(v, must(st.NewTensor(st.Shape{1, 3}, []float32{1, 2, 3}))) {
		t.Errorf("v = %v", v)
	}
}

func TestRank2Struct(t *testing.T) {
	p := must(st.NewRowSplits([]int64{0, 1, 3}))
	s := must(st.NewPartitionedStruct(2, []*st.RowPartition{p},
		st.Field{Name: "a", Value: must(st.NewTensor(nil, []int64{1, 2, 3}))}))
	rec := must(ToArrow(s))
	back := must(FromArrow(rec))
	a := must(back.FieldValue("a"))
	rebuilt := must(st.NewStructFromFieldValues(2, st.Field{Name: "a", Value: a}))
	if !st.Equal(rebuilt, s) {
		t.Errorf("got %v", rebuilt.Spec())
	}
}

// build makes an array with the builder function.
func build[B array.Builder](t arrow.DataType, f func(b B)) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, t)
	f(b.(B))
	return b.NewArray()
}

func TestFromArrowNulls(t *testing.T) {
	ints := build(arrow.PrimitiveTypes.Int64, func(b *array.Int64Builder) {
		b.Append(1)
		b.AppendNull()
		b.Append(3)
	})
	v := must(FromArrowArray(ints))
	want := must(st.NewRaggedFromSplits(must(st.NewTensor(nil, []int64{1, 3})), []int64{0, 1, 1, 2}))
	if !st.Equal(v, want) {
		t.Errorf("nullable int64 = %v, want optional values", v.Spec())
	}
	if _, err := (FromArrowOptions{NullsAsError: true}).Array(ints); !errors.Is(err, ErrNull) {
		t.Errorf("NullsAsError: err = %v", err)
	}

	lists := build(arrow.ListOf(arrow.BinaryTypes.String), func(b *array.ListBuilder) {
		vb := b.ValueBuilder().(*array.StringBuilder)
		b.Append(true)
		vb.Append("a")
		b.AppendNull()
		b.Append(true)
		vb.Append("b")
		vb.Append("c")
	})
	v = must(FromArrowArray(lists))
	want2 := must(st.NewRaggedFromSplits(must(st.NewTensor(nil, []string{"a", "b", "c"})), []int64{0, 1, 1, 3}))
	if !st.Equal(v, want2) {
		t.Errorf("nullable list = %v", v)
	}
	_, err := (FromArrowOptions{NullListsAsError: true}).Array(lists)
	if !errors.Is(err, ErrNull) || err.Error() != "value row 1: structtensor/arrow: null value (null list)" {
		t.Errorf("NullListsAsError: err = %v", err)
	}
}

func TestFromArrowSliced(t *testing.T) {
	rec := must(ToArrow(recipes()))
	sliced := rec.NewSlice(1, 3)
	got := must(FromArrow(sliced))
	ids := must(got.FieldValue("id"))
	if !st.Equal(ids, must(st.NewTensor(nil, []int64{102, 103}))) {
		t.Errorf("ids = %v", ids)
	}
	ing := must(got.FieldValue("ingredients", "name"))
	want := must(st.NewRaggedFromSplits(must(st.NewTensor(nil, []string{"salt", "oil", "water"})), []int64{0, 0, 3}))
	if !st.Equal(ing, want) {
		t.Errorf("ingredients.name = %v", ing)
	}
}

func TestFromArrowDictionary(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	d := build(dt, func(b *array.BinaryDictionaryBuilder) {
		for _, s := range []string{"x", "y", "x"} {
			if err := b.AppendString(s); err != nil {
				panic(err)
			}
		}
		b.AppendNull()
	})
	v := must(FromArrowArray(d))
	want := must(st.NewRaggedFromSplits(must(st.NewTensor(nil, []string{"x", "y", "x"})), []int64{0, 1, 2, 3, 3}))
	if !st.Equal(v, want) {
		t.Errorf("dictionary = %v", v)
	}
}

func TestFromArrowUnsupported(t *testing.T) {
	u := build(arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{0}),
		func(b *array.SparseUnionBuilder) {
			b.Append(0)
			b.Child(0).(*array.Int32Builder).Append(1)
		})
	schema := arrow.NewSchema([]arrow.Field{{Name: "u", Type: u.DataType()}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{u}, 1)
	_, err := FromArrow(rec)
	if !errors.Is(err, ErrUnsupported) || err.Error() != `column "u": structtensor/arrow: unsupported type: sparse_union<i: type=int32=0>` {
		t.Errorf("err = %v", err)
	}
}

func TestFromArrowInvalidOffsets(t *testing.T) {
	child := build(arrow.PrimitiveTypes.Int64, func(b *array.Int64Builder) { b.AppendValues([]int64{1, 2, 3}, nil) })
	for _, tc := range []struct {
		name    string
		offsets []int32
		want    string
	}{
		{"decreasing", []int32{0, 3, 1}, "not monotonically non-decreasing"},
		{"past the child", []int32{0, 1, 5}, "5"},
		{"negative", []int32{-1, 1, 2}, "-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offsets := memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(&tc.offsets[0])), 4*len(tc.offsets)))
			d := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int64), 2, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{child.Data()}, 0, 0)
			l := array.MakeFromData(d)
			schema := arrow.NewSchema([]arrow.Field{{Name: "bad", Type: l.DataType()}}, nil)
			_, err := FromArrow(array.NewRecordBatch(schema, []arrow.Array{l}, 2))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `column "bad"`) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// A struct whose child is shorter than the struct.
	short := build(arrow.PrimitiveTypes.Int64, func(b *array.Int64Builder) { b.AppendValues([]int64{1}, nil) })
	sd := array.NewData(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64}), 3, []*memory.Buffer{nil}, []arrow.ArrayData{short.Data()}, 0, 0)
	if _, err := FromArrowArray(array.MakeFromData(sd)); !errors.Is(err, ErrInvalid) {
		t.Errorf("short struct child: err = %v", err)
	}
}
