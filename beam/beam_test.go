package beam

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

func init() {
	register.Function1x1[BadRecord, string](badLine)
	register.Function2x1[Rows, func(string), error](rowLines)
	register.Function2x0[RecordBatch, func(string)](batchLines)
	register.Emitter1[string]()
}

const recipe = "structtensor.testdata.recipe.Recipe"

func descriptorSet(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("..", copstest.DescriptorSetPath))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dataset writes record files into dir: many small ones (every third
// gzip-compressed, every fifth zlib) and one large uncompressed one.
func dataset(t testing.TB, dir string, small, large int) {
	d, err := decode.LoadDescriptorSet(descriptorSet(t))
	if err != nil {
		t.Fatal(err)
	}
	md, err := d.Message(recipe)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, n int, seed uint64, c tfrecord.Compression) {
		recs, err := copstest.Records(md, n, seed, copstest.Options{MaxRepeated: 4})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := tfrecord.NewWriter(&buf, tfrecord.Options{Compression: c})
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range small {
		c := tfrecord.CompressionNone
		switch {
		case i%3 == 0:
			c = tfrecord.CompressionGzip
		case i%5 == 0:
			c = tfrecord.CompressionZlib
		}
		write(fmt.Sprintf("small-%03d.tfrecord", i), 1+i*7%40, uint64(i), c)
	}
	if large > 0 {
		write("large.tfrecord", large, 1000, tfrecord.CompressionNone)
	}
}

// rowLine is how a test names a row: file, the byte offset of its record
// and the row as JSON, so that comparing sets of lines compares row for
// row.
func rowLine(file string, pos int64, json string) string {
	return fmt.Sprintf("%s@%09d %s", filepath.Base(file), pos, json)
}

func rowLines(r Rows, emit func(string)) error {
	js, err := structtensor.ToJSONLines(r.Tensor)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(js), "\n"), "\n")
	if len(lines) != len(r.Positions) {
		return fmt.Errorf("%d JSON lines for %d rows", len(lines), len(r.Positions))
	}
	for i, l := range lines {
		emit(rowLine(r.File, r.Positions[i], l))
	}
	return nil
}

func batchLines(b RecordBatch, emit func(string)) {
	for i, p := range b.Positions {
		emit(fmt.Sprintf("%s@%09d %x", filepath.Base(b.File), p, b.Data[b.Offsets[i]:b.Offsets[i+1]]))
	}
}

// decodeFiles decodes every file matching glob in one process, the
// reference the pipelines are compared with, and calls each with each
// file's rows and the byte offset of each row's record.
func decodeFiles(t testing.TB, glob string, opts DecodeOptions, each func(path string, positions []int64, st *structtensor.StructTensor)) {
	plan, err := compilePlan(opts.DescriptorSet, opts.Message, opts.Paths)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	files, _ := filepath.Glob(glob)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := tfrecord.NewReader(bytes.NewReader(data), tfrecord.Options{Compression: tfrecord.CompressionAuto})
		var recs [][]byte
		var pos []int64
		for {
			p := r.Offset()
			rec, err := r.Next()
			if err != nil {
				break
			}
			recs, pos = append(recs, rec), append(pos, p)
		}
		st, err := plan.Decode(recs)
		if err != nil {
			t.Fatal(err)
		}
		each(f, pos, st)
	}
}

// singleProcess returns the rows of decodeFiles as rowLine lines.
func singleProcess(t testing.TB, glob string, opts DecodeOptions) []any {
	var out []any
	decodeFiles(t, glob, opts, func(f string, pos []int64, st *structtensor.StructTensor) {
		js, err := structtensor.ToJSONLines(st)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(strings.TrimSuffix(string(js), "\n"), "\n") {
			out = append(out, rowLine(f, pos[i], l))
		}
	})
	return out
}

// recipeFiles writes the tests' recipe record files (24 files, 3000
// records) into a temporary directory and returns their glob and the
// options that decode them.
func recipeFiles(t *testing.T) (string, DecodeOptions) {
	dir := t.TempDir()
	dataset(t, dir, 24, 3000)
	return filepath.Join(dir, "*.tfrecord"), DecodeOptions{DescriptorSet: descriptorSet(t), Message: recipe}
}

