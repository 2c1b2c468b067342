package tfbridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/structtensor/structtensor-go/structtensor"
	configpb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

func mustTensor(t testing.TB, shape structtensor.Shape, values any) *structtensor.Tensor {
	t.Helper()
	v, err := structtensor.NewTensor(shape, values)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustOp(t *testing.T, g *Graph, spec OpSpec) *Operation {
	t.Helper()
	op, err := g.AddOperation(spec)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func placeholder(t *testing.T, g *Graph, name string, dt DType) Output {
	t.Helper()
	return mustOp(t, g, OpSpec{Type: "Placeholder", Name: name, Attrs: map[string]any{"dtype": dt}}).Output(0)
}

func runOne(t *testing.T, s *Session, feeds map[Output]*Tensor, fetch Output) *structtensor.Tensor {
	t.Helper()
	out, err := s.Run(feeds, []Output{fetch}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out[0].Close()
	v, err := out[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVersion(t *testing.T) {
	if v := Version(); !strings.HasPrefix(v, "2.") {
		t.Fatalf("Version() = %q, want 2.x", v)
	}
}

// TestAddGraph builds x + c with a placeholder and a constant and checks the
// sums, and that the graph's shape inference sees the constant's shape.
func TestAddGraph(t *testing.T) {
	g := NewGraph()
	defer g.Close()
	c := mustOp(t, g, OpSpec{Type: "Const", Name: "c", Attrs: map[string]any{
		"dtype": Int64, "value": mustTensor(t, structtensor.Shape{3}, []int64{10, 20, 30})}}).Output(0)
	x := placeholder(t, g, "x", Int64)
	sum := mustOp(t, g, OpSpec{Type: "AddV2", Input: []Input{x, c}}).Output(0)
	if sum.Op.Name() != "AddV2" || sum.Op.Type() != "AddV2" {
		t.Errorf("generated name %q, type %q", sum.Op.Name(), sum.Op.Type())
	}
	if shape, known, err := c.Shape(); err != nil || !known || !shape.Equal(structtensor.Shape{3}) {
		t.Errorf("const shape = %v, %v, %v", shape, known, err)
	}
	if sum.DType() != Int64 {
		t.Errorf("sum dtype %v", sum.DType())
	}
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := NewTensor(mustTensor(t, structtensor.Shape{3}, []int64{1, 2, 3}))
	if err != nil {
		t.Fatal(err)
	}
	got := runOne(t, s, map[Output]*Tensor{x: in}, sum)
	if want := mustTensor(t, structtensor.Shape{3}, []int64{11, 22, 33}); !structtensor.Equal(got, want) {
		t.Fatalf("x + c = %v, want %v", got.Int64s(), want.Int64s())
	}
	if op := g.Operation("c"); op == nil || op.Type() != "Const" {
		t.Errorf("Operation(c) = %v", op)
	}
	if g.Operation("nope") != nil {
		t.Error("Operation(nope) found something")
	}
	if o, err := g.OutputByName("x:0"); err != nil || o.Op.Name() != "x" {
		t.Errorf("OutputByName(x:0) = %v, %v", o, err)
	}
	if _, err := g.OutputByName("x:1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OutputByName(x:1) error %v", err)
	}
}

// identityGraph returns a graph with a placeholder of dtype dt fed through
// Identity, and a session on it.
func identityGraph(t *testing.T, dt DType) (*Graph, *Session, Output, Output) {
	t.Helper()
	g := NewGraph()
	t.Cleanup(g.Close)
	x := placeholder(t, g, "x", dt)
	y := mustOp(t, g, OpSpec{Type: "Identity", Name: "y", Input: []Input{x}}).Output(0)
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return g, s, x, y
}

// TestDTypeRoundTrip sends a tensor of every structtensor dtype, in several
// shapes, through an Identity op and expects it back unchanged.
func TestDTypeRoundTrip(t *testing.T) {
	values := []any{
		[]bool{true, false, true, true, false, false},
		[]int32{-2147483648, -1, 0, 1, 2147483647, 7},
		[]int64{-9223372036854775808, -1, 0, 1, 9223372036854775807, 7},
		[]uint32{0, 1, 2, 4294967295, 5, 6},
		[]uint64{0, 1, 2, 18446744073709551615, 5, 6},
		[]float32{-1.5, 0, 3.25, float32(math.Inf(1)), float32(math.NaN()), 1e-38},
		[]float64{-1.5, 0, 3.25, math.Inf(-1), math.NaN(), 1e-308},
		[]string{"", "a", "héllo", "x\x00y", strings.Repeat("z", 23), "f"},
	}
	for _, vals := range values {
		want6 := mustTensor(t, structtensor.Shape{6}, vals)
		dt, err := DTypeOf(want6.DType())
		if err != nil {
			t.Fatal(err)
		}
		_, s, x, y := identityGraph(t, dt)
		for _, shape := range []structtensor.Shape{{6}, {2, 3}, {3, 1, 2}, {}, {0}, {2, 0, 4}} {
			var want *structtensor.Tensor
			switch n := shape.NumElements(); n {
			case 6:
				want, err = want6.Reshape(shape)
			case 1:
				want, err = want6.SliceRows(2, 3)
				if err == nil {
					want, err = want.Reshape(shape)
				}
			default:
				want, err = want6.SliceRows(0, 0)
				if err == nil {
					want, err = want.Reshape(shape)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []conversion{convCopy, convBorrow} {
				in, err := newTensor(want, mode)
				if err != nil {
					t.Fatalf("%v %v: %v", dt, shape, err)
				}
				if in.DType() != dt || !in.Shape().Equal(shape) {
					t.Errorf("NewTensor: %v %v, want %v %v", in.DType(), in.Shape(), dt, shape)
				}
				got := runOne(t, s, map[Output]*Tensor{x: in}, y)
				in.Close()
				if !structtensor.Equal(got, want) {
					t.Errorf("%v %v mode %d: got %v, want %v", dt, shape, mode, got, want)
				}
			}
		}
	}
}

// TestStringTensors checks strings with embedded NULs, large strings (heap
// TF_TStrings), empty strings, many strings, and a string tensor over a
// slice of a larger buffer (offsets not starting at 0).
func TestStringTensors(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef\x00"), 1<<16) // 1.1 MB
	many := make([][]byte, 10000)
	for i := range many {
		many[i] = []byte(strings.Repeat("s", i%40))
	}
	cases := map[string][][]byte{
		"nul":   {[]byte("\x00"), []byte("a\x00b"), []byte("\x00\x00\x00"), {}},
		"large": {big, []byte("small"), big[:23], big[:24]},
		"many":  many,
		"empty": {},
	}
	_, s, x, y := identityGraph(t, String)
	sub, err := mustTensor(t, nil, [][]byte{[]byte("skip"), []byte("keep"), []byte("me")}).SliceRows(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []conversion{convAuto, convCopy, convBorrow} {
		for name, elems := range cases {
			want := mustTensor(t, nil, elems)
			in, err := newTensor(want, mode)
			if err != nil {
				t.Fatal(err)
			}
			got := runOne(t, s, map[Output]*Tensor{x: in}, y)
			in.Close()
			// TensorFlow strings carry no UTF-8 mark: Value marks text
			// the strings that are valid UTF-8 (checked below).
			if !structtensor.Equal(got, want.WithUTF8(got.UTF8())) {
				t.Errorf("%s mode %d: round trip differs", name, mode)
			}
			if got.UTF8() != utf8.Valid(bytes.Join(elems, nil)) {
				t.Errorf("%s: UTF8() = %v", name, got.UTF8())
			}
		}
		in, err := newTensor(sub, mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := runOne(t, s, map[Output]*Tensor{x: in}, y); !structtensor.Equal(got, sub.WithUTF8(true)) {
			t.Errorf("sliced string tensor mode %d: got %v", mode, got)
		}
		in.Close()
	}
}

// TestLoansReturned lends buffers to TensorFlow, keeps a fetched output
// that shares one (Identity forwards its input) past the feed's Close, and
// checks that every buffer is unpinned once TensorFlow lets go.
func TestLoansReturned(t *testing.T) {
	before := loans.Load()
	_, s, x, y := identityGraph(t, Int64)
	v := mustTensor(t, nil, make([]int64, 1<<14)) // 128 KiB: lent
	in, err := NewTensor(v)
	if err != nil {
		t.Fatal(err)
	}
	if loans.Load() != before+1 {
		t.Fatalf("loans %d, want %d", loans.Load(), before+1)
	}
	out, err := s.Run(map[Output]*Tensor{x: in}, []Output{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Close()
	got, err := out[0].Value()
	if err != nil || !structtensor.Equal(got, v) {
		t.Fatalf("fetched after the feed's Close: %v", err)
	}
	out[0].Close()
	if n := loans.Load(); n != before {
		t.Errorf("%d loans outstanding after every tensor was closed", n-before)
	}
	small, _ := NewTensor(mustTensor(t, nil, []int64{1, 2}))
	defer small.Close()
	if n := loans.Load(); n != before {
		t.Errorf("a 16-byte tensor was lent (%d loans)", n-before)
	}
}

// TestErrorsNameTheOp checks that graph and run errors carry TensorFlow's
// status code as a sentinel and name the operation at fault.
func TestErrorsNameTheOp(t *testing.T) {
	g := NewGraph()
	defer g.Close()
	a := placeholder(t, g, "a_int", Int64)
	b := placeholder(t, g, "b_float", Float)
	_, err := g.AddOperation(OpSpec{Type: "AddV2", Name: "bad_add", Input: []Input{a, b}})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "bad_add") {
		t.Errorf("mismatched AddV2: %v", err)
	}
	if CodeOf(err) != CodeInvalidArgument {
		t.Errorf("CodeOf = %v", CodeOf(err))
	}
	_, err = g.AddOperation(OpSpec{Type: "NoSuchOpType", Name: "ghost"})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "ghost") || !strings.Contains(err.Error(), "NoSuchOpType") {
		t.Errorf("unknown op type: %v", err)
	}
	_, err = g.AddOperation(OpSpec{Type: "Placeholder", Name: "p", Attrs: map[string]any{"dtype": struct{}{}}})
	if !errors.Is(err, ErrAttr) || !strings.Contains(err.Error(), `"dtype"`) {
		t.Errorf("bad attr type: %v", err)
	}
	_, err = g.AddOperation(OpSpec{Type: "Placeholder", Name: "a_int"})
	if err == nil || !strings.Contains(err.Error(), "a_int") {
		t.Errorf("duplicate name: %v", err)
	}
	other := NewGraph()
	defer other.Close()
	_, err = other.AddOperation(OpSpec{Type: "Identity", Input: []Input{a}})
	if !errors.Is(err, ErrGraph) {
		t.Errorf("input from another graph: %v", err)
	}

	sum := mustOp(t, g, OpSpec{Type: "AddV2", Name: "sum", Input: []Input{a, a}}).Output(0)
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(nil, []Output{sum}, nil)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "a_int") {
		t.Errorf("unfed placeholder: %v", err)
	}
	wrong, _ := NewTensor(mustTensor(t, nil, []float32{1}))
	_, err = s.Run(map[Output]*Tensor{a: wrong}, []Output{sum}, nil)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("feed of the wrong dtype: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(nil, []Output{sum}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("run after close: %v", err)
	}
}

// TestAttrTypes builds ops whose attributes cover every supported Go type
// and checks the values the ops compute.
func TestAttrTypes(t *testing.T) {
	g := NewGraph()
	defer g.Close()
	x := mustOp(t, g, OpSpec{Type: "Placeholder", Name: "x", Attrs: map[string]any{
		"dtype": structtensor.Float32, "shape": structtensor.Shape{structtensor.Unknown, 1}}}).Output(0)
	if shape, known, err := x.Shape(); err != nil || !known || !shape.Equal(structtensor.Shape{structtensor.Unknown, 1}) {
		t.Errorf("placeholder shape %v %v %v", shape, known, err)
	}
	anyRank := mustOp(t, g, OpSpec{Type: "Placeholder", Name: "any", Attrs: map[string]any{"dtype": Int32, "shape": UnknownRank}}).Output(0)
	if _, known, err := anyRank.Shape(); err != nil || known {
		t.Errorf("UnknownRank placeholder: known=%v err=%v", known, err)
	}
	squeezed := mustOp(t, g, OpSpec{Type: "Squeeze", Input: []Input{x}, Attrs: map[string]any{"squeeze_dims": []int{1}}}).Output(0)
	leaky := mustOp(t, g, OpSpec{Type: "LeakyRelu", Input: []Input{squeezed}, Attrs: map[string]any{"alpha": 0.5}}).Output(0)
	cast := mustOp(t, g, OpSpec{Type: "Cast", Input: []Input{leaky}, Attrs: map[string]any{"DstT": Int64, "Truncate": true}}).Output(0)
	str := mustOp(t, g, OpSpec{Type: "AsString", Input: []Input{cast}, Attrs: map[string]any{"width": int64(3), "fill": "0"}}).Output(0)
	joined := mustOp(t, g, OpSpec{Type: "StringJoin", Input: []Input{OutputList{str, str}}, Attrs: map[string]any{"separator": []byte("|")}}).Output(0)
	ids := mustOp(t, g, OpSpec{Type: "IdentityN", Input: []Input{OutputList{cast, joined}}, Attrs: map[string]any{"T": []structtensor.DType{structtensor.Int64, structtensor.String}}})
	if ids.NumOutputs() != 2 || ids.Output(1).DType() != String {
		t.Fatalf("IdentityN outputs %d, %v", ids.NumOutputs(), ids.Output(1).DType())
	}
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, _ := NewTensor(mustTensor(t, structtensor.Shape{3, 1}, []float32{-4, 2.5, 7}))
	out, err := s.Run(map[Output]*Tensor{x: in}, ids.Outputs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ints, _ := out[0].Value()
	strs, _ := out[1].Value()
	if want := mustTensor(t, nil, []int64{-2, 2, 7}); !structtensor.Equal(ints, want) {
		t.Errorf("ints %v", ints)
	}
	if want := mustTensor(t, nil, []string{"-02|-02", "002|002", "007|007"}); !structtensor.Equal(strs, want) {
		t.Errorf("strings %v", strs)
	}
}

// TestGraphDefRoundTrip exports a graph, imports it twice under prefixes
// into another graph, and runs both copies.
func TestGraphDefRoundTrip(t *testing.T) {
	g := NewGraph()
	x := placeholder(t, g, "x", Int32)
	two := mustOp(t, g, OpSpec{Type: "Const", Name: "two", Attrs: map[string]any{"dtype": Int32, "value": mustTensor(t, structtensor.Shape{}, []int32{2})}}).Output(0)
	mustOp(t, g, OpSpec{Type: "Mul", Name: "double", Input: []Input{x, two}})
	def, err := g.ToGraphDef()
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	g.Close() // idempotent
	if _, err := g.ToGraphDef(); !errors.Is(err, ErrClosed) {
		t.Errorf("ToGraphDef after Close: %v", err)
	}

	h := NewGraph()
	defer h.Close()
	for _, p := range []string{"first", "second"} {
		if err := h.ImportGraphDef(def, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.ImportGraphDef([]byte("not a graph"), ""); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad GraphDef: %v", err)
	}
	if n := len(h.Operations()); n != 6 {
		t.Errorf("%d operations after two imports, want 6", n)
	}
	s, err := NewSession(h)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, p := range []string{"first", "second"} {
		in, _ := NewTensor(mustTensor(t, nil, []int32{int32(i), 10}))
		xo, err := h.OutputByName(p + "/x:0")
		if err != nil {
			t.Fatal(err)
		}
		yo, err := h.OutputByName(p + "/double")
		if err != nil {
			t.Fatal(err)
		}
		if got := runOne(t, s, map[Output]*Tensor{xo: in}, yo); !structtensor.Equal(got, mustTensor(t, nil, []int32{int32(2 * i), 20})) {
			t.Errorf("%s: %v", p, got)
		}
	}
}

// TestIndependentSessions runs two graphs with two sessions from several
// goroutines at once; each must see only its own graph.
func TestIndependentSessions(t *testing.T) {
	build := func(k int64) (*Session, Output, Output) {
		g := NewGraph()
		t.Cleanup(g.Close)
		x := placeholder(t, g, "x", Int64)
		c := mustOp(t, g, OpSpec{Type: "Const", Name: "k", Attrs: map[string]any{"dtype": Int64, "value": mustTensor(t, structtensor.Shape{}, []int64{k})}}).Output(0)
		y := mustOp(t, g, OpSpec{Type: "Mul", Name: "y", Input: []Input{x, c}}).Output(0)
		s, err := NewSession(g)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, x, y
	}
	s1, x1, y1 := build(3)
	s2, x2, y2 := build(5)
	if _, err := s1.Run(nil, []Output{y2}, nil); !errors.Is(err, ErrGraph) {
		t.Errorf("fetching another graph's output: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, x, y, k := s1, x1, y1, int64(3)
			if w%2 == 1 {
				s, x, y, k = s2, x2, y2, 5
			}
			for i := int64(0); i < 50; i++ {
				v, _ := structtensor.NewTensor(nil, []int64{i, int64(w)})
				in, err := NewTensor(v)
				if err != nil {
					errs <- err
					return
				}
				out, err := s.Run(map[Output]*Tensor{x: in}, []Output{y}, nil)
				in.Close()
				if err != nil {
					errs <- err
					return
				}
				got, err := out[0].Value()
				out[0].Close()
				if err != nil {
					errs <- err
					return
				}
				if g := got.Int64s(); g[0] != i*k || g[1] != int64(w)*k {
					errs <- fmt.Errorf("worker %d: got %v for %d", w, g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSessionOptions runs with a ConfigProto (one thread per pool) and
// rejects a config that does not parse.
func TestSessionOptions(t *testing.T) {
	cfg, err := proto.Marshal(&configpb.ConfigProto{IntraOpParallelismThreads: 1, InterOpParallelismThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGraph()
	defer g.Close()
	x := placeholder(t, g, "x", Float)
	y := mustOp(t, g, OpSpec{Type: "Neg", Input: []Input{x}}).Output(0)
	s, err := NewSession(g, SessionOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, _ := NewTensor(mustTensor(t, nil, []float32{1, -2}))
	if got := runOne(t, s, map[Output]*Tensor{x: in}, y); !structtensor.Equal(got, mustTensor(t, nil, []float32{-1, 2})) {
		t.Errorf("Neg: %v", got)
	}
	if _, err := NewSession(g, SessionOptions{Config: []byte{0xff, 0xff}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad config: %v", err)
	}
}

// TestTensorClose checks that Close is idempotent and that a closed tensor
// is refused rather than dereferenced.
func TestTensorClose(t *testing.T) {
	tt, err := NewTensor(mustTensor(t, nil, []string{"a"}))
	if err != nil {
		t.Fatal(err)
	}
	tt.Close()
	tt.Close()
	if _, err := tt.Value(); !errors.Is(err, ErrClosed) {
		t.Errorf("Value after Close: %v", err)
	}
	_, s, x, y := identityGraph(t, String)
	if _, err := s.Run(map[Output]*Tensor{x: tt}, []Output{y}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("feeding a closed tensor: %v", err)
	}
	g := NewGraph()
	if _, err := g.AddOperation(OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": Int64, "value": tt}}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed tensor as attribute: %v", err)
	}
	g.Close()
	if _, err := NewSession(g); !errors.Is(err, ErrClosed) {
		t.Errorf("session on a closed graph: %v", err)
	}
	if _, err := g.AddOperation(OpSpec{Type: "NoOp"}); !errors.Is(err, ErrClosed) {
		t.Errorf("AddOperation on a closed graph: %v", err)
	}
}

// TestTargetsAndForeignDTypes runs an operation as a target only, and
// checks that a fetched dtype with no structtensor counterpart is reported,
// not misread.
func TestTargetsAndForeignDTypes(t *testing.T) {
	g := NewGraph()
	defer g.Close()
	x := placeholder(t, g, "x", Int32)
	small := mustOp(t, g, OpSpec{Type: "Cast", Input: []Input{x}, Attrs: map[string]any{"DstT": Int8}}).Output(0)
	check := mustOp(t, g, OpSpec{Type: "Assert", Name: "check", Input: []Input{
		mustOp(t, g, OpSpec{Type: "Const", Attrs: map[string]any{"dtype": Bool, "value": mustTensor(t, structtensor.Shape{}, []bool{false})}}).Output(0),
		OutputList{x},
	}})
	mustOp(t, g, OpSpec{Type: "NoOp", Name: "nothing", ControlInputs: []*Operation{x.Op}})
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, _ := NewTensor(mustTensor(t, nil, []int32{1, 300}))
	feeds := map[Output]*Tensor{x: in}
	if out, err := s.Run(feeds, nil, []*Operation{g.Operation("nothing")}); err != nil || len(out) != 0 {
		t.Errorf("NoOp target: %v %v", out, err)
	}
	if _, err := s.Run(feeds, nil, []*Operation{check}); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "check") {
		t.Errorf("failing Assert target: %v", err)
	}
	out, err := s.Run(feeds, []Output{small}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].DType() != Int8 || out[0].NumElements() != 2 {
		t.Errorf("int8 fetch: %v %d", out[0].DType(), out[0].NumElements())
	}
	if _, err := out[0].Value(); !errors.Is(err, ErrDType) {
		t.Errorf("Value of an int8 tensor: %v", err)
	}
}

// TestCleanupReleases drops tensors, a session and a graph without Close
// and checks that their cleanups run: the lent buffers come back.
func TestCleanupReleases(t *testing.T) {
	before := loans.Load()
	func() {
		g := NewGraph()
		x, _ := g.AddOperation(OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": Float}})
		y, _ := g.AddOperation(OpSpec{Type: "Identity", Input: []Input{x.Output(0)}})
		s, err := NewSession(g)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			in, err := NewTensor(mustTensor(t, nil, make([]float32, 1<<15)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(map[Output]*Tensor{x.Output(0): in}, []Output{y.Output(0)}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}()
	for i := 0; i < 100 && loans.Load() != before; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := loans.Load() - before; n != 0 {
		t.Errorf("%d buffers still lent after their tensors became unreachable", n)
	}
}

// TestRunContext checks the two points where a context acts on a run: a
// done context stops it before it starts, and a deadline stops a run that
// would otherwise block forever (a dequeue from an empty queue).
func TestRunContext(t *testing.T) {
	g := NewGraph()
	defer g.Close()
	queue := mustOp(t, g, OpSpec{Type: "FIFOQueueV2", Attrs: map[string]any{"component_types": []DType{Int32}}}).Output(0)
	dequeue := mustOp(t, g, OpSpec{Type: "QueueDequeueV2", Input: []Input{queue}, Attrs: map[string]any{"component_types": []DType{Int32}}}).Output(0)
	one := mustOp(t, g, OpSpec{Type: "Const", Attrs: map[string]any{"dtype": Int32, "value": mustTensor(t, structtensor.Shape{}, []int32{1})}}).Output(0)
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.RunContext(ctx, nil, []Output{one}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.RunContext(ctx, nil, []Output{dequeue}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrDeadlineExceeded) {
		t.Errorf("blocked run past its deadline: %v, want context.DeadlineExceeded and ErrDeadlineExceeded", err)
	}

	// The session still runs after a timed-out run, with or without a context.
	out, err := s.RunContext(context.Background(), nil, []Output{one}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out[0].Close()
}
