package tfbridge

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
)

// buildOpLibrary compiles testdata/addone_op.cc against the TensorFlow that
// pkg-config names (the one this package links).
func buildOpLibrary(t *testing.T) string {
	t.Helper()
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "tensorflow").Output()
	if err != nil {
		t.Fatalf("pkg-config tensorflow: %v (run scripts/setup-tf.sh and set PKG_CONFIG_PATH)", err)
	}
	cc := os.Getenv("CXX")
	if cc == "" {
		cc = "c++"
	}
	lib := filepath.Join(t.TempDir(), "libaddone_op.so")
	args := append([]string{"-shared", "-fPIC", "-O1", "-o", lib, "testdata/addone_op.cc"}, strings.Fields(string(flags))...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return lib
}

func TestLoadLibrary(t *testing.T) {
	if _, err := LoadLibrary(filepath.Join(t.TempDir(), "missing.so")); err == nil || CodeOf(err) == CodeOK {
		t.Errorf("missing library: %v", err)
	}
	lib, err := LoadLibrary(buildOpLibrary(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.Ops) != 1 || lib.Ops[0] != "TfbridgeTestAddOne" {
		t.Fatalf("Ops = %q", lib.Ops)
	}
	if _, err := LoadLibrary(lib.Path); err != nil {
		t.Errorf("second load: %v", err)
	}

	g := NewGraph()
	defer g.Close()
	x := placeholder(t, g, "x", Int64)
	y := mustOp(t, g, OpSpec{Type: "TfbridgeTestAddOne", Name: "add_one", Input: []Input{x}}).Output(0)
	s, err := NewSession(g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, _ := NewTensor(mustTensor(t, structtensor.Shape{2, 2}, []int64{0, 1, 2, 41}))
	if got := runOne(t, s, map[Output]*Tensor{x: in}, y); !structtensor.Equal(got, mustTensor(t, structtensor.Shape{2, 2}, []int64{1, 2, 3, 42})) {
		t.Errorf("add one: %v", got)
	}
	neg, _ := NewTensor(mustTensor(t, nil, []int64{5, -7}))
	_, err = s.Run(map[Output]*Tensor{x: neg}, []Output{y}, nil)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "negative value -7 at index 1") || !strings.Contains(err.Error(), "add_one") {
		t.Errorf("kernel failure: %v", err)
	}
}
