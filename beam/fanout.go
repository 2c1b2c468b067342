package beam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// ProcessesEnv names the environment variable that sets how many SDK
// harness processes a worker booted by WorkerMain runs (default 1).
const ProcessesEnv = "STRUCTTENSOR_BEAM_PROCESSES"

// The URNs of the transforms that carry a bundle's elements over the Fn
// API's data stream; their payload is a RemoteGrpcPort.
const (
	urnDataSource = "beam:runner:source:v1"
	urnDataSink   = "beam:runner:sink:v1"
)

// fanOut is a worker that runs several harness processes behind one
// worker identity. Prism starts one worker per environment, and a Go
// harness is one process; to let a pipeline on Prism use several
// processes (as a cluster's workers would be), the booted worker starts
// N harness processes of its own binary, serves the Fn API to them on a
// local port and relays between them and the runner:
//
//   - a ProcessBundle instruction goes to the process with the fewest
//     bundles in flight, and everything naming that instruction (data,
//     timers, progress and split requests, finalisation) goes to the same
//     process;
//   - state requests and logs go up unchanged but for the request IDs,
//     which are prefixed with the process number so that the answers find
//     their way back;
//   - metric short IDs, which each process assigns on its own, are
//     prefixed the same way, and metadata requests for them are split by
//     process and the answers merged;
//   - bundle descriptors are fetched from the runner and handed down with
//     the data and state endpoints pointing at the relay.
//
// Elements between stages pass through the relay once more than they
// would with one process; a fused stage that reads, decodes and reduces
// (the usual shape here) sends little besides the restrictions it reads.
type fanOut struct {
	args     workerArgs
	upCtx    context.Context // carries the worker ID the runner gave
	cancel   context.CancelFunc
	children []*harnessProcess
	addr     string // where the harness processes reach the relay

	mu        sync.Mutex
	owner     map[string]*harnessProcess // bundle's instruction ID → process
	running   map[string]int64           // bundles in flight → bytes of input sent
	dataURL   string
	stateURL  string
	data      *upstream[*fnpb.Elements, *fnpb.Elements]
	state     *upstream[*fnpb.StateRequest, *fnpb.StateResponse]
	control   *upstream[*fnpb.InstructionResponse, *fnpb.InstructionRequest]
	logging   *upstream[*fnpb.LogEntry_List, *fnpb.LogControl]
	ctrl      fnpb.BeamFnControlClient
	metadata  map[string]*metadataMerge // instruction ID → pending merge
	failed    chan error
	failOnce  sync.Once
	finishing bool

	fnpb.UnimplementedBeamFnControlServer
	fnpb.UnimplementedBeamFnDataServer
	fnpb.UnimplementedBeamFnStateServer
	fnpb.UnimplementedBeamFnLoggingServer
}

// harnessProcess is one harness process behind the relay, and the queues
// of what the relay sends it on each stream.
type harnessProcess struct {
	index   int
	cmd     *exec.Cmd
	control chan *fnpb.InstructionRequest
	data    chan *fnpb.Elements
	state   chan *fnpb.StateResponse
	active  int   // bundles in flight (under fanOut.mu)
	load    int64 // bytes of input sent to its bundles in flight (under fanOut.mu)
}

// upstream is a stream to the runner whose sends are serialised.
type upstream[S, R any] struct {
	mu     sync.Mutex
	stream interface {
		Send(S) error
		Recv() (R, error)
	}
}

func (u *upstream[S, R]) send(m S) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stream.Send(m)
}

// metadataMerge collects the answers of the processes to one metric
// metadata request.
type metadataMerge struct {
	pending int
	infos   map[string]*pipepb.MonitoringInfo
	err     string
}

