package decode

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/structtensor"
)

// This file compares ExamplePlan with TensorFlow's tf.io.parse_example and
// tf.io.parse_sequence_example on random specs and records: the records
// are written by hand with protowire, so that they cover what a protobuf
// serializer never writes (repeated keys, unpacked and split runs, keys
// after values, unknown fields, truncation).

// exampleCase is one batch for the reference script.
type exampleCase struct {
	Spec     *ExampleSpec `json:"spec"`
	Sequence bool         `json:"sequence"`
	Records  []string     `json:"records"` // hex
	records  [][]byte
}

// exGen generates random specs and matching (mostly) records.
type exGen struct {
	r *rand.Rand
	// keyFirst writes map entries key first and Features without unknown
	// fields: TensorFlow's SequenceExample parser rejects the others.
	keyFirst bool
	// text makes bytes values UTF-8 text but for one in a hundred (half
	// the cases), so that string columns are found valid and invalid.
	text bool
}

func (g *exGen) dtype() structtensor.DType {
	return []structtensor.DType{structtensor.Int64, structtensor.Float32, structtensor.String}[g.r.IntN(3)]
}

func (g *exGen) shape() []int {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []int{1 + g.r.IntN(3)}
	case 2:
		return []int{2, 2}
	}
	return []int{g.r.IntN(3)}
}

func (g *exGen) int64v() int64 {
	switch g.r.IntN(6) {
	case 0:
		return math.MaxInt64
	case 1:
		return math.MinInt64
	case 2:
		return -1 - g.r.Int64N(1000)
	}
	return g.r.Int64N(1 << uint(g.r.IntN(62)+1))
}

func (g *exGen) float32v() float32 {
	switch g.r.IntN(10) {
	case 0:
		return float32(math.Inf(1 - 2*g.r.IntN(2)))
	case 1:
		return float32(math.NaN())
	case 2:
		return float32(math.Copysign(0, -1))
	case 3:
		return math.MaxFloat32
	case 4:
		return math.SmallestNonzeroFloat32
	}
	return float32(g.r.NormFloat64() * 100)
}

func (g *exGen) bytesv() []byte {
	n := g.r.IntN(8)
	if g.r.IntN(50) == 0 {
		n = 5000 + g.r.IntN(5000) // a huge value
	}
	if g.text && g.r.IntN(100) != 0 {
		// ASCII and characters of two to four bytes.
		var b []byte
		for len(b) < n {
			b = utf8.AppendRune(b, []rune{'a', 'Z', ' ', 'é', 'ß', '日', '€', '😀'}[g.r.IntN(8)])
		}
		return b
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g *exGen) defaultFor(f *Feature, n int) {
	if g.r.IntN(2) == 0 {
		return
	}
	switch f.DType {
	case structtensor.Int64:
		d := make([]int64, n)
		for i := range d {
			d[i] = g.int64v()
		}
		f.Default = d
	case structtensor.Float32:
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(g.r.IntN(100)) / 4 // exact in JSON
		}
		f.Default = d
	default:
		d := make([]string, n)
		for i := range d {
			d[i] = fmt.Sprintf("d%d", g.r.IntN(100))
		}
		f.Default = d
	}
}

func (g *exGen) spec(sequence bool) *ExampleSpec {
	s := &ExampleSpec{Features: map[string]Feature{}}
	nf := 1 + g.r.IntN(4)
	for i := 0; i < nf; i++ {
		name := fmt.Sprintf("f%d", i)
		f := Feature{DType: g.dtype()}
		switch k := g.r.IntN(5); {
		case k <= 1:
			f.Kind, f.Shape = FixedLen, g.shape()
			n, _ := numElements(f.Shape)
			if n == 0 && sequence {
				// TensorFlow's SequenceExample parser is not consistent
				// about a context feature of no values (required or not).
				f.Shape, n = nil, 1
			}
			g.defaultFor(&f, n)
		case k == 2:
			f.Kind = VarLen
		case k == 3 && !sequence:
			f.Kind, f.Shape = FixedLenSequence, g.shape()
			if n, _ := numElements(f.Shape); n == 0 {
				f.Shape = nil
			}
		default:
			f.Kind = Ragged
			for j := 0; j < g.r.IntN(3); j++ {
				p := Partition{Kind: PartitionKind(1 + g.r.IntN(6)), Key: fmt.Sprintf("p%d_%s", j, name)}
				if p.Kind == UniformRowLength {
					p.Key, p.Length = "", 1+g.r.IntN(2)
				}
				f.Partitions = append(f.Partitions, p)
			}
		}
		s.Features[name] = f
	}
	if sequence {
		s.SequenceFeatures = map[string]Feature{}
		for i := 0; i < 1+g.r.IntN(3); i++ {
			name := fmt.Sprintf("s%d", i)
			f := Feature{DType: g.dtype()}
			switch g.r.IntN(3) {
			case 0:
				f.Kind, f.Shape, f.AllowMissing = FixedLenSequence, g.shape(), g.r.IntN(4) != 0
				if n, _ := numElements(f.Shape); n == 0 {
					f.Shape = nil
				}
			case 1:
				f.Kind = VarLen
			default:
				f.Kind = Ragged
			}
			s.SequenceFeatures[name] = f
		}
	}
	return s
}

