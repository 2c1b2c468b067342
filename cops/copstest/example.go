package copstest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
)

// ExampleCase is a random feature spec with records for it: the input of
// the tests that compare the example decode op, DataViews built from
// feature specs and their Arrow form with TensorFlow and tfx-bsl.
type ExampleCase struct {
	Spec     *decode.ExampleSpec
	Sequence bool
	Records  [][]byte
}

// ExampleOptions shape ExampleCases.
type ExampleOptions struct {
	// Sequence makes SequenceExample cases (context and feature lists).
	Sequence bool
	// MaxRecords bounds the records per case (default 6).
	MaxRecords int
	// NoPartitions leaves Ragged features without partitions, and
	// NoFixedLenSequence leaves out FixedLenSequence features of the
	// context or tf.Example (readers that have no such notion).
	NoPartitions, NoFixedLenSequence bool
	// NoDefaults gives FixedLen features no default: they are present in
	// every record (a tensorflow_metadata schema has no defaults).
	NoDefaults bool
	// FiniteFloats draws no NaN or infinity (for readers of JSON).
	FiniteFloats bool
}

// ExampleCases returns n random cases from seed: features of every dtype
// and kind (FixedLen with and without defaults and of several shapes,
// VarLen, FixedLenSequence, Ragged with row_splits, row_lengths and
// uniform partitions), and records serialized by protobuf in which
// features are absent, lists empty, values extreme (NaN, infinities,
// int64 bounds, long strings) and keys outside the spec present. Every
// record is valid for its spec: a required feature is always present with
// the number of values its shape holds.
func ExampleCases(seed uint64, n int, opts ExampleOptions) []ExampleCase {
	if opts.MaxRecords == 0 {
		opts.MaxRecords = 6
	}
	g := &exampleGen{r: rand.New(rand.NewPCG(seed, 0x5e9)), opts: opts}
	cases := make([]ExampleCase, n)
	for i := range cases {
		c := ExampleCase{Spec: g.spec(), Sequence: opts.Sequence}
		for j := 1 + g.r.IntN(opts.MaxRecords); j > 0; j-- {
			c.Records = append(c.Records, g.record(c.Spec))
		}
		cases[i] = c
	}
	return cases
}

// ExampleRecords returns n random records for spec (as ExampleCases
// makes them) from seed.
func ExampleRecords(spec *decode.ExampleSpec, n int, seed uint64, opts ExampleOptions) [][]byte {
	g := &exampleGen{r: rand.New(rand.NewPCG(seed, 0x5e9)), opts: opts}
	records := make([][]byte, n)
	for i := range records {
		records[i] = g.record(spec)
	}
	return records
}

type exampleGen struct {
	r    *rand.Rand
	opts ExampleOptions
}

var exampleDTypes = []structtensor.DType{structtensor.Int64, structtensor.Float32, structtensor.String}

