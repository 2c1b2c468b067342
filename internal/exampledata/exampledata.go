// Package exampledata generates the realistic tf.Example and
// tf.SequenceExample records that the benchmarks decode by feature spec:
// decode's BenchmarkExampleVsAnchors and the bench harness's
// tfexample-spec and seqexample-spec datasets draw the same records from
// the same seeds, so their figures speak of the same data.
//
// A Set holds the feature spec in decode.ParseExampleSpec's JSON form (so
// that this package does not import decode, whose tests use it) and
// draws one serialized record per call to Next.
package exampledata

import (
	"fmt"
	"math/rand/v2"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// Set is a stream of random records of one kind and their feature spec.
type Set struct {
	// Spec is the feature spec, in decode.ParseExampleSpec's JSON form.
	Spec []byte
	// Sequence tells whether the records are tf.SequenceExamples.
	Sequence bool
	next     func() *tfexample.SequenceExample // or an Example as its Context
}

// Next returns the next record, as proto.Marshal writes it (with map
// entries in key order, so that a seed always gives the same bytes).
func (s *Set) Next() []byte {
	m := s.next()
	var msg proto.Message = m
	if !s.Sequence {
		msg = &tfexample.Example{Features: m.Context}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		panic(fmt.Sprintf("exampledata: %v", err)) // the messages are built here, always valid
	}
	return b
}

// Records draws n records, back to back in one buffer, record i at
// data[offsets[i]:offsets[i+1]].
func (s *Set) Records(n int) (data []byte, offsets []int64) {
	offsets = append(make([]int64, 0, n+1), 0)
	for range n {
		data = append(data, s.Next()...)
		offsets = append(offsets, int64(len(data)))
	}
	return data, offsets
}

// rankingSpec is Ranking's feature spec: 37 features.
const rankingSpec = `{"features": {
 "id_0": {"kind": "var_len", "dtype": "int64"}, "id_1": {"kind": "var_len", "dtype": "int64"},
 "id_2": {"kind": "var_len", "dtype": "int64"}, "id_3": {"kind": "var_len", "dtype": "int64"},
 "id_4": {"kind": "var_len", "dtype": "int64"}, "id_5": {"kind": "var_len", "dtype": "int64"},
 "id_6": {"kind": "var_len", "dtype": "int64"}, "id_7": {"kind": "var_len", "dtype": "int64"},
 "id_8": {"kind": "var_len", "dtype": "int64"}, "id_9": {"kind": "var_len", "dtype": "int64"},
 "tags_0": {"kind": "var_len", "dtype": "float32"}, "tags_1": {"kind": "var_len", "dtype": "float32"},
 "tags_2": {"kind": "var_len", "dtype": "float32"}, "tags_3": {"kind": "var_len", "dtype": "float32"},
 "tags_4": {"kind": "var_len", "dtype": "float32"}, "tags_5": {"kind": "var_len", "dtype": "float32"},
 "tags_6": {"kind": "var_len", "dtype": "float32"}, "tags_7": {"kind": "var_len", "dtype": "float32"},
 "tags_8": {"kind": "var_len", "dtype": "float32"}, "tags_9": {"kind": "var_len", "dtype": "float32"},
 "cnt_0": {"kind": "fixed_len", "dtype": "int64", "default": 0}, "cnt_1": {"kind": "fixed_len", "dtype": "int64", "default": 0},
 "cnt_2": {"kind": "fixed_len", "dtype": "int64", "default": 0}, "cnt_3": {"kind": "fixed_len", "dtype": "int64", "default": 0},
 "cnt_4": {"kind": "fixed_len", "dtype": "int64", "default": 0},
 "score_0": {"kind": "fixed_len", "dtype": "float32", "default": 0}, "score_1": {"kind": "fixed_len", "dtype": "float32", "default": 0},
 "score_2": {"kind": "fixed_len", "dtype": "float32", "default": 0}, "score_3": {"kind": "fixed_len", "dtype": "float32", "default": 0},
 "score_4": {"kind": "fixed_len", "dtype": "float32", "default": 0},
 "query_0": {"kind": "var_len", "dtype": "string"}, "query_1": {"kind": "var_len", "dtype": "string"},
 "query_2": {"kind": "var_len", "dtype": "string"}, "query_3": {"kind": "var_len", "dtype": "string"},
 "query_4": {"kind": "var_len", "dtype": "string"},
 "emb_0": {"kind": "fixed_len", "dtype": "float32", "shape": [16]}, "emb_1": {"kind": "fixed_len", "dtype": "float32", "shape": [16]},
 "emb_2": {"kind": "fixed_len", "dtype": "float32", "shape": [16]}, "emb_3": {"kind": "fixed_len", "dtype": "float32", "shape": [16]},
 "price": {"kind": "fixed_len", "dtype": "float32", "default": 0},
 "country": {"kind": "fixed_len", "dtype": "string", "default": ""}}}`

// Ranking is a tf.Example dataset of a ranking model: 37 features (ten
// int64 id lists of 1-10 values, ten float tag lists of 0-8, five counts,
// five scores, five lists of 1-3 query strings, four 16-float embeddings,
// a price and a country), lists absent from some records.
func Ranking(r *rand.Rand) *Set {
	ints := func(k int, max int64) *tfexample.Feature {
		v := make([]int64, k)
		for i := range v {
			v[i] = r.Int64N(max)
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
	}
	floats := func(k int) *tfexample.Feature {
		v := make([]float32, k)
		for i := range v {
			v[i] = r.Float32()
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: v}}}
	}
	strs := func(k int) *tfexample.Feature {
		v := make([][]byte, k)
		for i := range v {
			b := make([]byte, 5+r.IntN(16))
			for j := range b {
				b[j] = byte('a' + r.IntN(26))
			}
			v[i] = b
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: v}}}
	}
	return &Set{Spec: []byte(rankingSpec), next: func() *tfexample.SequenceExample {
		m := map[string]*tfexample.Feature{}
		for i := 0; i < 10; i++ {
			if r.IntN(5) != 0 {
				m[fmt.Sprintf("id_%d", i)] = ints(1+r.IntN(10), 1<<40)
			}
			if r.IntN(3) != 0 {
				m[fmt.Sprintf("tags_%d", i)] = floats(r.IntN(9))
			}
		}
		for i := 0; i < 5; i++ {
			if r.IntN(5) != 0 {
				m[fmt.Sprintf("cnt_%d", i)] = ints(1, 1000)
			}
			m[fmt.Sprintf("score_%d", i)] = floats(1)
			if r.IntN(10) < 7 {
				m[fmt.Sprintf("query_%d", i)] = strs(1 + r.IntN(3))
			}
		}
		for i := 0; i < 4; i++ {
			m[fmt.Sprintf("emb_%d", i)] = floats(16)
		}
		m["price"] = floats(1)
		m["country"] = strs(1)
		return &tfexample.SequenceExample{Context: &tfexample.Features{Feature: m}}
	}}
}

