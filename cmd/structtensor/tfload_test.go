package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// asCLI is set in the environment of a child process that this test
// binary starts to run as the CLI itself (TestMain).
const asCLI = "STRUCTTENSOR_CLI_TEST_AS_MAIN"

// mapsMarker starts the line the child writes to stderr after the
// command: whether TensorFlow's library is mapped into the process.
const mapsMarker = "libtensorflow mapped: "

// TestMain lets a test run the CLI in a fresh process: the test binary
// is the CLI's package linked as the command is (TensorFlow included),
// so what it maps is what the command maps.
func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintf(os.Stderr, "%s%v\n", mapsMarker, bytes.Contains(maps, []byte("libtensorflow")))
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runChild runs the CLI with args in a new process and reports its
// stdout, stderr and whether libtensorflow was mapped when it ended.
func runChild(t *testing.T, args ...string) (stdout, stderr string, mapped bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errb.String())
	}
	rest, line, ok := strings.Cut(errb.String(), mapsMarker)
	if !ok {
		t.Fatalf("%v: no %q line in %q", args, mapsMarker, errb.String())
	}
	return out.String(), rest, strings.HasPrefix(line, "true")
}

// Commands that do not need TensorFlow never load it (it would cost some
// 300 MB of memory); the commands that do need it load it, and its
// start-up INFO lines do not reach stderr.
func TestTensorFlowLoadedOnlyByItsCommands(t *testing.T) {
	schema := []string{"--descriptor-set", "../../testdata/proto/testdata.pb", "--message", "structtensor.testdata.recipe.Recipe"}
	recs := "../../testdata/decode/recipes.tfrecord"
	dir := filepath.Join(t.TempDir(), "dv")
	for _, tc := range []struct {
		args []string
		tf   bool
	}{
		{[]string{"help"}, false},
		{[]string{"decode", "--help"}, false},
		{append(append([]string{"decode"}, schema...), recs), false},
		{append(append([]string{"decode"}, schema...), "--to", "parquet", "-o", filepath.Join(t.TempDir(), "r.parquet"), recs), false},
		{[]string{"convert", "--from", "jsonl", "--to", "arrow", "-o", filepath.Join(t.TempDir(), "r.arrow"), "../../testdata/recipe/recipes.json"}, false},
		{[]string{"completion", "bash"}, false},
		{append(append([]string{"dataview", "export"}, schema...), "-o", dir), true},
		{[]string{"dataview", "run", dir, "--to", "jsonl", recs}, true},
	} {
		_, stderr, mapped := runChild(t, tc.args...)
		if mapped != tc.tf {
			t.Errorf("%v: libtensorflow mapped %v, want %v", tc.args, mapped, tc.tf)
		}
		if strings.Contains(stderr, "I0000") || strings.Contains(stderr, "oneDNN") {
			t.Errorf("%v: TensorFlow's INFO lines on stderr: %q", tc.args, stderr)
		}
	}
}

// No TensorFlow library is a dependency of the executable: it is loaded
// with dlopen when first used (package internal/tfruntime).
func TestNoTensorFlowDependency(t *testing.T) {
	f, err := elf.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if strings.Contains(l, "tensorflow") {
			t.Errorf("the executable needs %s (imports %q)", l, libs)
		}
	}
}
