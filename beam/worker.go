package beam

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/harness"
	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/protobuf/encoding/protojson"
)

// grpcDialTimeout bounds the wait for a runner's endpoint.
const grpcDialTimeout = 2 * time.Minute

// CPUsEnv names the environment variable that pins the harness processes
// of a worker booted by WorkerMain to CPUs (Linux only): a comma-separated
// list of CPU numbers, of which harness process i (of ProcessesEnv) takes
// entry i modulo the list's length. A pinned process runs all its threads,
// Go's and the decoding engine's, on its one CPU, and Go code on one
// thread at a time (GOMAXPROCS 1, unless GOMAXPROCS is set): one process
// is then one core's worth of worker, as a worker of a cluster of one-core
// machines would be, whatever the machine running Prism has. A worker
// process that relays for several harness processes is not pinned.
const CPUsEnv = "STRUCTTENSOR_BEAM_CPUS"

// WorkerMain runs this process as a Beam SDK worker if a runner started it
// as one, and then exits; otherwise it returns at once. Call it first in
// main (or TestMain), before any flag parsing: the binary that builds a
// pipeline is then also its worker, with the same DoFns registered.
//
// A runner starts a worker in one of two ways, and WorkerMain takes both:
//
//   - As the boot command of a PROCESS environment, with --id and
//     --provision_endpoint (Beam's container contract). WorkerMain asks
//     the provision service for the control and logging endpoints and the
//     pipeline options and runs the harness here, so the environment's
//     command is the worker binary itself and no separate boot program
//     is needed.
//   - As a harness, with --worker, --id, --control_endpoint and
//     --logging_endpoint, as Beam's boot program in the Go SDK container
//     starts the staged --worker_binary.
//
// Either way, one pair of single quotes around the --id value is removed.
// Prism v2.77.0 starts a PROCESS environment's command with the argument
// "--id='ID'", quoted for a shell, but runs it without one: the quotes
// reach the worker, which would present itself to Prism as 'ID', a worker
// Prism does not know, and Prism would wait for the real one until its
// timeout. Worker IDs of Beam's runners never hold quotes, so removing them
// is safe on every runner.
//
// With ProcessesEnv set to N > 1 in a booted worker's environment (the
// "env" map of the PROCESS environment config), the worker starts N
// harness processes of this binary and relays the runner's Fn API between
// them and the runner (see fanOut): a runner that starts one worker per
// environment, as Prism does, then gets N processes, as a cluster would
// run N workers.
func WorkerMain() {
	w, ok := parseWorkerArgs(os.Args[1:])
	if !ok {
		return
	}
	// Runs the SDK's init hooks; the harness hook stays idle, since the
	// command line's --worker flag was never parsed.
	beamsdk.Init()
	if err := w.run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "structtensor/beam worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// workerArgs are the flags of Beam's worker contract.
type workerArgs struct {
	harness          bool // started as a harness (--worker)
	id               string
	provision        string
	control, logging string
	options          string // pipeline options as JSON
	status           string
	capabilities     []string
	processes        int
	cpus             []int  // CPUsEnv
	semiPersistDir   string // accepted, unused
}

// parseWorkerArgs reads args as a runner's worker command line: flags
// only (--name=value, --name value, and --worker alone), with
// --provision_endpoint (a boot command) or --worker (a harness). ok is
// false for any other command line. Flags of the contract that a worker
// has no use for, and any others a runner may add, are ignored.
func parseWorkerArgs(args []string) (w workerArgs, ok bool) {
	values := map[string]*string{
		"id": &w.id, "provision_endpoint": &w.provision, "control_endpoint": &w.control,
		"logging_endpoint": &w.logging, "options": &w.options, "semi_persist_dir": &w.semiPersistDir,
	}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			if name, ok = strings.CutPrefix(args[i], "-"); !ok || name == "" {
				return w, false // an argument, not a flag
			}
		}
		name, value, hasValue := strings.Cut(name, "=")
		if name == "worker" {
			w.harness = !hasValue || value == "true"
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return w, false
			}
			i++
			value = args[i]
		}
		if p, ok := values[name]; ok {
			*p = value
		}
	}
	if !w.harness && w.provision == "" {
		return w, false
	}
	w.id = unquoteID(w.id)
	w.status = os.Getenv("STATUS_ENDPOINT")
	if c := os.Getenv("RUNNER_CAPABILITIES"); c != "" {
		w.capabilities = strings.Fields(c)
	}
	w.processes = 1
	if n := os.Getenv(ProcessesEnv); n != "" && !w.harness {
		var err error
		if w.processes, err = strconv.Atoi(n); err != nil || w.processes < 1 {
			fmt.Fprintf(os.Stderr, "structtensor/beam worker: %s=%q is not a positive number\n", ProcessesEnv, n)
			os.Exit(1)
		}
	}
	if c := os.Getenv(CPUsEnv); c != "" {
		for _, f := range strings.Split(c, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				fmt.Fprintf(os.Stderr, "structtensor/beam worker: %s=%q is not a list of CPU numbers\n", CPUsEnv, c)
				os.Exit(1)
			}
			w.cpus = append(w.cpus, n)
		}
	}
	return w, true
}

