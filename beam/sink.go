package beam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"reflect"
	"slices"
	"strings"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/structtensor/structtensor-go/starrow"
	"github.com/structtensor/structtensor-go/stparquet"
	"github.com/structtensor/structtensor-go/tfrecord"
)

func init() {
	beamsdk.RegisterType(reflect.TypeOf((*rowsKeyFn)(nil)).Elem())
	register.DoFn1x2[Rows, int, Rows](&rowsKeyFn{})
	register.DoFn1x2[RecordBatch, int, RecordBatch](&batchKeyFn{})
	register.DoFn4x1[context.Context, int, func(*Rows) bool, func(string), error](&writeRowsFn{})
	register.DoFn4x1[context.Context, int, func(*RecordBatch) bool, func(string), error](&writeRecordsFn{})
	register.Function1x2[string, int, string](oneKey)
	register.DoFn4x1[context.Context, int, func(*string) bool, func(string), error](&finalizeFn{})
	register.Iter1[Rows]()
	register.Iter1[RecordBatch]()
	register.Iter1[string]()
}

// SinkFormat names the file format of a sink.
type SinkFormat string

const (
	// ArrowIPC writes Rows as Arrow IPC stream files (.arrows).
	ArrowIPC SinkFormat = "arrow"
	// Parquet writes Rows as Parquet files, one row group per batch.
	Parquet SinkFormat = "parquet"
)

// WriteOptions configure the sinks.
type WriteOptions struct {
	// Shards is how many groups the data is written in (default 16);
	// a group with no data writes no file.
	Shards int
}

// WriteRows writes Rows under prefix (any path Beam's filesystems know) as
// files PREFIX-SSSSS-of-NNNNN.EXT and returns a PCollection of the final
// file names. Each shard is written under a temporary name unique to the
// attempt, and a grouping step after every shard is done renames the
// shards of the attempts that succeeded and removes every other temporary
// file under the prefix, so a failed or retried attempt never leaves a
// partial or duplicate file.
func WriteRows(s beamsdk.Scope, rows beamsdk.PCollection, prefix string, format SinkFormat, opts WriteOptions) (beamsdk.PCollection, error) {
	s = s.Scope("structtensor.WriteRows")
	if format != ArrowIPC && format != Parquet {
		return beamsdk.PCollection{}, fmt.Errorf("structtensor/beam: unknown sink format %q (want %q or %q)", format, ArrowIPC, Parquet)
	}
	shards := beamsdk.GroupByKey(s, beamsdk.ParDo(s, &rowsKeyFn{Shards: opts.shards()}, rows))
	temps := beamsdk.ParDo(s, &writeRowsFn{Prefix: prefix, Format: format}, shards)
	return finalize(s, prefix, "."+string(format), temps), nil
}

// WriteRecords writes the records of RecordBatches as TFRecord files
// PREFIX-SSSSS-of-NNNNN.tfrecord, as WriteRows does.
func WriteRecords(s beamsdk.Scope, batches beamsdk.PCollection, prefix string, opts WriteOptions) beamsdk.PCollection {
	s = s.Scope("structtensor.WriteRecords")
	shards := beamsdk.GroupByKey(s, beamsdk.ParDo(s, &batchKeyFn{Shards: opts.shards()}, batches))
	temps := beamsdk.ParDo(s, &writeRecordsFn{Prefix: prefix}, shards)
	return finalize(s, prefix, ".tfrecord", temps)
}

func (o WriteOptions) shards() int {
	if o.Shards <= 0 {
		return 16
	}
	return o.Shards
}

// shardKey spreads elements over shards by their origin (file and first
// byte offset), so a retried attempt sends the same batch to the same shard.
func shardKey(file string, positions []int64, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(file))
	if len(positions) > 0 {
		fmt.Fprint(h, positions[0])
	}
	return int(h.Sum32() % uint32(shards))
}

type rowsKeyFn struct{ Shards int }

func (fn *rowsKeyFn) ProcessElement(r Rows) (int, Rows) {
	return shardKey(r.File, r.Positions, fn.Shards), r
}

type batchKeyFn struct{ Shards int }

func (fn *batchKeyFn) ProcessElement(b RecordBatch) (int, RecordBatch) {
	return shardKey(b.File, b.Positions, fn.Shards), b
}

// tempMarker separates a prefix from the attempt-unique part of a
// temporary shard name.
const tempMarker = ".tmp-"

func tempName(prefix string, shard int, ext string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return fmt.Sprintf("%s%s%s-%05d%s", prefix, tempMarker, hex.EncodeToString(b), shard, ext)
}

