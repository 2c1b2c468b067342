package stparquet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// nested returns one row whose field "x" holds depth levels of structs
// ({"a": ...}) or of lists ([...]) around the number 1.
func nested(t testing.TB, depth int, lists bool) *st.StructTensor {
	t.Helper()
	inner := "1"
	for i := 0; i < depth; i++ {
		if lists {
			inner = "[" + inner + "]"
		} else {
			inner = `{"a": ` + inner + "}"
		}
	}
	v, err := st.FromJSONLines([]byte(`{"x": ` + inner + "}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*st.StructTensor)
}

const pyReadDepth = `
import sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(t.num_rows)
`

// Write refuses, before writing anything, a schema deeper than Parquet
// readers accept, and everything it accepts at the bounds reads back here
// and in pyarrow.
func TestNestingLimit(t *testing.T) {
	cases := []struct {
		depth int
		lists bool
		ok    bool
	}{
		{MaxNesting, false, true}, // x, then 64 levels of structs under it
		{MaxNesting + 1, false, false},
		{(MaxParquetSchemaDepth - 2) / 2, true, true}, // root, 2 nodes a list, the leaf
		{(MaxParquetSchemaDepth-2)/2 + 1, true, false},
		{1000, false, false},
	}
	dir := t.TempDir()
	var accepted []string
	for _, c := range cases {
		s := nested(t, c.depth, c.lists)
		var buf bytes.Buffer
		err := Write(&buf, s)
		if !c.ok {
			if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), `field "x"`) {
				t.Errorf("depth %d lists %v: err = %v, want ErrTooDeep naming x", c.depth, c.lists, err)
			}
			if buf.Len() != 0 {
				t.Errorf("depth %d lists %v: %d bytes written before the error", c.depth, c.lists, buf.Len())
			}
			continue
		}
		if err != nil {
			t.Fatalf("depth %d lists %v: %v", c.depth, c.lists, err)
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
		if err != nil || !st.Equal(back, s) {
			t.Fatalf("depth %d lists %v: read back %v, %v", c.depth, c.lists, back, err)
		}
		path := filepath.Join(dir, fmt.Sprintf("nested-%d-%v.parquet", c.depth, c.lists))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		accepted = append(accepted, path)
	}
	testenv.Python(t, ".venv")
	for _, path := range accepted {
		if out := strings.TrimSpace(string(testenv.RunPython(t, ".venv", pyReadDepth, path))); out != "1" {
			t.Errorf("%s: pyarrow reads %s rows", filepath.Base(path), out)
		}
	}
}
