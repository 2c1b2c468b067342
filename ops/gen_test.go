package ops_test

import (
	"fmt"

	st "github.com/structtensor/structtensor-go/structtensor"
	"pgregory.net/rapid"
)

// This file generates random StructTensors for the property tests. It
// builds them from flat columns and random row partitions with the core
// constructors (not with FromValue), so that the references, which work on
// the ToValue form, see values whose construction shares no code with the
// ops under test.

type fieldSchema struct {
	name   string
	kind   int // leafDense, leafRagged or nested
	dtype  st.DType
	inner  []int // leaves: dense dims of each (innermost) value
	depth  int   // leafRagged: ragged dims per element; nested: list dims per element
	fields []fieldSchema
}

const (
	leafDense = iota
	leafRagged
	nested
)

var dtypes = []st.DType{st.Int64, st.String, st.Bool, st.Float64, st.Int32}

func drawSchema(t *rapid.T, label string, budget int) []fieldSchema {
	n := rapid.IntRange(1, 3).Draw(t, label+".nfields")
	fs := make([]fieldSchema, n)
	for i := range fs {
		f := fieldSchema{name: fmt.Sprintf("f%d", i)}
		maxKind := leafRagged
		if budget > 0 {
			maxKind = nested
		}
		f.kind = rapid.IntRange(leafDense, maxKind).Draw(t, label+".kind")
		switch f.kind {
		case leafDense:
			f.dtype = rapid.SampledFrom(dtypes).Draw(t, label+".dtype")
			if rapid.Bool().Draw(t, label+".hasInner") {
				f.inner = []int{rapid.IntRange(0, 2).Draw(t, label+".inner")}
			}
		case leafRagged:
			f.dtype = rapid.SampledFrom(dtypes).Draw(t, label+".dtype")
			f.depth = rapid.IntRange(1, 2).Draw(t, label+".depth")
			if rapid.IntRange(0, 3).Draw(t, label+".hasInner") == 0 {
				f.inner = []int{rapid.IntRange(1, 2).Draw(t, label+".inner")}
			}
		case nested:
			f.depth = rapid.IntRange(0, 2).Draw(t, label+".depth")
			f.fields = drawSchema(t, label+"."+f.name, budget-1)
		}
		fs[i] = f
	}
	return fs
}

// drawParts draws depth nested partitions over n rows, each uniform or
// ragged, and returns them with the number of innermost values.
func drawParts(t *rapid.T, label string, n, depth int) ([]*st.RowPartition, int) {
	parts := make([]*st.RowPartition, depth)
	for d := range parts {
		var p *st.RowPartition
		var err error
		if rapid.Bool().Draw(t, label+".uniform") {
			p, err = st.NewUniformPartition(n, rapid.IntRange(0, 3).Draw(t, label+".len"))
		} else {
			lengths := make([]int64, n)
			for i := range lengths {
				lengths[i] = int64(rapid.IntRange(0, 3).Draw(t, label+".rowlen"))
			}
			p, err = st.NewRowLengths(lengths)
		}
		if err != nil {
			t.Fatal(err)
		}
		parts[d] = p
		n = p.NumValues()
	}
	return parts, n
}

func drawTensor(t *rapid.T, label string, dtype st.DType, shape st.Shape) *st.Tensor {
	n := shape.NumElements()
	var data any
	switch dtype {
	case st.Int64:
		data = rapid.SliceOfN(rapid.Int64Range(-9, 99), n, n).Draw(t, label)
	case st.Int32:
		data = rapid.SliceOfN(rapid.Int32Range(-9, 99), n, n).Draw(t, label)
	case st.Bool:
		data = rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, label)
	case st.Float64:
		data = rapid.SliceOfN(rapid.Float64Range(-4, 4), n, n).Draw(t, label)
	default:
		data = rapid.SliceOfN(rapid.SampledFrom([]string{"", "a", "bc", "déf"}), n, n).Draw(t, label)
	}
	v, err := st.NewTensor(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// drawFlat draws the flat value of field f with n rows.
func drawFlat(t *rapid.T, f fieldSchema, n int) st.Value {
	label := f.name
	switch f.kind {
	case leafDense:
		return drawTensor(t, label, f.dtype, append(st.Shape{n}, f.inner...))
	case leafRagged:
		parts, m := drawParts(t, label, n, f.depth)
		v, err := st.NewRagged(drawTensor(t, label, f.dtype, append(st.Shape{m}, f.inner...)), parts...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	parts, m := drawParts(t, label, n, f.depth)
	v, err := st.NewPartitionedStruct(n, parts, drawFields(t, f.fields, m)...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func drawFields(t *rapid.T, fs []fieldSchema, n int) []st.Field {
	out := make([]st.Field, len(fs))
	for i, f := range fs {
		out[i] = st.Field{Name: f.name, Value: drawFlat(t, f, n)}
	}
	return out
}

// drawRoot draws a StructTensor of the given rank over schema.
func drawRoot(t *rapid.T, schema []fieldSchema, rank int) *st.StructTensor {
	if rank == 0 {
		fields := drawFields(t, schema, 1)
		for i, f := range fields {
			v, err := rowOf(f.Value, 0)
			if err != nil {
				t.Fatal(err)
			}
			fields[i].Value = v
		}
		s, err := st.NewScalarStruct(fields...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	n := rapid.IntRange(0, 4).Draw(t, "nrows")
	parts, m := drawParts(t, "root", n, rank-1)
	return drawRootOver(t, schema, n, parts, m)
}

func drawRootOver(t *rapid.T, schema []fieldSchema, n int, parts []*st.RowPartition, m int) *st.StructTensor {
	s, err := st.NewPartitionedStruct(n, parts, drawFields(t, schema, m)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rowOf is row i of v through the value model's own indexing.
func rowOf(v st.Value, i int) (st.Value, error) {
	switch x := v.(type) {
	case *st.Tensor:
		return x.Get(i)
	case *st.Ragged:
		return x.Get(i)
	case *st.StructTensor:
		return x.Get(i)
	}
	return nil, fmt.Errorf("unknown %T", v)
}
