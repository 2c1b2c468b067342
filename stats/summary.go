package stats

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Summary is the finished statistics of a dataset: what JSON and the
// DatasetFeatureStatisticsList are written from. Its JSON form (WriteJSON)
// is the layout documented in the package comment.
type Summary struct {
	// Records is the number of records (rows of the StructTensors added).
	Records uint64 `json:"records"`
	// Features are every path, in field order, each struct before its
	// fields.
	Features []FeatureSummary `json:"features"`
}

// FeatureSummary is the statistics of one path.
type FeatureSummary struct {
	Path []string `json:"path"`
	Kind Kind     `json:"kind"`
	// Present counts records holding at least one value at the path;
	// Empty those where the path is reached (every enclosing struct
	// holds an element) but holds no value; Missing those where some
	// enclosing list of structs is empty, so that the path is not
	// reached. Present + Empty + Missing = Records.
	Present uint64 `json:"present"`
	Empty   uint64 `json:"empty"`
	Missing uint64 `json:"missing"`
	// Values is the number of values (struct elements for a Struct).
	Values uint64 `json:"values"`
	// ValuesPerRecord is the number of values of the records that have
	// some (Present of them).
	ValuesPerRecord Lengths `json:"values_per_record"`
	// Levels are the list dimensions from a record to the values,
	// outermost first: the first StructLevels are dimensions of the
	// enclosing structs, the rest the feature's own (ragged or dense).
	StructLevels int       `json:"struct_levels"`
	Levels       []Lengths `json:"levels"`
	Numbers      *Numbers  `json:"numbers,omitempty"`
	Strings      *Strings  `json:"strings,omitempty"`
}

// Lengths summarise the lengths of a set of lists exactly.
type Lengths struct {
	Lists uint64 `json:"lists"`
	Empty uint64 `json:"empty"`
	Total uint64 `json:"total"`
	Min   uint64 `json:"min"`
	Max   uint64 `json:"max"`
	Mean  Float  `json:"mean"`
	// Histogram has a bucket per power of two: [0, 0], [1, 1], [2, 3],
	// [4, 7]..., empty buckets left out.
	Histogram []Bucket `json:"histogram"`
}

// Bucket counts the lists whose length is in [Low, High].
type Bucket struct {
	Low   uint64 `json:"low"`
	High  uint64 `json:"high"`
	Count uint64 `json:"count"`
}

// Numbers are the statistics of numeric values (NaN apart).
type Numbers struct {
	// Count is the number of values that are not NaN.
	Count uint64 `json:"count"`
	NaN   uint64 `json:"nan"`
	Zeros uint64 `json:"zeros"`
	// Min and Max are exact, in the values' own type.
	Min Number `json:"min"`
	Max Number `json:"max"`
	// Mean and StdDev (population) are computed from exact sums and
	// rounded once; an infinity among the values makes them infinite or
	// NaN.
	Mean   Float `json:"mean"`
	StdDev Float `json:"std_dev"`
	// Median is the 0.5 quantile, within QuantileRankError as the
	// Quantiles are.
	Median Float `json:"median"`
	// Quantiles are the 0, 1/Q, ..., 1 quantiles (Options.Quantiles = Q),
	// the first and last exact (Min and Max); each other one is a value
	// whose rank is within QuantileRankError·Count of its own.
	Quantiles         []Float `json:"quantiles"`
	QuantileRankError float64 `json:"quantile_rank_error"`
}

// Strings are the statistics of string and bytes values.
type Strings struct {
	Count      uint64  `json:"count"`
	TotalBytes uint64  `json:"total_bytes"`
	MinBytes   uint64  `json:"min_bytes"`
	MaxBytes   uint64  `json:"max_bytes"`
	MeanBytes  float64 `json:"mean_bytes"`
	// InvalidUTF8 counts values of a String feature that are not UTF-8.
	InvalidUTF8 uint64 `json:"invalid_utf8"`
	// Distinct estimates the number of distinct values, with the given
	// relative standard error.
	Distinct              uint64  `json:"distinct"`
	DistinctStandardError float64 `json:"distinct_standard_error"`
	// Top are the most frequent values, most frequent first; each Count
	// is at most TopMaxUndercount below the true count, never above it.
	Top              []ValueCount `json:"top"`
	TopMaxUndercount uint64       `json:"top_max_undercount"`
}

// ValueCount is a value and its (estimated) count. In JSON the value is a
// string when it is UTF-8 and "value_base64" otherwise.
type ValueCount struct {
	Value string
	Count uint64
}

// MarshalJSON writes {"value": ..., "count": n}.
func (v ValueCount) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(v.Value) {
		return json.Marshal(struct {
			Value string `json:"value"`
			Count uint64 `json:"count"`
		}{v.Value, v.Count})
	}
	return json.Marshal(struct {
		Value []byte `json:"value_base64"`
		Count uint64 `json:"count"`
	}{[]byte(v.Value), v.Count})
}