// feature encodes a tf.train.Feature with n values of dtype d (kind
// other than d's sometimes, as the caller asks), packed or not.
func (g *exGen) feature(d structtensor.DType, n int) []byte {
	var list []byte
	var field protowire.Number
	// One run, packed or not: TensorFlow's fast parser rejects a list
	// mixing both and reads only the first of several packed runs
	// (protobuf concatenates them; TestExampleProtobufSemantics covers it).
	packed := g.r.IntN(2) == 0
	switch d {
	case structtensor.Int64:
		field = 3
		var run []byte
		// Some lists hold only values of one to eight bytes, which the
		// vector decoders take whole; int64v's extremes are nine and ten.
		short := g.r.IntN(3) == 0
		for i := 0; i < n; i++ {
			v := uint64(g.int64v())
			if short {
				v = g.r.Uint64N(1 << (7 * (1 + g.r.IntN(8))))
			}
			if packed {
				run = protowire.AppendVarint(run, v)
			} else {
				list = protowire.AppendTag(list, 1, protowire.VarintType)
				list = protowire.AppendVarint(list, v)
			}
		}
		if packed && (n > 0 || g.r.IntN(2) == 0) {
			list = protowire.AppendTag(list, 1, protowire.BytesType)
			list = protowire.AppendBytes(list, run)
		}
	case structtensor.Float32:
		field = 2
		var run []byte
		for i := 0; i < n; i++ {
			v := math.Float32bits(g.float32v())
			if packed {
				run = protowire.AppendFixed32(run, v)
			} else {
				list = protowire.AppendTag(list, 1, protowire.Fixed32Type)
				list = protowire.AppendFixed32(list, v)
			}
		}
		if packed && (n > 0 || g.r.IntN(2) == 0) {
			list = protowire.AppendTag(list, 1, protowire.BytesType)
			list = protowire.AppendBytes(list, run)
		}
	default:
		field = 1
		for i := 0; i < n; i++ {
			list = protowire.AppendTag(list, 1, protowire.BytesType)
			list = protowire.AppendBytes(list, g.bytesv())
		}
	}
	// (No unknown field in the list: TensorFlow's fast parser rejects one
	// after unpacked floats.)
	var f []byte
	f = protowire.AppendTag(f, field, protowire.BytesType)
	f = protowire.AppendBytes(f, list)
	if !g.keyFirst && g.r.IntN(20) == 0 { // an unknown field in the Feature
		f = protowire.AppendTag(f, 9, protowire.VarintType)
		f = protowire.AppendVarint(f, 5)
	}
	return f
}

// entry encodes one map entry.
func (g *exGen) entry(key string, value []byte) []byte {
	var e []byte
	if !g.keyFirst && g.r.IntN(5) == 0 {
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendBytes(e, value)
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, key)
	} else {
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, key)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendBytes(e, value)
	}
	var out []byte
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	return protowire.AppendBytes(out, e)
}

// wrongDType is a dtype other than d, sometimes.
func (g *exGen) listDType(d structtensor.DType) structtensor.DType {
	if g.r.IntN(25) == 0 {
		return g.dtype()
	}
	return d
}

// count is a value count for a feature: its shape's most of the time.
func (g *exGen) count(want int) int {
	if want >= 0 && g.r.IntN(15) != 0 {
		return want
	}
	return g.r.IntN(5)
}

