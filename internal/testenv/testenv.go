// Package testenv decides what a test does when something it compares
// against is absent (a Python virtualenv, the ops library, a compiler).
//
// On a developer's machine such a test skips with the reason. Under
// `make test`, which installs every reference first and sets
// STRUCTTENSOR_REQUIRE_REFERENCES=1, the same absence fails the test:
// a comparison with TensorFlow, struct2tensor or pyarrow must not turn
// into a silent skip in CI.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv is the variable `make test` sets.
const RequireEnv = "STRUCTTENSOR_REQUIRE_REFERENCES"

// Missing reports that a reference the test needs is absent: a skip, or a
// failure when RequireEnv is set.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s (%s is set: make test installs every reference before testing)", msg, RequireEnv)
	}
	t.Skip(msg)
}

// ModuleRoot returns the directory of the module's go.mod, above the test's
// working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// Python returns the interpreter of the virtualenv venv (".venv" or
// ".venv-s2t") at the module root, calling Missing when it is absent.
func Python(t testing.TB, venv string) string {
	t.Helper()
	p := filepath.Join(ModuleRoot(t), venv, "bin", "python")
	if _, err := os.Stat(p); err != nil {
		Missing(t, "%s is absent (scripts/setup-python.sh creates it; make test runs that)", p)
	}
	return p
}

// RunPython runs the Python script with args in the virtualenv venv and
// returns its standard output; the test fails, with the script's standard
// error, when it does. The script's temporary directory (TMPDIR) is the
// test's own, removed when the test ends, so that what the script or the
// libraries it runs (TensorFlow, Beam, TFXIO) leave there goes with it.
func RunPython(t testing.TB, venv, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(Python(t, venv), append([]string{"-c", script}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// OpsLibrary returns build/libstructtensor_ops.so at the module root (the
// project's ops for Python TensorFlow), calling Missing when it is absent.
func OpsLibrary(t testing.TB) string {
	t.Helper()
	lib := filepath.Join(ModuleRoot(t), "build", "libstructtensor_ops.so")
	if _, err := os.Stat(lib); err != nil {
		Missing(t, "%s is absent (make ops-lib builds it; make test runs that)", lib)
	}
	return lib
}
