package stats

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Sentinel errors; every error of the package wraps one of them.
var (
	// ErrSchema: StructTensors or partial statistics of different
	// schemas (paths, kinds or nesting) met in one Accumulator.
	ErrSchema = errors.New("stats: schemas differ")
	// ErrOptions: invalid Options, or partial statistics made with
	// different Options merged.
	ErrOptions = errors.New("stats: invalid options")
	// ErrState: serialized partial statistics that do not parse.
	ErrState = errors.New("stats: invalid serialized statistics")
)

// Options configure an Accumulator. The zero value gives the defaults;
// partial statistics merge only with partial statistics of equal Options.
type Options struct {
	// QuantileK is the capacity of each level of the numbers' quantile
	// sketch (default 512): ranks are within H/(QuantileK-1) of the
	// number of values, H <= log2(values/QuantileK)+1 (2.2% for a million
	// values in the worst case; typically ten times less).
	QuantileK int
	// Quantiles is how many equal-mass intervals the reported quantiles
	// cut the values into (default 10: the 0, 0.1, ..., 1 quantiles).
	Quantiles int
	// TopCounters is the number of counters of the strings' frequent
	// value sketch (default 1024): counts are low by at most
	// values/(TopCounters+1).
	TopCounters int
	// TopK is how many of the most frequent strings are reported
	// (default 20, at most TopCounters).
	TopK int
	// DistinctPrecision is the base-2 logarithm of the number of one-byte
	// registers of the distinct-count sketch (default 14, 4 to 18): the
	// relative standard error is 1.04/sqrt(2^DistinctPrecision).
	DistinctPrecision int
}

func (o Options) withDefaults() (Options, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.QuantileK, 512)
	def(&o.Quantiles, 10)
	def(&o.TopCounters, 1024)
	def(&o.TopK, 20)
	def(&o.DistinctPrecision, 14)
	switch {
	case o.QuantileK < 8 || o.QuantileK > 1<<16:
		return o, fmt.Errorf("%w: QuantileK %d (want 8 to 65536)", ErrOptions, o.QuantileK)
	case o.Quantiles < 1 || o.Quantiles > 1000:
		return o, fmt.Errorf("%w: Quantiles %d (want 1 to 1000)", ErrOptions, o.Quantiles)
	case o.TopCounters < 1 || o.TopCounters > 1<<20:
		return o, fmt.Errorf("%w: TopCounters %d (want 1 to 1048576)", ErrOptions, o.TopCounters)
	case o.TopK < 1 || o.TopK > o.TopCounters:
		return o, fmt.Errorf("%w: TopK %d (want 1 to TopCounters, %d)", ErrOptions, o.TopK, o.TopCounters)
	case o.DistinctPrecision < 4 || o.DistinctPrecision > 18:
		return o, fmt.Errorf("%w: DistinctPrecision %d (want 4 to 18)", ErrOptions, o.DistinctPrecision)
	}
	return o, nil
}

// Kind is what a feature holds, as statistics see it.
type Kind uint8

const (
	// KindStruct: a nested struct; its values are the struct's elements.
	KindStruct Kind = iota + 1
	// KindInt: Int32, Int64 and Bool (as 0 and 1) values.
	KindInt
	// KindUint: Uint32 and Uint64 values.
	KindUint
	// KindFloat: Float32 and Float64 values.
	KindFloat
	// KindString: String values marked UTF-8.
	KindString
	// KindBytes: String values not marked UTF-8.
	KindBytes
)

var kindNames = [...]string{KindStruct: "struct", KindInt: "int", KindUint: "uint", KindFloat: "float", KindString: "string", KindBytes: "bytes"}