func (w workerArgs) fanOut(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &fanOut{args: w, upCtx: grpcx.WriteWorkerID(ctx, w.id), cancel: cancel,
		owner: map[string]*harnessProcess{}, running: map[string]int64{}, metadata: map[string]*metadataMerge{}, failed: make(chan error, 1)}

	cc, err := grpcx.Dial(ctx, w.control, grpcDialTimeout)
	if err != nil {
		return fmt.Errorf("control endpoint %s: %w", w.control, err)
	}
	defer cc.Close()
	f.ctrl = fnpb.NewBeamFnControlClient(cc)
	lc, err := grpcx.Dial(ctx, w.logging, grpcDialTimeout)
	if err != nil {
		return fmt.Errorf("logging endpoint %s: %w", w.logging, err)
	}
	defer lc.Close()
	logs, err := fnpb.NewBeamFnLoggingClient(lc).Logging(f.upCtx)
	if err != nil {
		return fmt.Errorf("logging endpoint %s: %w", w.logging, err)
	}
	f.logging = &upstream[*fnpb.LogEntry_List, *fnpb.LogControl]{stream: logs}
	go func() {
		for {
			if _, err := logs.Recv(); err != nil {
				return
			}
		}
	}()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	f.addr = lis.Addr().String()
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(1<<30), grpc.MaxSendMsgSize(1<<30))
	fnpb.RegisterBeamFnControlServer(srv, f)
	fnpb.RegisterBeamFnDataServer(srv, f)
	fnpb.RegisterBeamFnStateServer(srv, f)
	fnpb.RegisterBeamFnLoggingServer(srv, f)
	go srv.Serve(lis)
	defer srv.Stop()

	for i := range w.processes {
		c := &harnessProcess{index: i,
			control: make(chan *fnpb.InstructionRequest, 256),
			data:    make(chan *fnpb.Elements, 256),
			state:   make(chan *fnpb.StateResponse, 256)}
		c.cmd = exec.CommandContext(ctx, exe, "--worker=true", "--id="+strconv.Itoa(i),
			"--control_endpoint="+f.addr, "--logging_endpoint="+f.addr, "--options="+w.options)
		c.cmd.Stdout, c.cmd.Stderr = os.Stdout, os.Stderr
		for _, kv := range os.Environ() {
			// The processes take their options from --options, and report
			// their status to no one: the relay is the runner's worker.
			if !strings.HasPrefix(kv, "PIPELINE_OPTIONS_FILE=") && !strings.HasPrefix(kv, "STATUS_ENDPOINT=") &&
				!strings.HasPrefix(kv, ProcessesEnv+"=") {
				c.cmd.Env = append(c.cmd.Env, kv)
			}
		}
		if err := c.cmd.Start(); err != nil {
			return fmt.Errorf("starting harness process %d: %w", i, err)
		}
		f.children = append(f.children, c)
	}
	defer func() {
		for _, c := range f.children {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	}()
	for _, c := range f.children {
		go func() {
			err := c.cmd.Wait()
			f.mu.Lock()
			finishing := f.finishing
			f.mu.Unlock()
			if !finishing {
				f.fail(fmt.Errorf("harness process %d exited: %v", c.index, err))
			}
		}()
	}

	ctrl, err := f.ctrl.Control(f.upCtx)
	if err != nil {
		return fmt.Errorf("control endpoint %s: %w", w.control, err)
	}
	f.control = &upstream[*fnpb.InstructionResponse, *fnpb.InstructionRequest]{stream: ctrl}
	done := make(chan error, 1)
	go func() { done <- f.relayControl(ctrl) }()
	select {
	case err := <-done:
		f.mu.Lock()
		f.finishing = true
		f.mu.Unlock()
		if err == io.EOF {
			return nil
		}
		return err
	case err := <-f.failed:
		return err
	}
}

func (f *fanOut) fail(err error) {
	f.failOnce.Do(func() { f.failed <- err })
}

// relayControl hands the runner's instructions to the processes until
// the runner closes the control stream.
func (f *fanOut) relayControl(ctrl fnpb.BeamFnControl_ControlClient) error {
	for {
		req, err := ctrl.Recv()
		if err != nil {
			return err
		}
		switch {
		case req.GetProcessBundle() != nil:
			f.ownerOf(req.GetInstructionId(), 0).control <- req
		case req.GetProcessBundleProgress() != nil:
			f.toOwner(req, req.GetProcessBundleProgress().GetInstructionId())
		case req.GetProcessBundleSplit() != nil:
			f.toOwner(req, req.GetProcessBundleSplit().GetInstructionId())
		case req.GetFinalizeBundle() != nil:
			f.toOwner(req, req.GetFinalizeBundle().GetInstructionId())
		case req.GetMonitoringInfos() != nil:
			f.splitMetadataRequest(req)
		case req.GetRegister() != nil:
			f.respond(req.GetInstructionId(), "structtensor/beam: a worker of several processes takes bundle descriptors by GetProcessBundleDescriptor, not by Register")
		default:
			// Harness-wide requests (harness metrics, data samples): the
			// first process answers.
			f.children[0].control <- req
		}
	}
}

