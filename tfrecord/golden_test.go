package tfrecord

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/tf-*.tfrecord with TensorFlow's output")

// The golden files in testdata were written by TensorFlow's
// tf.io.TFRecordWriter (testdata/tf_records.py) from testRecords(); this
// test needs no Python and runs everywhere.
func TestGoldenFiles(t *testing.T) {
	for _, c := range compressions {
		data, err := os.ReadFile(goldenPath(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range []Compression{c, CompressionAuto} {
			got, err := readAll(NewReader(bytes.NewReader(data), Options{Compression: rc}))
			if err != nil || !equalRecords(got, testRecords()) {
				t.Errorf("%s read with %v: %d records, %v", goldenPath(c), rc, len(got), err)
			}
		}
	}
	// Uncompressed, the framing is fully determined: our bytes must be
	// TensorFlow's bytes.
	want, err := os.ReadFile(goldenPath(CompressionNone))
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, formats[0], testRecords()); !bytes.Equal(got, want) {
		t.Errorf("Writer output differs from TensorFlow's %s", goldenPath(CompressionNone))
	}
}

func goldenPath(c Compression) string { return filepath.Join("testdata", "tf-"+c.String()+".tfrecord") }

// python returns the project's TensorFlow interpreter, .venv/bin/python at
// the module root, or skips the test when it is absent.
func python(t *testing.T) string {
	t.Helper()
	return testenv.Python(t, ".venv")
}

func runPython(t *testing.T, py string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "tf_records.py")}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", py, args, err, stderr.String())
	}
	return out
}

// TestTensorFlow compares both ways with TensorFlow itself: TensorFlow's
// writer against our reader and the golden files, our writer against
// TensorFlow's reader, and corrupt files rejected by both.
func TestTensorFlow(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var hexRecords []string
	for _, r := range testRecords() {
		hexRecords = append(hexRecords, hex.EncodeToString(r))
	}
	stdin, _ := json.Marshal(hexRecords)
	runPython(t, py, stdin, "write", dir)

	for _, c := range compressions {
		tfFile := filepath.Join(dir, "tf-"+c.String()+".tfrecord")
		data, err := os.ReadFile(tfFile)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(NewReader(bytes.NewReader(data), Options{Compression: CompressionAuto}))
		if err != nil || !equalRecords(got, testRecords()) {
			t.Errorf("reading TensorFlow's %v file: %d records, %v", c, len(got), err)
		}
		if *update {
			if err := os.WriteFile(goldenPath(c), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tfPlain, _ := os.ReadFile(filepath.Join(dir, "tf-none.tfrecord"))
	golden, _ := os.ReadFile(goldenPath(CompressionNone))
	if !bytes.Equal(tfPlain, golden) {
		t.Errorf("TensorFlow's uncompressed output differs from %s (run go test -run TestTensorFlow -update)", goldenPath(CompressionNone))
	}

	// Our files, read by TensorFlow.
	var args []string
	want := map[string]any{}
	for _, c := range compressions {
		p := filepath.Join(dir, "go-"+c.String()+".tfrecord")
		if err := os.WriteFile(p, encode(t, formats[0], testRecords(), Options{Compression: c}), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p+":"+c.String())
		want[p] = hexRecords
	}
	// A flipped data byte in record 3, which both readers must reject.
	bad := encode(t, formats[0], testRecords())
	bad[16+0+16+1+16+256+12+100] ^= 1
	badPath := filepath.Join(dir, "go-corrupt.tfrecord")
	if err := os.WriteFile(badPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, badPath+":none")
	if _, err := readAll(NewReader(bytes.NewReader(bad))); err == nil {
		t.Error("our reader accepted the corrupt file")
	}

	var result map[string]json.RawMessage
	if err := json.Unmarshal(runPython(t, py, nil, append([]string{"read"}, args...)...), &result); err != nil {
		t.Fatal(err)
	}
	for p, w := range want {
		var got []string
		if err := json.Unmarshal(result[p], &got); err != nil {
			t.Errorf("TensorFlow reading %s: %s", p, result[p])
			continue
		}
		if strings.Join(got, ",") != strings.Join(w.([]string), ",") {
			t.Errorf("TensorFlow read %d records from %s, want %d", len(got), p, len(w.([]string)))
		}
	}
	var tfErr struct{ Error string }
	if err := json.Unmarshal(result[badPath], &tfErr); err != nil || !strings.Contains(tfErr.Error, "corrupted record") {
		t.Errorf("TensorFlow on the corrupt file: %s, want a corrupted record error", result[badPath])
	}
}
