package starrow

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/structtensor/structtensor-go/internal/testenv"
	st "github.com/structtensor/structtensor-go/structtensor"
)

func TestIPCRoundTrip(t *testing.T) {
	want := recipes()
	var buf bytes.Buffer
	if err := WriteIPC(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadIPC(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Equal(got, want) {
		t.Errorf("IPC round trip differs: %v", got.Spec())
	}
}

func TestIPCManyBatches(t *testing.T) {
	all := recipes()
	var buf bytes.Buffer
	w := NewIPCWriter(&buf)
	// The rows as three one-row batches.
	rec := must(ToArrow(all))
	for i := int64(0); i < 3; i++ {
		if err := w.WriteRecord(rec.NewSlice(i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	got, err := ReadIPC(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Equal(got, all) {
		t.Errorf("concatenated batches differ: %v", got.Spec())
	}
	r, err := NewIPCReader(bytes.NewReader(data), FromArrowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		s, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.NumRows() != 1 {
			t.Errorf("batch %d has %d rows", n, s.NumRows())
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d batches, want 3", n)
	}
}

func TestIPCCorrupt(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteIPC(&buf, recipes()); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, cut := range []int{0, 7, len(data) / 2, len(data) - 9} {
		if _, err := ReadIPC(bytes.NewReader(data[:cut])); err == nil {
			t.Errorf("stream cut at %d of %d bytes: no error", cut, len(data))
		}
	}
}

func TestCDataRoundTrip(t *testing.T) {
	want := recipes()
	var carr cdata.CArrowArray
	var cschema cdata.CArrowSchema
	if err := ExportCData(want, &carr, &cschema); err != nil {
		t.Fatal(err)
	}
	got, release, err := ImportCData(&carr, &cschema, FromArrowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !st.Equal(got, want) {
		t.Errorf("C data round trip differs: %v", got.Spec())
	}
	// The consumer sees the producer's buffers.
	a, _ := want.Field("id")
	b, _ := got.Field("id")
	if &a.(*st.Tensor).Int64s()[0] != &b.(*st.Tensor).Int64s()[0] {
		t.Error("int64 column copied through the C data interface")
	}
	ta, _ := want.Field("tags")
	tb, _ := got.Field("tags")
	sa, sb := ta.(*st.Ragged).Partitions()[0].RowSplits(), tb.(*st.Ragged).Partitions()[0].RowSplits()
	if unsafe.SliceData(sa) != unsafe.SliceData(sb) {
		t.Error("row_splits copied through the C data interface")
	}
}

// recipesPylist is recipes() as pyarrow's to_pylist() gives it, bytes as
// lists of ints; written by hand from the fixture.
const recipesPylist = `[
 {"id": 101, "title": "bread", "blob": [255, 0], "vegan": true, "big": 9223372036854775808, "score": 0.5, "rgb": [1, 2],
  "tags": ["easy", "baked"],
  "ingredients": [{"name": "flour", "grams": 500.0, "aliases": ["wheat"]}, {"name": "egg", "grams": 60.0, "aliases": ["ovum"]}],
  "info": {"minutes": 30, "stars": 5}},
 {"id": 102, "title": "tea", "blob": [], "vegan": true, "big": 0, "score": 1.0, "rgb": [3, 4],
  "tags": ["hot"], "ingredients": [], "info": {"minutes": 5, "stars": 3}},
 {"id": 103, "title": "pasta", "blob": [1], "vegan": false, "big": 7, "score": 2.0, "rgb": [5, 6],
  "tags": [],
  "ingredients": [{"name": "salt", "grams": 5.0, "aliases": []}, {"name": "oil", "grams": 20.0, "aliases": []}, {"name": "water", "grams": 300.0, "aliases": ["nacl"]}],
  "info": {"minutes": 90, "stars": 4}}
]`

// jsonEqual compares two JSON documents as values, numbers exactly.
func jsonEqual(t *testing.T, got, want []byte) bool {
	t.Helper()
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("bad JSON %q: %v", b, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(got), decode(want))
}

const pyReadIPC = `
import json, sys
import pyarrow as pa
with open(sys.argv[1], "rb") as f:
    t = pa.ipc.open_stream(f).read_all()
t.validate(full=True)
print(json.dumps(t.to_pylist(), default=list))
`

func TestIPCReadsInPyarrow(t *testing.T) {
	testenv.Python(t, ".venv")
	path := filepath.Join(t.TempDir(), "recipes.arrows")
	var buf bytes.Buffer
	if err := WriteIPC(&buf, recipes()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv", pyReadIPC, path)
	if !jsonEqual(t, out, []byte(recipesPylist)) {
		t.Errorf("pyarrow reads\n%s\nwant\n%s", out, recipesPylist)
	}
}

// A string tensor sliced from a larger one has offsets that do not start at
// 0; export shares them as they are and every consumer must agree.
func TestExportUnrebasedStrings(t *testing.T) {
	all := must(st.NewTensor(nil, []string{"skip", "me", "keep", "", "this"}))
	part := must(all.SliceRows(2, 5))
	if _, off := part.StringData(); off[0] == 0 {
		t.Fatal("fixture: slice offsets start at 0")
	}
	s := must(st.NewStruct(3, st.Field{Name: "s", Value: part}))
	rec := must(ToArrow(s))
	if err := array.ValidateFull(rec.Column(0)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteIPC(&buf, s); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	back, err := ReadIPC(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Equal(back, s) {
		t.Errorf("IPC: %v", back)
	}
	path := filepath.Join(t.TempDir(), "s.arrows")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := testenv.RunPython(t, ".venv", pyReadIPC, path); !jsonEqual(t, out, []byte(`[{"s": "keep"}, {"s": ""}, {"s": "this"}]`)) {
		t.Errorf("pyarrow reads %s", out)
	}
}