func (g *exampleGen) shape() []int {
	return [][]int{nil, {1}, {3}, {2, 2}}[g.r.IntN(4)]
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func (g *exampleGen) spec() *decode.ExampleSpec {
	s := &decode.ExampleSpec{Features: map[string]decode.Feature{}}
	for i := 0; i < 1+g.r.IntN(5); i++ {
		name := fmt.Sprintf("f%d", i)
		f := decode.Feature{DType: exampleDTypes[g.r.IntN(3)]}
		if g.r.IntN(4) == 0 {
			f.Key = "key/" + name
		}
		switch k := g.r.IntN(5); {
		case k <= 1:
			f.Kind, f.Shape = decode.FixedLen, g.shape()
			if g.r.IntN(2) == 0 && !g.opts.NoDefaults {
				f.Default = g.values(f.DType, shapeSize(f.Shape))
			}
		case k == 2 && !g.opts.NoFixedLenSequence && !g.opts.Sequence:
			f.Kind, f.Shape = decode.FixedLenSequence, g.shape()
		case k == 3 && !g.opts.NoPartitions && !g.opts.Sequence:
			f.Kind = decode.Ragged
			for j := 0; j < 1+g.r.IntN(2); j++ {
				p := decode.Partition{Kind: decode.PartitionKind(1 + g.r.IntN(6)), Key: fmt.Sprintf("%s_p%d", name, j)}
				if p.Kind == decode.UniformRowLength {
					p.Key, p.Length = "", 1+g.r.IntN(2)
				}
				f.Partitions = append(f.Partitions, p)
			}
		default:
			f.Kind = decode.VarLen
		}
		s.Features[name] = f
	}
	if g.opts.Sequence {
		s.SequenceFeatures = map[string]decode.Feature{}
		for i := 0; i < 1+g.r.IntN(3); i++ {
			f := decode.Feature{DType: exampleDTypes[g.r.IntN(3)]}
			switch g.r.IntN(3) {
			case 0:
				f.Kind, f.Shape, f.AllowMissing = decode.FixedLenSequence, g.shape(), true
			case 1:
				f.Kind = decode.VarLen
			default:
				f.Kind = decode.Ragged
			}
			s.SequenceFeatures[fmt.Sprintf("s%d", i)] = f
		}
	}
	return s
}

// values returns n random values of dtype d as a Feature.Default would
// hold them.
func (g *exampleGen) values(d structtensor.DType, n int) any {
	switch d {
	case structtensor.Int64:
		v := make([]int64, n)
		for i := range v {
			v[i] = g.int64v()
		}
		return v
	case structtensor.Float32:
		v := make([]float32, n)
		for i := range v {
			v[i] = g.float32v()
		}
		return v
	}
	v := make([][]byte, n)
	for i := range v {
		v[i] = g.bytesv()
	}
	return v
}

func (g *exampleGen) int64v() int64 {
	switch g.r.IntN(8) {
	case 0:
		return math.MaxInt64
	case 1:
		return math.MinInt64
	case 2:
		return -1 - g.r.Int64N(1000)
	}
	return g.r.Int64N(1 << uint(g.r.IntN(62)+1))
}

func (g *exampleGen) float32v() float32 {
	if g.opts.FiniteFloats {
		return float32(g.r.NormFloat64() * 100)
	}
	switch g.r.IntN(12) {
	case 0:
		return float32(math.Inf(1 - 2*g.r.IntN(2)))
	case 1:
		return float32(math.NaN())
	case 2:
		return float32(math.Copysign(0, -1))
	case 3:
		return math.MaxFloat32
	}
	return float32(g.r.NormFloat64() * 100)
}

func (g *exampleGen) bytesv() []byte {
	n := g.r.IntN(8)
	if g.r.IntN(20) == 0 {
		n = 23 + g.r.IntN(200) // longer than a TF_TString holds inline
	}
	b := make([]byte, n)
	for i := range b {
		if g.r.IntN(2) == 0 {
			b[i] = 'a' + byte(g.r.IntN(26))
		} else {
			b[i] = byte(g.r.IntN(256))
		}
	}
	return b
}

// feature is a tf.train.Feature of n values of dtype d.
func (g *exampleGen) feature(d structtensor.DType, n int) *tfexample.Feature {
	return featureOf(g.values(d, n))
}

func featureOf(v any) *tfexample.Feature {
	switch x := v.(type) {
	case []int64:
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: x}}}
	case []float32:
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: x}}}
	}
	return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: v.([][]byte)}}}
}

func keyOf(name string, f decode.Feature) string {
	if f.Key != "" {
		return f.Key
	}
	return name
}