func (k Kind) String() string {
	if k >= KindStruct && k <= KindBytes {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText names the kind in JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

func kindOf(t *structtensor.Tensor) Kind {
	switch t.DType() {
	case structtensor.Bool, structtensor.Int32, structtensor.Int64:
		return KindInt
	case structtensor.Uint32, structtensor.Uint64:
		return KindUint
	case structtensor.Float32, structtensor.Float64:
		return KindFloat
	case structtensor.String:
		if t.UTF8() {
			return KindString
		}
		return KindBytes
	}
	return 0
}

// Accumulator holds partial statistics: Add data, Merge other partial
// statistics, Summary at the end. Counts, sums, minima and maxima are
// exact, and equal for any split of the data and any merge order; the
// sketches (quantiles, distinct counts, most frequent values) are within
// their bounds for any split and equal for the same adds and merges in
// the same order. An Accumulator is not safe for concurrent use.
type Accumulator struct {
	opts     Options
	records  uint64
	features []*feature
	index    map[string]int
}

// New returns an empty Accumulator.
func New(opts ...Options) (*Accumulator, error) {
	o, err := optarg.One(opts, ErrOptions)
	if err != nil {
		return nil, err
	}
	o, err = o.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Accumulator{opts: o, index: map[string]int{}}, nil
}

// Options returns the Accumulator's options, defaults filled in.
func (a *Accumulator) Options() Options { return a.opts }

// Records is the number of records added so far.
func (a *Accumulator) Records() uint64 { return a.records }

// feature is the partial statistics of one path.
type feature struct {
	path         []string
	kind         Kind
	structLevels int // leading levels that are enclosing structs' dimensions

	present, empty, missing uint64
	values                  uint64
	perRecord               lengthStats // values per record, over records with values
	levels                  []lengthStats
	num                     *numberStats
	str                     *stringStats
}

func (f *feature) key() string { return strings.Join(f.path, ".") }

// lengthStats summarise list lengths exactly: a histogram in power-of-two
// buckets (bucket 0 holds length 0, bucket b >= 1 lengths 2^(b-1) to
// 2^b-1).
type lengthStats struct {
	lists, total uint64
	min, max     uint64
	hist         [65]uint64
}

func (l *lengthStats) addN(length, times uint64) {
	if times == 0 {
		return
	}
	if l.lists == 0 || length < l.min {
		l.min = length
	}
	if length > l.max {
		l.max = length
	}
	l.lists += times
	l.total += length * times
	l.hist[bits.Len64(length)] += times
}

func (l *lengthStats) merge(o *lengthStats) {
	if o.lists == 0 {
		return
	}
	if l.lists == 0 || o.min < l.min {
		l.min = o.min
	}
	l.max = max(l.max, o.max)
	l.lists += o.lists
	l.total += o.total
	for i, c := range o.hist {
		l.hist[i] += c
	}
}

type numberStats struct {
	count, nan, zeros, posInf, negInf uint64
	// Minimum and maximum, of the kind's type: int64 and uint64 bits
	// for Int and Uint, float64 bits for Float.
	min, max   uint64
	sum, sumSq fixedPoint
	quantiles  *quantileSketch
}

type stringStats struct {
	count, bytes   uint64
	minLen, maxLen uint64
	invalidUTF8    uint64
	distinct       *distinctSketch
	frequent       *frequentSketch
}

func (a *Accumulator) newFeature(o *observation) *feature {
	f := &feature{path: o.path, kind: o.kind, structLevels: o.structLevels, levels: make([]lengthStats, len(o.levels))}
	switch o.kind {
	case KindInt, KindUint, KindFloat:
		f.num = &numberStats{quantiles: newQuantileSketch(a.opts.QuantileK)}
	case KindString, KindBytes:
		f.str = &stringStats{distinct: newDistinctSketch(uint8(a.opts.DistinctPrecision)), frequent: newFrequentSketch(a.opts.TopCounters)}
	}
	return f
}

// level is one list dimension between a record and a feature's values:
// a row partition, or a dense dimension of nrows lists of length n.
type level struct {
	p        *structtensor.RowPartition
	nrows, n int
}

func (l level) numRows() int {
	if l.p != nil {
		return l.p.NumRows()
	}
	return l.nrows
}

func (l level) numValues() int {
	if l.p != nil {
		return l.p.NumValues()
	}
	return l.nrows * l.n
}

// observation is one feature of one StructTensor before it is counted.
type observation struct {
	path         []string
	kind         Kind
	structLevels int
	levels       []level
	parents      []int64 // records -> parent instances (nil: one each)
	values       *structtensor.Tensor
}

// Add adds the records of st: its rows (one record when st is a scalar
// struct). The first StructTensor fixes the schema; later ones must have
// the same paths, kinds and nesting, or Add returns an error wrapping
// ErrSchema and leaves the Accumulator as it was.
func (a *Accumulator) Add(st *structtensor.StructTensor) error {
	records, obs, err := observe(st)
	if err != nil {
		return err
	}
	if len(a.features) == 0 && a.records == 0 {
		for i := range obs {
			f := a.newFeature(&obs[i])
			a.index[f.key()] = len(a.features)
			a.features = append(a.features, f)
		}
	} else if err := a.checkSchema(obs); err != nil {
		return err
	}
	a.records += uint64(records)
	for i := range obs {
		a.features[i].add(&obs[i], records)
	}
	return nil
}

func (a *Accumulator) checkSchema(obs []observation) error {
	if len(obs) != len(a.features) {
		return fmt.Errorf("%w: %d paths, the statistics have %d", ErrSchema, len(obs), len(a.features))
	}
	for i := range obs {
		o, f := &obs[i], a.features[i]
		if key := strings.Join(o.path, "."); key != f.key() {
			return fmt.Errorf("%w: path %d is %q, the statistics have %q", ErrSchema, i, key, f.key())
		}
		if o.kind != f.kind || len(o.levels) != len(f.levels) || o.structLevels != f.structLevels {
			return fmt.Errorf("%w: path %q: %s in %d list levels (%d of enclosing structs), the statistics have %s in %d (%d)",
				ErrSchema, f.key(), o.kind, len(o.levels), o.structLevels, f.kind, len(f.levels), f.structLevels)
		}
	}
	return nil
}

// observe lists the features of st in field order, depth first, each
// struct before its fields.
func observe(st *structtensor.StructTensor) (int, []observation, error) {
	if st == nil {
		return 0, nil, fmt.Errorf("%w: nil StructTensor", ErrSchema)
	}
	records := 1
	var levels []level
	var inst []int64
	if st.Rank() > 0 {
		records = st.NumRows()
		for _, p := range st.Partitions() {
			levels = append(levels, level{p: p})
			inst = compose(inst, level{p: p})
		}
	}
	var obs []observation
	err := walk(st, nil, levels, inst, &obs)
	return records, obs, err
}

func walk(s *structtensor.StructTensor, path []string, levels []level, inst []int64, obs *[]observation) error {
	for _, fld := range s.Fields() {
		p := append(path[:len(path):len(path)], fld.Name)
		o := observation{path: p, structLevels: len(levels), parents: inst}
		own := func(ls ...level) {
			o.levels = append(levels[:len(levels):len(levels)], ls...)
		}
		switch v := fld.Value.(type) {
		case *structtensor.Tensor:
			own(denseLevels(v.Shape())...)
			o.values, o.kind = v, kindOf(v)
		case *structtensor.Ragged:
			var ls []level
			for _, rp := range v.Partitions() {
				ls = append(ls, level{p: rp})
			}
			own(append(ls, denseLevels(v.Values().Shape())...)...)
			o.values, o.kind = v.Values(), kindOf(v.Values())
		case *structtensor.StructTensor:
			var ls []level
			for _, rp := range v.Partitions() {
				ls = append(ls, level{p: rp})
			}
			own(ls...)
			o.kind = KindStruct
			*obs = append(*obs, o)
			childInst := inst
			for _, l := range ls {
				childInst = compose(childInst, l)
			}
			if err := walk(v, p, o.levels, childInst, obs); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("%w: path %q: unknown value type %T", ErrSchema, strings.Join(p, "."), fld.Value)
		}
		if o.kind == 0 {
			return fmt.Errorf("%w: path %q: dtype %s", ErrSchema, strings.Join(p, "."), o.values.DType())
		}
		*obs = append(*obs, o)
	}
	return nil
}

// denseLevels are the dense dimensions of a tensor after its first.
func denseLevels(shape structtensor.Shape) []level {
	var ls []level
	rows := 1
	if len(shape) > 0 {
		rows = shape[0]
	}
	for _, d := range shape[min(1, len(shape)):] {
		ls = append(ls, level{nrows: rows, n: d})
		rows *= d
	}
	return ls
}

// compose maps records to the items one level down: splits[i] is where
// record i's items start (nil stands for one item per record).
func compose(splits []int64, l level) []int64 {
	if l.p != nil && !l.p.IsUniform() {
		rs := l.p.RowSplits()
		if splits == nil {
			return rs
		}
		out := make([]int64, len(splits))
		for i, s := range splits {
			out[i] = rs[s]
		}
		return out
	}
	n := l.n
	nrows := l.nrows
	if l.p != nil {
		n, _ = l.p.UniformRowLength()
		nrows = l.p.NumRows()
	}
	if splits == nil {
		out := make([]int64, nrows+1)
		for i := range out {
			out[i] = int64(i * n)
		}
		return out
	}
	out := make([]int64, len(splits))
	for i, s := range splits {
		out[i] = s * int64(n)
	}
	return out
}

func (f *feature) add(o *observation, records int) {
	for i, l := range o.levels {
		ls := &f.levels[i]
		if l.p != nil && !l.p.IsUniform() {
			rs := l.p.RowSplits()
			for j := 1; j < len(rs); j++ {
				ls.addN(uint64(rs[j]-rs[j-1]), 1)
			}
			continue
		}
		n := l.n
		if l.p != nil {
			n, _ = l.p.UniformRowLength()
		}
		ls.addN(uint64(n), uint64(l.numRows()))
	}
	// Values per record: compose every level onto the parents.
	vals := o.parents
	for _, l := range o.levels[o.structLevels:] {
		vals = compose(vals, l)
	}
	for r := range records {
		nv, np := uint64(1), uint64(1)
		if vals != nil {
			nv = uint64(vals[r+1] - vals[r])
		}
		if o.parents != nil {
			np = uint64(o.parents[r+1] - o.parents[r])
		}
		switch {
		case nv > 0:
			f.present++
			f.perRecord.addN(nv, 1)
			f.values += nv
		case np > 0:
			f.empty++
		default:
			f.missing++
		}
	}
	if o.values == nil {
		return
	}
	switch {
	case f.num != nil:
		f.num.addTensor(o.values)
	case f.str != nil:
		f.str.addTensor(o.values)
	}
}

func (n *numberStats) addTensor(t *structtensor.Tensor) {
	switch t.DType() {
	case structtensor.Bool:
		for _, v := range t.Bools() {
			x := int64(0)
			if v {
				x = 1
			}
			n.addInt(x)
		}
	case structtensor.Int32:
		for _, v := range t.Int32s() {
			n.addInt(int64(v))
		}
	case structtensor.Int64:
		for _, v := range t.Int64s() {
			n.addInt(v)
		}
	case structtensor.Uint32:
		for _, v := range t.Uint32s() {
			n.addUint(uint64(v))
		}
	case structtensor.Uint64:
		for _, v := range t.Uint64s() {
			n.addUint(v)
		}
	case structtensor.Float32:
		for _, v := range t.Float32s() {
			n.addFloat(float64(v))
		}
	case structtensor.Float64:
		for _, v := range t.Float64s() {
			n.addFloat(v)
		}
	}
}

func (n *numberStats) addInt(v int64) {
	if n.count == 0 || v < int64(n.min) {
		n.min = uint64(v)
	}
	if n.count == 0 || v > int64(n.max) {
		n.max = uint64(v)
	}
	n.count++
	if v == 0 {
		n.zeros++
	}
	mag := uint64(v)
	if v < 0 {
		mag = -mag
	}
	n.sum.addInt(mag, v < 0)
	n.sumSq.addIntSquare(mag)
	n.quantiles.add(float64(v))
}

func (n *numberStats) addUint(v uint64) {
	if n.count == 0 || v < n.min {
		n.min = v
	}
	if n.count == 0 || v > n.max {
		n.max = v
	}
	n.count++
	if v == 0 {
		n.zeros++
	}
	n.sum.addInt(v, false)
	n.sumSq.addIntSquare(v)
	n.quantiles.add(float64(v))
}

func (n *numberStats) addFloat(v float64) {
	if math.IsNaN(v) {
		n.nan++
		return
	}
	// The builtin min and max order -0 before +0, so that the result
	// does not depend on the order of the values.
	if n.count == 0 {
		n.min, n.max = math.Float64bits(v), math.Float64bits(v)
	} else {
		n.min = math.Float64bits(min(v, math.Float64frombits(n.min)))
		n.max = math.Float64bits(max(v, math.Float64frombits(n.max)))
	}
	n.count++
	switch {
	case v == 0:
		n.zeros++
	case math.IsInf(v, 1):
		n.posInf++
	case math.IsInf(v, -1):
		n.negInf++
	default:
		n.sum.addFloat(v)
		n.sumSq.addFloatSquare(v)
	}
	n.quantiles.add(v)
}

func (n *numberStats) merge(o *numberStats, kind Kind) {
	if o.count > 0 {
		if n.count == 0 {
			n.min, n.max = o.min, o.max
		} else {
			switch kind {
			case KindInt:
				n.min = uint64(min(int64(n.min), int64(o.min)))
				n.max = uint64(max(int64(n.max), int64(o.max)))
			case KindUint:
				n.min, n.max = min(n.min, o.min), max(n.max, o.max)
			case KindFloat:
				n.min = math.Float64bits(min(math.Float64frombits(n.min), math.Float64frombits(o.min)))
				n.max = math.Float64bits(max(math.Float64frombits(n.max), math.Float64frombits(o.max)))
			}
		}
	}
	n.count += o.count
	n.nan += o.nan
	n.zeros += o.zeros
	n.posInf += o.posInf
	n.negInf += o.negInf
	n.sum.merge(&o.sum)
	n.sumSq.merge(&o.sumSq)
	n.quantiles.merge(o.quantiles)
}

func (s *stringStats) addTensor(t *structtensor.Tensor) {
	checkUTF8 := t.UTF8()
	for i := range t.Len() {
		b := t.StringAt(i)
		l := uint64(len(b))
		if s.count == 0 || l < s.minLen {
			s.minLen = l
		}
		s.maxLen = max(s.maxLen, l)
		s.count++
		s.bytes += l
		if checkUTF8 && !utf8.Valid(b) {
			s.invalidUTF8++
		}
		s.distinct.add(b)
		s.frequent.add(b)
	}
}

func (s *stringStats) merge(o *stringStats) {
	if o.count > 0 {
		if s.count == 0 || o.minLen < s.minLen {
			s.minLen = o.minLen
		}
		s.maxLen = max(s.maxLen, o.maxLen)
	}
	s.count += o.count
	s.bytes += o.bytes
	s.invalidUTF8 += o.invalidUTF8
	s.distinct.merge(o.distinct)
	s.frequent.merge(o.frequent)
}

// Merge adds the partial statistics of o, which it leaves as they were
// (nothing of o is shared). Both must have equal Options and, unless one
// is empty, the same schema.
func (a *Accumulator) Merge(o *Accumulator) error {
	if a.opts != o.opts {
		return fmt.Errorf("%w: merging statistics made with %+v into %+v", ErrOptions, o.opts, a.opts)
	}
	if len(o.features) == 0 && o.records == 0 {
		return nil
	}
	if len(a.features) == 0 && a.records == 0 {
		c, err := o.clone()
		if err != nil {
			return err
		}
		*a = *c
		return nil
	}
	if len(o.features) != len(a.features) {
		return fmt.Errorf("%w: %d paths merged into %d", ErrSchema, len(o.features), len(a.features))
	}
	for i, f := range a.features {
		g := o.features[i]
		if f.key() != g.key() || f.kind != g.kind || len(f.levels) != len(g.levels) || f.structLevels != g.structLevels {
			return fmt.Errorf("%w: path %q (%s, %d levels) merged into %q (%s, %d levels)", ErrSchema, g.key(), g.kind, len(g.levels), f.key(), f.kind, len(f.levels))
		}
	}
	a.records += o.records
	for i, f := range a.features {
		g := o.features[i]
		f.present += g.present
		f.empty += g.empty
		f.missing += g.missing
		f.values += g.values
		f.perRecord.merge(&g.perRecord)
		for j := range f.levels {
			f.levels[j].merge(&g.levels[j])
		}
		switch {
		case f.num != nil:
			f.num.merge(g.num, f.kind)
		case f.str != nil:
			f.str.merge(g.str)
		}
	}
	return nil
}

// clone copies a through its serialized form, the one deep copy there is.
func (a *Accumulator) clone() (*Accumulator, error) {
	b, err := a.MarshalBinary()
	if err != nil {
		return nil, err
	}
	c := new(Accumulator)
	if err := c.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return c, nil
}
