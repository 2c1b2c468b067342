package beam

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"reflect"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/structtensor/structtensor-go/stats"
)

func init() {
	beamsdk.RegisterCoder(reflect.TypeOf((*stats.Accumulator)(nil)), encodeAccumulator, decodeAccumulator)
	register.Combiner3[*stats.Accumulator, Rows, *stats.Accumulator](&statsFn{})
	register.Combiner1[*stats.Accumulator](&mergeStatsFn{})
	register.DoFn3x1[context.Context, *stats.Accumulator, func(string), error](&writeStatsFn{})
	register.Emitter1[string]()
}

// encodeAccumulator is the Beam coder of partial statistics: their
// serialized form (stats.Accumulator.MarshalBinary), which
// decodeAccumulator checks as it reads.
func encodeAccumulator(a *stats.Accumulator) ([]byte, error) { return a.MarshalBinary() }

func decodeAccumulator(b []byte) (*stats.Accumulator, error) {
	a := new(stats.Accumulator)
	if err := a.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("structtensor/beam: decoding statistics: %w", err)
	}
	return a, nil
}

// StatsOptions configure Stats.
type StatsOptions struct {
	// Options are the statistics' (sketch sizes, how many quantiles and
	// frequent values); the zero value gives package stats' defaults.
	stats.Options
	// Shards is how many partial statistics the rows are first gathered
	// into (by file and byte offset, default 16) before these are merged
	// into one.
	Shards int
}

// Stats computes the statistics of Rows (package stats: per path, record
// counts, list lengths, numbers' moments and quantiles, strings' distinct
// counts and most frequent values) in two combines: the rows of each of
// StatsOptions.Shards shards go into partial statistics (a CombineFn, so
// each worker adds its bundles to its own partials first), and the
// partials are merged into one. Partial statistics travel in their
// serialized form and merge in whatever order the runner picks: counts,
// sums, minima and maxima come out exactly as one process computing over
// all the rows would have them, and the sketches stay within the bounds
// package stats documents. The result is a PCollection holding one
// *stats.Accumulator (WriteStats writes it; empty statistics when there
// are no rows).
func Stats(s beamsdk.Scope, rows beamsdk.PCollection, opts ...StatsOptions) (beamsdk.PCollection, error) {
	s = s.Scope("structtensor.Stats")
	var o StatsOptions
	if len(opts) > 1 {
		return beamsdk.PCollection{}, fmt.Errorf("structtensor/beam: more than one StatsOptions")
	}
	if len(opts) == 1 {
		o = opts[0]
	}
	// Check the options here, so that bad ones fail before the job runs.
	a, err := stats.New(o.Options)
	if err != nil {
		return beamsdk.PCollection{}, fmt.Errorf("structtensor/beam: %w", err)
	}
	shards := o.Shards
	if shards <= 0 {
		shards = 16
	}
	keyed := beamsdk.ParDo(s, &rowsKeyFn{Shards: shards}, rows)
	partials := beamsdk.DropKey(s, beamsdk.CombinePerKey(s, &statsFn{Options: a.Options()}, keyed))
	return beamsdk.Combine(s, &mergeStatsFn{Options: a.Options()}, partials), nil
}

type statsFn struct {
	Options stats.Options
}

func (fn *statsFn) CreateAccumulator() (*stats.Accumulator, error) { return stats.New(fn.Options) }

func (fn *statsFn) AddInput(a *stats.Accumulator, r Rows) (*stats.Accumulator, error) {
	if err := a.Add(r.Tensor); err != nil {
		return nil, fmt.Errorf("structtensor/beam: statistics of the rows of %s: %w", r.File, err)
	}
	return a, nil
}

// onStatsMerge, when set (by tests, in process), is called with the
// records of both sides of each merge of partial statistics.
var onStatsMerge func(a, b uint64)

func (fn *statsFn) MergeAccumulators(a, b *stats.Accumulator) (*stats.Accumulator, error) {
	if onStatsMerge != nil {
		onStatsMerge(a.Records(), b.Records())
	}
	if err := a.Merge(b); err != nil {
		return nil, fmt.Errorf("structtensor/beam: %w", err)
	}
	return a, nil
}

