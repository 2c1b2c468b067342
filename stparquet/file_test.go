package stparquet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// raggedRows returns n generated rows of a nested, ragged schema: lists
// of strings, lists of structs holding lists, lists of lists, a struct
// holding a list; lengths vary from row to row, and some are empty.
func raggedRows(t testing.TB, n int) *st.StructTensor {
	t.Helper()
	var b strings.Builder
	for i := range n {
		tags := make([]string, i%4)
		for k := range tags {
			tags[k] = fmt.Sprintf("%q", fmt.Sprintf("t%d-%d", i, k))
		}
		items := make([]string, (i*7)%5)
		for k := range items {
			scores := make([]string, (i+k)%3)
			for j := range scores {
				scores[j] = fmt.Sprintf("%d.25", i+j)
			}
			items[k] = fmt.Sprintf(`{"name": "item%d", "scores": [%s]}`, k, strings.Join(scores, ", "))
		}
		grid := make([]string, i%3)
		for k := range grid {
			grid[k] = "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%d,", i), (i+k)%4), ",") + "]"
		}
		fmt.Fprintf(&b, `{"id": %d, "tags": [%s], "items": [%s], "grid": [%s], "w": {"x": %d.5, "ys": [%d, %d]}}`+"\n",
			i, strings.Join(tags, ", "), strings.Join(items, ", "), strings.Join(grid, ", "), i, i, -i)
	}
	v, err := st.FromJSONLines([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*st.StructTensor)
}

