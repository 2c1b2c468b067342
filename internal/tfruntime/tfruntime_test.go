package tfruntime

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	if Loaded() {
		t.Fatal("the runtime is loaded before anything asked for it")
	}
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	if !Loaded() {
		t.Fatal("Load succeeded, Loaded reports false")
	}
}

// A runtime that cannot be loaded is an error naming what was tried, in
// a fresh process (loading happens once per process).
func TestLoadError(t *testing.T) {
	if os.Getenv("STRUCTTENSOR_TFRUNTIME_CHILD") == "1" {
		err := Load()
		if err == nil || !strings.Contains(err.Error(), "STRUCTTENSOR_TF_LIBRARY: /nonexistent/libtensorflow.so.2") || Loaded() {
			t.Fatalf("Load with a missing library: %v (loaded %v)", err, Loaded())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLoadError$")
	cmd.Env = append(os.Environ(), "STRUCTTENSOR_TFRUNTIME_CHILD=1", "STRUCTTENSOR_TF_LIBRARY=/nonexistent/libtensorflow.so.2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