// featureValue is one Feature for f, or nil for an absent one.
func (g *exGen) featureValue(f Feature) (key string, value []byte, extra map[string][]byte) {
	extra = map[string][]byte{}
	switch f.Kind {
	case FixedLen:
		// Never more values than the shape holds: TensorFlow 2.21's fast
		// parser writes those past its output buffer before it checks the
		// count (heap corruption, a crash in a batch); fewer is an error
		// it reports cleanly. (TestExampleErrors covers too many.)
		n, _ := numElements(f.Shape)
		return "", g.feature(g.listDType(f.DType), min(n, g.count(n))), extra
	case FixedLenSequence:
		n, _ := numElements(f.Shape)
		return "", g.feature(g.listDType(f.DType), g.count(n*g.r.IntN(3))), extra
	case VarLen:
		return "", g.feature(g.listDType(f.DType), g.r.IntN(5)), extra
	}
	// Ragged: build the partitions innermost first from a number of values.
	nvals := g.r.IntN(7)
	items := nvals
	for j := len(f.Partitions) - 1; j >= 0; j-- {
		p := f.Partitions[j]
		var lengths []int64
		switch p.Kind {
		case UniformRowLength:
			if items%p.Length != 0 && j == len(f.Partitions)-1 && g.r.IntN(10) != 0 {
				nvals += p.Length - items%p.Length
				items = nvals
			}
			items /= p.Length
			continue
		default:
			left := items
			for left > 0 {
				l := 1 + g.r.IntN(left)
				lengths = append(lengths, int64(l))
				left -= l
			}
			if g.r.IntN(4) == 0 {
				lengths = append(lengths, 0)
			}
			if g.r.IntN(20) == 0 && len(lengths) > 0 {
				lengths[0]++
			}
		}
		vals := lengths
		var sum int64
		switch p.Kind {
		case RowSplits:
			vals = []int64{0}
			for _, l := range lengths {
				vals = append(vals, vals[len(vals)-1]+l)
			}
		case RowLimits, RowStarts:
			vals = nil
			for _, l := range lengths {
				if p.Kind == RowStarts {
					vals = append(vals, sum)
				}
				sum += l
				if p.Kind == RowLimits {
					vals = append(vals, sum)
				}
			}
		case ValueRowIds:
			// Trailing empty rows have no id: the record has as many rows
			// as its largest id plus one.
			vals = nil
			for i, l := range lengths {
				for ; l > 0; l-- {
					vals = append(vals, int64(i))
				}
			}
			for len(lengths) > 0 && lengths[len(lengths)-1] == 0 {
				lengths = lengths[:len(lengths)-1]
			}
		}
		if g.r.IntN(30) == 0 && len(vals) > 1 { // out of order
			slices.Reverse(vals)
		}
		var list []byte
		for _, v := range vals {
			list = protowire.AppendVarint(list, uint64(v))
		}
		var ft []byte
		ft = protowire.AppendTag(ft, 3, protowire.BytesType)
		var l2 []byte
		l2 = protowire.AppendTag(l2, 1, protowire.BytesType)
		l2 = protowire.AppendBytes(l2, list)
		ft = protowire.AppendBytes(ft, l2)
		extra[p.Key] = ft
		items = len(lengths)
	}
	return "", g.feature(g.listDType(f.DType), nvals), extra
}

// features encodes a Features message (or a FeatureLists message when
// lists) holding the spec's features in random order, with absent ones,
// repeated keys and unknown keys.
func (g *exGen) features(fs map[string]Feature, lists bool) []byte {
	var out []byte
	names := sortedNames(fs)
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, name := range names {
		f := fs[name]
		if g.r.IntN(6) == 0 {
			continue // absent
		}
		key := f.Key
		if key == "" {
			key = name
		}
		value := func() ([]byte, map[string][]byte) {
			if !lists {
				if g.r.IntN(25) == 0 {
					return nil, nil // a Feature holding no list
				}
				_, v, extra := g.featureValue(f)
				return v, extra
			}
			var fl []byte
			n, _ := numElements(f.Shape)
			for s := g.r.IntN(4); s > 0; s-- {
				var v []byte
				if f.Kind == FixedLenSequence {
					v = g.feature(g.listDType(f.DType), g.count(n))
				} else {
					// Mostly a few values a step, sometimes more than
					// the eight a vector step of the decoders takes.
					n := g.r.IntN(4)
					if g.r.IntN(5) == 0 {
						n = 4 + g.r.IntN(17)
					}
					v = g.feature(g.listDType(f.DType), n)
				}
				fl = protowire.AppendTag(fl, 1, protowire.BytesType)
				fl = protowire.AppendBytes(fl, v)
			}
			return fl, nil
		}
		if g.r.IntN(10) == 0 { // an earlier entry of the same key, replaced
			v, _ := value()
			out = append(out, g.entry(key, v)...)
		}
		v, extra := value()
		for k, e := range extra {
			out = append(out, g.entry(k, e)...)
		}
		out = append(out, g.entry(key, v)...)
	}
	if g.r.IntN(5) == 0 { // a feature outside the spec
		out = append(out, g.entry(fmt.Sprintf("unknown%d", g.r.IntN(3)), g.feature(g.dtype(), g.r.IntN(4)))...)
	}
	return out
}

