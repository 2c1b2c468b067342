package externalmodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
)

// A program in a module of its own builds against this module and the
// pkg-config file setup-tf.sh writes outside the repository (for the
// runtime the repository's own pkg-config file names, so nothing is
// installed), then runs and calls TensorFlow. Module resolution is
// offline (GOPROXY=off: the module cache already holds every
// dependency), and the build cache is the one this test runs with, so
// only the program itself is compiled and linked.
func TestExternalModuleBuildsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("links a program (about a minute on 2 cores)")
	}
	root := testenv.ModuleRoot(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "no go command on PATH: %v", err)
	}
	libdir, err := exec.Command("pkg-config", "--variable=libdir", "tensorflow").Output()
	if err != nil || len(strings.TrimSpace(string(libdir))) == 0 {
		testenv.Missing(t, "pkg-config tensorflow (make setup-tf): %v", err)
	}

	tmp := t.TempDir()
	pcDir := filepath.Join(tmp, "pkgconfig")
	setup := exec.Command("bash", filepath.Join(root, "scripts", "setup-tf.sh"), pcDir)
	setup.Env = append(os.Environ(), "STRUCTTENSOR_TF_DIR="+strings.TrimSpace(string(libdir)))
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("setup-tf.sh %s: %v\n%s", pcDir, err, out)
	}
	if _, err := os.Stat(filepath.Join(pcDir, "tensorflow.pc")); err != nil {
		t.Fatal(err)
	}

	mod := filepath.Join(tmp, "user")
	if err := os.Mkdir(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod := "module example.com/structtensor-user\n\ngo 1.26\n\n" +
		"require github.com/structtensor/structtensor-go v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/structtensor/structtensor-go => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := os.ReadFile("testdata/main.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum, "main.go": prog} {
		if err := os.WriteFile(filepath.Join(mod, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PKG_CONFIG_PATH="+pcDir, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	build := exec.Command(goTool, "build", "-o", "user", ".")
	build.Dir, build.Env = mod, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", mod, err, out)
	}
	run := exec.Command(filepath.Join(mod, "user"))
	run.Env = os.Environ()
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("running the program: %v\n%s", err, out)
	}
	want := "StructSpec([2], {id: TensorSpec([2], int64), tags: RaggedTensorSpec([2, None], string, ragged_rank=1)})\nTensorFlow 2."
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("the program printed %q, want it to start %q", out, want)
	}
}
