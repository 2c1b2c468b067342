package beam

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// readBack reads every file written under prefix as rows (JSON lines).
func readBack(t *testing.T, prefix string, format string) (rows []string, files []string) {
	files, _ = filepath.Glob(prefix + "*")
	for _, f := range files {
		var st *structtensor.StructTensor
		var err error
		switch format {
		case "arrow":
			var fh *os.File
			if fh, err = os.Open(f); err == nil {
				st, err = starrow.ReadIPC(fh)
				fh.Close()
			}
		case "parquet":
			st, err = stparquet.ReadFile(f, stparquet.ReadOptions{})
		case "tfrecord":
			data, _ := os.ReadFile(f)
			r := tfrecord.NewReader(strings.NewReader(string(data)))
			for {
				rec, err := r.Next()
				if err != nil {
					break
				}
				rows = append(rows, fmt.Sprintf("%x", rec))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		js, err := structtensor.ToJSONLines(st)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, strings.Split(strings.TrimSuffix(string(js), "\n"), "\n")...)
	}
	slices.Sort(rows)
	return rows, files
}

// TestSinksAfterAFailedAttempt: a first run fails in the middle of writing
// a shard; nothing under a final name exists. The rerun writes every row
// exactly once and leaves no temporary file.
func TestSinksAfterAFailedAttempt(t *testing.T) {
	if !isolate(t) {
		return
	}
	dir := t.TempDir()
	dataset(t, dir, 6, 400)
	glob := filepath.Join(dir, "*.tfrecord")
	opts := DecodeOptions{DescriptorSet: descriptorSet(t), Message: recipe}
	var want []string
	for _, l := range singleProcess(t, glob, opts) {
		want = append(want, l.(string)[strings.Index(l.(string), " ")+1:])
	}
	slices.Sort(want)
	out := t.TempDir()
	for _, c := range []struct {
		mode   runMode
		format SinkFormat
	}{{loopback, ArrowIPC}, {loopback, Parquet}, {process, ArrowIPC}, {process2, Parquet}} {
		mode, format := c.mode, c.format
		t.Run(fmt.Sprintf("%s/%s", mode, format), func(t *testing.T) {
			prefix := filepath.Join(out, string(mode), string(format), "part")
			os.MkdirAll(filepath.Dir(prefix), 0o755)
			run := func(ro runOptions) error {
				p, s := beamsdk.NewPipelineWithRoot()
				rows, err := Decode(s, must(Read(s, glob, ReadOptions{SplitSize: 3001, BatchBytes: 2000})), opts)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := WriteRows(s, rows, prefix, format, WriteOptions{Shards: 5}); err != nil {
					t.Fatal(err)
				}
				return mode.run(t, p, ro)
			}
			err := run(runOptions{failWrites: true})
			if err == nil || !strings.Contains(err.Error(), errInjected.Error()) {
				t.Fatalf("first run: %v", err)
			}
			if files, _ := filepath.Glob(prefix + "-*"); len(files) != 0 {
				t.Fatalf("a failed run left final files %v", files)
			}
			if files, _ := filepath.Glob(prefix + tempMarker + "*"); len(files) == 0 {
				t.Fatal("the failed attempt left no temporary file: the test does not test finalisation")
			}
			if err := run(runOptions{}); err != nil {
				t.Fatal(err)
			}
			got, files := readBack(t, prefix, string(format))
			if !slices.Equal(got, want) {
				t.Fatalf("read back %d rows, want %d (equal sets: %v)", len(got), len(want), false)
			}
			for _, f := range files {
				if strings.Contains(f, tempMarker) || !strings.Contains(f, "-of-") {
					t.Fatalf("left %s", f)
				}
			}
		})
	}
	t.Run("tfrecord", func(t *testing.T) {
		prefix := filepath.Join(out, "tfrecord", "part")
		os.MkdirAll(filepath.Dir(prefix), 0o755)
		p, s := beamsdk.NewPipelineWithRoot()
		WriteRecords(s, must(Read(s, glob, ReadOptions{SplitSize: 3001})), prefix, WriteOptions{Shards: 3})
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		got, _ := readBack(t, prefix, "tfrecord")
		var wantRecs []string
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			data, _ := os.ReadFile(f)
			r := tfrecord.NewReader(strings.NewReader(string(data)), tfrecord.Options{Compression: tfrecord.CompressionAuto})
			for {
				rec, err := r.Next()
				if err != nil {
					break
				}
				wantRecs = append(wantRecs, fmt.Sprintf("%x", rec))
			}
		}
		slices.Sort(wantRecs)
		if !slices.Equal(got, wantRecs) {
			t.Fatalf("read back %d records, want %d", len(got), len(wantRecs))
		}
	})
}
