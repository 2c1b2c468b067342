// Package beam decodes record files larger than one machine on Apache
// Beam: the same plans and engine as package decode, run by any Beam
// runner (Prism in process, Flink, Spark, Dataflow).
//
// It is a Go module of its own (github.com/structtensor/structtensor-go/beam),
// so that users of the core library never download Beam's dependencies.
//
// # Pipeline shape
//
// Read expands a glob into files and reads them with a splittable DoFn
// into RecordBatch elements: many records of one file in one buffer with
// offsets, the layout Plan.DecodeContiguous takes, so a batch goes to the
// engine without a copy and without a slice per record. Decode turns each
// batch into Rows, a rank-1 StructTensor with one row per record and the
// byte offset each record came from. When Rows cross a stage boundary they
// are encoded as an Arrow IPC stream (EncodeRows), the columnar form every
// other Arrow tool reads.
//
// # Splitting files
//
// An uncompressed TFRecord file is read in byte ranges (ReadOptions.SplitSize
// initially; runners may split further while reading). A record belongs to
// the range holding the first byte of its framing. A reader whose range
// starts at byte 0 starts at a record; any other reader synchronises on the
// first offset at or after its start where both checksums of a frame hold
// (tfrecord.FindRecord), then reads records in a chain until one starts at
// or past its end.
//
// Two 32-bit checksums make a false boundary in random bytes vanishingly
// rare, but not in real data: a record may itself be a serialized TFRecord
// file, and then every frame inside it is valid. Corrupt bytes, too, are
// skipped by a synchronising reader as if they were no record. So a split
// read is never trusted on its own: each reader reports its final range,
// where it synchronised and where its chain crossed its end, and a
// grouping step per file proves that the ranges tile the file and that
// each chain ends exactly where the next reader synchronised. If not, the
// pipeline fails naming the file and the bytes in question, and says to
// read such files whole (ReadOptions.Whole). Nothing is skipped silently.
//
// Compressed files cannot be entered in the middle, and varint-delimited
// files have no checksum to synchronise on: both are read whole, by one
// reader, as is any file of a filesystem without random access.
//
// # Parquet
//
// ReadParquet reads Parquet files row group by row group into Rows, with
// no decoding step: a file's restriction is the range of its row group
// indices (one per initial split by default), a row group is claimed by
// its index before it is read, so each is read exactly once whatever the
// runner splits, and each is read by stparquet.File, whose memory is one
// row group. The footer is read when the glob is matched, so a corrupt
// footer fails before any row is read; a corrupt page fails naming the
// file, the row group and the column. Rows of Parquet carry row numbers
// in their file as Positions.
//
// # Plans on workers
//
// Decode takes the schema as the bytes of a FileDescriptorSet, never as a
// path: the bytes travel inside the pipeline, so a worker needs no file of
// the launcher's disk. Each DoFn instance compiles its plan once, in
// Setup, and reuses it for every batch; Decode also compiles it at
// construction so that a bad schema or path fails before the job starts.
//
// # Errors
//
// A file that cannot be read, a corrupt frame and a record that does not
// decode each fail the pipeline with an error naming the file and the
// byte offset of the record (in the uncompressed stream for compressed
// files); decode errors also name the byte inside the record and the
// field path.
//
// # Native code on workers
//
// Decoding runs the project's C++ engine through cgo. Beam's Go SDK builds
// its worker binary itself with CGO_ENABLED=0, which cannot link the
// engine, so a run on a cluster must be given a prebuilt worker
// (--worker_binary). Prism in process runs the pipeline in the launching
// binary and needs none.
//
// # Worker processes
//
// The binary that builds a pipeline is also its worker: it calls
// WorkerMain first thing in main, which serves as a worker when a runner
// started the binary as one and returns at once otherwise. A runner starts
// a worker either through Beam's boot program (the Go SDK container runs
// the staged --worker_binary with --worker) or directly, as the command of
// a PROCESS environment (--environment_type=PROCESS
// --environment_config='{"command": "/path/to/worker"}'), with --id and
// --provision_endpoint; WorkerMain takes both, so no separate boot program
// is needed. Prism v2.77.0 quotes the --id of a PROCESS command for a shell
// it does not use, and a worker that presented the quoted ID would never
// be recognised; WorkerMain removes the quotes.
//
// Prism starts one worker per environment, and a Go harness is one
// process. With STRUCTTENSOR_BEAM_PROCESSES=N (ProcessesEnv) in the
// environment config's "env" map, the booted worker starts N harness
// processes and relays the Fn API between them and Prism, each bundle to
// one process, so that one machine can run a pipeline as N workers would.
// With STRUCTTENSOR_BEAM_CPUS (CPUsEnv) as well, each harness process runs
// all its threads on one CPU of the list and Go code on one thread: one
// process is one core's worth of worker, as on a cluster of one-core
// machines, and the decoding engine uses one thread per batch
// (DecodeOptions.Threads, default 1) on that core.
//
// # Parallel reads
//
// How a runner spreads one Read over workers is its own affair. Cluster
// runners split the Read's restrictions (the 64 MiB ranges of
// ReadOptions.SplitSize) among workers, and rebalance while reading.
// Prism (v2.77.0) does less, and what it does decides what a pipeline can
// ask of it:
//
//   - A stage's pending elements all go into one bundle, and a stage's
//     input becomes pending when the upstream bundle that produced it
//     ends; the initial splits of a Read are such elements, so they run
//     one after another in one bundle in one process.
//   - Prism splits a running bundle only when a progress report shows no
//     element counted anywhere in it since the last report (the first
//     after 100 ms); a Read that emits batches steadily never looks
//     stalled, so it is never split.
//   - A Reshuffle is only a fusion break: the elements after it still
//     reach the next stage together, as one bundle.
//   - A splittable DoFn that checkpoints itself (returns
//     sdf.ResumeProcessingIn), which Prism runs as a new bundle per
//     resumption, makes its output PCollection unbounded in Beam's Go SDK,
//     which turns a batch pipeline into a streaming one.
//   - Bundles of different stages run side by side, up to 8 at a time.
//
// So the one way to have Prism decode on several workers at once is
// several stages: ReadParts divides the files' bytes into n parts of
// about equal size, each read by a branch of its own (its own Impulse,
// glob match and reader), and the steps a user applies to each part
// (Decode, a count, statistics) fuse into that branch's stage. Prism runs
// the branches' bundles at once, and a relaying worker hands each to the
// process with the least work in flight. A file may be cut between parts;
// its ranges are read as the splits of one Read are, and one coverage
// check over all parts proves that every byte of every file was read
// exactly once. On a cluster the parts cost nothing but n listings of the
// glob: each part is split further by the runner.
//
// BenchmarkPrismWorkers (make beam-bench) decodes at least 1 GiB of
// TFRecords in one process with one plan, and by a pipeline of ReadParts
// with two parts on Prism with one and with two worker processes, each
// pinned to a CPU of its own (CPUsEnv); it reports MB per CPU-second of
// each (of the worker processes; the launcher's CPU, which stages the
// worker binary and runs Prism, apart) and the wall-clock speedup of two
// workers over one.
package beam
