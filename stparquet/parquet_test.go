package stparquet

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/structtensor/structtensor-go/internal/testenv"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// recipes reads the bundled recipe data with its spec.
func recipes(t testing.TB) *st.StructTensor {
	t.Helper()
	data, err := os.ReadFile("../testdata/recipe/recipes.json")
	if err != nil {
		t.Fatal(err)
	}
	specJSON, err := os.ReadFile("../testdata/recipe/recipes.spec.json")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := st.UnmarshalSpec(specJSON)
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.FromJSONLines(data, spec)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*st.StructTensor)
}

func writeBytes(t testing.TB, s *st.StructTensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	want := recipes(t)
	got, err := Read(bytes.NewReader(writeBytes(t, want)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Equal(got, want) {
		t.Errorf("round trip differs\n got %v\nwant %v", got, want)
	}
}

func TestManyRowGroups(t *testing.T) {
	want := recipes(t)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := 0; i < want.NumRows(); i++ {
		if err := w.Write(must(want.Get(st.Slice{Start: new(i), Stop: new(i + 1)})).(*st.StructTensor)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRowGroups() != want.NumRows() {
		t.Errorf("%d row groups, want %d", pf.NumRowGroups(), want.NumRows())
	}
	got, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Equal(got, want) {
		t.Errorf("row groups joined differ\n got %v\nwant %v", got, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// rangeReader records the byte ranges read from a file.
type rangeReader struct {
	*bytes.Reader
	mu     sync.Mutex
	ranges [][2]int64
}

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.ranges = append(r.ranges, [2]int64{off, off + int64(len(p))})
	r.mu.Unlock()
	return r.Reader.ReadAt(p, off)
}

func TestProjection(t *testing.T) {
	data := writeBytes(t, recipes(t))
	rr := &rangeReader{Reader: bytes.NewReader(data)}
	got, err := Read(rr, ReadOptions{Columns: []string{"recipe.ingredients.name", "user_embedding"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Spec().String(); !strings.Contains(s, "ingredients") || strings.Contains(s, "unit") || strings.Contains(s, "title") {
		t.Errorf("projected spec %s", s)
	}
	names, err := got.FieldValue("recipe", "ingredients", "name")
	if err != nil {
		t.Fatal(err)
	}
	want := must(recipes(t).FieldValue("recipe", "ingredients", "name"))
	if !st.Equal(names, want) {
		t.Errorf("recipe.ingredients.name = %v, want %v", names, want)
	}
	// Only the projected columns' chunks are read: no read touches the
	// pages of another column.
	pf := must(file.NewParquetReader(bytes.NewReader(data)))
	md := pf.MetaData()
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		g := md.RowGroup(rg)
		for c := 0; c < g.NumColumns(); c++ {
			cc := must(g.ColumnChunk(c))
			path := cc.PathInSchema().String()
			if strings.HasPrefix(path, "user_embedding") || strings.HasPrefix(path, "recipe.ingredients") && strings.HasSuffix(path, "name") {
				continue
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			end := start + cc.TotalCompressedSize()
			for _, r := range rr.ranges {
				if r[0] < end && start < r[1] {
					t.Errorf("column %s [%d, %d) was read (range %v)", path, start, end, r)
				}
			}
		}
	}
	if _, err := Read(bytes.NewReader(data), ReadOptions{Columns: []string{"recipe.nope"}}); !errors.Is(err, ErrNoColumn) {
		t.Errorf("unknown column: err = %v", err)
	} else if !strings.Contains(err.Error(), `"recipe.nope"`) {
		t.Errorf("error does not name the path: %v", err)
	}
}

func TestCorrupt(t *testing.T) {
	data := writeBytes(t, recipes(t))
	cases := map[string][]byte{
		"empty":       {},
		"not parquet": []byte("hello, world, this is not a parquet file at all"),
		"truncated":   data[:len(data)-20],
	}
	// Scramble the pages of one column chunk, leaving the footer intact:
	// the error names the row group and the column.
	md := must(file.NewParquetReader(bytes.NewReader(data))).MetaData()
	cc := must(md.RowGroup(0).ColumnChunk(2))
	bad := append([]byte(nil), data...)
	for i := cc.DataPageOffset(); i < cc.DataPageOffset()+cc.TotalCompressedSize(); i++ {
		bad[i] ^= 0x5a
	}
	cases["scrambled pages"] = bad
	for name, b := range cases {
		_, err := Read(bytes.NewReader(b), ReadOptions{})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		t.Logf("%s: %v", name, err)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error is not ErrCorrupt: %v", name, err)
		}
		if name == "scrambled pages" && !strings.Contains(err.Error(), "row group 0") {
			t.Errorf("%s: error does not name the row group: %v", name, err)
		}
	}
}

// approxEqual compares decoded JSON trees; numbers agree to float32
// precision (pyarrow widens float32 to Python floats exactly, our JSON
// writes the shortest float32 form).
func approxEqual(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path + ": object differs"
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := approxEqual(x[k], y[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path + ": array length differs"
		}
		for i := range x {
			if d := approxEqual(x[i], y[i], path+"["+string(rune('0'+i%10))+"]"); d != "" {
				return d
			}
		}
		return ""
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > 1e-6*math.Max(1, math.Abs(x)) {
			return path + ": number differs"
		}
		return ""
	}
	if a != b {
		return path + ": value differs"
	}
	return ""
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("bad JSON %.200q: %v", b, err)
	}
	return v
}

const pyReadParquet = `
import json, sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
t.validate(full=True)
print(json.dumps(t.to_pylist()))
`

// A nested file we write reads in pyarrow to the same values.
func TestPyarrowReadsOurFile(t *testing.T) {
	testenv.Python(t, ".venv")
	s := recipes(t)
	path := filepath.Join(t.TempDir(), "recipes.parquet")
	if err := os.WriteFile(path, writeBytes(t, s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv", pyReadParquet, path)
	want, err := st.ToJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	if d := approxEqual(decodeJSON(t, out), decodeJSON(t, want), "rows"); d != "" {
		t.Errorf("pyarrow reads a different value (%s):\n%s\nwant\n%s", d, out, want)
	}
}

const pyWriteParquet = `
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
t = pa.Table.from_pylist(rows)  # inferred: list<double>, list<struct<..., list<double>>>, nullable
pq.write_table(t, sys.argv[2], row_group_size=1)
print(t.schema)
`

// A pyarrow-written file with lists of structs of lists reads in Go to the
// same values.
func TestReadPyarrowFile(t *testing.T) {
	testenv.Python(t, ".venv")
	path := filepath.Join(t.TempDir(), "pyarrow.parquet")
	schema := testenv.RunPython(t, ".venv", pyWriteParquet, "../testdata/recipe/recipes.json", path)
	if !strings.Contains(string(schema), "struct<user_embedding: list<") {
		t.Fatalf("pyarrow schema has no list of structs of lists:\n%s", schema)
	}
	got, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := st.ToJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	var rows []any
	for _, line := range strings.Split(string(must(os.ReadFile("../testdata/recipe/recipes.json"))), "\n") {
		if strings.TrimSpace(line) != "" {
			rows = append(rows, decodeJSON(t, []byte(line)))
		}
	}
	if d := approxEqual(decodeJSON(t, gotJSON), rows, "rows"); d != "" {
		t.Errorf("Go reads a different value (%s):\n%s", d, gotJSON)
	}
	// Projection works on files we did not write.
	p, err := ReadFile(path, ReadOptions{Columns: []string{"recipe.user_rating.score"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Spec().String(); strings.Contains(s, "title") || !strings.Contains(s, "score") {
		t.Errorf("projected spec %s", s)
	}
}
