//go:build tensorflow

package main

import (
	"context"
	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	configpb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// The decode op inside a TensorFlow session (package cops): the same plan
// as ours-1t, on one engine thread, in a graph records -> decode op run by
// TF_SessionRun. The records tensor is built once, untimed, as the other
// decoders get their records in memory. Built only with -tags tensorflow
// (make bench passes it), since it links the TensorFlow runtime.
//
// Two lines, side by side:
//
//   - tf-op is the op as a graph node runs it: each timed call fetches
//     every component output as a TensorFlow tensor and releases it, the
//     way a model consuming the decoded tensors would see them. Its first,
//     untimed call (the harness's warm-up, whose output it digests and
//     compares with the other decoders) also rebuilds the StructTensor
//     from the tensors it fetched (graphst.Struct.Value), so the number is
//     that of a decode that gives the right answer.
//   - tf-op-go also rebuilds the Go StructTensor in every timed call
//     (graphst.Run): the op used from Go, as savedmodel's
//     DataView.Decode does.
func init() {
	registerDecoder(decoder{
		name:    "tf-op",
		order:   50,
		about:   "StructTensorDecodeProto (cops) in a TF 2.21 session via the C API, one engine thread, every output fetched as a TF tensor",
		prepare: func(e *env, ds *dataset) (decodeFunc, error) { return prepareTFOp(e, ds, false) },
	})
	registerDecoder(decoder{
		name:    "tf-op-go",
		order:   51,
		about:   "tf-op, the outputs rebuilt as a Go StructTensor (graphst.Run)",
		prepare: func(e *env, ds *dataset) (decodeFunc, error) { return prepareTFOp(e, ds, true) },
	})
	// ours-1t >= tf-op is judged on calls alternating (lockstep.go), with
	// ours-1t of this build as the anchor: run apart, the two met
	// different spells of the host's load.
	registerPaired("tf-op", "ours-1t", 52, "")
	// And ours-1t-recycle >= tf-op, the op's output memory being reused
	// from call to call by TensorFlow's allocator: ours-1t-recycle timed,
	// tf-op the anchor.
	registerPaired("ours-1t-recycle", "tf-op", 53, ": the Go path with its memory reused, as the op's is")
}

func prepareTFOp(e *env, ds *dataset, rebuild bool) (decodeFunc, error) {
	plan, err := compilePlan(e, ds)
	if err != nil {
		return nil, err
	}
	g := tfbridge.NewGraph()
	ph, err := g.AddOperation(tfbridge.OpSpec{Type: "Placeholder", Name: "records",
		Attrs: map[string]any{"dtype": structtensor.String, "shape": structtensor.Shape{structtensor.Unknown}}})
	if err != nil {
		return nil, err
	}
	sym, err := cops.DecodeGraph(g, ph.Output(0), plan, cops.Options{Threads: 1})
	if err != nil {
		return nil, err
	}
	// One inter-op and one intra-op thread: the op is the whole graph.
	cfg, err := proto.Marshal(&configpb.ConfigProto{InterOpParallelismThreads: 1, IntraOpParallelismThreads: 1})
	if err != nil {
		return nil, err
	}
	sess, err := tfbridge.NewSession(g, tfbridge.SessionOptions{Config: cfg})
	if err != nil {
		return nil, err
	}
	recs, err := structtensor.NewStringTensor(structtensor.Shape{ds.numRecords()}, ds.data, ds.offsets, false)
	if err != nil {
		return nil, err
	}
	in, err := tfbridge.NewTensor(recs)
	if err != nil {
		return nil, err
	}
	feeds := map[tfbridge.Output]*tfbridge.Tensor{ph.Output(0): in}
	fetches := sym.Components()
	// One run before the harness's: the kernel sizes the buffers it lends
	// the engine from its previous batch, so the first batch of a session
	// is copied out of engine memory. From the second on the outputs are
	// decoded in place, and so are the output digested and every timed one.
	fetched, err := sess.Run(feeds, fetches, nil)
	if err != nil {
		return nil, err
	}
	for _, t := range fetched {
		t.Close()
	}
	if rebuild {
		return func() (*structtensor.StructTensor, error) {
			v, err := graphst.Run(context.Background(), sess, feeds, sym)
			if err != nil {
				return nil, err
			}
			return v.(*structtensor.StructTensor), nil
		}, nil
	}
	warm := false
	return func() (*structtensor.StructTensor, error) {
		fetched, err := sess.Run(feeds, fetches, nil)
		if err != nil {
			return nil, err
		}
		defer func() {
			for _, t := range fetched {
				t.Close()
			}
		}()
		if !warm {
			warm = true
			return sym.Value(fetched)
		}
		return nil, nil
	}, nil
}