// pin pins this process to its CPU of CPUsEnv: a harness started by a
// relaying worker (whose --id is its index) to entry id, any other to the
// first entry.
func (w workerArgs) pin() error {
	if len(w.cpus) == 0 {
		return nil
	}
	i, err := strconv.Atoi(w.id)
	if !w.harness || err != nil || i < 0 {
		i = 0
	}
	if err := pinToCPU(w.cpus[i%len(w.cpus)]); err != nil {
		return err
	}
	if os.Getenv("GOMAXPROCS") == "" {
		goruntime.GOMAXPROCS(1)
	}
	return nil
}

// unquoteID removes one pair of single quotes around a worker ID (see
// WorkerMain for why they are there).
func unquoteID(id string) string {
	if len(id) >= 2 && id[0] == '\'' && id[len(id)-1] == '\'' {
		return id[1 : len(id)-1]
	}
	return id
}

func (w workerArgs) run(ctx context.Context) error {
	if w.id == "" {
		return fmt.Errorf("no --id: a runner names its worker")
	}
	if w.harness {
		if f := os.Getenv("PIPELINE_OPTIONS_FILE"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			w.options = string(b)
		}
		if w.control == "" || w.logging == "" {
			return fmt.Errorf("a harness needs --control_endpoint and --logging_endpoint")
		}
		if err := w.pin(); err != nil {
			return err
		}
		return w.runHarness(ctx)
	}
	if err := w.provisionEndpoints(ctx); err != nil {
		return err
	}
	if w.processes > 1 {
		return w.fanOut(ctx)
	}
	if err := w.pin(); err != nil {
		return err
	}
	return w.runHarness(ctx)
}

// provisionEndpoints asks the runner's provision service for the
// endpoints and options a boot program hands the harness.
func (w *workerArgs) provisionEndpoints(ctx context.Context) error {
	cc, err := grpcx.Dial(ctx, w.provision, grpcDialTimeout)
	if err != nil {
		return fmt.Errorf("provision endpoint %s: %w", w.provision, err)
	}
	defer cc.Close()
	resp, err := fnpb.NewProvisionServiceClient(cc).GetProvisionInfo(grpcx.WriteWorkerID(ctx, w.id), &fnpb.GetProvisionInfoRequest{})
	if err != nil {
		return fmt.Errorf("provision info from %s: %w", w.provision, err)
	}
	info := resp.GetInfo()
	if u := info.GetControlEndpoint().GetUrl(); u != "" {
		w.control = u
	}
	if u := info.GetLoggingEndpoint().GetUrl(); u != "" {
		w.logging = u
	}
	if w.control == "" || w.logging == "" {
		return fmt.Errorf("the provision service of %s names no control or logging endpoint", w.provision)
	}
	if u := info.GetStatusEndpoint().GetUrl(); u != "" {
		w.status = u
	}
	if c := info.GetRunnerCapabilities(); len(c) > 0 {
		w.capabilities = c
	}
	if o := info.GetPipelineOptions(); o != nil {
		b, err := protojson.Marshal(o)
		if err != nil {
			return err
		}
		w.options = string(b)
	}
	return nil
}

// runHarness runs Beam's Go SDK harness in this process until the runner
// closes the control stream.
func (w workerArgs) runHarness(ctx context.Context) error {
	if w.options != "" {
		var opt runtime.RawOptionsWrapper
		if err := json.Unmarshal([]byte(w.options), &opt); err != nil {
			return fmt.Errorf("pipeline options: %w", err)
		}
		runtime.GlobalOptions.Import(opt.Options)
	}
	return harness.MainWithOptions(grpcx.WriteWorkerID(ctx, w.id), w.logging, w.control,
		harness.Options{StatusEndpoint: w.status, RunnerCapabilities: w.capabilities})
}

// WithPrivateTempDir calls run with TMPDIR naming a new directory of its
// own and, when run returns, removes that directory with all in it and
// sets TMPDIR back. Run a loopback pipeline (Prism in process, as in
// tests and single-machine jobs) inside it: Beam's runner leaves an empty
// "beamloopbackworker-*" file in the temporary directory for every such
// run and never removes it, and nothing else of a run is meant to stay
// there. TMPDIR is the process's: do not call it from two goroutines at
// once.
func WithPrivateTempDir(run func() error) error {
	dir, err := os.MkdirTemp("", "structtensor-beam-")
	if err != nil {
		return fmt.Errorf("beam: private temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("TMPDIR")
	defer func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	if err := os.Setenv("TMPDIR", dir); err != nil {
		return fmt.Errorf("beam: private temporary directory: %w", err)
	}
	return run()
}