func (f *fanOut) respond(inst, msg string) {
	if err := f.control.send(&fnpb.InstructionResponse{InstructionId: inst, Error: msg}); err != nil {
		f.fail(err)
	}
}

// ownerOf returns the process that runs bundle inst, choosing one when
// the bundle is new, and counts n more bytes of input sent to it. Data
// for a bundle can reach the relay before the instruction itself, so both
// paths choose.
//
// A new bundle goes to the process with the least input in flight, then
// the fewest bundles. Prism splits a slow bundle's remainder off into a
// new bundle, then that one's, and so on (halves, quarters, ...): bytes
// in flight send the split-off bundles to the process that does not run
// the big first one, where counting bundles alone would not.
func (f *fanOut) ownerOf(inst string, n int) *harnessProcess {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.owner[inst]
	if !ok {
		c = f.children[0]
		for _, d := range f.children[1:] {
			if d.load < c.load || d.load == c.load && d.active < c.active {
				c = d
			}
		}
		c.active++
		f.owner[inst] = c
		f.running[inst] = 0
	}
	if _, ok := f.running[inst]; ok {
		f.running[inst] += int64(n)
		c.load += int64(n)
	}
	return c
}

func (f *fanOut) toOwner(req *fnpb.InstructionRequest, inst string) {
	f.mu.Lock()
	c, ok := f.owner[inst]
	f.mu.Unlock()
	if !ok {
		f.respond(req.GetInstructionId(), fmt.Sprintf("structtensor/beam: no bundle %q in flight", inst))
		return
	}
	c.control <- req
}

// splitMetadataRequest asks each process for the metric metadata of its
// own short IDs.
func (f *fanOut) splitMetadataRequest(req *fnpb.InstructionRequest) {
	byProcess := map[int][]string{}
	for _, id := range req.GetMonitoringInfos().GetMonitoringInfoId() {
		if i, short, ok := splitShortID(id); ok && i < len(f.children) {
			byProcess[i] = append(byProcess[i], short)
		}
	}
	inst := req.GetInstructionId()
	if len(byProcess) == 0 {
		f.control.send(&fnpb.InstructionResponse{InstructionId: inst, Response: &fnpb.InstructionResponse_MonitoringInfos{
			MonitoringInfos: &fnpb.MonitoringInfosMetadataResponse{}}})
		return
	}
	f.mu.Lock()
	f.metadata[inst] = &metadataMerge{pending: len(byProcess), infos: map[string]*pipepb.MonitoringInfo{}}
	f.mu.Unlock()
	for i, ids := range byProcess {
		f.children[i].control <- &fnpb.InstructionRequest{InstructionId: inst, Request: &fnpb.InstructionRequest_MonitoringInfos{
			MonitoringInfos: &fnpb.MonitoringInfosMetadataRequest{MonitoringInfoId: ids}}}
	}
}

func shortID(i int, id string) string { return strconv.Itoa(i) + ":" + id }

func splitShortID(id string) (int, string, bool) {
	p, short, ok := strings.Cut(id, ":")
	i, err := strconv.Atoi(p)
	return i, short, ok && err == nil && i >= 0
}

func prefixShortIDs(i int, m map[string][]byte) map[string][]byte {
	if len(m) == 0 {
		return m
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[shortID(i, k)] = v
	}
	return out
}

