package savedmodel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/savedmodel/internal/dvcases"
)

// TestTFX has tfx-bsl 1.21.0 (in .venv-tfx, with the full TensorFlow
// 2.21 wheel) load DataViews Go exported, for the recipe, tf.Example-shaped,
// ELWC-shaped, proto3 (enums, bools, bytes, maps, oneofs) and recursive
// schemas (testdata/tfx_check.py, one Python process): load_decoder's
// outputs equal Go's decoder leaf by leaf; TFRecordToTensorTFXIO(
// saved_decoder_path=...)'s TensorRepresentations equal the DataView's
// TensorRepresentationGroup assets, its TensorFlowDataset equals Go's
// decoder, and its BeamSource's RecordBatches on the DirectRunner equal
// (column names, types, values) what Go's DataView.ToArrow gave for the
// same records. For the DataViews of tf.Example and SequenceExample
// records (uniform partitions in every position, FixedLenSequence steps
// of several values), load_decoder's and TensorFlowDataset's outputs also
// equal tf.io.parse_example's (parse_sequence_example's) by the same
// feature spec.
func TestTFX(t *testing.T) {
	lib := testenv.OpsLibrary(t)
	testenv.Python(t, ".venv-tfx")
	dir := t.TempDir()
	var names []string
	var cases []dvcases.Case
	for _, c := range dvcases.Cases {
		if c.Name != "recipe_projected" {
			names = append(names, c.Name)
			cases = append(cases, c)
		}
	}
	if err := dvcases.Write(dir, filepath.Join(testenv.ModuleRoot(t), copstest.DescriptorSetPath), cases); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "tfx_check.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := testenv.RunPython(t, ".venv-tfx", string(script), append([]string{lib, dir}, names...)...)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(names) {
		t.Fatalf("tfx_check.py printed %d lines for %d cases:\n%s", len(lines), len(names), out)
	}
	for i, l := range lines {
		var r struct {
			Case   string `json:"case"`
			Leaves int    `json:"leaves"`
			TFXIO  bool   `json:"tfxio"`
			TFIO   int    `json:"tf_io"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Case != names[i] || r.Leaves == 0 || !r.TFXIO {
			t.Errorf("line %d: %q (err %v), want case %s with leaves, through TFXIO", i, l, err, names[i])
		}
		// A tf.Example DataView's outputs, load_decoder's and
		// TensorFlowDataset's, are each compared with tf.io's.
		if example := cases[i].Example != nil; example && r.TFIO != 2*r.Leaves || !example && r.TFIO != 0 {
			t.Errorf("line %d: %d outputs compared with tf.io, want %d", i, r.TFIO, map[bool]int{true: 2 * r.Leaves}[example])
		}
	}
}
