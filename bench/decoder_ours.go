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
		name:   "ours-1t",
		order:  10,
		about:  "decode.Plan.DecodeContiguous on one thread (native C++ engine via cgo); decode.ExamplePlan's on the datasets by feature spec",
		runsOn: protoDatasets | exampleDatasets,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOurs(e, ds, 1)
		},
	})
	registerDecoder(decoder{
		name:   "ours-all",
		order:  20,
		about:  "decode.Plan.DecodeContiguous (ExamplePlan's) on every core",
		runsOn: protoDatasets | exampleDatasets,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOurs(e, ds, runtime.NumCPU())
		},
	})
	registerDecoder(decoder{
		name:     "ours-1t-1mb",
		order:    15,
		about:    "ours-1t on the dataset cut into batches of about 1 MB, one DecodeContiguous each (no one output to compare)",
		runsOn:   protoDatasets | exampleDatasets,
		noOutput: true,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOursInBatches(e, ds, smallBatchBytes, 1, false)
		},
	})
	// The same two with the output of each batch handed back to the plan
	// (Plan.Recycle) once done with, as a loop over batches does: the
	// next batch is decoded into its memory rather than into fresh memory
	// (the TensorFlow op's outputs come from TensorFlow's allocator,
	// which reuses the memory of released tensors the same way).
	registerDecoder(decoder{
		name:   "ours-1t-recycle",
		order:  11,
		about:  "ours-1t, each call's output recycled (Plan.Recycle, ExamplePlan.Recycle) into the next call's",
		runsOn: protoDatasets | exampleDatasets,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			plan, err := compileOurs(e, ds)
			if err != nil {
				return nil, err
			}
			var prev *structtensor.StructTensor
			return func() (*structtensor.StructTensor, error) {
				plan.Recycle(prev)
				st, err := plan.DecodeContiguous(ds.data, ds.offsets, decode.DecodeOptions{Threads: 1})
				prev = st
				return st, err
			}, nil
		},
	})
	registerDecoder(decoder{
		name:     "ours-1t-1mb-recycle",
		order:    16,
		about:    "ours-1t-1mb, each batch's output recycled (Plan.Recycle) into the next batch's",
		runsOn:   protoDatasets | exampleDatasets,
		noOutput: true,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOursInBatches(e, ds, smallBatchBytes, 1, true)
		},
	})
	// The every-core target holds for batches of allCoresMinBytes and
	// more: these two measure it at that size, where a batch's fixed
	// costs (starting the threads, sizing, building the output) weigh
	// four times what they do in the dataset's one batch.
	registerDecoder(decoder{
		name:     "ours-1t-8mb",
		order:    17,
		about:    "ours-1t on the dataset cut into batches of about 8 MB of whole records (no one output to compare)",
		runsOn:   protoDatasets | exampleDatasets,
		noOutput: true,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOursInBatches(e, ds, allCoresMinBytes, 1, false)
		},
	})
	registerDecoder(decoder{
		name:     "ours-all-8mb",
		order:    21,
		about:    "ours-all on the dataset cut into batches of about 8 MB of whole records (no one output to compare)",
		runsOn:   protoDatasets | exampleDatasets,
		noOutput: true,
		prepare: func(e *env, ds *dataset) (decodeFunc, error) {
			return prepareOursInBatches(e, ds, allCoresMinBytes, runtime.NumCPU(), false)
		},
	})
	// The every-core goal judged on calls of ours-all and ours-1t
	// alternating, each in a process of its own (lockstep.go): run
	// apart, each meets other spells of the host's load, which on a
	// shared virtual machine moved the ratio by more than the goal's
	// margin.
	registerPaired("ours-all", "ours-1t", 22, ": the wall-clock speedup under the same load")
	registerPaired("ours-all-8mb", "ours-1t-8mb", 23, "")
	// The small-batch goal judged the same way: the dataset in 1 MB
	// batches and in one call, alternating. Run apart, the same code
	// measured 70% in one run and 83% in the next.
	registerPaired("ours-1t-1mb", "ours-1t", 24, ": MB per CPU-second in 1 MB batches under the same load")
	registerPaired("ours-1t-1mb-recycle", "ours-1t-recycle", 24, "")
}

func prepareOursInBatches(e *env, ds *dataset, size int64, threads int, recycle bool) (decodeFunc, error) {
	plan, err := compileOurs(e, ds)
	if err != nil {
		return nil, err
	}
	return func() (*structtensor.StructTensor, error) {
		return nil, decodeInBatches(plan, ds, size, threads, recycle, func(*structtensor.StructTensor) {})
	}, nil
}

// smallBatchBytes is the batch size of ours-1t-1mb.
const smallBatchBytes = 1_000_000

// decodeInBatches decodes ds on threads threads in consecutive batches of
// whole records of about size bytes each (at least one record), handing
// each batch's output to use, then, if recycle, back to the plan.
func decodeInBatches(plan contiguousPlan, ds *dataset, size int64, threads int, recycle bool, use func(*structtensor.StructTensor)) error {
	n := ds.numRecords()
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && ds.offsets[hi+1]-ds.offsets[lo] <= size {
			hi++
		}
		st, err := plan.DecodeContiguous(ds.data, ds.offsets[lo:hi+1], decode.DecodeOptions{Threads: threads})
		if err != nil {
			return fmt.Errorf("records %d to %d: %w", lo, hi, err)
		}
		use(st)
		if recycle {
			plan.Recycle(st)
		}
		lo = hi
	}
	return nil
}

func prepareOurs(e *env, ds *dataset, threads int) (decodeFunc, error) {
	plan, err := compileOurs(e, ds)
	if err != nil {
		return nil, err
	}
	return func() (*structtensor.StructTensor, error) {
		return plan.DecodeContiguous(ds.data, ds.offsets, decode.DecodeOptions{Threads: threads})
	}, nil
}

// contiguousPlan is what our decoders call of a plan: a decode.Plan's or,
// on the datasets by feature spec, a decode.ExamplePlan's.
type contiguousPlan interface {
	DecodeContiguous(data []byte, offsets []int64, opts ...decode.DecodeOptions) (*structtensor.StructTensor, error)
	Recycle(st *structtensor.StructTensor)
}

// compileOurs compiles the plan our decoders decode ds with.
func compileOurs(e *env, ds *dataset) (contiguousPlan, error) {
	if ds.features != nil {
		return compileExamplePlan(ds)
	}
	return compilePlan(e, ds)
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
