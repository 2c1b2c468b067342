package cops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
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

func descriptors(t testing.TB) *decode.Descriptors {
	t.Helper()
	d, err := copstest.LoadDescriptors("../" + copstest.DescriptorSetPath)
	if err != nil {
		t.Fatal(err)
	}
	return d
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
func decodeGraph(t testing.TB, plan *decode.Plan, opts ...cops.Options) (*tfbridge.Session, tfbridge.Output, *tfbridge.SymbolicStruct) {
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
	sess, err := tfbridge.NewSession(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, ph.Output(0), sym
}

func TestDecodeOpEqualsPlanDecode(t *testing.T) {
	d := descriptors(t)
	for _, name := range testMessages {
		t.Run(name[strings.LastIndex(name, ".")+1:], func(t *testing.T) {
			md, err := d.Message(name)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := decode.Compile(d, name)
			if err != nil {
				t.Fatal(err)
			}
			sess, in, sym := decodeGraph(t, plan)
			if !sym.Spec().Equal(plan.Spec()) {
				t.Fatalf("symbolic spec %v, plan spec %v", sym.Spec(), plan.Spec())
			}
			for _, n := range []int{0, 1, 7, 200} {
				records, err := copstest.Records(md, n, uint64(n)+1, copstest.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want, err := plan.Decode(records)
				if err != nil {
					t.Fatal(err)
				}
				got, err := sess.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
				if err != nil {
					t.Fatalf("%d records: %v", n, err)
				}
				if !structtensor.Equal(got, want) {
					t.Errorf("%d records: the op's StructTensor differs from plan.Decode\n got %v\nwant %v", n, got, want)
				}
			}
		})
	}
}

func TestDecodeOpProjection(t *testing.T) {
	d := descriptors(t)
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
	got, err := sess.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
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
	gotField, err := sess.RunSymbolic(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, f)
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

func TestDecodeOpBadRecord(t *testing.T) {
	d := descriptors(t)
	name := "structtensor.testdata.recipe.Recipe"
	md, _ := d.Message(name)
	plan, err := decode.Compile(d, name)
	if err != nil {
		t.Fatal(err)
	}
	records, err := copstest.Records(md, 5, 3, copstest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Record 3: field 2 (ingredients, a message) with a length past the end.
	records[3] = []byte{0x12, 0x05, 0x0a, 0x01}
	_, wantErr := plan.Decode(records)
	if wantErr == nil {
		t.Fatal("plan.Decode accepted the bad record")
	}
	sess, in, sym := decodeGraph(t, plan)
	_, err = sess.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{in: recordsTensor(t, records)}, sym)
	if err == nil {
		t.Fatal("the op accepted the bad record")
	}
	if tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument {
		t.Errorf("code %v, want InvalidArgument: %v", tfbridge.CodeOf(err), err)
	}
	var re *decode.RecordError
	if !errors.As(wantErr, &re) {
		t.Fatalf("plan.Decode error %v is not a RecordError", wantErr)
	}
	for _, want := range []string{"record 3,", "byte offset", "ingredients"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
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
	sess, err := tfbridge.NewSession(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	_, err = sess.Run(map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): recordsTensor(t, [][]byte{{}})}, nil, []*tfbridge.Operation{op})
	if err == nil || tfbridge.CodeOf(err) != tfbridge.CodeInvalidArgument || !strings.Contains(err.Error(), "attr plan") {
		t.Errorf("bad plan: err = %v, want InvalidArgument naming attr plan", err)
	}
}
