package tfbridge

// #include "bridge.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	configpb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/internal/optarg"
)

// SessionOptions configures a session. The zero value is TensorFlow's
// defaults; like every configurable call of this module, NewSession and
// LoadSavedModel take it as an optional trailing argument (at most one).
type SessionOptions struct {
	// Target is the execution engine; empty runs in process.
	Target string
	// Config is a serialized tensorflow.ConfigProto (thread pools,
	// device counts, ...); empty uses TensorFlow's defaults.
	Config []byte
}

// newCSessionOptions returns TF_SessionOptions for the at most one
// options given; the caller deletes them.
func newCSessionOptions(optsList []SessionOptions) (*C.TF_SessionOptions, error) {
	opts, err := optarg.One(optsList, ErrInvalidArgument)
	if err != nil {
		return nil, err
	}
	c := C.TF_NewSessionOptions()
	if opts.Target != "" {
		t := C.CString(opts.Target)
		C.TF_SetTarget(c, t)
		C.free(unsafe.Pointer(t))
	}
	if len(opts.Config) > 0 {
		st := newStatus()
		defer st.free()
		C.TF_SetConfig(c, unsafe.Pointer(&opts.Config[0]), C.size_t(len(opts.Config)), st.c)
		if err := st.err(); err != nil {
			C.TF_DeleteSessionOptions(c)
			return nil, fmt.Errorf("session config: %w", err)
		}
	}
	return c, nil
}

// Session runs a Graph. Run may be called from many goroutines at once;
// Close waits for running calls to finish.
type Session struct {
	mu      sync.RWMutex // Run read-holds it, Close write-holds it
	c       *C.TF_Session
	graph   *Graph
	cleanup runtime.Cleanup
}

func deleteSession(c *C.TF_Session) {
	st := newStatus()
	defer st.free()
	C.TF_CloseSession(c, st.c)
	C.TF_DeleteSession(c, st.c)
}

func wrapSession(c *C.TF_Session, g *Graph) *Session {
	s := &Session{c: c, graph: g}
	s.cleanup = runtime.AddCleanup(s, deleteSession, c)
	return s
}

// NewSession returns a session over g. The graph may keep growing; each Run
// sees the operations added so far.
func NewSession(g *Graph, opts ...SessionOptions) (*Session, error) {
	co, err := newCSessionOptions(opts)
	if err != nil {
		return nil, err
	}
	defer C.TF_DeleteSessionOptions(co)
	if err := g.lock(); err != nil {
		return nil, err
	}
	defer g.unlock()
	st := newStatus()
	defer st.free()
	c := C.TF_NewSession(g.c, co, st.c)
	if err := st.err(); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	return wrapSession(c, g), nil
}

// Graph returns the session's graph.
func (s *Session) Graph() *Graph { return s.graph }

// Close closes and deletes the session. Close is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return nil
	}
	s.cleanup.Stop()
	st := newStatus()
	defer st.free()
	C.TF_CloseSession(s.c, st.c)
	closeErr := st.err()
	C.TF_DeleteSession(s.c, st.c)
	s.c = nil
	if closeErr != nil {
		return fmt.Errorf("close session: %w", closeErr)
	}
	if err := st.err(); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// Run is RunContext without a context: it runs to completion.
func (s *Session) Run(feeds map[Output]*Tensor, fetches []Output, targets []*Operation) ([]*Tensor, error) {
	return s.RunContext(context.Background(), feeds, fetches, targets)
}

// RunContext feeds the given tensors, computes fetches and runs targets
// (operations run for their effect). It returns one tensor per fetch, owned
// by the caller. The feeds remain the caller's.
//
// The TensorFlow C API cannot interrupt a run from outside, so ctx acts at
// the two points it can: a ctx already done returns its error before the
// run starts, and a ctx deadline becomes the run's timeout (RunOptions
// timeout_in_ms), which TensorFlow enforces by cancelling the run's
// kernels. A run stopped by the deadline returns an error that matches
// both context.DeadlineExceeded and ErrDeadlineExceeded. Cancelling ctx
// while a run is under way does not stop it.
func (s *Session) RunContext(ctx context.Context, feeds map[Output]*Tensor, fetches []Output, targets []*Operation) ([]*Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("session run: %w", err)
	}
	var runOpts []byte
	if deadline, ok := ctx.Deadline(); ok {
		ms := time.Until(deadline).Milliseconds()
		if ms <= 0 {
			return nil, fmt.Errorf("session run: %w", context.DeadlineExceeded)
		}
		var err error
		if runOpts, err = proto.Marshal(&configpb.RunOptions{TimeoutInMs: ms}); err != nil {
			return nil, fmt.Errorf("session run options: %w", err)
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.c == nil {
		return nil, fmt.Errorf("%w: session", ErrClosed)
	}
	inputs := make([]C.TF_Output, 0, len(feeds))
	values := make([]*C.TF_Tensor, 0, len(feeds))
	for o, t := range feeds {
		if o.Op == nil || o.Op.g != s.graph {
			return nil, fmt.Errorf("%w: feed is not an output of the session's graph", ErrGraph)
		}
		if t == nil || t.c == nil {
			return nil, fmt.Errorf("%w: tensor fed to %s", ErrClosed, o.Name())
		}
		inputs = append(inputs, o.c())
		values = append(values, t.c)
	}
	outputs := make([]C.TF_Output, len(fetches))
	for i, o := range fetches {
		if o.Op == nil || o.Op.g != s.graph {
			return nil, fmt.Errorf("%w: fetch %d is not an output of the session's graph", ErrGraph, i)
		}
		outputs[i] = o.c()
	}
	ctargets := make([]*C.TF_Operation, len(targets))
	for i, op := range targets {
		if op == nil || op.g != s.graph {
			return nil, fmt.Errorf("%w: target %d is not an operation of the session's graph", ErrGraph, i)
		}
		ctargets[i] = op.c
	}
	results := make([]*C.TF_Tensor, len(fetches))
	st := newStatus()
	defer st.free()
	var cRunOpts *C.TF_Buffer
	if runOpts != nil {
		// TF_NewBufferFromString copies, so runOpts need not stay pinned.
		cRunOpts = C.TF_NewBufferFromString(unsafe.Pointer(&runOpts[0]), C.size_t(len(runOpts)))
		defer C.TF_DeleteBuffer(cRunOpts)
	}
	C.TF_SessionRun(s.c, cRunOpts,
		ptrOr(inputs), ptrOr(values), C.int(len(inputs)),
		ptrOr(outputs), ptrOr(results), C.int(len(outputs)),
		ptrOr(ctargets), C.int(len(ctargets)),
		nil, st.c)
	runtime.KeepAlive(feeds)
	if err := st.err(); err != nil {
		for _, r := range results {
			if r != nil {
				C.TF_DeleteTensor(r)
			}
		}
		if errors.Is(err, ErrDeadlineExceeded) && runOpts != nil {
			return nil, fmt.Errorf("session run: %w (%w)", context.DeadlineExceeded, err)
		}
		return nil, fmt.Errorf("session run: %w", err)
	}
	out := make([]*Tensor, len(results))
	for i, r := range results {
		out[i] = wrapTensor(r)
	}
	return out, nil
}