// fromProcess relays a process's answer to an instruction.
func (f *fanOut) fromProcess(c *harnessProcess, resp *fnpb.InstructionResponse) {
	inst := resp.GetInstructionId()
	f.mu.Lock()
	if n, ok := f.running[inst]; ok {
		// The answer to a ProcessBundle, done or failed. The bundle keeps
		// its process: a late progress or split request for it gets the
		// process's answer for a finished bundle.
		delete(f.running, inst)
		c.active--
		c.load -= n
	}
	m, merging := f.metadata[inst]
	f.mu.Unlock()
	switch r := resp.GetResponse().(type) {
	case *fnpb.InstructionResponse_ProcessBundle:
		r.ProcessBundle.MonitoringData = prefixShortIDs(c.index, r.ProcessBundle.GetMonitoringData())
	case *fnpb.InstructionResponse_ProcessBundleProgress:
		r.ProcessBundleProgress.MonitoringData = prefixShortIDs(c.index, r.ProcessBundleProgress.GetMonitoringData())
	case *fnpb.InstructionResponse_HarnessMonitoringInfos:
		r.HarnessMonitoringInfos.MonitoringData = prefixShortIDs(c.index, r.HarnessMonitoringInfos.GetMonitoringData())
	}
	if merging {
		f.mu.Lock()
		for k, v := range resp.GetMonitoringInfos().GetMonitoringInfo() {
			m.infos[shortID(c.index, k)] = v
		}
		if resp.GetError() != "" {
			m.err = resp.GetError()
		}
		m.pending--
		last := m.pending == 0
		if last {
			delete(f.metadata, inst)
		}
		f.mu.Unlock()
		if !last {
			return
		}
		resp = &fnpb.InstructionResponse{InstructionId: inst, Error: m.err, Response: &fnpb.InstructionResponse_MonitoringInfos{
			MonitoringInfos: &fnpb.MonitoringInfosMetadataResponse{MonitoringInfo: m.infos}}}
	}
	if err := f.control.send(resp); err != nil {
		f.fail(err)
	}
}

// process returns the harness process that opened a stream to the relay.
func (f *fanOut) process(ctx context.Context) (*harnessProcess, error) {
	id, err := grpcx.ReadWorkerID(ctx)
	if err != nil {
		return nil, err
	}
	i, err := strconv.Atoi(id)
	if err != nil || i < 0 || i >= len(f.children) {
		return nil, fmt.Errorf("structtensor/beam: unknown harness process %q", id)
	}
	return f.children[i], nil
}

