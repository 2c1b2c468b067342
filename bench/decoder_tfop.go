//go:build tensorflow

package main

import (
	"fmt"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	configpb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// The decode op inside a TensorFlow session (package cops): the same plan
// as ours-1t, on one engine thread, in a graph records -> decode op run by
// TF_SessionRun, each timed call fetching every component and rebuilding
// the StructTensor in Go (tfbridge.Session.RunStruct). The records tensor
// is built once, untimed, as the other decoders get their records in
// memory. Built only with -tags tensorflow (make bench passes it), since
// it links the TensorFlow runtime.
func init() {
	registerDecoder(decoder{
		name:    "tf-op",
		order:   50,
		about:   "StructTensorDecodeProto (cops) in a TF 2.21 session via the C API, one engine thread, outputs rebuilt as a StructTensor",
		prepare: prepareTFOp,
	})
}

func prepareTFOp(e *env, ds *dataset) (decodeFunc, error) {
	d, err := decode.LoadDescriptorSet(e.schemas.raw)
	if err != nil {
		return nil, err
	}
	plan, err := decode.Compile(d, string(ds.message.FullName()), ds.paths...)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", ds.message.FullName(), err)
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
	sess, err := tfbridge.NewSession(g, &tfbridge.SessionOptions{Config: cfg})
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
	return func() (*structtensor.StructTensor, error) {
		return sess.RunStruct(feeds, sym)
	}, nil
}
