package stats

import (
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/internal/optarg"
)

// ProtoOptions configure the DatasetFeatureStatisticsList.
type ProtoOptions struct {
	// DatasetName is the dataset's name (default none).
	DatasetName string
}

// StatisticsProto returns the summary as a tensorflow_metadata
// DatasetFeatureStatisticsList (tensorflow.metadata.v0, the statistics
// TFDV computes and Facets shows) holding one dataset. The message is
// built on a descriptor made in code, with tensorflow_metadata's field
// numbers, so its binary and text forms read as that message anywhere.
//
// Per feature (its path in Path.step):
//
//   - type: INT for KindInt and KindUint, FLOAT, STRING, BYTES, STRUCT;
//   - common_stats: num_non_missing = Present, num_missing = Empty +
//     Missing (a record with no value is missing, as an absent feature
//     of a tf.Example is: the value model has no nulls, and an absent
//     optional field decodes to an empty list); min, max, avg and
//     tot_num_values count values per record over the records that have
//     some; num_values_histogram is the exact power-of-two histogram
//     (type STANDARD); presence_and_valency_stats, for a feature with
//     more than one list level, the lengths of each level (every list
//     is present: num_missing 0);
//   - num_stats: mean, std_dev, num_zeros, min, max, median and a
//     QUANTILES histogram between the quantiles (num_nan counts NaN);
//   - string_stats: unique, top_values, rank_histogram, avg_length,
//     invalid_utf8_count; bytes_stats: unique, avg, min and max_num_bytes
//     (the top values go to a custom statistic, "structtensor/top_values");
//   - custom_stats "structtensor/empty" and "structtensor/missing" (the
//     two parts of num_missing) and the sketches' bounds
//     ("structtensor/quantile_rank_error", "structtensor/distinct_standard_error",
//     "structtensor/top_max_undercount").
//
// Strings that are not UTF-8 (proto3 string fields must be) have each
// invalid byte replaced by U+FFFD.
func (s *Summary) StatisticsProto(opts ...ProtoOptions) (proto.Message, error) {
	o, err := optarg.One(opts, ErrOptions)
	if err != nil {
		return nil, err
	}
	fd, err := statisticsFile()
	if err != nil {
		return nil, err
	}
	list := newMsg(fd.Messages().ByName("DatasetFeatureStatisticsList"))
	ds := list.add("datasets")
	ds.set("name", o.DatasetName)
	ds.set("num_examples", s.Records)
	for i := range s.Features {
		writeFeature(ds.add("features"), &s.Features[i])
	}
	return list.m, nil
}

