package beam

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
)

// writeParquet writes rows generated from seed to path as a Parquet file
// of the given row group sizes: nested and ragged (lists of strings,
// lists of structs holding lists, a struct).
func writeParquet(t testing.TB, path string, seed int, groups ...int) {
	t.Helper()
	var buf bytes.Buffer
	w := stparquet.NewWriter(&buf)
	row := seed * 1000
	for _, n := range groups {
		var lines strings.Builder
		for range n {
			tags := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%q,", fmt.Sprint("t", row)), row%4), ",")
			items := make([]string, row%3)
			for k := range items {
				items[k] = fmt.Sprintf(`{"name": "i%d", "scores": [%s]}`, k, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%d.5,", row), (row+k)%3), ","))
			}
			fmt.Fprintf(&lines, `{"id": %d, "tags": [%s], "items": [%s], "w": {"x": %d}}`+"\n", row, tags, strings.Join(items, ", "), -row)
			row++
		}
		s, err := structtensor.StructFromJSONLines([]byte(lines.String()), parquetSpec(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// parquetSpec is the spec of writeParquet's rows, so that every row group
// has one schema whatever its rows hold.
func parquetSpec(t testing.TB) structtensor.Spec {
	t.Helper()
	s, err := structtensor.UnmarshalSpec([]byte(`{"kind":"struct","shape":[null],"fields":[
		{"name":"id","spec":{"kind":"tensor","dtype":"int64","shape":[null]}},
		{"name":"tags","spec":{"kind":"ragged","dtype":"string","shape":[null,null],"ragged_rank":1}},
		{"name":"items","spec":{"kind":"struct","shape":[null,null],"fields":[
			{"name":"name","spec":{"kind":"ragged","dtype":"string","shape":[null,null],"ragged_rank":1}},
			{"name":"scores","spec":{"kind":"ragged","dtype":"float64","shape":[null,null,null],"ragged_rank":2}}]}},
		{"name":"w","spec":{"kind":"struct","shape":[null],"fields":[
			{"name":"x","spec":{"kind":"tensor","dtype":"int64","shape":[null]}}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parquetDataset writes many small files of one to three row groups and
// one file of many row groups into dir.
func parquetDataset(t testing.TB, dir string) {
	for i := range 12 {
		groups := []int{1 + i%5}
		for k := range i % 3 {
			groups = append(groups, 2+k*i%7)
		}
		writeParquet(t, filepath.Join(dir, fmt.Sprintf("small-%02d.parquet", i)), i, groups...)
	}
	large := make([]int, 40)
	for i := range large {
		large[i] = 5 + i*13%29
	}
	large[17] = 0 // an empty row group
	writeParquet(t, filepath.Join(dir, "large.parquet"), 99, large...)
}

// parquetSingleProcess reads every file matching glob row group by row
// group in one process (stparquet), the reference the pipelines are
// compared with: a line per row, naming its file and row number.
func parquetSingleProcess(t testing.TB, glob string, columns []string) []any {
	files, _ := filepath.Glob(glob)
	var out []any
	for _, path := range files {
		f, err := stparquet.OpenFile(path, stparquet.ReadOptions{Columns: columns})
		if err != nil {
			t.Fatal(err)
		}
		row := 0
		for s, err := range f.RowGroups(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			js, err := structtensor.ToJSONLines(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(strings.TrimSuffix(string(js), "\n"), "\n") {
				if l != "" {
					out = append(out, rowLine(path, int64(row), l))
					row++
				}
			}
		}
		f.Close()
	}
	return out
}

// TestReadParquetEqualsSingleProcess: the pipeline's rows equal the single
// process read of the same files, row for row, with one restriction per
// row group and with restrictions of several row groups, all columns and
// a projection; in process and in worker processes (Prism's PROCESS
// environment, one and two harness processes).
func TestReadParquetEqualsSingleProcess(t *testing.T) {
	dir := t.TempDir()
	parquetDataset(t, dir)
	glob := filepath.Join(dir, "*.parquet")
	for i, tc := range []struct {
		perSplit int
		columns  []string
	}{
		{1, nil},
		{7, nil},
		{3, []string{"items.scores", "id"}},
	} {
		want := parquetSingleProcess(t, glob, tc.columns)
		if len(want) < 500 {
			t.Fatalf("only %d reference rows", len(want))
		}
		for _, mode := range modes {
			if mode != loopback && i > 0 {
				continue // a worker process costs a second or two
			}
			t.Run(fmt.Sprintf("%s/%d %v", mode, tc.perSplit, tc.columns), func(t *testing.T) {
				p, s := beamsdk.NewPipelineWithRoot()
				rows := ReadParquet(s, glob, ParquetOptions{Columns: tc.columns, RowGroupsPerSplit: tc.perSplit})
				// The reshuffle makes Rows cross a stage boundary through its coder.
				got := beamsdk.ParDo(s, rowLines, beamsdk.Reshuffle(s, rows))
				passert.Equals(s, got, want...)
				if err := mode.run(t, p, runOptions{}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestReadParquetCorruptFails: corrupt pages in the middle of a file fail the pipeline naming the file, the row group and the column.
func TestReadParquetCorruptFails(t *testing.T) {
	if !isolate(t) {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.parquet")
	writeParquet(t, path, 1, 10, 10, 10, 10)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Scramble bytes in the middle of the row groups' pages (between the
	// leading magic and the footer, whose length the last 8 bytes give).
	footer := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	mid := (4 + len(data) - 8 - footer) / 2
	for i := mid; i < mid+48; i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, s := beamsdk.NewPipelineWithRoot()
	beamsdk.ParDo(s, rowLines, ReadParquet(s, path, ParquetOptions{}))
	err = ptest.Run(p)
	if err == nil {
		t.Fatal("a corrupt row group did not fail the pipeline")
	}
	for _, want := range []string{path, "corrupt file", "row group ", "column "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
