package decode

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/internal/testhook"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Records written by hand, for the wire forms a serializer never writes.

func lenField(b []byte, n protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func varints(vs ...int64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, uint64(v))
	}
	return b
}

// int64Feature is a Feature with an int64_list made of the given list
// message body.
func int64Feature(list []byte) []byte { return lenField(nil, 3, list) }

func entry(key string, feature []byte) []byte {
	e := lenField(nil, 1, []byte(key))
	return lenField(e, 2, feature)
}

func example(entries ...[]byte) []byte {
	var fs []byte
	for _, e := range entries {
		fs = lenField(fs, 1, e)
	}
	return lenField(nil, 1, fs)
}

func mustCompileExample(t *testing.T, spec *ExampleSpec) *ExamplePlan {
	t.Helper()
	p, err := CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExampleProtobufSemantics decodes wire forms on which TensorFlow's
// fast parser departs from protobuf (several packed runs, packed and
// unpacked runs mixed, unknown fields) and checks the result against
// protobuf's own parse of the record.
func TestExampleProtobufSemantics(t *testing.T) {
	plan := mustCompileExample(t, &ExampleSpec{Features: map[string]Feature{"x": {Kind: VarLen, DType: structtensor.Int64}}})
	unpacked := func(vs ...int64) []byte {
		var b []byte
		for _, v := range vs {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		}
		return b
	}
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 5)
	records := map[string][]byte{
		"two packed runs":   example(entry("x", int64Feature(append(lenField(nil, 1, varints(1, 2)), lenField(nil, 1, varints(3))...)))),
		"packed + unpacked": example(entry("x", int64Feature(append(lenField(nil, 1, varints(1)), unpacked(2, 3)...)))),
		"unknown in list":   example(entry("x", int64Feature(append(unpacked(1, 2), unknown...)))),
		"unknown in features and entry": lenField(nil, 1, append(append([]byte(nil), unknown...),
			lenField(nil, 1, append(append([]byte(nil), unknown...), entry("x", int64Feature(unpacked(4)))...))...)),
		"repeated key":          example(entry("x", int64Feature(unpacked(1))), entry("y", nil), entry("x", int64Feature(unpacked(7, 8)))),
		"two Features messages": append(example(entry("x", int64Feature(unpacked(1)))), example(entry("x", int64Feature(unpacked(5))))...),
		"value before key":      example(append(lenField(nil, 2, int64Feature(unpacked(6))), lenField(nil, 1, []byte("x"))...)),
	}
	for name, rec := range records {
		t.Run(name, func(t *testing.T) {
			var ref tfexample.Example
			if err := proto.Unmarshal(rec, &ref); err != nil {
				t.Fatal(err)
			}
			want := []any{}
			for _, v := range ref.GetFeatures().GetFeature()["x"].GetInt64List().GetValue() {
				want = append(want, v)
			}
			st, err := plan.Decode([][]byte{rec})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := st.FieldValue("x")
			got := structtensor.ToValue(v).([]any)[0].([]any)
			if len(got) == 0 {
				got = []any{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, protobuf reads %v", got, want)
			}
		})
	}
}

// TestExampleStringsSplitCharacter gives a bytes feature the halves of a
// two-byte character as two values, in one record and across two: each
// value is invalid UTF-8 though their concatenation is "é", so the
// column must not be marked as text.
func TestExampleStringsSplitCharacter(t *testing.T) {
	plan := mustCompileExample(t, &ExampleSpec{Features: map[string]Feature{"s": {Kind: VarLen, DType: structtensor.String}}})
	bytesFeature := func(vs ...string) []byte {
		var list []byte
		for _, v := range vs {
			list = lenField(list, 1, []byte(v))
		}
		return lenField(nil, 1, list)
	}
	for name, records := range map[string][][]byte{
		"one record":  {example(entry("s", bytesFeature("\xc3", "\xa9")))},
		"two records": {example(entry("s", bytesFeature("\xc3"))), example(entry("s", bytesFeature("\xa9")))},
		"valid":       {example(entry("s", bytesFeature("\xc3\xa9", "x")))},
	} {
		st, err := plan.Decode(records)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v, _ := st.FieldValue("s")
		vals := v.(*structtensor.Ragged).Values()
		if want := name == "valid"; vals.UTF8() != want {
			t.Errorf("%s: UTF8() = %v, want %v", name, vals.UTF8(), want)
		}
	}
}

// checkUTF8Marks fails t unless every string tensor in v is marked as
// UTF-8 exactly when structtensor.ValidUTF8Strings finds its strings
// valid: the marks the engine's threads set as they decode (native's
// st_example_result_utf8) against Go's own check.
func checkUTF8Marks(t *testing.T, v structtensor.Value, path string) {
	t.Helper()
	switch x := v.(type) {
	case *structtensor.StructTensor:
		for _, f := range x.Fields() {
			checkUTF8Marks(t, f.Value, path+"/"+f.Name)
		}
	case *structtensor.Ragged:
		checkUTF8Marks(t, x.Values(), path)
	case *structtensor.Tensor:
		if x.DType() != structtensor.String {
			return
		}
		if want := x.ValidateUTF8(); x.UTF8() != want {
			t.Fatalf("%s: marked UTF-8 %v, its strings valid UTF-8 %v", path, x.UTF8(), want)
		}
	}
}

func TestExampleErrors(t *testing.T) {
	spec := &ExampleSpec{Features: map[string]Feature{
		"a": {Kind: FixedLen, DType: structtensor.Int64, Shape: []int{2}},
		"b": {Kind: VarLen, DType: structtensor.Float32},
	}}
	plan := mustCompileExample(t, spec)
	good := example(entry("a", int64Feature(lenField(nil, 1, varints(1, 2)))))
	floatFeature := lenField(nil, 2, nil)
	tests := []struct {
		name   string
		rec    []byte
		err    error
		offset int64
	}{
		{"missing", example(entry("b", floatFeature)), ErrFeatureMissing, -1},
		{"too many", example(entry("a", int64Feature(lenField(nil, 1, varints(1, 2, 3))))), ErrFeatureShape, 9},
		{"too few", example(entry("a", int64Feature(lenField(nil, 1, varints(1))))), ErrFeatureShape, 9},
		{"wrong kind", append(good, example(entry("b", int64Feature(nil)))...), ErrFeatureType, int64(len(good)) + 9},
		{"truncated", good[:len(good)-1], ErrMalformed, 0},
		{"bad varint", example(entry("a", int64Feature(lenField(nil, 1, []byte{0x80, 0x80})))), ErrMalformed, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan.Decode([][]byte{good, tt.rec})
			var re *RecordError
			if !errors.Is(err, tt.err) || !errors.As(err, &re) {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
			if re.Record != 1 || re.Offset != tt.offset {
				t.Errorf("got record %d byte %d, want record 1 byte %d (%v)", re.Record, re.Offset, tt.offset, err)
			}
		})
	}
}

func TestExampleSpecJSON(t *testing.T) {
	spec, err := ParseExampleSpec([]byte(`{"features": {
		"age":  {"kind": "fixed_len", "dtype": "int64", "default": -1},
		"emb":  {"kind": "fixed_len", "dtype": "float32", "shape": [2, 2], "default": [[1, 2], [3, 4]]},
		"tags": {"kind": "var_len", "dtype": "string", "key": "query/tags"},
		"tok":  {"kind": "ragged", "dtype": "string", "partitions": [{"kind": "row_lengths", "key": "lens"}, {"kind": "uniform_row_length", "length": 2}]},
		"seq":  {"kind": "fixed_len_sequence", "dtype": "float32", "shape": [3]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &ExampleSpec{Features: map[string]Feature{
		"age":  {Kind: FixedLen, DType: structtensor.Int64, Default: []int64{-1}},
		"emb":  {Kind: FixedLen, DType: structtensor.Float32, Shape: []int{2, 2}, Default: []float32{1, 2, 3, 4}},
		"tags": {Kind: VarLen, DType: structtensor.String, Key: "query/tags"},
		"tok": {Kind: Ragged, DType: structtensor.String, Partitions: []Partition{
			{Kind: RowLengths, Key: "lens"}, {Kind: UniformRowLength, Length: 2}}},
		"seq": {Kind: FixedLenSequence, DType: structtensor.Float32, Shape: []int{3}},
	}}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("got %+v\nwant %+v", spec, want)
	}
	plan := mustCompileExample(t, spec)
	const wantSpec = "StructSpec([None], {age: TensorSpec([None], int64), emb: TensorSpec([None, 2, 2], float32), seq: RaggedTensorSpec([None, None, 3], float32, ragged_rank=1), tags: RaggedTensorSpec([None, None], string, ragged_rank=1), tok: RaggedTensorSpec([None, None, None, 2], string, ragged_rank=3)})"
	if got := plan.Spec().String(); got != wantSpec {
		t.Errorf("spec %s\nwant %s", got, wantSpec)
	}
	for _, bad := range []string{
		`{"features": {"a": {"kind": "fixed", "dtype": "int64"}}}`,
		`{"features": {"a": {"kind": "fixed_len", "dtype": "int64", "default": "x"}}}`,
		`{"features": {"a": {"kind": "fixed_len", "dtype": "int64", "shape": [2], "default": 1}}}`,
		`{"features": {"a": {"kind": "var_len", "dtype": "float64"}}}`,
		`{"features": {"a-b": {"kind": "var_len", "dtype": "int64"}}}`,
		`{"features": {"a": {"kind": "ragged", "dtype": "int64", "partitions": [{"kind": "row_lengths"}]}}}`,
		`{"features": {"a": {"kind": "var_len", "dtype": "int64", "colour": 1}}}`,
	} {
		spec, err := ParseExampleSpec([]byte(bad))
		if err == nil {
			_, err = CompileExample(spec)
		}
		if !errors.Is(err, ErrFeatureSpec) {
			t.Errorf("%s: got %v, want ErrFeatureSpec", bad, err)
		}
	}
}

// TestExampleThreads checks that a large batch decodes to the same
// value on one thread and on several.
func TestExampleThreads(t *testing.T) {
	cases := genExampleCases(7, 40, false)
	for _, c := range cases {
		plan, err := CompileExample(c.Spec)
		if err != nil {
			t.Fatal(err)
		}
		var recs [][]byte
		for i := 0; i < 3000; i++ {
			recs = append(recs, c.records...)
		}
		a, errA := plan.Decode(recs, DecodeOptions{Threads: 1})
		b, errB := plan.Decode(recs, DecodeOptions{Threads: 4})
		if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
			t.Fatalf("errors differ: %v vs %v", errA, errB)
		}
		if errA == nil && !structtensor.Equal(a, b) {
			t.Fatalf("outputs differ on 1 and 4 threads")
		}
		if errA == nil && !plan.Spec().IsCompatibleWith(a.Spec()) {
			t.Fatalf("decoded %v, Spec says %v", a.Spec(), plan.Spec())
		}
	}
}

// TestExampleCopiesOutOnEveryThread checks the copy-out shared among the
// engine's threads: batches of a few MB (Example and SequenceExample
// specs of every kind) decode on two and three threads to the value
// they decode to on one, and the copy-out was shared.
func TestExampleCopiesOutOnEveryThread(t *testing.T) {
	usualExamplePath(t) // what this tests
	before := native.ExampleSharedCopies()
	for _, sequence := range []bool{false, true} {
		for _, c := range genExampleCases(11, 8, sequence) {
			compile := CompileExample
			if sequence {
				compile = CompileSequenceExample
			}
			plan, err := compile(c.Spec)
			if err != nil {
				t.Fatal(err)
			}
			var recs [][]byte
			for size := 0; size < 3<<20; {
				for _, r := range c.records {
					recs = append(recs, r)
					size += len(r) + 16 // (an empty record still costs its row)
				}
			}
			one, err := plan.Decode(recs, DecodeOptions{Threads: 1})
			for _, threads := range []int{2, 3} {
				got, errN := plan.Decode(recs, DecodeOptions{Threads: threads})
				if (err == nil) != (errN == nil) || (err != nil && err.Error() != errN.Error()) {
					t.Fatalf("%d threads: error %v, on one thread %v", threads, errN, err)
				}
				if err == nil && !structtensor.Equal(one, got) {
					t.Fatalf("sequence %v: the output on %d threads differs from the one on one thread", sequence, threads)
				}
			}
		}
	}
	if native.ExampleSharedCopies() == before {
		t.Fatal("no copy-out was shared among threads")
	}
}

// TestExampleFirstErrorOnEveryThread decodes, on one to four threads,
// a batch whose first record and a record at the start of every later
// chunk are bad, the thread taking the first chunk held back so that
// the later chunks fail first: the error must be the first record's, as
// on one thread. (The skip of the chunks after a failed one once skipped
// the first chunk too, when its thread came to claim it after another
// chunk had failed, and the batch reported a later record's error: a
// clean-clone CI run caught it, three threads, one run in several.)
func TestExampleFirstErrorOnEveryThread(t *testing.T) {
	usualExamplePath(t)
	plan := mustCompileExample(t, &ExampleSpec{Features: map[string]Feature{"x": {Kind: FixedLen, DType: structtensor.Int64}}})
	good := example(entry("x", int64Feature(lenField(nil, 1, varints(7)))))
	empty := example(entry("x", int64Feature(nil)))                                   // no value, its shape holds 1
	bytesList := example(entry("x", lenField(nil, 1, lenField(nil, 1, []byte("b"))))) // a bytes_list
	const n = 200_000
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = good
	}
	recs[0] = empty
	for _, at := range []int{n / 4, n / 3, n / 2, 2 * n / 3, 3 * n / 4} {
		for k := range 64 {
			recs[at+k] = bytesList
		}
	}
	_, want := plan.Decode(recs, DecodeOptions{Threads: 1})
	var re *RecordError
	if !errors.As(want, &re) || re.Record != 0 || !errors.Is(want, ErrFeatureShape) {
		t.Fatalf("on one thread: %v, want a shape error at record 0", want)
	}
	native.DelayExampleClaim(20 * time.Millisecond)
	defer native.DelayExampleClaim(0)
	for _, threads := range []int{2, 3, 4} {
		_, err := plan.Decode(recs, DecodeOptions{Threads: threads})
		if err == nil || err.Error() != want.Error() {
			t.Errorf("%d threads: error %v, on one thread %v", threads, err, want)
		}
	}
}

func FuzzExample(f *testing.F) {
	spec := &ExampleSpec{Features: map[string]Feature{
		"f0": {Kind: FixedLen, DType: structtensor.Int64, Default: []int64{0}},
		"f1": {Kind: VarLen, DType: structtensor.Float32},
		"f2": {Kind: Ragged, DType: structtensor.String, Partitions: []Partition{{Kind: RowLengths, Key: "p0_f2"}}},
		"f3": {Kind: FixedLenSequence, DType: structtensor.Int64, Shape: []int{2}},
		"f4": {Kind: Ragged, DType: structtensor.Float32, Partitions: []Partition{{Kind: ValueRowIds, Key: "p0_f4"}, {Kind: RowStarts, Key: "p1_f4"}}},
		"f5": {Kind: Ragged, DType: structtensor.Int64, Partitions: []Partition{{Kind: RowLimits, Key: "p0_f5"}, {Kind: RowSplits, Key: "p1_f5"}}},
	}}
	plan, err := CompileExample(spec)
	if err != nil {
		f.Fatal(err)
	}
	fuzzExamplePlan(f, plan, genExampleCases(3, 20, false))
}

// FuzzSequenceExample is FuzzExample for SequenceExamples: a context and
// feature lists of each kind and dtype, whose steps the decoder reads in
// a loop of their own (emit_list).
func FuzzSequenceExample(f *testing.F) {
	spec := &ExampleSpec{
		Features: map[string]Feature{
			"f0": {Kind: FixedLen, DType: structtensor.Int64, Default: []int64{0}},
			"f1": {Kind: VarLen, DType: structtensor.String},
		},
		SequenceFeatures: map[string]Feature{
			"s0": {Kind: VarLen, DType: structtensor.Int64},
			"s1": {Kind: FixedLenSequence, DType: structtensor.Int64, Shape: []int{2}},
			"s2": {Kind: VarLen, DType: structtensor.Float32},
			"s3": {Kind: FixedLenSequence, DType: structtensor.String, Shape: []int{1}},
		},
	}
	plan, err := CompileSequenceExample(spec)
	if err != nil {
		f.Fatal(err)
	}
	fuzzExamplePlan(f, plan, genExampleCases(3, 20, true))
}

// fuzzExamplePlan fuzzes plan with records seeded from cases: the usual
// decode, and the same records straight into a block on one and two
// threads, give the same output or error, and an error names the record
// and an offset inside it.
func fuzzExamplePlan(f *testing.F, plan *ExamplePlan, cases []*exampleCase) {
	for _, c := range cases {
		for _, r := range c.records {
			f.Add(r)
		}
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		recs := [][]byte{rec, rec, rec}
		a, errA := plan.Decode(recs, DecodeOptions{Threads: 1})
		if errA == nil {
			checkUTF8Marks(t, a, "")
		}
		// The same records straight into a block guessed from the
		// batches before (one record a stretch; a guess too small falls
		// back), on one and two threads: the usual decode's output or
		// error.
		testhook.ExampleStretchBytes(1)
		defer testhook.ExampleStretchBytes(0)
		for _, threads := range []int{1, 2} {
			b, errB := plan.Decode(recs, DecodeOptions{Threads: threads})
			if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
				t.Fatalf("%d threads into a block: error %v, the usual decode's %v", threads, errB, errA)
			}
			if errA == nil && !structtensor.Equal(a, b) {
				t.Fatalf("%d threads into a block: the output differs from the usual decode's", threads)
			}
		}
		if errA != nil {
			var re *RecordError
			if !errors.As(errA, &re) || re.Record != 0 || re.Offset < -1 || re.Offset > int64(len(rec)) {
				t.Fatalf("error does not name the record and an offset inside it: %v", errA)
			}
			return
		}
		if a.NumRows() != 3 {
			t.Fatalf("%d rows", a.NumRows())
		}
	})
}

// Each partition kind cuts a record's items into the same rows, and
// rejects a list that does not fit them (tf.io.RaggedFeature's rules on
// one example; TestExampleAgainstTensorFlow compares them with
// TensorFlow's).
func TestExamplePartitionKinds(t *testing.T) {
	for _, tt := range []struct {
		kind  PartitionKind
		list  []int64
		items int64
		want  []int64 // row lengths; nil with wantErr
		err   string
	}{
		{RowLengths, []int64{2, 0, 1}, 3, []int64{2, 0, 1}, ""},
		{RowSplits, []int64{0, 2, 2, 3}, 3, []int64{2, 0, 1}, ""},
		{RowLimits, []int64{2, 2, 3}, 3, []int64{2, 0, 1}, ""},
		{RowStarts, []int64{0, 2, 2}, 3, []int64{2, 0, 1}, ""},
		{ValueRowIds, []int64{0, 0, 2}, 3, []int64{2, 0, 1}, ""},
		{RowStarts, []int64{0, 3}, 3, []int64{3, 0}, ""}, // a trailing empty row
		{ValueRowIds, []int64{1}, 1, []int64{0, 1}, ""},  // a leading one
		{RowLengths, nil, 0, []int64{}, ""},
		{RowSplits, nil, 0, []int64{}, ""},
		{RowLimits, nil, 0, []int64{}, ""},
		{RowStarts, nil, 0, []int64{}, ""},
		{ValueRowIds, nil, 0, []int64{}, ""},
		{RowLengths, []int64{2, -1, 2}, 3, nil, "negative row length"},
		{RowSplits, []int64{1, 3}, 2, nil, "do not start at 0"},
		{RowLimits, []int64{2, 1, 3}, 3, nil, "decrease"},
		{RowLimits, []int64{-1, 3}, 3, nil, "decrease"},
		{RowLimits, []int64{2}, 3, nil, "partitions 2 items, the record has 3"},
		{RowStarts, []int64{1, 2}, 3, nil, "do not start at 0"},
		{RowStarts, []int64{0, 4}, 3, nil, "past the record's 3 items"},
		{RowStarts, nil, 2, nil, "partitions 0 items, the record has 2"},
		{ValueRowIds, []int64{0, 1, 0}, 3, nil, "decrease"},
		{ValueRowIds, []int64{-1, 0}, 2, nil, "negative value row id"},
		{ValueRowIds, []int64{0, 0}, 3, nil, "partitions 2 items, the record has 3"},
		{ValueRowIds, []int64{0, 1 << 40}, 2, nil, "more rows than the batch has bytes"},
	} {
		lengths := []int64{}
		budget := int64(1000)
		rows, err := recordRowLengths(tt.kind, tt.list, tt.items, &lengths, &budget)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v %v over %d items: got %v, want an error with %q", tt.kind, tt.list, tt.items, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(lengths, tt.want) || rows != int64(len(tt.want)) {
			t.Errorf("%v %v over %d items: got %v (%d rows), %v; want %v", tt.kind, tt.list, tt.items, lengths, rows, err, tt.want)
		}
	}
	spec, err := ParseExampleSpec([]byte(`{"features": {"x": {"kind": "ragged", "dtype": "int64", "partitions": [
		{"kind": "value_rowids", "key": "ids"}, {"kind": "row_starts", "key": "starts"}, {"kind": "row_limits", "key": "limits"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Partition{{Kind: ValueRowIds, Key: "ids"}, {Kind: RowStarts, Key: "starts"}, {Kind: RowLimits, Key: "limits"}}
	if got := spec.Features["x"].Partitions; !reflect.DeepEqual(got, want) {
		t.Errorf("partitions %+v, want %+v", got, want)
	}
	if _, err := ParseExampleSpec([]byte(`{"features": {"x": {"kind": "ragged", "dtype": "int64", "partitions": [{"kind": "row_ids"}]}}}`)); !errors.Is(err, ErrFeatureSpec) {
		t.Errorf("unknown partition kind: %v", err)
	}
}

// TestExampleRecycle decodes a batch into the memory of a recycled output
// (poisoned by the test hook) and its values' room: the result must equal
// a decode into fresh memory, and the decode must have used the recycled
// block and room.
func TestExampleRecycle(t *testing.T) {
	withoutReturns(t)
	testhook.PoisonLentBuffers.Store(true)
	defer testhook.PoisonLentBuffers.Store(false)
	for _, tc := range exampleSets {
		spec, data, offsets := tc.gen(400)
		plan, err := compileExample(spec, tc.name == "sequence")
		if err != nil {
			t.Fatal(err)
		}
		// The recycled block is poisoned (the test hook) before its reuse:
		// nothing of batch a can pass for batch b's.
		half := len(offsets) / 2
		a, b := offsets[half:], offsets[half:]
		want, err := plan.DecodeContiguous(data, b)
		if err != nil {
			t.Fatal(err)
		}
		wantSmall, err := plan.DecodeContiguous(data, b[:3])
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			stA, err := plan.DecodeContiguous(data, a, DecodeOptions{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			blocksA := plan.recent.blocksOf(stA)
			plan.Recycle(stA)
			plan.Recycle(stA) // a second time: ignored
			reused := testhook.SlabsReused.Load()
			stB, err := plan.DecodeContiguous(data, b, DecodeOptions{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			if !structtensor.Equal(want, stB) {
				t.Errorf("%s on %d threads: decoded into recycled memory, differs from a fresh decode", tc.name, threads)
			}
			if testhook.SlabsReused.Load() != reused+1 || stB != stA {
				t.Errorf("%s on %d threads: not built in the recycled output's room", tc.name, threads)
			}
			if blocksB := plan.recent.blocksOf(stB); len(blocksA) != 1 || !slices.Equal(blocksA, blocksB) {
				t.Errorf("%s on %d threads: decoded into block %x, not into the recycled %x", tc.name, threads, blocksB, blocksA)
			}
			plan.Recycle(&structtensor.StructTensor{}) // not the plan's: ignored
			// A batch of 2 records leaves the big block for a later batch
			// and decodes right.
			plan.Recycle(stB)
			small, err := plan.DecodeContiguous(data, b[:3])
			if err != nil {
				t.Fatal(err)
			}
			if !structtensor.Equal(small, wantSmall) {
				t.Errorf("%s: the batch of 2 differs", tc.name)
			}
		}
	}
}
