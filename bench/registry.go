package main

import (
	"sort"

	"github.com/structtensor/structtensor-go/structtensor"
)

// decodeFunc decodes the whole dataset once and returns the output (nil
// for a parse-only decoder). The harness times calls to it.
type decodeFunc func() (*structtensor.StructTensor, error)

// decoder is one entry of the registry. A decoder runs either in a Go
// process (prepare: the harness re-executes itself with -run-one, calls
// prepare once untimed, then times the returned function), or as another
// program (external: it runs the program and returns what it measured).
//
// Adding a decoder is one file that calls registerDecoder from init, for
// example bench/decoder_tfop.go behind a build tag:
//
//	//go:build tensorflow
//
//	package main
//
//	func init() {
//		registerDecoder(decoder{name: "tf-op", order: 50, about: "...", prepare: prepareTFOp})
//	}
//
// A prepare-style decoder is automatically part of the equality test in
// bench_test.go, which checks its output against every other Go decoder.
type decoder struct {
	name  string
	order int    // position in the output; ours-1t is 10
	about string // one line for -list and README

	prepare func(env *env, ds *dataset) (decodeFunc, error)
	// noOutput marks a decoder whose decodeFunc returns nil rather than
	// one StructTensor of the dataset (a parse-only baseline, a decode in
	// small batches): it is timed like the others but has no output to
	// digest or compare here; its own unit test checks it.
	noOutput bool
	external func(env *env, ds *dataset, file string) (*measurement, error)

	// unavailable, if set, returns why the decoder cannot run on this
	// machine ("" when it can); the harness reports it and skips it.
	unavailable func(env *env) string

	// runsOn says which datasets the decoder decodes; zero means the
	// protobuf datasets only.
	runsOn datasetKinds
	// someLeaves marks an external decoder that digests only some leaves
	// (those it decodes as ours does): only those are compared.
	someLeaves bool
	// timedOnce marks a decoder timed once per dataset even with -rounds:
	// a Python program that takes seconds to start, and whose ratio to
	// ours is far from any goal's edge.
	timedOnce bool
	// anchor names another prepare-style decoder of the same build whose
	// calls alternate with this one's, each in a process of its own
	// (lockstep.go): the measurement then holds both, for a ratio
	// measured under the same load.
	anchor string
}

// datasetKinds is a set of kinds of dataset.
type datasetKinds uint8

const (
	protoDatasets   datasetKinds = 1 << iota // datasetSpecs: protobuf records by descriptor
	exampleDatasets                          // exampleDatasetSpecs: tf.Examples by feature spec
)

// runs tells whether d decodes ds.
func (d *decoder) runs(ds *dataset) bool {
	kinds := d.runsOn
	if kinds == 0 {
		kinds = protoDatasets
	}
	if ds.features != nil {
		return kinds&exampleDatasets != 0
	}
	return kinds&protoDatasets != 0
}

var registry = map[string]decoder{}

// registerPaired registers name+"-paired": the in-process decoder name,
// registered before, timed in lockstep with anchor (lockstep.go), placed
// at order; why ends its description.
func registerPaired(name, anchor string, order int, why string) {
	d, ok := registry[name]
	if !ok || d.prepare == nil {
		panic("bench: no in-process decoder " + name + " to pair")
	}
	d.name, d.order, d.anchor = name+"-paired", order, anchor
	d.about = name + ", each call beside one of " + anchor + " (alternating, in lockstep)" + why
	registerDecoder(d)
}

func registerDecoder(d decoder) {
	if _, dup := registry[d.name]; dup {
		panic("bench: decoder " + d.name + " registered twice")
	}
	if (d.prepare == nil) == (d.external == nil) {
		panic("bench: decoder " + d.name + " needs exactly one of prepare and external")
	}
	registry[d.name] = d
}

// decodersInOrder returns the registered decoders sorted by order.
func decodersInOrder() []decoder {
	out := make([]decoder, 0, len(registry))
	for _, d := range registry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].order != out[j].order {
			return out[i].order < out[j].order
		}
		return out[i].name < out[j].name
	})
	return out
}