// TestDecodeEqualsSingleProcess: the pipeline's rows equal the single
// process decode of the same files, row for row, whatever the splits.
func TestDecodeEqualsSingleProcess(t *testing.T) {
	glob, opts := recipeFiles(t)
	want := singleProcess(t, glob, opts)
	if len(want) < 3000 {
		t.Fatalf("only %d reference rows", len(want))
	}
	// Split sizes that put split points at arbitrary offsets: inside
	// headers, payloads and checksums.
	for _, mode := range modes {
		for _, split := range []int64{1009, 65521} {
			if mode != loopback && split != 1009 {
				continue // a worker process costs a second or two
			}
			t.Run(fmt.Sprintf("%s/%d", mode, split), func(t *testing.T) {
				p, s := beamsdk.NewPipelineWithRoot()
				batches, err := Read(s, glob, ReadOptions{SplitSize: split, BatchBytes: 3000})
				if err != nil {
					t.Fatal(err)
				}
				rows, err := Decode(s, batches, opts)
				if err != nil {
					t.Fatal(err)
				}
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

// TestReadPartsEqualsSingleProcess: the rows of the parts of ReadParts,
// each decoded in its own branch and flattened, equal the single process
// decode of the same files row for row, with the large file cut between
// parts at arbitrary offsets and the compressed files whole in one part.
func TestReadPartsEqualsSingleProcess(t *testing.T) {
	glob, opts := recipeFiles(t)
	want := singleProcess(t, glob, opts)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			p, s := beamsdk.NewPipelineWithRoot()
			parts, err := ReadParts(s, glob, 3, ReadOptions{SplitSize: 65521, BatchBytes: 3000})
			if err != nil {
				t.Fatal(err)
			}
			var lines []beamsdk.PCollection
			for _, batches := range parts {
				rows, err := Decode(s, batches, opts)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, beamsdk.ParDo(s, rowLines, rows))
			}
			passert.Equals(s, beamsdk.Flatten(s, lines...), want...)
			if err := mode.run(t, p, runOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	_, s := beamsdk.NewPipelineWithRoot()
	if _, err := ReadParts(s, glob, 0, ReadOptions{}); err == nil {
		t.Error("ReadParts took 0 parts")
	}
}

// TestPartRanges: whatever the files' sizes and the number of parts,
// every byte of every file is in exactly one part, every file has its
// first byte in exactly one part (the one that reads a file which cannot
// be cut), ranges are never empty unless the file is, and the parts'
// sizes differ by at most one byte.
func TestPartRanges(t *testing.T) {
	for _, sizes := range [][]int64{
		{0}, {0, 0, 0}, {1}, {5, 0, 7}, {1 << 40, 3, 0}, {100, 100, 100, 100}, {0, 9, 0, 0, 1, 0},
		{4096, 17, 65536, 1, 1, 300000},
	} {
		for parts := 1; parts <= 7; parts++ {
			covered := make([][]int, len(sizes)) // part per byte, for small files
			firsts := make([]int, len(sizes))
			partBytes := make([]int64, parts)
			for part := range parts {
				err := partRanges(sizes, part, parts, func(i int, start, end int64, first bool) error {
					if start < 0 || end > sizes[i] || start > end || start == end && sizes[i] > 0 {
						t.Errorf("sizes %v, part %d of %d: file %d range [%d, %d)", sizes, part, parts, i, start, end)
					}
					if first != (start == 0 && (end > 0 || sizes[i] == 0)) {
						t.Errorf("sizes %v, part %d of %d: file %d range [%d, %d) first %v", sizes, part, parts, i, start, end, first)
					}
					if first {
						firsts[i]++
					}
					partBytes[part] += end - start
					if sizes[i] < 1<<20 {
						if covered[i] == nil {
							covered[i] = make([]int, sizes[i])
						}
						for b := start; b < end; b++ {
							covered[i][b]++
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			for i := range sizes {
				if firsts[i] != 1 {
					t.Errorf("sizes %v, %d parts: file %d has its first byte in %d parts", sizes, parts, i, firsts[i])
				}
				for b, n := range covered[i] {
					if n != 1 {
						t.Errorf("sizes %v, %d parts: byte %d of file %d is in %d parts", sizes, parts, b, i, n)
					}
				}
			}
			if lo, hi := slices.Min(partBytes), slices.Max(partBytes); hi-lo > 1 {
				t.Errorf("sizes %v, %d parts: parts of %v bytes", sizes, parts, partBytes)
			}
		}
	}
}

// TestSplitReadRefusesFramesInPayloads: records whose payloads are
// TFRecord files hold valid frames a split reader would synchronise on;
// the chain check fails the pipeline, and a whole-file read is right.
func TestSplitReadRefusesFramesInPayloads(t *testing.T) {
	if !isolate(t) {
		return
	}
	dir := t.TempDir()
	var inner bytes.Buffer
	w := tfrecord.NewWriter(&inner)
	for i := range 50 {
		w.Write([]byte(strings.Repeat(fmt.Sprint(i), 20)))
	}
	w.Close()
	var file bytes.Buffer
	w = tfrecord.NewWriter(&file)
	var want []any
	var pos int
	for i := range 4 {
		rec := append([]byte{byte(i)}, inner.Bytes()...)
		want = append(want, fmt.Sprintf("nested.tfrecord@%09d %x", pos, rec))
		pos += 16 + len(rec)
		w.Write(rec)
	}
	w.Close()
	path := filepath.Join(dir, "nested.tfrecord")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	p, s := beamsdk.NewPipelineWithRoot()
	beamsdk.ParDo(s, batchLines, must(Read(s, path, ReadOptions{SplitSize: 500})))
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "ReadOptions.Whole") {
		t.Fatalf("split read of frames in payloads: %v", err)
	}

	p, s = beamsdk.NewPipelineWithRoot()
	got := beamsdk.ParDo(s, batchLines, must(Read(s, path, ReadOptions{SplitSize: 500, Whole: true})))
	passert.Equals(s, got, want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

func must(c beamsdk.PCollection, err error) beamsdk.PCollection {
	if err != nil {
		panic(err)
	}
	return c
}

// corruptFile writes 200 records, two of them (117 and 118) with intact
// framing but a broken protobuf, and returns the path, the JSON of the
// good rows and the bad records' byte offsets.
func corruptFile(t *testing.T) (string, int, []int) {
	dir := t.TempDir()
	var file bytes.Buffer
	w := tfrecord.NewWriter(&file)
	pos, good := 0, 0
	var bad []int
	for i := range 200 {
		rec := []byte{0x0a, 0x02, 'o', 'k'}
		if i == 117 || i == 118 {
			// steps { instruction: a string 16 bytes long, cut after 3 }
			rec = []byte{0x22, 0x05, 0x0a, 0x10, 'a', 'b', 'c'}
			bad = append(bad, pos)
		} else {
			good++
		}
		w.Write(rec)
		pos += 16 + len(rec)
	}
	w.Close()
	path := filepath.Join(dir, "corrupt.tfrecord")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, good, bad
}

func badLine(b BadRecord) string {
	return fmt.Sprintf("%s@%d %x %v", filepath.Base(b.File), b.Position, b.Record,
		strings.Contains(b.Error, fmt.Sprintf("record at byte offset %d:", b.Position)) && strings.Contains(b.Error, "steps"))
}

// TestCorruptRecordsToDeadLetters: with dead letters, the bad records go
// there with their context and every other record is decoded.
func TestCorruptRecordsToDeadLetters(t *testing.T) {
	path, good, bad := corruptFile(t)
	var want []any
	for _, b := range bad {
		want = append(want, fmt.Sprintf("corrupt.tfrecord@%d 22050a10616263 true", b))
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			p, s := beamsdk.NewPipelineWithRoot()
			rows, dead, err := DecodeWithDeadLetters(s, must(Read(s, path, ReadOptions{SplitSize: 777})), DecodeOptions{DescriptorSet: descriptorSet(t), Message: recipe})
			if err != nil {
				t.Fatal(err)
			}
			passert.Equals(s, beamsdk.ParDo(s, badLine, dead), want...)
			passert.Count(s, beamsdk.ParDo(s, rowLines, rows), "rows", good)
			if err := mode.run(t, p, runOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCorruptRecordFailsNamingWhere: a record in the middle of a file
// whose framing is intact but whose protobuf is not fails the pipeline
// with the file, the record's byte offset and the field path.
func TestCorruptRecordFailsNamingWhere(t *testing.T) {
	if !isolate(t) {
		return
	}
	path, _, bad := corruptFile(t)
	badAt := bad[0]
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			p, s := beamsdk.NewPipelineWithRoot()
			if _, err := Decode(s, must(Read(s, path, ReadOptions{SplitSize: 777})), DecodeOptions{DescriptorSet: descriptorSet(t), Message: recipe}); err != nil {
				t.Fatal(err)
			}
			err := mode.run(t, p, runOptions{})
			if err == nil {
				t.Fatal("a corrupt record did not fail the pipeline")
			}
			for _, want := range []string{path, fmt.Sprintf("record at byte offset %d:", badAt), "steps"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}
