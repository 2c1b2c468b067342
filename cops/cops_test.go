package cops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// testMessages are every test schema: the three plus the ones
// that exercise required fields, proto3, editions, recursion, extensions.
var testMessages = []string{
	"structtensor.testdata.recipe.Recipe",
	"structtensor.testdata.example.Example",
	"structtensor.testdata.example.ExampleListWithContext",
	"structtensor.testdata.scalars.AllScalars",
	"structtensor.testdata.proto3.Proto3Msg",
	"structtensor.testdata.recursive.Node",
	"structtensor.testdata.editions.EdMsg",
	"structtensor.testdata.flat.Flat",
}

// messagePlan returns a test schema's message and the plan of all its
// fields.
func messagePlan(t testing.TB, name string) (protoreflect.MessageDescriptor, *decode.Plan) {
	t.Helper()
	d := copstest.Descriptors(t)
	md, err := d.Message(name)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := decode.Compile(d, name)
	if err != nil {
		t.Fatal(err)
	}
	return md, plan
}

func recordsTensor(t testing.TB, records [][]byte) *tfbridge.Tensor {
	t.Helper()
	st, err := structtensor.NewTensor(nil, records)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := tfbridge.NewTensor(st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tt.Close)
	return tt
}

// decodeGraph builds placeholder -> decode op for plan in a new graph and
// session.
func decodeGraph(t testing.TB, plan *decode.Plan, opts ...cops.Options) (*tfbridge.Session, tfbridge.Output, *graphst.Struct) {
	t.Helper()
	g := tfbridge.NewGraph()
	t.Cleanup(g.Close)
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records", Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		t.Fatal(err)
	}
	sym, err := cops.DecodeGraph(g, ph.Output(0), plan, opts...)
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

// TestDecodeOpEqualsPlanDecode runs every test schema (the bench
// datasets' four among them) through one kernel, on one engine thread and
// on two, batch after batch, through both of its output paths: batches
// under 64 KiB lend nothing and are copied out of engine memory; larger
// ones decode in place, the first sized from a sample of itself; a batch
// of long lists that follows one of sparse records padded with an unknown
// field (few values per record and per input byte) outgrows what was lent
// and is copied out again.
func TestDecodeOpEqualsPlanDecode(t *testing.T) {
	type batch struct {
		n      int
		sparse bool
		bytes  int // at least: more records of n are added until they hold this much
	}
	batches := []batch{{0, false, 0}, {1, false, 0}, {7, false, 0}, {200, false, 0}, {200, false, 0}, {300, true, 0},
		{300, false, lendable}, {300, false, lendable}, {20, false, 0}}
	for _, name := range testMessages {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", name[strings.LastIndex(name, ".")+1:], threads), func(t *testing.T) {
				md, plan := messagePlan(t, name)
				before := cops.LoanedBlocks()
				sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: threads})
				if !sym.Spec().Equal(plan.Spec()) {
					t.Fatalf("symbolic spec %v, plan spec %v", sym.Spec(), plan.Spec())
				}
				inPlace0, outgrown0 := cops.OutputCounts()
				for i, b := range batches {
					opts := copstest.Options{MaxRepeated: 8}
					if b.sparse {
						opts = copstest.Options{MaxRepeated: 1, MaxDepth: 1}
					}
					records := recordsOf(t, md, b.n, uint64(i*1000+b.n+1), opts, b.bytes)
					if b.sparse {
						for j, r := range records {
							records[j] = protowire.AppendBytes(protowire.AppendTag(r, protowire.MaxValidNumber, protowire.BytesType), make([]byte, 4096))
						}
					}
					want, err := plan.Decode(records)
					if err != nil {
						t.Fatal(err)
					}
					got, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
					if err != nil {
						t.Fatalf("batch %d (%d records): %v", i, b.n, err)
					}
					if !structtensor.Equal(got, want) {
						t.Fatalf("batch %d (%d records): the op's StructTensor differs from plan.Decode\n got %v\nwant %v", i, b.n, got, want)
					}
				}
				inPlace, outgrown := cops.OutputCounts()
				if inPlace == inPlace0 {
					t.Error("no output was produced in place")
				}
				// Node's projection stops where its type recurs, leaving
				// at most one value per record in every output: nothing
				// can outgrow a buffer sized per record.
				if outgrown == outgrown0 && name != "structtensor.testdata.recursive.Node" {
					t.Error("no output outgrew its lent buffer")
				}
				sess.Close()
				waitLoaned(t, before)
			})
		}
	}
}

