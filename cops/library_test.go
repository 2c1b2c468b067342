package cops

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops/reduceop"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// opsLib is the shared library make ops-lib builds.
var opsLib = filepath.Join("..", "build", "libstructtensor_ops.so")

func needOpsLib(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(opsLib)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "%s is missing (make ops-lib builds it; make test does)", p)
	}
	return p
}

// Register then load the .so in one process: the library's load hook finds
// the op registered and registers nothing (TensorFlow would abort the
// process on a duplicate).
func TestRegisterThenLoadLibrary(t *testing.T) {
	lib := needOpsLib(t)
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	l, err := tfbridge.LoadLibrary(lib)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Ops) != 0 {
		t.Errorf("the library registered %v again", l.Ops)
	}
}

// Load the .so first, then Register (in a fresh process, since ops cannot
// be unregistered): Register keeps the library's registration.
func TestLoadLibraryThenRegister(t *testing.T) {
	lib := needOpsLib(t)
	if os.Getenv("COPS_TEST_LOAD_FIRST") == "1" {
		l, err := tfbridge.LoadLibrary(lib)
		if err != nil {
			t.Fatal(err)
		}
		if want := OpName + "," + ExampleOpName + "," + reduceop.OpName; strings.Join(l.Ops, ",") != want {
			t.Fatalf("library registered %v, want [%s]", l.Ops, want)
		}
		if err := Register(); err != nil {
			t.Fatal(err)
		}
		if got := registration(); got != "already registered" {
			t.Fatalf("Register after LoadLibrary: %q", got)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLoadLibraryThenRegister$", "-test.v")
	cmd.Env = append(os.Environ(), "COPS_TEST_LOAD_FIRST=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLoadLibraryThenRegister") {
		t.Fatalf("child process: %v\n%s", err, out)
	}
}
