package main

import (
	"fmt"
	"runtime"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Our decoder: a plan compiled from the same FileDescriptorSet for the
// dataset's leaf paths, decoding the records in place from their one
// contiguous buffer (the layout tfrecord.Reader.ReadBatch produces).
func init() {
	registerDecoder(decoder{
		name:  "ours-1t",
		order: 10,
		about: "decode.Plan.DecodeContiguous on one thread (native C++ engine via cgo)",
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOurs(e, ds, 1)
		},
	})
	registerDecoder(decoder{
		name:  "ours-all",
		order: 20,
		about: "decode.Plan.DecodeContiguous on every core",
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOurs(e, ds, runtime.NumCPU())
		},
	})
}

func prepareOurs(e *env, ds *dataset, threads int) (decodeFunc, error) {
	plan, err := compilePlan(e, ds)
	if err != nil {
		return nil, err
	}
	return func() (*structtensor.StructTensor, error) {
		return plan.DecodeContiguous(ds.data, ds.offsets, decode.WithThreads(threads))
	}, nil
}

// compilePlan compiles the plan every decoder built on the engine uses:
// the dataset's message projected on its leaf paths.
func compilePlan(e *env, ds *dataset) (*decode.Plan, error) {
	d, err := decode.LoadDescriptorSet(e.schemas.raw)
	if err != nil {
		return nil, err
	}
	plan, err := decode.Compile(d, string(ds.message.FullName()), ds.paths...)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", ds.message.FullName(), err)
	}
	return plan, nil
}