// openShard creates a temporary shard file and returns it with its name.
func openShard(ctx context.Context, prefix string, shard int, ext string) (io.WriteCloser, string, error) {
	name := tempName(prefix, shard, ext)
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return nil, "", err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return nil, "", fmt.Errorf("structtensor/beam: creating %s: %w", name, err)
	}
	return w, name, nil
}

// failAfterWrite, when set (by tests, in the worker), is called after each
// batch a shard writer writes; an error fails the attempt there.
var failAfterWrite func(shard int) error

type writeRowsFn struct {
	Prefix string
	Format SinkFormat
}

func (fn *writeRowsFn) ProcessElement(ctx context.Context, shard int, rows func(*Rows) bool, emit func(string)) error {
	f, name, err := openShard(ctx, fn.Prefix, shard, "."+string(fn.Format))
	if err != nil {
		return err
	}
	defer f.Close() // after a failure; the temporary file is removed by finalize
	type writer interface {
		Close() error
	}
	var ipc *starrow.IPCWriter
	var pq *stparquet.Writer
	// The format writers see no Close: the Parquet writer would close the
	// file itself, and this function closes it to commit it.
	unclosable := struct{ io.Writer }{f}
	if fn.Format == ArrowIPC {
		ipc = starrow.NewIPCWriter(unclosable)
	} else {
		pq = stparquet.NewWriter(unclosable)
	}
	var r Rows
	for rows(&r) {
		if ipc != nil {
			err = ipc.Write(r.Tensor)
		} else {
			err = pq.Write(r.Tensor)
		}
		if err == nil && failAfterWrite != nil {
			err = failAfterWrite(shard)
		}
		if err != nil {
			return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
		}
	}
	var w writer = pq
	if ipc != nil {
		w = ipc
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
	}
	emit(name)
	return nil
}

type writeRecordsFn struct{ Prefix string }

func (fn *writeRecordsFn) ProcessElement(ctx context.Context, shard int, batches func(*RecordBatch) bool, emit func(string)) error {
	f, name, err := openShard(ctx, fn.Prefix, shard, ".tfrecord")
	if err != nil {
		return err
	}
	defer f.Close()
	w := tfrecord.NewWriter(f)
	var b RecordBatch
	for batches(&b) {
		for i := range b.Positions {
			if err := w.Write(b.Data[b.Offsets[i]:b.Offsets[i+1]]); err != nil {
				return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("structtensor/beam: writing %s: %w", name, err)
	}
	emit(name)
	return nil
}

func oneKey(name string) (int, string) { return 0, name }

func finalize(s beamsdk.Scope, prefix, ext string, temps beamsdk.PCollection) beamsdk.PCollection {
	all := beamsdk.GroupByKey(s, beamsdk.ParDo(s, oneKey, temps))
	return beamsdk.ParDo(s, &finalizeFn{Prefix: prefix, Ext: ext}, all)
}

// finalizeFn runs once, after every shard is written: it renames the
// committed temporary files to their final names and removes the others.
type finalizeFn struct {
	Prefix, Ext string
}

func (fn *finalizeFn) ProcessElement(ctx context.Context, _ int, temps func(*string) bool, emit func(string)) error {
	var names []string
	var n string
	for temps(&n) {
		names = append(names, n)
	}
	slices.Sort(names)
	fs, err := filesystem.New(ctx, fn.Prefix)
	if err != nil {
		return err
	}
	defer fs.Close()
	ren, ok := fs.(filesystem.Renamer)
	rm, ok2 := fs.(filesystem.Remover)
	if !ok || !ok2 {
		return fmt.Errorf("structtensor/beam: the filesystem of %s cannot rename and remove files", fn.Prefix)
	}
	for i, temp := range names {
		final := fmt.Sprintf("%s-%05d-of-%05d%s", fn.Prefix, i, len(names), fn.Ext)
		if err := ren.Rename(ctx, temp, final); err != nil {
			return fmt.Errorf("structtensor/beam: finalising %s as %s: %w", temp, final, err)
		}
		emit(final)
	}
	// Temporary files of failed or duplicate attempts.
	left, err := fs.List(ctx, fn.Prefix+tempMarker+"*")
	if err != nil {
		return fmt.Errorf("structtensor/beam: listing temporary files of %s: %w", fn.Prefix, err)
	}
	var errs []error
	for _, l := range left {
		if strings.HasPrefix(l, fn.Prefix+tempMarker) {
			errs = append(errs, rm.Remove(ctx, l))
		}
	}
	return errors.Join(errs...)
}