// MarshalStatistics is StatisticsProto in the protobuf binary form.
func (s *Summary) MarshalStatistics(opts ...ProtoOptions) ([]byte, error) {
	m, err := s.StatisticsProto(opts...)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// MarshalStatisticsText is StatisticsProto in the protobuf text form.
func (s *Summary) MarshalStatisticsText(opts ...ProtoOptions) ([]byte, error) {
	m, err := s.StatisticsProto(opts...)
	if err != nil {
		return nil, err
	}
	return prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
}

const (
	tfdvInt, tfdvFloat, tfdvString, tfdvBytes, tfdvStruct = 0, 1, 2, 3, 4
	histogramStandard, histogramQuantiles                 = 0, 1
)

func writeFeature(m msg, f *FeatureSummary) {
	path := m.msg("path")
	for _, p := range f.Path {
		path.append("step", p)
	}
	var typ int
	var stats msg
	switch f.Kind {
	case KindInt, KindUint:
		typ, stats = tfdvInt, m.msg("num_stats")
	case KindFloat:
		typ, stats = tfdvFloat, m.msg("num_stats")
	case KindString:
		typ, stats = tfdvString, m.msg("string_stats")
	case KindBytes:
		typ, stats = tfdvBytes, m.msg("bytes_stats")
	default:
		typ, stats = tfdvStruct, m.msg("struct_stats")
	}
	m.set("type", protoreflect.EnumNumber(typ))
	custom := func(name string, v float64) {
		c := m.add("custom_stats")
		c.set("name", "structtensor/"+name)
		c.set("num", v)
	}
	custom("empty", float64(f.Empty))
	custom("missing", float64(f.Missing))

	common := stats.msg("common_stats")
	common.set("num_non_missing", f.Present)
	common.set("num_missing", f.Empty+f.Missing)
	common.set("tot_num_values", f.Values)
	if f.Present > 0 {
		v := f.ValuesPerRecord
		common.set("min_num_values", v.Min)
		common.set("max_num_values", v.Max)
		common.set("avg_num_values", float64(v.Mean))
		h := common.msg("num_values_histogram")
		h.set("type", protoreflect.EnumNumber(histogramStandard))
		for _, b := range v.Histogram {
			hb := h.add("buckets")
			hb.set("low_value", float64(b.Low))
			hb.set("high_value", float64(b.High))
			hb.set("sample_count", float64(b.Count))
		}
	}
	if len(f.Levels) > 1 {
		for _, l := range f.Levels {
			pv := common.add("presence_and_valency_stats")
			pv.set("num_non_missing", l.Lists)
			if l.Lists > 0 {
				pv.set("min_num_values", l.Min)
				pv.set("max_num_values", l.Max)
				pv.set("tot_num_values", l.Total)
			}
		}
	}

	switch {
	case f.Numbers != nil:
		n := f.Numbers
		if n.Count > 0 {
			stats.set("mean", float64(n.Mean))
			stats.set("std_dev", float64(n.StdDev))
			stats.set("num_zeros", n.Zeros)
			stats.set("min", n.Min.Float64())
			stats.set("max", n.Max.Float64())
			stats.set("median", float64(n.Median))
			h := stats.add("histograms")
			h.set("type", protoreflect.EnumNumber(histogramQuantiles))
			h.set("num_nan", n.NaN)
			per := float64(n.Count) / float64(len(n.Quantiles)-1)
			for i := 1; i < len(n.Quantiles); i++ {
				b := h.add("buckets")
				b.set("low_value", float64(n.Quantiles[i-1]))
				b.set("high_value", float64(n.Quantiles[i]))
				b.set("sample_count", per)
			}
			custom("quantile_rank_error", n.QuantileRankError)
		} else if n.NaN > 0 {
			h := stats.add("histograms")
			h.set("type", protoreflect.EnumNumber(histogramQuantiles))
			h.set("num_nan", n.NaN)
		}
	case f.Strings != nil:
		st := f.Strings
		stats.set("unique", st.Distinct)
		var ranks msg
		if f.Kind == KindString {
			stats.set("avg_length", st.MeanBytes)
			stats.set("invalid_utf8_count", st.InvalidUTF8)
			for _, t := range st.Top {
				tv := stats.add("top_values")
				tv.set("value", validUTF8(t.Value))
				tv.set("frequency", float64(t.Count))
			}
			ranks = stats.msg("rank_histogram")
		} else {
			stats.set("avg_num_bytes", st.MeanBytes)
			stats.set("min_num_bytes", float64(st.MinBytes))
			stats.set("max_num_bytes", float64(st.MaxBytes))
			stats.set("max_num_bytes_int", int64(st.MaxBytes))
			c := m.add("custom_stats")
			c.set("name", "structtensor/top_values")
			ranks = c.msg("rank_histogram")
		}
		for i, t := range st.Top {
			b := ranks.add("buckets")
			b.set("low_rank", uint64(i))
			b.set("high_rank", uint64(i))
			b.set("label", validUTF8(t.Value))
			b.set("sample_count", float64(t.Count))
		}
		custom("distinct_standard_error", st.DistinctStandardError)
		custom("top_max_undercount", float64(st.TopMaxUndercount))
	}
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// msg is a dynamic message with setters by field name.
type msg struct{ m *dynamicpb.Message }

func newMsg(md protoreflect.MessageDescriptor) msg { return msg{dynamicpb.NewMessage(md)} }

func (p msg) field(name string) protoreflect.FieldDescriptor {
	fd := p.m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic("stats: internal: no field " + name + " in " + string(p.m.Descriptor().FullName()))
	}
	return fd
}

func (p msg) set(name string, v any) {
	fd := p.field(name)
	var val protoreflect.Value
	switch x := v.(type) {
	case uint64:
		val = protoreflect.ValueOfUint64(x)
	case int64:
		val = protoreflect.ValueOfInt64(x)
	case string:
		val = protoreflect.ValueOfString(x)
	case protoreflect.EnumNumber:
		val = protoreflect.ValueOfEnum(x)
	case float64:
		if fd.Kind() == protoreflect.FloatKind {
			val = protoreflect.ValueOfFloat32(float32(x))
		} else {
			val = protoreflect.ValueOfFloat64(x)
		}
	default:
		panic(fmt.Sprintf("stats: internal: value %T for %s", v, name))
	}
	p.m.Set(fd, val)
}

func (p msg) msg(name string) msg {
	return msg{p.m.Mutable(p.field(name)).Message().(*dynamicpb.Message)}
}

func (p msg) add(name string) msg {
	l := p.m.Mutable(p.field(name)).List()
	e := l.NewElement()
	l.Append(e)
	return msg{e.Message().(*dynamicpb.Message)}
}

func (p msg) append(name, s string) {
	p.m.Mutable(p.field(name)).List().Append(protoreflect.ValueOfString(s))
}

var statistics struct {
	once sync.Once
	fd   protoreflect.FileDescriptor
	err  error
}

func statisticsFile() (protoreflect.FileDescriptor, error) {
	statistics.once.Do(func() {
		statistics.fd, statistics.err = protodesc.NewFile(statisticsProto(), new(protoregistry.Files))
		if statistics.err != nil {
			statistics.err = fmt.Errorf("stats: internal: building the statistics descriptor: %w", statistics.err)
		}
	})
	return statistics.fd, statistics.err
}

// statisticsProto describes the part of tensorflow_metadata's
// statistics.proto this package writes: the messages, field names and
// numbers, types and oneofs of tensorflow.metadata.v0 (proto3), so that
// the bytes are that message. It is not registered globally, so it does
// not clash with a generated tensorflow_metadata package in one binary.
func statisticsProto() *descriptorpb.FileDescriptorProto {
	const pkg = "tensorflow.metadata.v0"
	type T = descriptorpb.FieldDescriptorProto_Type
	const (
		tString = descriptorpb.FieldDescriptorProto_TYPE_STRING
		tUint64 = descriptorpb.FieldDescriptorProto_TYPE_UINT64
		tInt64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
		tDouble = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
		tFloat  = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
		tMsg    = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		tEnum   = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	)
	// A field: name, number, type, then optional "repeated", a type name
	// (relative to the package) and a oneof name.
	type field struct {
		name     string
		number   int32
		typ      T
		repeated bool
		typeName string
		oneof    string
	}
	message := func(name string, fields ...field) *descriptorpb.DescriptorProto {
		m := &descriptorpb.DescriptorProto{Name: proto.String(name)}
		oneofs := map[string]int32{}
		for _, f := range fields {
			label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
			if f.repeated {
				label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
			}
			fp := &descriptorpb.FieldDescriptorProto{
				Name: proto.String(f.name), Number: proto.Int32(f.number), Type: f.typ.Enum(), Label: label.Enum(),
				JsonName: proto.String(jsonName(f.name)),
			}
			if f.typeName != "" {
				fp.TypeName = proto.String("." + pkg + "." + f.typeName)
			}
			if f.oneof != "" {
				idx, ok := oneofs[f.oneof]
				if !ok {
					idx = int32(len(m.OneofDecl))
					oneofs[f.oneof] = idx
					m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String(f.oneof)})
				}
				fp.OneofIndex = proto.Int32(idx)
			}
			m.Field = append(m.Field, fp)
		}
		return m
	}
	enum := func(name string, values ...string) *descriptorpb.EnumDescriptorProto {
		e := &descriptorpb.EnumDescriptorProto{Name: proto.String(name)}
		for i, v := range values {
			e.Value = append(e.Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String(v), Number: proto.Int32(int32(i))})
		}
		return e
	}
	opt := func(name string, number int32, typ T) field { return field{name: name, number: number, typ: typ} }
	sub := func(name string, number int32, typeName string) field {
		return field{name: name, number: number, typ: tMsg, typeName: typeName}
	}
	rep := func(f field) field { f.repeated = true; return f }
	in := func(oneof string, f field) field { f.oneof = oneof; return f }

	featureStats := message("FeatureNameStatistics",
		in("field_id", opt("name", 1, tString)),
		in("field_id", sub("path", 8, "Path")),
		field{name: "type", number: 2, typ: tEnum, typeName: "FeatureNameStatistics.Type"},
		in("stats", sub("num_stats", 3, "NumericStatistics")),
		in("stats", sub("string_stats", 4, "StringStatistics")),
		in("stats", sub("bytes_stats", 5, "BytesStatistics")),
		in("stats", sub("struct_stats", 7, "StructStatistics")),
		rep(sub("custom_stats", 6, "CustomStatistic")))
	featureStats.EnumType = []*descriptorpb.EnumDescriptorProto{enum("Type", "INT", "FLOAT", "STRING", "BYTES", "STRUCT")}

	histogram := message("Histogram",
		opt("num_nan", 1, tUint64),
		opt("num_undefined", 2, tUint64),
		rep(sub("buckets", 3, "Histogram.Bucket")),
		field{name: "type", number: 4, typ: tEnum, typeName: "Histogram.HistogramType"},
		opt("name", 5, tString))
	histogram.NestedType = []*descriptorpb.DescriptorProto{message("Bucket",
		opt("low_value", 1, tDouble), opt("high_value", 2, tDouble), opt("sample_count", 4, tDouble))}
	histogram.EnumType = []*descriptorpb.EnumDescriptorProto{enum("HistogramType", "STANDARD", "QUANTILES")}

	rankHistogram := message("RankHistogram",
		rep(sub("buckets", 1, "RankHistogram.Bucket")),
		opt("name", 2, tString))
	rankHistogram.NestedType = []*descriptorpb.DescriptorProto{message("Bucket",
		opt("low_rank", 1, tUint64), opt("high_rank", 2, tUint64), opt("label", 4, tString), opt("sample_count", 5, tDouble))}

	stringStats := message("StringStatistics",
		sub("common_stats", 1, "CommonStatistics"),
		opt("unique", 2, tUint64),
		rep(sub("top_values", 3, "StringStatistics.FreqAndValue")),
		opt("avg_length", 4, tFloat),
		sub("rank_histogram", 5, "RankHistogram"),
		opt("invalid_utf8_count", 8, tUint64))
	stringStats.NestedType = []*descriptorpb.DescriptorProto{message("FreqAndValue",
		opt("value", 2, tString), opt("frequency", 3, tDouble))}

	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String("structtensor/stats/statistics_subset.proto"),
		Package: proto.String(pkg),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			message("DatasetFeatureStatisticsList", rep(sub("datasets", 1, "DatasetFeatureStatistics"))),
			message("DatasetFeatureStatistics",
				opt("name", 1, tString),
				opt("num_examples", 2, tUint64),
				rep(sub("features", 3, "FeatureNameStatistics"))),
			featureStats,
			message("Path", rep(opt("step", 1, tString))),
			message("CommonStatistics",
				opt("num_non_missing", 1, tUint64),
				opt("num_missing", 2, tUint64),
				opt("min_num_values", 3, tUint64),
				opt("max_num_values", 4, tUint64),
				opt("avg_num_values", 5, tFloat),
				opt("tot_num_values", 8, tUint64),
				sub("num_values_histogram", 6, "Histogram"),
				rep(sub("presence_and_valency_stats", 10, "PresenceAndValencyStatistics"))),
			message("PresenceAndValencyStatistics",
				opt("num_non_missing", 1, tUint64),
				opt("num_missing", 2, tUint64),
				opt("min_num_values", 3, tUint64),
				opt("max_num_values", 4, tUint64),
				opt("tot_num_values", 5, tUint64)),
			histogram,
			rankHistogram,
			message("NumericStatistics",
				sub("common_stats", 1, "CommonStatistics"),
				opt("mean", 2, tDouble),
				opt("std_dev", 3, tDouble),
				opt("num_zeros", 4, tUint64),
				opt("min", 5, tDouble),
				opt("median", 6, tDouble),
				opt("max", 7, tDouble),
				rep(sub("histograms", 8, "Histogram"))),
			stringStats,
			message("BytesStatistics",
				sub("common_stats", 1, "CommonStatistics"),
				opt("unique", 2, tUint64),
				opt("avg_num_bytes", 3, tFloat),
				opt("min_num_bytes", 4, tFloat),
				opt("max_num_bytes", 5, tFloat),
				opt("max_num_bytes_int", 6, tInt64)),
			message("StructStatistics", sub("common_stats", 1, "CommonStatistics")),
			message("CustomStatistic",
				opt("name", 1, tString),
				in("val", opt("num", 2, tDouble)),
				in("val", opt("str", 3, tString)),
				in("val", sub("histogram", 4, "Histogram")),
				in("val", sub("rank_histogram", 5, "RankHistogram"))),
		},
	}
}

// jsonName is protoc's JSON name of a field: lowerCamelCase.
func jsonName(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}
