package beam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// runMode is how Prism runs a test pipeline's workers.
type runMode string

const (
	// loopback runs the workers in the test process.
	loopback runMode = "loopback"
	// process runs them in a worker process Prism starts: this test
	// binary, entered through WorkerMain (TestMain), as a PROCESS
	// environment's command and as the --worker_binary.
	process runMode = "process"
	// process2 is process with two harness processes behind the worker
	// Prism starts (ProcessesEnv=2).
	process2 runMode = "process2"
)

var modes = []runMode{loopback, process, process2}

// errInjected is the failure a test injects after a sink writes a shard.
var errInjected = errors.New("injected failure")

// failWritesEnv, set in a worker process's environment, makes every
// shard write fail with errInjected (see TestMain).
const failWritesEnv = "STRUCTTENSOR_BEAM_TEST_FAIL_WRITES"

// TestMain enters WorkerMain first: when Prism starts this binary as a
// worker it serves as one and exits. Otherwise it runs the tests on
// Prism, in process, unless --runner says otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(failWritesEnv) == "1" {
		failAfterWrite = func(int) error { return errInjected }
	}
	WorkerMain()
	code := 0
	if err := WithPrivateTempDir(func() error {
		code = ptest.MainRetWithDefault(m, "prism")
		return nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// runOptions are what a test changes about a pipeline run.
type runOptions struct {
	// failWrites makes every shard write fail after writing.
	failWrites bool
	// env is added to a worker process's environment.
	env map[string]string
}

// run runs p on Prism in the mode.
func (m runMode) run(t testing.TB, p *beamsdk.Pipeline, opts runOptions) error {
	if m == loopback {
		if *jobopts.EnvironmentType == "" || *jobopts.EnvironmentType == "PROCESS" {
			// What Prism in process defaults to.
			*jobopts.EnvironmentType = "loopback"
		}
		if opts.failWrites {
			failAfterWrite = func(int) error { return errInjected }
			defer func() { failAfterWrite = nil }()
		}
		return ptest.Run(p)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for k, v := range opts.env {
		env[k] = v
	}
	if opts.failWrites {
		env[failWritesEnv] = "1"
	}
	if m == process2 {
		env[ProcessesEnv] = "2"
	}
	config, err := json.Marshal(map[string]any{"command": exe, "env": env})
	if err != nil {
		t.Fatal(err)
	}
	defer func(typ, config, worker string) {
		*jobopts.EnvironmentType, *jobopts.EnvironmentConfig, *jobopts.WorkerBinary = typ, config, worker
	}(*jobopts.EnvironmentType, *jobopts.EnvironmentConfig, *jobopts.WorkerBinary)
	*jobopts.EnvironmentType, *jobopts.EnvironmentConfig, *jobopts.WorkerBinary = "PROCESS", string(config), exe
	return ptest.Run(p)
}

// isolatedEnv, set in a child test process's environment, names the
// test the child runs (see isolate).
const isolatedEnv = "STRUCTTENSOR_BEAM_TEST_ISOLATED"

// prismFailPanic is how Prism v2.77.0 dies, now and then, when a bundle
// fails while others of the job are in flight: ElementManager.FailBundle
// and PersistBundle both take the failed bundle's elements off the job's
// pending count, and the sync.WaitGroup behind it panics below zero,
// ending the whole test process (Prism runs in it). Beam's own suite had
// a test quarantined for it ("negative WaitGroup counter when failing
// bundle", until apache/beam#36384 fixed one cause).
var prismFailPanic = regexp.MustCompile(`panic: sync: negative WaitGroup counter[\s\S]*runners/prism/internal/engine`)

// isolate runs the calling test, whose pipelines are meant to fail, in a
// child process of this test binary, so that Prism's panic above ends
// only the child; it runs the test again, up to three times in all, when
// the child died of that panic, and fails when the child failed any
// other way. It returns true in the child, where the test's body runs,
// and false in the parent once the child passed.
func isolate(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == t.Name() {
		return true
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.v"}
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-test.run") && a != "-test.v" && !strings.HasPrefix(a, "-test.v=") {
			args = append(args, a)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name())
		out, err := cmd.CombinedOutput()
		if err == nil && bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
			return false
		}
		if err != nil && prismFailPanic.Match(out) && attempt < 3 {
			t.Logf("attempt %d: Prism panicked failing a bundle (its known bug); running the test again", attempt)
			continue
		}
		t.Fatalf("%s in a child process: %v\n%s", t.Name(), err, out)
	}
}

// samePIDFn tells whether it runs in the process with PID Launcher.
type samePIDFn struct{ Launcher int }

func (fn *samePIDFn) ProcessElement([]byte) bool { return os.Getpid() == fn.Launcher }

func init() { register.DoFn1x1[[]byte, bool](&samePIDFn{}) }

// TestProcessModeRunsApart: in process mode the DoFns run in a process
// other than this one, and in loopback mode in this one.
func TestProcessModeRunsApart(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			p, s := beamsdk.NewPipelineWithRoot()
			same := beamsdk.ParDo(s, &samePIDFn{Launcher: os.Getpid()}, beamsdk.Impulse(s))
			passert.Equals(s, same, mode == loopback)
			if err := mode.run(t, p, runOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestIsolateRetriesOnlyPrismsPanic: a child that dies of Prism's panic
// is run again; the test passes once a run passes; any other failure is
// not retried (the counter file tells how many runs there were).
func TestIsolateRetriesOnlyPrismsPanic(t *testing.T) {
	if os.Getenv(isolatedEnv) != "" {
		// In a child: t.Name() is one of the subtests below.
		return
	}
	for _, c := range []struct {
		name string
		// script says, per run, how the child ends: 'p' Prism's panic,
		// 'f' another failure, 'o' a pass.
		script   string
		wantRuns int
		wantPass bool
	}{
		{"panic-then-pass", "po", 2, true},
		{"three-panics", "ppp", 3, false},
		{"other-failure", "fo", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			counter := filepath.Join(t.TempDir(), "runs")
			cmd := exec.Command(os.Args[0], "-test.run=^TestIsolateScript$", "-test.v")
			cmd.Env = append(os.Environ(), isolateScriptEnv+"="+c.script, isolateCounterEnv+"="+counter)
			out, err := cmd.CombinedOutput()
			runs, _ := os.ReadFile(counter)
			if len(runs) != c.wantRuns || (err == nil) != c.wantPass {
				t.Errorf("runs %d (want %d), passed %v (want %v):\n%s", len(runs), c.wantRuns, err == nil, c.wantPass, out)
			}
		})
	}
}

const (
	isolateScriptEnv  = "STRUCTTENSOR_BEAM_TEST_ISOLATE_SCRIPT"
	isolateCounterEnv = "STRUCTTENSOR_BEAM_TEST_ISOLATE_COUNTER"
)

// TestIsolateScript is TestIsolateRetriesOnlyPrismsPanic's isolated test:
// it runs only when that test starts it, and each isolated run ends as
// the script's next letter says.
func TestIsolateScript(t *testing.T) {
	script := os.Getenv(isolateScriptEnv)
	if script == "" {
		t.Skip("run by TestIsolateRetriesOnlyPrismsPanic")
	}
	if !isolate(t) {
		return
	}
	counter := os.Getenv(isolateCounterEnv)
	runs, _ := os.ReadFile(counter)
	if err := os.WriteFile(counter, append(runs, '.'), 0o644); err != nil {
		t.Fatal(err)
	}
	switch script[len(runs)] {
	case 'p':
		os.Stderr.WriteString("panic: sync: negative WaitGroup counter\n\ngoroutine 1 [running]:\ngithub.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal/engine.(*ElementManager).addPending(...)\n")
		os.Exit(2)
	case 'f':
		t.Fatal("another failure")
	}
}
