package beam

import (
	"encoding/json"
	"errors"
	"os"
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
	ptest.MainWithDefault(m, "prism")
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