func (fn *statsFn) ExtractOutput(a *stats.Accumulator) *stats.Accumulator { return a }

// mergeStatsFn merges partial statistics into one.
type mergeStatsFn struct {
	Options stats.Options
}

func (fn *mergeStatsFn) CreateAccumulator() (*stats.Accumulator, error) { return stats.New(fn.Options) }

func (fn *mergeStatsFn) AddInput(a, b *stats.Accumulator) (*stats.Accumulator, error) {
	return (*statsFn)(fn).MergeAccumulators(a, b)
}

func (fn *mergeStatsFn) MergeAccumulators(a, b *stats.Accumulator) (*stats.Accumulator, error) {
	return (*statsFn)(fn).MergeAccumulators(a, b)
}

func (fn *mergeStatsFn) ExtractOutput(a *stats.Accumulator) *stats.Accumulator { return a }

// WriteStatsOptions configure WriteStats.
type WriteStatsOptions struct {
	// DatasetName names the dataset in the DatasetFeatureStatisticsList.
	DatasetName string
}

// WriteStats writes each statistics of a PCollection from Stats under
// prefix (any path Beam's filesystems know): PREFIX.json (the layout of
// package stats), PREFIX.pb and PREFIX.pbtxt (tensorflow_metadata's
// DatasetFeatureStatisticsList, binary and text, as TFDV writes and
// reads them). Each file is written under a temporary name and then
// renamed, so that a reader never sees a partial file and a retry
// writes the same files again. It returns the PCollection of the names
// written.
func WriteStats(s beamsdk.Scope, statistics beamsdk.PCollection, prefix string, opts ...WriteStatsOptions) beamsdk.PCollection {
	s = s.Scope("structtensor.WriteStats")
	var o WriteStatsOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return beamsdk.ParDo(s, &writeStatsFn{Prefix: prefix, DatasetName: o.DatasetName}, statistics)
}

type writeStatsFn struct {
	Prefix      string
	DatasetName string
}

func (fn *writeStatsFn) ProcessElement(ctx context.Context, a *stats.Accumulator, emit func(string)) error {
	sum := a.Summary()
	var js bytes.Buffer
	if err := sum.WriteJSON(&js); err != nil {
		return fmt.Errorf("structtensor/beam: statistics as JSON: %w", err)
	}
	popts := stats.ProtoOptions{DatasetName: fn.DatasetName}
	pb, err := sum.MarshalStatistics(popts)
	if err != nil {
		return fmt.Errorf("structtensor/beam: statistics: %w", err)
	}
	txt, err := sum.MarshalStatisticsText(popts)
	if err != nil {
		return fmt.Errorf("structtensor/beam: statistics: %w", err)
	}
	fs, err := filesystem.New(ctx, fn.Prefix)
	if err != nil {
		return fmt.Errorf("structtensor/beam: %s: %w", fn.Prefix, err)
	}
	defer fs.Close()
	ren, ok := fs.(filesystem.Renamer)
	if !ok {
		return fmt.Errorf("structtensor/beam: the filesystem of %s cannot rename files", fn.Prefix)
	}
	var nonce [8]byte
	rand.Read(nonce[:])
	for _, f := range []struct {
		ext  string
		data []byte
	}{{".json", js.Bytes()}, {".pb", pb}, {".pbtxt", txt}} {
		name := fn.Prefix + f.ext
		temp := name + ".temp-" + hex.EncodeToString(nonce[:])
		if err := writeFile(ctx, fs, temp, f.data); err != nil {
			return err
		}
		if err := ren.Rename(ctx, temp, name); err != nil {
			return fmt.Errorf("structtensor/beam: renaming %s to %s: %w", temp, name, err)
		}
		emit(name)
	}
	return nil
}

func writeFile(ctx context.Context, fs filesystem.Interface, name string, data []byte) error {
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return fmt.Errorf("structtensor/beam: %s: %w", name, err)
	}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		w.Close()
		return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
	}
	return nil
}