func (g *exGen) record(s *ExampleSpec, sequence bool) []byte {
	var rec []byte
	if g.r.IntN(20) == 0 { // an unknown field of the record
		rec = protowire.AppendTag(rec, 9, protowire.BytesType)
		rec = protowire.AppendBytes(rec, []byte("x"))
	}
	feats := g.features(s.Features, false)
	// The map may come in several Features messages, which merge.
	if g.r.IntN(8) == 0 {
		rec = protowire.AppendTag(rec, 1, protowire.BytesType)
		rec = protowire.AppendBytes(rec, g.features(s.Features, false))
	}
	rec = protowire.AppendTag(rec, 1, protowire.BytesType)
	rec = protowire.AppendBytes(rec, feats)
	if sequence {
		rec = protowire.AppendTag(rec, 2, protowire.BytesType)
		rec = protowire.AppendBytes(rec, g.features(s.SequenceFeatures, true))
	}
	if g.r.IntN(60) == 0 && len(rec) > 0 { // truncated
		rec = rec[:g.r.IntN(len(rec))]
	}
	return rec
}

// canonical is a decoded value in the reference script's form: nested
// lists, floats as their float32 bits, strings as hex.
func canonical(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case float32:
		return math.Float32bits(x)
	case string:
		return hex.EncodeToString([]byte(x))
	}
	return v
}

// sparse gives the indices and values of a nested list, as a
// SparseTensor of it holds them.
func sparse(v any, prefix []int64, idx *[][]int64, vals *[]any) {
	if l, ok := v.([]any); ok {
		for i, e := range l {
			sparse(e, append(append([]int64(nil), prefix...), int64(i)), idx, vals)
		}
		return
	}
	*idx = append(*idx, prefix)
	*vals = append(*vals, v)
}

// pad pads the second dimension of a nested list to n rows of zero
// values shaped like inner.
func pad(v []any, n int, zero any, inner []int) []any {
	var fill func(d int) any
	fill = func(d int) any {
		if d == len(inner) {
			return zero
		}
		l := make([]any, inner[d])
		for i := range l {
			l[i] = fill(d + 1)
		}
		return l
	}
	out := make([]any, len(v))
	for i, row := range v {
		r := append(make([]any, 0, n), row.([]any)...)
		for len(r) < n {
			r = append(r, fill(0))
		}
		out[i] = r
	}
	return out
}

func jsonString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func errCategory(err error) string {
	switch {
	case errors.Is(err, ErrFeatureMissing):
		return "missing"
	case errors.Is(err, ErrFeatureType):
		return "type"
	case errors.Is(err, ErrFeatureShape):
		return "shape"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	}
	return "other"
}

func genExampleCases(seed uint64, n int, sequence bool) []*exampleCase {
	g := &exGen{r: rand.New(rand.NewPCG(seed, 12)), keyFirst: sequence}
	var cases []*exampleCase
	for i := 0; i < n; i++ {
		g.text = g.r.IntN(2) == 0
		c := &exampleCase{Spec: g.spec(sequence), Sequence: sequence}
		for j := 1 + g.r.IntN(6); j > 0; j-- {
			r := g.record(c.Spec, sequence)
			c.records = append(c.records, r)
			c.Records = append(c.Records, hex.EncodeToString(r))
		}
		cases = append(cases, c)
	}
	return cases
}

