package beam

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseWorkerArgs(t *testing.T) {
	for _, c := range []struct {
		args      []string
		ok        bool
		harness   bool
		id, where string
	}{
		// Prism v2.77.0's PROCESS environment: the ID quoted for a shell.
		{[]string{"--id='job-001[go-job-1-7]_go'", "--provision_endpoint=localhost:4000"}, true, false, "job-001[go-job-1-7]_go", "localhost:4000"},
		{[]string{"--id=w1", "--provision_endpoint", "localhost:4000", "--artifact_endpoint=x", "--new_flag=y"}, true, false, "w1", "localhost:4000"},
		// Beam's boot program starting the staged worker binary.
		{[]string{"--worker=true", "--id='3'", "--logging_endpoint=l:1", "--control_endpoint=c:2", "--semi_persist_dir=/tmp"}, true, true, "3", "c:2"},
		{[]string{"--worker", "--id=3", "--control_endpoint=c:2"}, true, true, "3", "c:2"},
		// Anything else is not a worker.
		{nil, false, false, "", ""},
		{[]string{"decode", "--input", "x"}, false, false, "", ""},
		{[]string{"--worker_binary=bin/w", "--runner=flink"}, false, false, "", ""},
		{[]string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.run", "X"}, false, false, "", ""},
		{[]string{"--id=x", "--provision_endpoint=p", "extra"}, false, false, "", ""},
		{[]string{"--worker=false", "--id=x"}, false, false, "", ""},
	} {
		w, ok := parseWorkerArgs(c.args)
		if ok != c.ok {
			t.Errorf("%q: worker %v, want %v", c.args, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		where := w.provision
		if w.harness {
			where = w.control
		}
		if w.harness != c.harness || w.id != c.id || where != c.where {
			t.Errorf("%q: harness %v, id %q, endpoint %q; want %v, %q, %q", c.args, w.harness, w.id, where, c.harness, c.id, c.where)
		}
	}
}

// A run inside WithPrivateTempDir sees a new TMPDIR under the old one,
// whatever it leaves there goes with it, its error comes back, and TMPDIR
// is as it was, set or unset.
func TestWithPrivateTempDir(t *testing.T) {
	parent := t.TempDir()
	t.Setenv("TMPDIR", parent)
	errRun := errors.New("run failed")
	var inside string
	err := WithPrivateTempDir(func() error {
		inside = os.Getenv("TMPDIR")
		if err := os.WriteFile(filepath.Join(inside, "beamloopbackworker-1"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return errRun
	})
	if !errors.Is(err, errRun) {
		t.Fatalf("WithPrivateTempDir returned %v, want the run's error", err)
	}
	if filepath.Dir(inside) != parent {
		t.Fatalf("TMPDIR inside the run is %q, want a new directory in %q", inside, parent)
	}
	if got := os.Getenv("TMPDIR"); got != parent {
		t.Fatalf("TMPDIR after the run is %q, want %q back", got, parent)
	}
	if left, err := os.ReadDir(parent); err != nil || len(left) != 0 {
		t.Fatalf("left in %s after the run: %v (%v)", parent, left, err)
	}

	os.Unsetenv("TMPDIR") // t.Setenv above restores it after the test
	if err := WithPrivateTempDir(func() error {
		if os.Getenv("TMPDIR") == "" {
			t.Error("TMPDIR unset inside the run")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, ok := os.LookupEnv("TMPDIR"); ok {
		t.Fatalf("TMPDIR after the run is %q, want it unset again", v)
	}
}