// writeGroups writes s as a Parquet file of row groups of the given sizes
// (which must sum to s's rows).
func writeGroups(t testing.TB, s *st.StructTensor, sizes ...int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	start := 0
	for _, n := range sizes {
		part, err := s.Get(st.Slice{Start: new(start), Stop: new(start + n)})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(part.(*st.StructTensor)); err != nil {
			t.Fatal(err)
		}
		start += n
	}
	if start != s.NumRows() {
		t.Fatalf("row group sizes sum to %d, want %d", start, s.NumRows())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readGroups reads every row group of data through File, returning them
// in order.
func readGroups(t testing.TB, data []byte, opts ReadOptions) []*st.StructTensor {
	t.Helper()
	f, err := Open(bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []*st.StructTensor
	for s, err := range f.RowGroups(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if len(out) != f.NumRowGroups() {
		t.Fatalf("%d row groups yielded, the file has %d", len(out), f.NumRowGroups())
	}
	return out
}

// joinedLines returns the JSON lines of the values, one after the other:
// the rows of their concatenation.
func joinedLines(t testing.TB, vs ...*st.StructTensor) string {
	t.Helper()
	var b bytes.Buffer
	for _, v := range vs {
		if err := st.WriteJSONLines(&b, v); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// checkJoin checks that the row groups, joined, are the whole-file read:
// the same rows, and each row group of the whole read's spec.
func checkJoin(t *testing.T, groups []*st.StructTensor, whole *st.StructTensor) {
	t.Helper()
	want := st.AnyRows(whole.Spec())
	for i, g := range groups {
		if got := st.AnyRows(g.Spec()); !got.Equal(want) {
			t.Errorf("row group %d: spec %v, the whole read's %v", i, got, want)
		}
	}
	if got, want := joinedLines(t, groups...), joinedLines(t, whole); got != want {
		t.Errorf("row groups joined differ from the whole read\n got %.600s\nwant %.600s", got, want)
	}
}

// Row groups read one at a time join to what Read returns, on nested and
// ragged schemas, with and without projection, including empty and
// one-row groups.
func TestRowGroupsJoinWholeRead(t *testing.T) {
	ragged := raggedRows(t, 120)
	for _, tc := range []struct {
		name  string
		data  []byte
		sizes []int
	}{
		{"recipes one row a group", writeGroups(t, recipes(t), 1, 1, 1), []int{1, 1, 1}},
		{"recipes one group", writeGroups(t, recipes(t), 3), []int{3}},
		{"ragged", writeGroups(t, ragged, 1, 7, 50, 0, 2, 60), []int{1, 7, 50, 0, 2, 60}},
	} {
		for _, cols := range [][]string{nil, {"recipe.ingredients.name", "user_embedding"}, {"items.scores", "w.ys"}} {
			opts := ReadOptions{Columns: cols}
			whole, err := Read(bytes.NewReader(tc.data), opts)
			if errors.Is(err, ErrNoColumn) {
				continue // a projection of the other schema
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("%s %v", tc.name, cols), func(t *testing.T) {
				groups := readGroups(t, tc.data, opts)
				for i, g := range groups {
					if g.NumRows() != tc.sizes[i] {
						t.Errorf("row group %d: %d rows, want %d", i, g.NumRows(), tc.sizes[i])
					}
				}
				checkJoin(t, groups, whole)
			})
		}
	}
	// Each row group is also the matching slice of the written value.
	groups := readGroups(t, writeGroups(t, ragged, 40, 80), ReadOptions{})
	for i, start := range []int{0, 40} {
		part := must(ragged.Get(st.Slice{Start: new(start), Stop: new(start + groups[i].NumRows())}))
		if !st.Equal(groups[i], part) {
			t.Errorf("row group %d differs from rows %d.. of the value written", i, start)
		}
	}
}

const pyWriteGroups = `
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
t = pa.Table.from_pylist(rows)
pq.write_table(t, sys.argv[2], row_group_size=int(sys.argv[3]))
f = pq.ParquetFile(sys.argv[2])
print(f.metadata.num_row_groups)
print(json.dumps(t.to_pylist()))
`

// Files pyarrow writes with several row groups (its own list and struct
// layout, nullable fields, int32 offsets) read row group by row group to
// Read's value, and to the rows pyarrow wrote.
func TestRowGroupsPyarrowFile(t *testing.T) {
	testenv.Python(t, ".venv")
	dir := t.TempDir()
	ragged := filepath.Join(dir, "ragged.jsonl")
	if err := os.WriteFile(ragged, []byte(joinedLines(t, raggedRows(t, 50))), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		input    string
		rowGroup int
		groups   int
	}{
		{"../testdata/recipe/recipes.json", 1, 3},
		{"../testdata/recipe/recipes.json", 2, 2},
		{ragged, 8, 7},
	} {
		t.Run(fmt.Sprintf("%s by %d", filepath.Base(tc.input), tc.rowGroup), func(t *testing.T) {
			path := filepath.Join(dir, "py.parquet")
			out := strings.SplitN(string(testenv.RunPython(t, ".venv", pyWriteGroups, tc.input, path, fmt.Sprint(tc.rowGroup))), "\n", 2)
			if strings.TrimSpace(out[0]) != fmt.Sprint(tc.groups) {
				t.Fatalf("pyarrow wrote %s row groups, want %d", out[0], tc.groups)
			}
			whole, err := ReadFile(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := OpenFile(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var groups []*st.StructTensor
			for s, err := range f.RowGroups(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				if int64(s.NumRows()) != f.RowGroupRows(len(groups)) {
					t.Errorf("row group %d: %d rows, the footer says %d", len(groups), s.NumRows(), f.RowGroupRows(len(groups)))
				}
				groups = append(groups, s)
			}
			if len(groups) != tc.groups {
				t.Fatalf("%d row groups read, want %d", len(groups), tc.groups)
			}
			checkJoin(t, groups, whole)
			var rows []any
			for _, line := range strings.Split(strings.TrimSpace(joinedLines(t, groups...)), "\n") {
				rows = append(rows, decodeJSON(t, []byte(line)))
			}
			if d := approxEqual(rows, decodeJSON(t, []byte(out[1])), "rows"); d != "" {
				t.Errorf("row groups read differ from pyarrow's rows (%s)", d)
			}
		})
	}
}

// A corrupt column chunk in a later row group: the row groups before it
// are yielded, then an ErrCorrupt naming the file, the row group, its
// rows and the column, and the iteration ends.
func TestRowGroupsCorrupt(t *testing.T) {
	data := writeGroups(t, raggedRows(t, 30), 10, 10, 10)
	f, err := Open(bytes.NewReader(data), int64(len(data)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := must(f.pf.MetaData().RowGroup(1).ColumnChunk(1))
	column := cc.PathInSchema().String()
	bad := append([]byte(nil), data...)
	for i := cc.DataPageOffset(); i < cc.DataPageOffset()+cc.TotalCompressedSize(); i++ {
		bad[i] ^= 0x5a
	}
	f, err = Open(bytes.NewReader(bad), int64(len(bad)), ReadOptions{Name: "bad.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	var good int
	var errs []error
	for s, err := range f.RowGroups(context.Background()) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s.NumRows() != 10 {
			t.Errorf("row group of %d rows", s.NumRows())
		}
		good++
	}
	if good != 1 || len(errs) != 1 {
		t.Fatalf("%d row groups then errors %v; want 1 then one error", good, errs)
	}
	err = errs[0]
	t.Log(err)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("not ErrCorrupt: %v", err)
	}
	for _, want := range []string{"bad.parquet: ", "row group 1 (rows 10 to 20)", fmt.Sprintf("%q", column)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	// The footer's errors name the file too.
	_, err = Open(bytes.NewReader(bad[:len(bad)-3]), int64(len(bad)-3), ReadOptions{Name: "cut.parquet"})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cut.parquet: ") {
		t.Errorf("truncated file: err = %v, want ErrCorrupt naming cut.parquet", err)
	}
	// A size beyond the bytes there are: the footer is not where it says.
	if _, err := Open(bytes.NewReader(data), int64(len(data))+100, ReadOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("size beyond the data: err = %v, want ErrCorrupt", err)
	}
	if _, err := f.ReadRowGroup(context.Background(), 3); err == nil {
		t.Error("row group 3 of 3: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range f.RowGroups(ctx) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: err = %v", err)
		}
	}
}

// heapInUse returns the bytes of live heap after a collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// Reading row group by row group holds one row group at a time: the heap
// in use while iterating over a file of 16 row groups stays a fraction of
// what the whole read holds.
func TestRowGroupsMemory(t *testing.T) {
	const groups, rows = 16, 2000
	s := raggedRows(t, groups*rows)
	sizes := make([]int, groups)
	for i := range sizes {
		sizes[i] = rows
	}
	data := writeGroups(t, s, sizes...)
	s = nil
	base := heapInUse()
	whole, err := Read(bytes.NewReader(data), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wholeHeap := heapInUse() - base
	runtime.KeepAlive(whole)
	whole = nil
	base = heapInUse()
	f, err := Open(bytes.NewReader(data), int64(len(data)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	for g, err := range f.RowGroups(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if h := heapInUse(); h > base {
			peak = max(peak, h-base)
		}
		runtime.KeepAlive(g)
	}
	t.Logf("whole read holds %d bytes, row groups at most %d", wholeHeap, peak)
	if peak > wholeHeap/4 {
		t.Errorf("reading row groups held %d bytes at once; the whole read holds %d", peak, wholeHeap)
	}
}
