package stats

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"pgregory.net/rapid"

	"github.com/structtensor/structtensor-go/internal/testenv"
)

// summaries are the cases written for tensorflow_metadata: generated
// records (every kind, NaN and infinities, strings that are not UTF-8,
// nested lists of structs), one record, and none.
func summaries(t *testing.T) map[string]*Summary {
	out := map[string]*Summary{}
	for i, n := range []int{200, 1, 0} {
		recs := rapid.SliceOfN(rapid.Custom(genRecord), n, n).Example(i)
		a, err := New(Options{QuantileK: 16})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(build(recs)); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("case%d", i)] = a.Summary()
	}
	return out
}

// The binary and text forms are the same message, and read back with the
// descriptor they were made on.
func TestStatisticsProtoForms(t *testing.T) {
	for name, s := range summaries(t) {
		b, err := s.MarshalStatistics(ProtoOptions{DatasetName: name})
		if err != nil {
			t.Fatal(err)
		}
		txt, err := s.MarshalStatisticsText(ProtoOptions{DatasetName: name})
		if err != nil {
			t.Fatal(err)
		}
		fd, _ := statisticsFile()
		md := fd.Messages().ByName("DatasetFeatureStatisticsList")
		fromBinary, fromText := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(b, fromBinary); err != nil {
			t.Fatal(err)
		}
		if err := prototext.Unmarshal(txt, fromText); err != nil {
			t.Fatal(err)
		}
		again, _ := proto.MarshalOptions{Deterministic: true}.Marshal(fromText)
		if !bytes.Equal(again, b) {
			t.Fatalf("%s: the text form reads back as another message", name)
		}
		if !regexp.MustCompile(`name:\s*"` + name + `"`).Match(txt) {
			t.Fatalf("%s: no dataset name in\n%s", name, txt)
		}
	}
}

// tensorflow_metadata's own statistics_pb2 (in .venv-tfx) parses the
// binary and text forms into equal messages whose every quantity equals
// the JSON summary's (testdata/check_statistics.py).
func TestTensorflowMetadataReadsStatistics(t *testing.T) {
	testenv.Python(t, ".venv-tfx")
	script, err := os.ReadFile(filepath.Join("testdata", "check_statistics.py"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	sawNaN := false
	for name, s := range summaries(t) {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var js bytes.Buffer
		if err := s.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		b, err := s.MarshalStatistics()
		if err != nil {
			t.Fatal(err)
		}
		txt, err := s.MarshalStatisticsText()
		if err != nil {
			t.Fatal(err)
		}
		for file, data := range map[string][]byte{"summary.json": js.Bytes(), "stats.pb": b, "stats.pbtxt": txt} {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range s.Features {
			if f.Numbers != nil && math.IsNaN(float64(f.Numbers.Mean)) {
				sawNaN = true
			}
		}
		dirs = append(dirs, dir)
	}
	out := testenv.RunPython(t, ".venv-tfx", string(script), dirs...)
	if got := strings.Count(string(out), " ok "); got != len(dirs) {
		t.Fatalf("check_statistics.py checked %d of %d cases:\n%s", got, len(dirs), out)
	}
	t.Logf("%s(a NaN mean among them: %v)", out, sawNaN)
}
