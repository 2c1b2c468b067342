package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/decode"
)

// BenchmarkSmallBatches times our decoder (ours-1t, on one thread) and
// protobuf-go's generated code (protogo-gen, parse only) side by side on
// batches of the sizes a model server or a training step decodes: 1, 16
// and 256 records of every protobuf dataset, the two alternating call by
// call so that both meet the same spells of the machine. It reports each
// one's time per batch and their ratio (protogo-gen's time over ours:
// above 1, ours is faster). Here a batch's fixed costs weigh most: every
// leaf of the schema is a column of the output, present in the batch or
// not, so a record of a schema of six hundred leaves builds six hundred
// values where the parser allocates for the few fields it holds.
//
//	go test ./bench -run '^$' -bench SmallBatches -benchtime 2000x
func BenchmarkSmallBatches(b *testing.B) {
	e, err := newEnv("", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, spec := range datasetSpecs {
		full, err := generate(e.schemas, spec, 2e6, 1)
		if err != nil {
			b.Fatal(err)
		}
		if full.features != nil {
			continue // decoded by feature spec: protogo-gen has no counterpart
		}
		for _, n := range []int{1, 16, 256} {
			n = min(n, full.numRecords())
			ds := *full
			ds.offsets = full.offsets[:n+1]
			ds.data = full.data[:full.offsets[n]]
			b.Run(fmt.Sprintf("%s/records=%d", spec.name, n), func(b *testing.B) {
				plan, err := compileOurs(e, &ds)
				if err != nil {
					b.Fatal(err)
				}
				mt, err := generatedType(&ds)
				if err != nil {
					b.Fatal(err)
				}
				var ours, gen time.Duration
				for b.Loop() {
					t0 := time.Now()
					if _, err := plan.DecodeContiguous(ds.data, ds.offsets, decode.DecodeOptions{Threads: 1}); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if _, err := parseGenerated(mt, &ds); err != nil {
						b.Fatal(err)
					}
					ours, gen = ours+t1.Sub(t0), gen+time.Since(t1)
				}
				b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ours-ns/batch")
				b.ReportMetric(float64(gen.Nanoseconds())/float64(b.N), "protogo-gen-ns/batch")
				b.ReportMetric(float64(gen)/float64(ours), "protogo-gen/ours")
				b.ReportMetric(0, "ns/op") // the two decoders' sum: not a figure of either
			})
		}
	}
}
