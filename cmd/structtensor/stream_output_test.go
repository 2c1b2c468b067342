package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// manyRecipes returns a TFRecord stream of n recipe records (the bundled
// three, repeated).
func manyRecipes(t *testing.T, n int) []byte {
	t.Helper()
	f, err := os.Open("../../testdata/decode/recipes.tfrecord")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := tfrecord.NewReader(f).NextBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	for i := 0; i < n; i++ {
		if err := w.Write(b.Record(i % b.Len())); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return buf.Bytes()
}

// probeWriter records, at each batch it passes on, how many input bytes
// the command had consumed.
type probeWriter struct {
	batchWriter
	input *countingReader
	seen  *[]int64
}

func (p probeWriter) write(st *structtensor.StructTensor) error {
	*p.seen = append(*p.seen, p.input.n)
	return p.batchWriter.write(st)
}

// decode streams: for every output format, each decoded batch reaches the
// output writer as it is decoded, while most of the input is still unread
// (so memory holds a batch, not the input), and the output is that of
// decoding everything as one batch.
func TestDecodeStreamsBatches(t *testing.T) {
	const records, batch = 3000, 100
	input := manyRecipes(t, records)
	args := []string{"decode", "--descriptor-set", "../../testdata/proto/testdata.pb",
		"--message", "structtensor.testdata.recipe.Recipe", "--batch"}
	readBack := map[string]func([]byte) (structtensor.Value, error){
		"json":  func(b []byte) (structtensor.Value, error) { return structtensor.FromJSON(b) },
		"jsonl": func(b []byte) (structtensor.Value, error) { return structtensor.FromJSONLines(b) },
		"arrow": func(b []byte) (structtensor.Value, error) { return starrow.ReadIPC(bytes.NewReader(b)) },
		"parquet": func(b []byte) (structtensor.Value, error) {
			return stparquet.Read(bytes.NewReader(b), stparquet.ReadOptions{})
		},
	}
	for name, orig := range decodeWriters {
		t.Run(name, func(t *testing.T) {
			if readBack[name] == nil {
				t.Fatalf("no read-back for --to %s", name)
			}
			in := &countingReader{r: bytes.NewReader(input)}
			var seen []int64
			decodeWriters[name] = func(w io.Writer) batchWriter { return probeWriter{orig(w), in, &seen} }
			defer func() { decodeWriters[name] = orig }()
			var out, errb bytes.Buffer
			if code := run(append(args, fmt.Sprint(batch), "--to", name, "-"), in, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if len(seen) != records/batch {
				t.Fatalf("the writer got %d batches, want %d", len(seen), records/batch)
			}
			if seen[0] > int64(len(input))/2 {
				t.Errorf("the first batch was written after %d of %d input bytes", seen[0], len(input))
			}
			decodeWriters[name] = orig
			var whole bytes.Buffer
			if code := run(append(args, fmt.Sprint(records), "--to", name, "-"), bytes.NewReader(input), &whole, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			got, err := readBack[name](out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			want, err := readBack[name](whole.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if got.NumRows() != records || !structtensor.Equal(got, want) {
				t.Errorf("streamed output (%d rows) differs from the one-batch output (%d rows)", got.NumRows(), want.NumRows())
			}
			if name == "json" || name == "jsonl" {
				if !bytes.Equal(out.Bytes(), whole.Bytes()) {
					t.Errorf("streamed %s text differs from the one-batch text", name)
				}
			}
		})
	}
}

// With no records, every format writes the value of no records.
func TestDecodeNoRecords(t *testing.T) {
	for name := range decodeWriters {
		var out, errb bytes.Buffer
		args := []string{"decode", "--descriptor-set", "../../testdata/proto/testdata.pb",
			"--message", "structtensor.testdata.recipe.Recipe", "--to", name, "-"}
		if code := run(args, bytes.NewReader(nil), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errb.String())
		}
		if name == "json" && out.String() != "[]\n" || name == "jsonl" && out.Len() != 0 || out.Len() == 0 && name != "jsonl" {
			t.Errorf("%s: no records give %q", name, out.String())
		}
	}
}