// features fills m with the spec's features for one record (context or
// tf.Example).
func (g *exampleGen) features(spec map[string]decode.Feature, m map[string]*tfexample.Feature) {
	// In name order: the draws, and so the records, are the same on every
	// run of a seed.
	for _, name := range slices.Sorted(maps.Keys(spec)) {
		f := spec[name]
		key := keyOf(name, f)
		absent := g.r.IntN(5) == 0
		switch f.Kind {
		case decode.FixedLen:
			if absent && f.Default != nil {
				continue
			}
			m[key] = g.feature(f.DType, shapeSize(f.Shape))
		case decode.FixedLenSequence:
			if !absent {
				m[key] = g.feature(f.DType, shapeSize(f.Shape)*g.r.IntN(3))
			}
		case decode.VarLen:
			if !absent {
				m[key] = g.feature(f.DType, g.r.IntN(4))
			}
		case decode.Ragged:
			if absent {
				continue
			}
			g.ragged(f, key, m)
		}
	}
	if g.r.IntN(4) == 0 {
		d := exampleDTypes[g.r.IntN(3)] // one kind per key, as a real producer writes
		m["unknown_"+d.String()] = g.feature(d, g.r.IntN(3))
	}
}

// ragged writes a Ragged feature's values and consistent partitions,
// outermost first: each partition cuts the rows of the level above into
// rows of its own (uniform ones into rows of Length items).
func (g *exampleGen) ragged(f decode.Feature, key string, m map[string]*tfexample.Feature) {
	items := g.r.IntN(4) // rows of the outermost level
	for _, p := range f.Partitions {
		if p.Kind == decode.UniformRowLength {
			items *= p.Length
			continue
		}
		lengths := make([]int64, items)
		var below int
		for i := range lengths {
			lengths[i] = int64(g.r.IntN(3))
			if p.Kind == decode.ValueRowIds && i == len(lengths)-1 && lengths[i] == 0 {
				lengths[i] = 1 // ids cannot end in an empty row
			}
			below += int(lengths[i])
		}
		vals := partitionValues(p.Kind, lengths)
		if p.Kind == decode.RowSplits && items == 0 && g.r.IntN(2) == 0 {
			vals = nil // no rows: an empty list reads as [0]
		}
		m[p.Key] = featureOf(vals)
		items = below
	}
	m[key] = g.feature(f.DType, items)
}

// partitionValues encodes row lengths as a partition of kind k holds
// them.
func partitionValues(k decode.PartitionKind, lengths []int64) []int64 {
	var splits []int64
	var sum int64
	for _, l := range lengths {
		splits = append(splits, sum)
		sum += l
	}
	switch k {
	case decode.RowSplits:
		return append(splits, sum)
	case decode.RowStarts:
		return splits
	case decode.RowLimits:
		limits := []int64{}
		for i, s := range splits {
			limits = append(limits, s+lengths[i])
		}
		return limits
	case decode.ValueRowIds:
		ids := []int64{}
		for row, l := range lengths {
			for range l {
				ids = append(ids, int64(row))
			}
		}
		return ids
	}
	return lengths
}

func (g *exampleGen) record(spec *decode.ExampleSpec) []byte {
	ctx := map[string]*tfexample.Feature{}
	g.features(spec.Features, ctx)
	var msg proto.Message = &tfexample.Example{Features: &tfexample.Features{Feature: ctx}}
	if g.opts.Sequence {
		lists := map[string]*tfexample.FeatureList{}
		for _, name := range slices.Sorted(maps.Keys(spec.SequenceFeatures)) {
			f := spec.SequenceFeatures[name]
			if g.r.IntN(5) == 0 {
				continue
			}
			fl := &tfexample.FeatureList{}
			for s := g.r.IntN(4); s > 0; s-- {
				n := g.r.IntN(4)
				if f.Kind == decode.FixedLenSequence {
					n = shapeSize(f.Shape)
				}
				fl.Feature = append(fl.Feature, g.feature(f.DType, n))
			}
			lists[keyOf(name, f)] = fl
		}
		msg = &tfexample.SequenceExample{Context: &tfexample.Features{Feature: ctx}, FeatureLists: &tfexample.FeatureLists{FeatureList: lists}}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		panic(err) // a message built here always marshals
	}
	return b
}
