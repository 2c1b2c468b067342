package cops_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

func compileCase(t testing.TB, c copstest.ExampleCase) *decode.ExamplePlan {
	t.Helper()
	compile := decode.CompileExample
	if c.Sequence {
		compile = decode.CompileSequenceExample
	}
	plan, err := compile(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// exampleGraph builds placeholder -> example decode op for plan in a new
// graph and session.
func exampleGraph(t testing.TB, plan *decode.ExamplePlan, opts ...cops.Options) (*tfbridge.Session, tfbridge.Output, *graphst.Struct) {
	t.Helper()
	g := tfbridge.NewGraph()
	t.Cleanup(g.Close)
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records", Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		t.Fatal(err)
	}
	sym, err := cops.DecodeExampleGraph(g, ph.Output(0), plan, opts...)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := tfbridge.NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, ph.Output(0), sym
}

// TestExampleOpEqualsPlanDecode runs random feature specs (every kind and
// dtype, partitions, defaults, tf.Example and SequenceExample) and random
// records through the op in a graph, on one engine thread and on three,
// and compares each StructTensor with decode.ExamplePlan.Decode of the same
// records (the Go path, no TensorFlow).
func TestExampleOpEqualsPlanDecode(t *testing.T) {
	for _, seq := range []bool{false, true} {
		cases := copstest.ExampleCases(uint64(11+btoi(seq)), 40, copstest.ExampleOptions{Sequence: seq, MaxRecords: 30})
		for i, c := range cases {
			plan := compileCase(t, c)
			want, err := plan.Decode(c.Records)
			if err != nil {
				t.Fatalf("sequence %v case %d: the Go decode fails: %v", seq, i, err)
			}
			for _, threads := range []int{1, 3} {
				sess, in, sym := exampleGraph(t, plan, cops.Options{Threads: threads})
				got, err := runStruct(t, sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, c.Records)}, sym)
				if err != nil {
					t.Fatalf("sequence %v case %d, %d threads: %v", seq, i, threads, err)
				}
				if !structtensor.Equal(got, want) {
					t.Errorf("sequence %v case %d (spec %v), %d threads:\n got %v\nwant %v", seq, i, plan.Spec(), threads, got, want)
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestExampleOpGraphShapes checks that the graph knows every component's
// rank and inner dims (EnsureShape), as the spec gives them.
func TestExampleOpGraphShapes(t *testing.T) {
	spec := &decode.ExampleSpec{Features: map[string]decode.Feature{
		"emb":  {Kind: decode.FixedLen, DType: structtensor.Float32, Shape: []int{2, 3}},
		"ids":  {Kind: decode.VarLen, DType: structtensor.Int64},
		"tags": {Kind: decode.Ragged, DType: structtensor.String, Partitions: []decode.Partition{{Kind: decode.UniformRowLength, Length: 2}}},
	}}
	plan, err := decode.CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	_, _, sym := exampleGraph(t, plan)
	var got []string
	for _, o := range sym.Components() {
		s, known, err := o.Shape()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v %v %v", o.DType(), known, s))
	}
	want := []string{"float32 true [None, 2, 3]", "int64 true [None]", "int64 true [None]", "int64 true [None]", "int64 true [None]", "string true [None]"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("component shapes:\n got %q\nwant %q", got, want)
	}
}

// TestExampleOpErrors checks that a record the Go decoder rejects fails
// the run with InvalidArgument naming the same record, the byte offset
// and the feature.
func TestExampleOpErrors(t *testing.T) {
	spec := &decode.ExampleSpec{Features: map[string]decode.Feature{
		"age":  {Kind: decode.FixedLen, DType: structtensor.Int64},
		"emb":  {Kind: decode.FixedLen, DType: structtensor.Float32, Shape: []int{2}, Default: []float32{0, 0}},
		"tags": {Kind: decode.Ragged, DType: structtensor.String, Partitions: []decode.Partition{{Kind: decode.RowLengths, Key: "tag_lengths"}}},
	}}
	plan, err := decode.CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	ex := func(m map[string]*tfexample.Feature) []byte {
		b, err := proto.Marshal(&tfexample.Example{Features: &tfexample.Features{Feature: m}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	i64 := func(v ...int64) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: v}}}
	}
	f32 := func(v ...float32) *tfexample.Feature {
		return &tfexample.Feature{Kind: &tfexample.Feature_FloatList{FloatList: &tfexample.FloatList{Value: v}}}
	}
	str := func(v ...string) *tfexample.Feature {
		b := make([][]byte, len(v))
		for i, s := range v {
			b[i] = []byte(s)
		}
		return &tfexample.Feature{Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: b}}}
	}
	good := ex(map[string]*tfexample.Feature{"age": i64(3), "tags": str("a", "b"), "tag_lengths": i64(1, 1)})
	for _, c := range []struct {
		name, feature string
		bad           []byte
		offset        bool
	}{
		{"missing", "age", ex(map[string]*tfexample.Feature{"emb": f32(1, 2)}), false},
		{"wrong kind", "age", ex(map[string]*tfexample.Feature{"age": f32(1)}), true},
		{"wrong count", "emb", ex(map[string]*tfexample.Feature{"age": i64(1), "emb": f32(1, 2, 3)}), true},
		{"partition", "tags", ex(map[string]*tfexample.Feature{"age": i64(1), "tags": str("a"), "tag_lengths": i64(2)}), false},
		{"truncated", "", good[:len(good)-3], true},
	} {
		t.Run(c.name, func(t *testing.T) {
			records := [][]byte{good, good, c.bad, good}
			_, goErr := plan.Decode(records)
			var re *decode.RecordError
			if !errors.As(goErr, &re) || re.Record != 2 {
				t.Fatalf("the Go decode: %v, want an error at record 2", goErr)
			}
			sess, in, sym := exampleGraph(t, plan)
			_, err := runStruct(t, sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
			if err == nil {
				t.Fatal("the op accepts the bad record")
			}
			msg := err.Error()
			if tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument || !strings.Contains(msg, "record 2") ||
				(c.feature != "" && !strings.Contains(msg, `"`+c.feature+`"`)) || c.offset != strings.Contains(msg, "byte offset") {
				t.Errorf("err = %v (code %v); want InvalidArgument naming record 2, feature %q, byte offset %v\n(Go: %v)", err, tfbridge.CodeOf(err), c.feature, c.offset, goErr)
			}
			if c.offset && !strings.Contains(msg, fmt.Sprintf("byte offset %d", re.Offset)) {
				t.Errorf("err = %v, the Go decode names byte offset %d", err, re.Offset)
			}
		})
	}
}

// TestExampleOpOutputsOutliveInput: the op's outputs are TensorFlow's
// own memory. They are fetched, then the input tensor, session and graph
// are closed and garbage collected; a second graph then runs ops that
// copy them (ReverseV2 on strings copies each TF_TString, long ones
// included; Identity of numbers) and the results still equal the Go
// decode of records that no longer exist in any buffer.
func TestExampleOpOutputsOutliveInput(t *testing.T) {
	c := copstest.ExampleCases(5, 1, copstest.ExampleOptions{MaxRecords: 1})[0]
	c.Spec = &decode.ExampleSpec{Features: map[string]decode.Feature{
		"s": {Kind: decode.VarLen, DType: structtensor.String},
		"n": {Kind: decode.FixedLen, DType: structtensor.Int64, Shape: []int{2}, Default: []int64{7, 8}},
	}}
	var records [][]byte
	for i := range 200 {
		long := strings.Repeat(fmt.Sprint(i%10), 20+i%40)
		b, err := proto.Marshal(&tfexample.Example{Features: &tfexample.Features{Feature: map[string]*tfexample.Feature{
			"s": {Kind: &tfexample.Feature_BytesList{BytesList: &tfexample.BytesList{Value: [][]byte{[]byte(long), []byte("x")}}}},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, b)
	}
	plan := compileCase(t, c)
	want, err := plan.Decode(records)
	if err != nil {
		t.Fatal(err)
	}
	sess, in, sym := exampleGraph(t, plan)
	feed := recordsTensor(t, records)
	fetched, err := sess.Run(map[tfbridge.Output]*tfbridge.Tensor{in: feed}, sym.Components(), nil)
	if err != nil {
		t.Fatal(err)
	}
	feed.Close()
	records = nil
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	sess.Graph().Close()
	runtime.GC()

	// A second graph copies every fetched tensor.
	g := tfbridge.NewGraph()
	defer g.Close()
	axis, err := structtensor.NewTensor(structtensor.Shape{1}, []int32{0})
	if err != nil {
		t.Fatal(err)
	}
	ax, err := g.AddOperation(tfbridge.OpSpec{Type: "Const", Name: "axis", Attrs: map[string]any{"dtype": structtensor.Int32, "value": axis}})
	if err != nil {
		t.Fatal(err)
	}
	feeds := map[tfbridge.Output]*tfbridge.Tensor{}
	var outs []tfbridge.Output
	for i, f := range fetched {
		ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: fmt.Sprintf("in%d", i), Attrs: map[string]any{"dtype": f.DType()}})
		if err != nil {
			t.Fatal(err)
		}
		// Reverse twice: each a copy, in the original order.
		x := ph.Output(0)
		for j := range 2 {
			rev, err := g.AddOperation(tfbridge.OpSpec{Type: "ReverseV2", Name: fmt.Sprintf("rev%d_%d", i, j), Input: []tfbridge.Input{x, ax.Output(0)}})
			if err != nil {
				t.Fatal(err)
			}
			x = rev.Output(0)
		}
		feeds[ph.Output(0)] = f
		outs = append(outs, x)
	}
	sess2, err := tfbridge.NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	copied, err := sess2.Run(feeds, outs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fetched {
		f.Close()
	}
	runtime.GC()
	got, err := sym.Value(copied)
	if err != nil {
		t.Fatal(err)
	}
	if !structtensor.Equal(got, want) {
		t.Errorf("copies of the outputs differ from the Go decode\n got %v\nwant %v", got, want)
	}
}

// TestExampleOpKernelFaults makes the kernel throw while TensorFlow
// creates and runs it: each fails the run with ResourceExhausted rather
// than terminating the process.
func TestExampleOpKernelFaults(t *testing.T) {
	c := copstest.ExampleCases(3, 1, copstest.ExampleOptions{})[0]
	plan := compileCase(t, c)
	for _, where := range []int{1, 2} {
		sess, in, sym := exampleGraph(t, plan)
		cops.InjectFault(where)
		_, err := runStruct(t, sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, c.Records)}, sym)
		cops.InjectFault(0)
		if tfbridge.CodeOf(err) != tfbridge.CodeResourceExhausted {
			t.Errorf("fault %d: err = %v, want ResourceExhausted", where, err)
		}
	}
}

// TestExampleOpRefusesEditedAttrs: a graph whose layout or dtypes were
// edited fails to construct its kernel rather than mislabel outputs.
func TestExampleOpRefusesEditedAttrs(t *testing.T) {
	c := copstest.ExampleCases(4, 1, copstest.ExampleOptions{})[0]
	plan := compileCase(t, c)
	planBytes, _ := plan.MarshalBinary()
	_, dtypes, err := cops.ExampleComponentDTypes(plan)
	if err != nil {
		t.Fatal(err)
	}
	layout := plan.MarshalLayout()
	wrong := append([]structtensor.DType(nil), dtypes...)
	wrong = append(wrong, structtensor.Int64)
	for _, c := range []struct {
		name   string
		layout []byte
		dtypes []structtensor.DType
	}{
		{"truncated layout", layout[:len(layout)-1], dtypes},
		{"extra byte", append(append([]byte(nil), layout...), 0), dtypes},
		{"dtypes", layout, wrong},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, ph, op, err := rawExampleOp(t, planBytes, c.layout, c.dtypes)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := tfbridge.NewSession(g)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			_, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, [][]byte{})}, []tfbridge.Output{op.Output(0)}, nil)
			if tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument {
				t.Errorf("err = %v, want InvalidArgument", err)
			}
		})
	}
}

// rawExampleOp builds placeholder -> example decode op with the given
// attributes, as a graph read from a SavedModel may hold them, in a new
// graph (closed when t ends); the error is AddOperation's.
func rawExampleOp(t testing.TB, plan, layout []byte, dtypes []structtensor.DType) (*tfbridge.Graph, *tfbridge.Operation, *tfbridge.Operation, error) {
	t.Helper()
	g := tfbridge.NewGraph()
	t.Cleanup(g.Close)
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records", Attrs: map[string]any{"dtype": structtensor.String}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := g.AddOperation(tfbridge.OpSpec{Type: cops.ExampleOpName, Input: []tfbridge.Input{ph.Output(0)},
		Attrs: map[string]any{"plan": plan, "layout": layout, "component_dtypes": dtypes}})
	return g, ph, op, err
}

// runStruct runs sym and returns its StructTensor.
func runStruct(t testing.TB, sess *tfbridge.Session, feeds map[tfbridge.Output]*tfbridge.Tensor, sym *graphst.Struct) (*structtensor.StructTensor, error) {
	t.Helper()
	v, err := graphst.Run(context.Background(), sess, feeds, sym)
	if err != nil {
		return nil, err
	}
	return v.(*structtensor.StructTensor), nil
}