// lendable is a batch size the kernel lends buffers for (64 KiB or more).
const lendable = 80 << 10

// recordsOf returns n random records of md (copstest.Records), and n more
// at a time until they hold at least minBytes.
func recordsOf(t testing.TB, md protoreflect.MessageDescriptor, n int, seed uint64, opts copstest.Options, minBytes int) [][]byte {
	t.Helper()
	var records [][]byte
	size := 0
	for k := uint64(0); k == 0 || size < minBytes; k++ {
		more, err := copstest.Records(md, n, seed+k*100000, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range more {
			size += len(r)
		}
		records = append(records, more...)
	}
	return records
}

func TestDecodeOpProjection(t *testing.T) {
	d := copstest.Descriptors(t)
	name := "structtensor.testdata.recipe.Recipe"
	md, _ := d.Message(name)
	plan, err := decode.Compile(d, name, "ingredients.name", "steps.tools.electric", "servings")
	if err != nil {
		t.Fatal(err)
	}
	records, err := copstest.Records(md, 50, 9, copstest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := plan.Decode(records)
	if err != nil {
		t.Fatal(err)
	}
	sess, in, sym := decodeGraph(t, plan, cops.Options{Name: "decode", Threads: 1})
	got, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
	if err != nil {
		t.Fatal(err)
	}
	if !structtensor.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	// A field selected from the symbolic struct runs alone.
	f, err := sym.Field("ingredients", "name")
	if err != nil {
		t.Fatal(err)
	}
	gotField, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, f)
	if err != nil {
		t.Fatal(err)
	}
	wantField, err := want.FieldValue("ingredients", "name")
	if err != nil {
		t.Fatal(err)
	}
	if !structtensor.Equal(gotField, wantField) {
		t.Errorf("ingredients.name: got %v\nwant %v", gotField, wantField)
	}
}

// TestDecodeOpBadRecord fails a run on a fresh kernel (the first batch,
// decoded into engine memory) and on one that decoded a batch before (its
// buffers lent to the engine, on two threads): InvalidArgument naming the
// record, the offset and the field, and every lent block back at once.
func TestDecodeOpBadRecord(t *testing.T) {
	md, plan := messagePlan(t, "structtensor.testdata.recipe.Recipe")
	for _, tc := range []struct {
		name         string
		records, bad int
		primed       bool
		threads      int
	}{
		{"fresh kernel", 5, 3, false, 0},
		{"lent buffers", 200, 150, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records, err := copstest.Records(md, tc.records, 3, copstest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sess, in, sym := decodeGraph(t, plan, cops.Options{Threads: tc.threads})
			if tc.primed {
				if _, err := graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym); err != nil {
					t.Fatal(err)
				}
			}
			waitLoaned(t, 0)
			// Field 2 (ingredients, a message) with a length past the end.
			records[tc.bad] = []byte{0x12, 0x05, 0x0a, 0x01}
			_, wantErr := plan.Decode(records)
			var re *decode.RecordError
			if !errors.As(wantErr, &re) {
				t.Fatalf("plan.Decode error %v is not a RecordError", wantErr)
			}
			_, err = graphst.Run(t.Context(), sess, map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
			if err == nil {
				t.Fatal("the op accepted the bad record")
			}
			if tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument {
				t.Errorf("code %v, want InvalidArgument: %v", tfbridge.CodeOf(err), err)
			}
			for _, want := range []string{fmt.Sprintf("record %d,", tc.bad), "byte offset", "ingredients"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if n := cops.LoanedBlocks(); n != 0 {
				t.Errorf("%d output blocks on loan after the failed run", n)
			}
		})
	}
}

func TestRegisterIdempotent(t *testing.T) {
	for i := 0; i < 3; i++ {
		if err := cops.Register(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBadPlanAttr(t *testing.T) {
	if err := cops.Register(); err != nil {
		t.Fatal(err)
	}
	g := tfbridge.NewGraph()
	defer g.Close()
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := g.AddOperation(tfbridge.OpSpec{Type: cops.OpName, Input: []tfbridge.Input{ph.Output(0)},
		Attrs: map[string]any{"plan": []byte("not a plan"), "num_partitions": int64(0), "value_dtypes": []structtensor.DType{}}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := tfbridge.NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	_, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, [][]byte{{}})}, nil, []*tfbridge.Operation{op})
	if err == nil || tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument || !strings.Contains(err.Error(), "attr plan") {
		t.Errorf("bad plan: err = %v, want InvalidArgument naming attr plan", err)
	}
}