// serve runs a stream from a harness process: recv relays what the
// process sends, and the queue's messages are sent to it, until either
// side ends.
func serve[S, R any](ctx context.Context, send func(S) error, recv func() (R, error), queue chan S, relay func(R)) error {
	done := make(chan error, 1)
	go func() {
		for {
			m, err := recv()
			if err != nil {
				done <- err
				return
			}
			relay(m)
		}
	}()
	for {
		select {
		case m := <-queue:
			if err := send(m); err != nil {
				return err
			}
		case err := <-done:
			if err == io.EOF {
				return nil
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Control serves a harness process's control stream.
func (f *fanOut) Control(stream fnpb.BeamFnControl_ControlServer) error {
	c, err := f.process(stream.Context())
	if err != nil {
		return err
	}
	err = serve(stream.Context(), stream.Send, stream.Recv, c.control, func(r *fnpb.InstructionResponse) { f.fromProcess(c, r) })
	f.mu.Lock()
	finishing := f.finishing
	f.mu.Unlock()
	if !finishing {
		f.fail(fmt.Errorf("harness process %d left the control stream: %v", c.index, err))
	}
	return err
}

// GetProcessBundleDescriptor fetches a descriptor from the runner and
// points its data and state endpoints at the relay.
func (f *fanOut) GetProcessBundleDescriptor(ctx context.Context, req *fnpb.GetProcessBundleDescriptorRequest) (*fnpb.ProcessBundleDescriptor, error) {
	d, err := f.ctrl.GetProcessBundleDescriptor(f.upCtx, req)
	if err != nil {
		return nil, err
	}
	d = proto.Clone(d).(*fnpb.ProcessBundleDescriptor)
	for _, t := range d.GetTransforms() {
		if u := t.GetSpec().GetUrn(); u != urnDataSource && u != urnDataSink {
			continue
		}
		var port fnpb.RemoteGrpcPort
		if err := proto.Unmarshal(t.GetSpec().GetPayload(), &port); err != nil {
			return nil, err
		}
		if err := f.connectData(port.GetApiServiceDescriptor().GetUrl()); err != nil {
			return nil, err
		}
		port.ApiServiceDescriptor = &pipepb.ApiServiceDescriptor{Url: f.addr}
		if t.Spec.Payload, err = proto.Marshal(&port); err != nil {
			return nil, err
		}
	}
	if u := d.GetTimerApiServiceDescriptor().GetUrl(); u != "" {
		if err := f.connectData(u); err != nil {
			return nil, err
		}
		d.TimerApiServiceDescriptor = &pipepb.ApiServiceDescriptor{Url: f.addr}
	}
	if u := d.GetStateApiServiceDescriptor().GetUrl(); u != "" {
		if err := f.connectState(u); err != nil {
			return nil, err
		}
		d.StateApiServiceDescriptor = &pipepb.ApiServiceDescriptor{Url: f.addr}
	}
	return d, nil
}

var errEndpoints = errors.New("structtensor/beam: a worker of several processes relays one data and one state endpoint")

// connectData opens the data stream to the runner at url, once, and
// relays what comes down it to the processes running each instruction.
func (f *fanOut) connectData(url string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dataURL != "" {
		if url != f.dataURL {
			return fmt.Errorf("%w: %s and %s", errEndpoints, f.dataURL, url)
		}
		return nil
	}
	cc, err := grpcx.Dial(f.upCtx, url, grpcDialTimeout)
	if err != nil {
		return err
	}
	stream, err := fnpb.NewBeamFnDataClient(cc).Data(f.upCtx)
	if err != nil {
		cc.Close()
		return err
	}
	f.dataURL = url
	f.data = &upstream[*fnpb.Elements, *fnpb.Elements]{stream: stream}
	go func() {
		defer cc.Close()
		for {
			e, err := stream.Recv()
			if err != nil {
				return
			}
			parts := map[*harnessProcess]*fnpb.Elements{}
			part := func(inst string, n int) *fnpb.Elements {
				c := f.ownerOf(inst, n)
				if parts[c] == nil {
					parts[c] = &fnpb.Elements{}
				}
				return parts[c]
			}
			for _, d := range e.GetData() {
				p := part(d.GetInstructionId(), len(d.GetData()))
				p.Data = append(p.Data, d)
			}
			for _, t := range e.GetTimers() {
				p := part(t.GetInstructionId(), len(t.GetTimers()))
				p.Timers = append(p.Timers, t)
			}
			for c, p := range parts {
				c.data <- p
			}
		}
	}()
	return nil
}

// connectState opens the state stream to the runner at url, once, and
// relays each answer to the process that asked.
func (f *fanOut) connectState(url string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stateURL != "" {
		if url != f.stateURL {
			return fmt.Errorf("%w: %s and %s", errEndpoints, f.stateURL, url)
		}
		return nil
	}
	cc, err := grpcx.Dial(f.upCtx, url, grpcDialTimeout)
	if err != nil {
		return err
	}
	stream, err := fnpb.NewBeamFnStateClient(cc).State(f.upCtx)
	if err != nil {
		cc.Close()
		return err
	}
	f.stateURL = url
	f.state = &upstream[*fnpb.StateRequest, *fnpb.StateResponse]{stream: stream}
	go func() {
		defer cc.Close()
		for {
			r, err := stream.Recv()
			if err != nil {
				return
			}
			i, id, ok := splitShortID(r.GetId())
			if !ok || i >= len(f.children) {
				continue
			}
			r.Id = id
			f.children[i].state <- r
		}
	}()
	return nil
}

// Data serves a harness process's data stream.
func (f *fanOut) Data(stream fnpb.BeamFnData_DataServer) error {
	c, err := f.process(stream.Context())
	if err != nil {
		return err
	}
	return serve(stream.Context(), stream.Send, stream.Recv, c.data, func(e *fnpb.Elements) {
		f.mu.Lock()
		up := f.data
		f.mu.Unlock()
		if up == nil {
			f.fail(errors.New("structtensor/beam: a harness process sent data before fetching a bundle descriptor"))
			return
		}
		if err := up.send(e); err != nil {
			f.fail(fmt.Errorf("data stream to the runner: %w", err))
		}
	})
}

// State serves a harness process's state stream.
func (f *fanOut) State(stream fnpb.BeamFnState_StateServer) error {
	c, err := f.process(stream.Context())
	if err != nil {
		return err
	}
	return serve(stream.Context(), stream.Send, stream.Recv, c.state, func(r *fnpb.StateRequest) {
		r.Id = shortID(c.index, r.GetId())
		f.mu.Lock()
		up := f.state
		f.mu.Unlock()
		if up == nil {
			f.fail(errors.New("structtensor/beam: a harness process sent a state request before fetching a bundle descriptor"))
			return
		}
		if err := up.send(r); err != nil {
			f.fail(fmt.Errorf("state stream to the runner: %w", err))
		}
	})
}

// Logging relays a harness process's log entries to the runner.
func (f *fanOut) Logging(stream fnpb.BeamFnLogging_LoggingServer) error {
	for {
		l, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f.logging.send(l); err != nil {
			return err
		}
	}
}
