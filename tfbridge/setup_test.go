package tfbridge

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wheelDir is the TensorFlow this package was built against, as the
// generated pkg-config file names it.
func wheelDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("pkg-config", "--variable=libdir", "tensorflow").Output()
	if err != nil {
		t.Fatalf("pkg-config tensorflow: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// runSetup runs scripts/setup-tf.sh OUT with STRUCTTENSOR_TF_DIR=tfDir.
func runSetup(t *testing.T, tfDir, out string) (string, error) {
	t.Helper()
	cmd := exec.Command("../scripts/setup-tf.sh", out)
	cmd.Env = append(os.Environ(), "STRUCTTENSOR_TF_DIR="+tfDir)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// TestSetupScript checks scripts/setup-tf.sh on user-supplied TensorFlow
// trees (a libtensorflow lib/+include/ layout, the C tarball's
// libtensorflow.so.2 naming, a wheel directory, a bad directory), that it is
// idempotent, and that a C program built from the .pc it writes runs
// without LD_LIBRARY_PATH.
func TestSetupScript(t *testing.T) {
	wheel := wheelDir(t)
	include := filepath.Join(wheel, "include")
	if _, err := os.Stat(filepath.Join(wheel, "libtensorflow_cc.so.2")); err != nil {
		t.Skipf("pkg-config's TensorFlow is not a wheel layout: %v", err)
	}
	tree := func(core string) string {
		d := t.TempDir()
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.Mkdir(filepath.Join(d, "lib"), 0o755))
		must(os.Symlink(filepath.Join(wheel, "libtensorflow_cc.so.2"), filepath.Join(d, "lib", core)))
		must(os.Symlink(filepath.Join(wheel, "libtensorflow_framework.so.2"), filepath.Join(d, "lib", "libtensorflow_framework.so.2")))
		must(os.Symlink(include, filepath.Join(d, "include")))
		return d
	}
	for _, tc := range []struct {
		name, dir, libdir, core string
	}{
		{"lib+include", tree("libtensorflow_cc.so.2"), "/lib", "libtensorflow_cc.so.2"},
		{"c-tarball", tree("libtensorflow.so.2"), "/lib", "libtensorflow.so.2"},
		{"wheel", wheel, "", "libtensorflow_cc.so.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			msg, err := runSetup(t, tc.dir, out)
			if err != nil {
				t.Fatalf("setup-tf.sh: %v\n%s", err, msg)
			}
			pc := filepath.Join(out, "tensorflow.pc")
			b, err := os.ReadFile(pc)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"libdir=" + tc.dir + tc.libdir + "\n",
				"-l:" + tc.core + " -l:libtensorflow_framework.so.2",
				"-Wl,-rpath,${libdir}",
				"Cflags: -I${includedir}",
			} {
				if !strings.Contains(string(b), want) {
					t.Errorf("tensorflow.pc lacks %q:\n%s", want, b)
				}
			}
			// A second run leaves the file alone, so cgo caches stay valid.
			old := time.Now().Add(-time.Hour)
			os.Chtimes(pc, old, old)
			if msg, err := runSetup(t, tc.dir, out); err != nil {
				t.Fatalf("second run: %v\n%s", err, msg)
			}
			if st, _ := os.Stat(pc); !st.ModTime().Equal(old) {
				t.Error("second run rewrote an unchanged tensorflow.pc")
			}
			if tc.name != "lib+include" {
				return
			}
			// Build and run a program from the .pc, without LD_LIBRARY_PATH.
			flags, err := exec.Command("env", "PKG_CONFIG_PATH="+out, "pkg-config", "--cflags", "--libs", "tensorflow").Output()
			if err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(t.TempDir(), "version")
			args := append([]string{"-o", bin, "testdata/version.c"}, strings.Fields(string(flags))...)
			if msg, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
				t.Fatalf("cc %v: %v\n%s", args, err, msg)
			}
			run := exec.Command(bin)
			for _, e := range os.Environ() {
				if !strings.HasPrefix(e, "LD_LIBRARY_PATH=") {
					run.Env = append(run.Env, e)
				}
			}
			got, err := run.Output()
			if err != nil {
				t.Fatalf("running the program: %v", err)
			}
			if strings.TrimSpace(string(got)) != Version() {
				t.Errorf("program printed %q, want %q", got, Version())
			}
		})
	}
	if msg, err := runSetup(t, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(msg, "STRUCTTENSOR_TF_DIR") {
		t.Errorf("empty directory accepted: %v\n%s", err, msg)
	}
	if msg, err := runSetup(t, filepath.Join(t.TempDir(), "absent"), t.TempDir()); err == nil || !strings.Contains(msg, "not a directory") {
		t.Errorf("absent directory accepted: %v\n%s", err, msg)
	}
}