func compareWithTF(t *testing.T, cases []*exampleCase) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cases.json")
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/example/parse_example.py")
	if err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv", string(script), path)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<28)
	var agreeErr, agreeVal, tfLenient, seqSame int
	for i := 0; sc.Scan(); i++ {
		if i >= len(cases) {
			t.Fatalf("more answers than cases")
		}
		c := cases[i]
		var ref struct {
			Values  map[string]map[string]json.RawMessage `json:"values"`
			Error   string                                `json:"error"`
			Record  int64                                 `json:"record"`
			Message string                                `json:"message"`
			Alone   []int64                               `json:"fail_alone"`
			// SequenceExample errors: each bad record's error alone.
			AloneErr map[int64]string `json:"alone"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ref); err != nil {
			t.Fatal(err)
		}
		compile := CompileExample
		if c.Sequence {
			compile = CompileSequenceExample
		}
		plan, err := compile(c.Spec)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		specJSON := jsonString(t, c.Spec)
		for _, threads := range []int{1, 3} {
			st, err := plan.Decode(c.records, DecodeOptions{Threads: threads})
			if ref.Error != "" {
				var re *RecordError
				if err == nil {
					t.Errorf("case %d (spec %s): TensorFlow fails (%s, record %d: %s), we do not", i, specJSON, ref.Error, ref.Record, ref.Message)
				} else if c.Sequence {
					// TensorFlow's SequenceExample parser checks a record in
					// several passes whose order this decoder does not
					// follow: a batch that fails there fails here, and how
					// often the record and kind agree is reported.
					agreeErr++
					if errors.As(err, &re) && ref.AloneErr[re.Record] == errCategory(err) {
						seqSame++
					}
				} else if errors.As(err, &re) && errors.Is(err, ErrMalformed) && (re.Record <= ref.Record || c.Sequence) && proto.Unmarshal(c.records[re.Record], &tfexample.Example{}) != nil {
					tfLenient++ // an earlier record TensorFlow's fast parser accepts, protobuf does not
				} else if !errors.As(err, &re) || (ref.Record >= 0 && re.Record != ref.Record) || errCategory(err) != ref.Error {
					t.Errorf("case %d (spec %s): TensorFlow fails with %s at record %d (%s), we with %v", i, specJSON, ref.Error, ref.Record, ref.Message, err)
				} else {
					agreeErr++
				}
				continue
			}
			if err != nil {
				var re *RecordError
				if errors.As(err, &re) && errors.Is(err, ErrFeatureShape) && slices.Contains(ref.Alone, re.Record) {
					agreeErr++ // TensorFlow fails on the record alone
					continue
				}
				if errors.As(err, &re) && errors.Is(err, ErrMalformed) && proto.Unmarshal(c.records[re.Record], &tfexample.Example{}) != nil {
					tfLenient++ // TensorFlow's fast parser accepts some truncated records
					continue
				}
				t.Errorf("case %d (spec %s, records %q): TensorFlow decodes, we fail: %v", i, specJSON, c.Records, err)
				continue
			}
			agreeVal++
			for name, want := range ref.Values {
				v, err := st.FieldValue(name)
				if err != nil {
					t.Fatalf("case %d: %v", i, err)
				}
				got := canonical(structtensor.ToValue(v))
				var gotS, wantS string
				switch {
				case want["sparse"] != nil:
					var idx [][]int64
					var vals []any
					for r, row := range got.([]any) {
						sparse(row, []int64{int64(r)}, &idx, &vals)
					}
					if idx == nil {
						idx = [][]int64{}
					}
					if vals == nil {
						vals = []any{}
					}
					gotS = jsonString(t, map[string]any{"indices": idx, "values": vals})
					wantS = compactJSON(t, want["sparse"])
				case want["list"] != nil:
					gotS, wantS = jsonString(t, got), compactJSON(t, want["list"])
				default:
					var shape []int
					if err := json.Unmarshal(want["shape"], &shape); err != nil {
						t.Fatal(err)
					}
					f := c.Spec.Features[name]
					if sf, ok := c.Spec.SequenceFeatures[name]; ok {
						f = sf
					}
					if f.Kind == FixedLenSequence {
						zero := map[structtensor.DType]any{structtensor.Int64: int64(0), structtensor.Float32: uint32(0), structtensor.String: ""}[f.DType]
						got = pad(got.([]any), shape[1], zero, shape[2:])
					}
					gotS, wantS = jsonString(t, got), compactJSON(t, want["dense"])
				}
				if gotS != wantS {
					t.Errorf("case %d (spec %s, records %q), feature %q, %d threads:\n got %.600s\nwant %.600s", i, specJSON, c.Records, name, threads, gotS, wantS)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases: %d decodes equal TensorFlow's, %d errors where TensorFlow's are (SequenceExample: %d naming a record TensorFlow fails alone the same way), %d malformed records TensorFlow accepts and protobuf does not",
		len(cases), agreeVal, agreeErr, seqSame, tfLenient)
}

func compactJSON(t *testing.T, m json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

func TestExampleAgainstTensorFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TensorFlow")
	}
	compareWithTF(t, genExampleCases(1, 800, false))
}

func TestSequenceExampleAgainstTensorFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TensorFlow")
	}
	compareWithTF(t, genExampleCases(2, 500, true))
}
