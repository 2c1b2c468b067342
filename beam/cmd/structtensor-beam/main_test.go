package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	stbeam "github.com/structtensor/structtensor-go/beam"
	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// TestMain makes the test binary the command when asked to.
func TestMain(m *testing.M) {
	if os.Getenv("STRUCTTENSOR_BEAM_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func command(t *testing.T, args ...string) (string, error) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "STRUCTTENSOR_BEAM_MAIN=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// recipeMessage is the message type of the test records.
const recipeMessage = "structtensor.testdata.recipe.Recipe"

// recipeFile writes n generated recipes (from seed) to dir/in.tfrecord
// and returns the path of their descriptor set, their plan and the
// records.
func recipeFile(t *testing.T, dir string, n int, seed uint64) (fdsPath string, plan *decode.Plan, recs [][]byte) {
	t.Helper()
	fdsPath = filepath.Join("..", "..", "..", copstest.DescriptorSetPath)
	d, err := copstest.LoadDescriptors(fdsPath)
	if err != nil {
		t.Fatal(err)
	}
	md, err := d.Message(recipeMessage)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err = copstest.Records(md, n, seed, copstest.Options{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.tfrecord"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if plan, err = decode.Compile(d, recipeMessage); err != nil {
		t.Fatal(err)
	}
	return fdsPath, plan, recs
}

func TestDecodeCommand(t *testing.T) {
	dir := t.TempDir()
	fdsPath, plan, recs := recipeFile(t, dir, 500, 7)
	const msg = recipeMessage
	want, err := plan.Decode(recs)
	if err != nil {
		t.Fatal(err)
	}
	// Batches reach a shard in any order: compare the rows as sorted lines.
	lines := func(st *structtensor.StructTensor) string {
		js, _ := structtensor.ToJSONLines(st)
		l := strings.Split(string(js), "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	// The command as its own worker, as the README runs it: Prism starts
	// this test binary (which is the command, see TestMain) with two
	// harness processes behind it.
	worker, _ := json.Marshal(map[string]any{"command": os.Args[0], "env": map[string]string{stbeam.ProcessesEnv: "2"}})
	for name, flags := range map[string][]string{
		"in_process": nil,
		// The file cut into 3 parts, flattened before the one sink.
		"read_parts_3":     {"--read_parts", "3"},
		"worker_processes": {"--environment_type=PROCESS", "--environment_config=" + string(worker), "--worker_binary=" + os.Args[0]},
	} {
		t.Run(name, func(t *testing.T) {
			prefix := filepath.Join(dir, name, "part")
			out, err := command(t, append([]string{"decode", "--input", filepath.Join(dir, "*.tfrecord"), "--output", prefix,
				"--descriptor_set", fdsPath, "--message", msg, "--format", "arrow", "--shards", "1"}, flags...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			files, _ := filepath.Glob(prefix + "-*")
			if len(files) != 1 || !strings.HasSuffix(files[0], "part-00000-of-00001.arrow") {
				t.Fatalf("output files %v", files)
			}
			f, _ := os.Open(files[0])
			defer f.Close()
			got, err := starrow.ReadIPC(f)
			if err != nil {
				t.Fatal(err)
			}
			if lines(got) != lines(want) {
				t.Fatalf("decoded rows differ from the single-process decode (%d vs %d rows)", got.NumRows(), want.NumRows())
			}
		})
	}
}

func TestRefusesRemoteRunnerWithoutWorker(t *testing.T) {
	out, err := command(t, "decode", "--runner", "flink", "--endpoint", "localhost:8099", "--input", "x", "--output", "y")
	if err == nil || !strings.Contains(out, "needs --worker_binary") || !strings.Contains(out, "make worker") {
		t.Fatalf("%v\n%s", err, out)
	}
}
