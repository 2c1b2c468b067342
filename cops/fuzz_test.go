package cops_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// FuzzDecodeOp feeds arbitrary bytes, as a batch of records, through the
// op in a TensorFlow session and through plan.Decode: both must accept the
// same batches with equal StructTensors, and reject the same batches, the
// op with InvalidArgument (never a crash of the process).
func FuzzDecodeOp(f *testing.F) {
	md, plan := messagePlan(f, "structtensor.testdata.recipe.Recipe")
	seeds, err := copstest.Records(md, 8, 11, copstest.Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add(s, []byte{})
	}
	f.Add([]byte{0x12, 0x05, 0x0a, 0x01}, []byte{0x22, 0x02, 0x1a, 0x00})
	f.Add([]byte{0xff, 0xff, 0xff}, []byte{0x0a})
	sess, in, sym := decodeGraph(f, plan)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		records := [][]byte{a, b}
		want, wantErr := plan.Decode(records)
		got, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
		switch {
		case wantErr != nil && err == nil:
			t.Fatalf("plan.Decode failed (%v), the op did not", wantErr)
		case wantErr == nil && err != nil:
			t.Fatalf("the op failed (%v), plan.Decode did not", err)
		case err != nil:
			if !errors.Is(err, tfbridge.ErrInvalidArgument) {
				t.Fatalf("op error is not InvalidArgument: %v", err)
			}
		case !structtensor.Equal(got, want):
			t.Fatalf("op %v\nplan.Decode %v", got, want)
		}
	})
}

// layoutFuzzSpecs are the feature specs FuzzExampleLayout's plans are
// compiled from: every field layout the kernel reads (dense, ragged with
// every partition kind, stride; for SequenceExample lists and steps).
var layoutFuzzSpecs = map[bool]string{
	false: `{"features": {
	  "age": {"kind": "fixed_len", "dtype": "int64", "default": -1},
	  "emb": {"kind": "fixed_len", "dtype": "float32", "shape": [2, 2], "default": [1, 2, 3, 4]},
	  "ids": {"kind": "var_len", "dtype": "string"},
	  "seq": {"kind": "fixed_len_sequence", "dtype": "float32", "shape": [3]},
	  "r1": {"kind": "ragged", "dtype": "int64", "partitions": [{"kind": "row_splits", "key": "p_splits"}, {"kind": "uniform_row_length", "length": 2}]},
	  "r2": {"kind": "ragged", "dtype": "string", "partitions": [{"kind": "row_lengths", "key": "p_lengths"}, {"kind": "value_rowids", "key": "p_ids"}]},
	  "r3": {"kind": "ragged", "dtype": "float32", "partitions": [{"kind": "row_starts", "key": "p_starts"}, {"kind": "row_limits", "key": "p_limits"}]}}}`,
	true: `{"features": {"user": {"kind": "fixed_len", "dtype": "string", "default": "anon"}, "tags": {"kind": "var_len", "dtype": "int64"}},
	  "sequence_features": {
	  "clicks": {"kind": "var_len", "dtype": "int64"},
	  "boxes": {"kind": "fixed_len_sequence", "dtype": "float32", "shape": [2], "allow_missing": true},
	  "terms": {"kind": "ragged", "dtype": "string"}}}`,
}

// fuzzDTypes maps a byte to a component dtype of the example op.
var fuzzDTypes = []structtensor.DType{structtensor.Int64, structtensor.Float32, structtensor.String}

// FuzzExampleLayout builds the example decode op of a valid plan with a
// fuzzed layout attribute (and fuzzed component dtypes, one byte each),
// as a graph read from an untrusted SavedModel may hold them, and runs it
// on valid records: the kernel refuses the layout when it is created,
// fails the run with an error, or decodes; it never crashes the process.
// With the plan's own layout and dtypes it decodes what plan.Decode does.
// (Go's fuzzer guides by the Go code's coverage only; the seeds are the
// plans' layouts, mutated.)
func FuzzExampleLayout(f *testing.F) {
	type fuzzPlan struct {
		plan    *decode.ExamplePlan
		bytes   []byte
		layout  []byte
		dtypes  []byte
		records [][]byte
	}
	plans := map[bool]fuzzPlan{}
	for _, seq := range []bool{false, true} {
		spec, err := decode.ParseExampleSpec([]byte(layoutFuzzSpecs[seq]))
		if err != nil {
			f.Fatal(err)
		}
		compile := decode.CompileExample
		if seq {
			compile = decode.CompileSequenceExample
		}
		plan, err := compile(spec)
		if err != nil {
			f.Fatal(err)
		}
		b, err := plan.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		_, dts, err := cops.ExampleComponentDTypes(plan)
		if err != nil {
			f.Fatal(err)
		}
		p := fuzzPlan{plan: plan, bytes: b, layout: plan.MarshalLayout(),
			records: copstest.ExampleRecords(spec, 6, 17, copstest.ExampleOptions{Sequence: seq})}
		for _, d := range dts {
			p.dtypes = append(p.dtypes, byte(slices.Index(fuzzDTypes, d)))
		}
		plans[seq] = p
		f.Add(seq, p.layout, p.dtypes)
		f.Add(seq, p.layout[:len(p.layout)/2], p.dtypes)
		f.Add(seq, append(append([]byte(nil), p.layout...), 0), p.dtypes)
		f.Add(seq, plans[false].layout, p.dtypes)
	}
	if err := cops.Register(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seq bool, layout, dtypeBytes []byte) {
		p := plans[seq]
		if len(dtypeBytes) > 64 {
			return
		}
		dtypes := make([]structtensor.DType, len(dtypeBytes))
		for i, b := range dtypeBytes {
			dtypes[i] = fuzzDTypes[int(b)%len(fuzzDTypes)]
		}
		g, ph, op, err := rawExampleOp(t, p.bytes, layout, dtypes)
		if err != nil {
			return // the graph refuses the node (no kernel is made)
		}
		fetch := make([]tfbridge.Output, len(dtypes))
		for i := range fetch {
			fetch[i] = op.Output(i)
		}
		if len(fetch) == 0 {
			return // nothing to run: TensorFlow prunes the op
		}
		sess, err := tfbridge.NewSession(g)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		got, err := sess.Run(map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, p.records)}, fetch, nil)
		own := bytes.Equal(layout, p.layout) && slices.Equal(dtypeBytes, p.dtypes)
		switch {
		case err != nil && own:
			t.Fatalf("the plan's own layout fails: %v", err)
		case err != nil:
			return
		}
		for _, o := range got {
			o.Close()
		}
		if own {
			want, err := p.plan.Decode(p.records)
			if err != nil {
				t.Fatal(err)
			}
			sym, err := graphst.NewStruct(p.plan.Spec(), fetch)
			if err != nil {
				t.Fatal(err)
			}
			again, err := runStruct(t, sess, map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, p.records)}, sym)
			if err != nil || !structtensor.Equal(again, want) {
				t.Fatalf("the plan's own layout: %v, %v; want %v", again, err, want)
			}
		}
	})
}