// UnmarshalJSON reads either form.
func (v *ValueCount) UnmarshalJSON(b []byte) error {
	var w struct {
		Value  *string `json:"value"`
		Base64 string  `json:"value_base64"`
		Count  uint64  `json:"count"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	v.Count = w.Count
	if w.Value != nil {
		v.Value = *w.Value
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(w.Base64)
	v.Value = string(raw)
	return err
}

// Float is a float64 that JSON writes as a number, or as the string
// "NaN", "+Inf" or "-Inf", which JSON numbers cannot express.
type Float float64

// MarshalJSON writes the shortest form that reads back exactly.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = Float(math.NaN())
		return nil
	case `"+Inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = Float(math.Inf(-1))
		return nil
	}
	var x float64
	err := json.Unmarshal(b, &x)
	*f = Float(x)
	return err
}

// Number is an exact minimum or maximum: an int64, a uint64 or a float64,
// as the feature's Kind says, written in JSON as an exact number.
type Number struct {
	Kind Kind
	bits uint64
}

// Int, Uint and Float64 read the number; Float64 converts any kind.
func (n Number) Int() int64   { return int64(n.bits) }
func (n Number) Uint() uint64 { return n.bits }
func (n Number) Float64() float64 {
	switch n.Kind {
	case KindInt:
		return float64(int64(n.bits))
	case KindUint:
		return float64(n.bits)
	}
	return math.Float64frombits(n.bits)
}

// MarshalJSON writes the number exactly.
func (n Number) MarshalJSON() ([]byte, error) {
	switch n.Kind {
	case KindInt:
		return strconv.AppendInt(nil, int64(n.bits), 10), nil
	case KindUint:
		return strconv.AppendUint(nil, n.bits, 10), nil
	}
	return Float(math.Float64frombits(n.bits)).MarshalJSON()
}

// Summary finishes the statistics. The Accumulator is unchanged and may
// take more data.
func (a *Accumulator) Summary() *Summary {
	s := &Summary{Records: a.records, Features: make([]FeatureSummary, 0, len(a.features))}
	for _, f := range a.features {
		fs := FeatureSummary{
			Path: append([]string(nil), f.path...), Kind: f.kind,
			Present: f.present, Empty: f.empty, Missing: f.missing, Values: f.values,
			ValuesPerRecord: f.perRecord.summary(), StructLevels: f.structLevels,
			Levels: make([]Lengths, len(f.levels)),
		}
		for i := range f.levels {
			fs.Levels[i] = f.levels[i].summary()
		}
		switch {
		case f.num != nil:
			fs.Numbers = f.num.summary(f.kind, a.opts.Quantiles)
		case f.str != nil:
			fs.Strings = f.str.summary(a.opts.TopK)
		}
		s.Features = append(s.Features, fs)
	}
	return s
}

func (l *lengthStats) summary() Lengths {
	out := Lengths{Lists: l.lists, Empty: l.hist[0], Total: l.total, Min: l.min, Max: l.max, Histogram: []Bucket{}}
	if l.lists > 0 {
		out.Mean = Float(float64(l.total) / float64(l.lists))
	}
	for b, c := range l.hist {
		if c == 0 {
			continue
		}
		low, high := uint64(0), uint64(0)
		if b > 0 {
			low, high = 1<<(b-1), 1<<(b-1)+(1<<(b-1)-1)
		}
		out.Histogram = append(out.Histogram, Bucket{Low: low, High: high, Count: c})
	}
	return out
}

func (n *numberStats) summary(kind Kind, q int) *Numbers {
	out := &Numbers{Count: n.count, NaN: n.nan, Zeros: n.zeros, Min: Number{Kind: kind, bits: n.min}, Max: Number{Kind: kind, bits: n.max},
		Quantiles: []Float{}}
	if n.count == 0 {
		out.Min, out.Max = Number{Kind: kind}, Number{Kind: kind}
		return out
	}
	finite := n.count - n.posInf - n.negInf
	mean, std := meanAndStdDev(&n.sum, &n.sumSq, finite)
	switch {
	case n.posInf > 0 && n.negInf > 0:
		mean, std = math.NaN(), math.NaN()
	case n.posInf > 0:
		mean, std = math.Inf(1), math.NaN()
	case n.negInf > 0:
		mean, std = math.Inf(-1), math.NaN()
	}
	out.Mean, out.StdDev = Float(mean), Float(std)
	qs := make([]float64, q+1)
	for i := range qs {
		qs[i] = float64(i) / float64(q)
	}
	for _, x := range n.quantiles.quantiles(qs, out.Min.Float64(), out.Max.Float64()) {
		out.Quantiles = append(out.Quantiles, Float(x))
	}
	out.Median = Float(n.quantiles.quantiles([]float64{0.5}, out.Min.Float64(), out.Max.Float64())[0])
	out.QuantileRankError = n.quantiles.rankError()
	return out
}

func (s *stringStats) summary(k int) *Strings {
	out := &Strings{Count: s.count, TotalBytes: s.bytes, MinBytes: s.minLen, MaxBytes: s.maxLen, InvalidUTF8: s.invalidUTF8,
		Top: s.frequent.top(k), TopMaxUndercount: s.frequent.errorBound(), DistinctStandardError: s.distinct.standardError()}
	if s.count > 0 {
		out.MeanBytes = float64(s.bytes) / float64(s.count)
		out.Distinct = uint64(math.Round(s.distinct.estimate()))
		// The estimate can stray past what is possible.
		out.Distinct = max(1, min(out.Distinct, s.count))
	}
	return out
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(s)
}