// sessionsSpec is Sessions' feature spec.
const sessionsSpec = `{"features": {
 "user_id": {"kind": "fixed_len", "dtype": "int64"},
 "country": {"kind": "fixed_len", "dtype": "string", "default": ""},
 "user_emb": {"kind": "fixed_len", "dtype": "float32", "shape": [8]},
 "queries": {"kind": "var_len", "dtype": "string"},
 "age": {"kind": "fixed_len", "dtype": "int64", "default": -1}},
 "sequence_features": {
 "item_id": {"kind": "fixed_len_sequence", "dtype": "int64"},
 "clicked": {"kind": "fixed_len_sequence", "dtype": "int64"},
 "dwell": {"kind": "fixed_len_sequence", "dtype": "float32"},
 "item_tags": {"kind": "var_len", "dtype": "int64"},
 "token": {"kind": "var_len", "dtype": "string"}}}`

// Sessions is a tf.SequenceExample dataset: a session of 5-30 steps
// (item id, click, dwell time, 0-4 item tags and a query token per step;
// tags absent from some records) with its context (user id, country, an
// 8-float user embedding, 1-3 recent queries, an optional age).
func Sessions(r *rand.Rand) *Set {
	word := func() []byte {
		b := make([]byte, 3+r.IntN(8))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		return b
	}
	i64 := func(v ...int64) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
	}
	f32 := func(v ...float32) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: v}}}
	}
	str := func(v ...[]byte) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: v}}}
	}
	return &Set{Spec: []byte(sessionsSpec), Sequence: true, next: func() *tfexample.SequenceExample {
		emb := make([]float32, 8)
		for i := range emb {
			emb[i] = r.Float32()
		}
		var qs [][]byte
		for i := 0; i < 1+r.IntN(3); i++ {
			qs = append(qs, word())
		}
		ctx := map[string]*tfexample.Feature{
			"user_id": i64(r.Int64N(1 << 32)), "country": str([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26))}),
			"user_emb": f32(emb...), "queries": str(qs...),
		}
		if r.IntN(2) == 0 {
			ctx["age"] = i64(int64(18 + r.IntN(60)))
		}
		steps := 5 + r.IntN(26)
		lists := map[string]*tfexample.FeatureList{}
		add := func(name string, f *tfexample.Feature) {
			if lists[name] == nil {
				lists[name] = &tfexample.FeatureList{}
			}
			lists[name].Feature = append(lists[name].Feature, f)
		}
		tags := r.IntN(4) != 0
		for s := 0; s < steps; s++ {
			add("item_id", i64(r.Int64N(1<<40)))
			add("clicked", i64(int64(r.IntN(2))))
			add("dwell", f32(r.Float32()*60))
			if tags {
				t := make([]int64, r.IntN(5))
				for i := range t {
					t[i] = r.Int64N(5000)
				}
				add("item_tags", i64(t...))
			}
			add("token", str(word()))
		}
		return &tfexample.SequenceExample{
			Context:      &tfexample.Features{Feature: ctx},
			FeatureLists: &tfexample.FeatureLists{FeatureList: lists},
		}
	}}
}
