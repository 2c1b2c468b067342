// Package decode turns serialized protobuf records into StructTensors.
//
// A Plan is compiled once from descriptors and a projection, then decodes
// batches of records of one message type:
//
//	desc, _ := decode.LoadDescriptorSet(fileDescriptorSet)   // or ParseProtoFiles, FromMessage
//	plan, _ := decode.Compile(desc, "pkg.Recipe", "title", "steps.tools.name")
//	st, _ := plan.Decode(records)                             // *structtensor.StructTensor, shape [len(records)]
//
// # The mapping
//
// A batch of B records decodes to a rank-1 StructTensor of shape [B]. Each
// projected field of a message follows one rule, from its descriptor
// (Plan.Spec gives the result's type before any data):
//
//	proto2 required                    scalar (a nested struct for a message)
//	repeated, map                      list: a ragged dimension
//	singular with presence             list of 0 or 1 values (proto2 optional,
//	                                   proto3 optional, oneof members, message
//	                                   fields, editions explicit presence)
//	singular without presence          scalar, the default when absent
//	                                   (proto3 implicit, editions IMPLICIT)
//
// Enums decode as int32, string and bytes as String tensors (string fields
// marked UTF-8), groups and delimited messages as messages. A map is a
// list of {key, value} entries in wire order, duplicate keys included,
// with an absent key or value read as its default (an empty struct for a
// message value). Nested messages are nested StructTensors stored flat:
// the fields of a repeated message at depth d hold one row per element at
// that depth, and share its row partition. An extension's field name is
// its full name with dots as underscores.
//
// # Semantics
//
// The wire format is read exactly as protobuf parses it: fields in any
// order, a repeated scalar field in packed and unpacked runs (both
// accepted whatever the declaration), a singular scalar seen twice keeps
// the last value, a singular message seen twice merges, setting a oneof
// member clears the others, unknown fields (and fields outside the
// projection) are skipped, unknown groups included. Two departures, both
// toward strictness: a known field with a wire type its type cannot have
// is ErrWireType (protobuf would keep it as an unknown field), and nesting
// is limited to CompileOptions.MaxDepth (100 by default). As in
// protobuf, a missing proto2 required field is ErrRequired unless
// CompileOptions.FillRequired
// (required fields are checked where each occurrence of a message ends, so
// a singular submessage split in two occurrences must have its required
// fields in the first one);
// invalid UTF-8 in a proto3 string is ErrUTF8 unless
// CompileOptions.AcceptInvalidUTF8. A bad record fails the whole batch
// with a *RecordError naming the record index, the byte offset inside the
// record and the field path; no partial output is returned.
//
// # tf.Example and tf.SequenceExample by feature spec
//
// An ExampleSpec maps output fields to features, after tf.io's feature
// classes: FixedLen (a dense [B, shape...] Tensor, Default when absent),
// VarLen (a ragged [B, None]), Ragged (the values of a key under
// partitions read from other keys, as row splits, row lengths, value row
// ids, row starts or row limits, or of a uniform row length:
// [B, p1, ..., None]) and FixedLenSequence (a ragged [B, None, shape...],
// which TensorFlow pads to a dense tensor). CompileExample compiles it
// for tf.Example records, CompileSequenceExample for SequenceExample
// records (Features from the context, SequenceFeatures from the feature
// lists); ParseExampleSpec reads its JSON form. No descriptor is needed:
// the engine knows the shape of these messages.
//
// The engine walks each record once. The feature keys are compiled into
// a hash table inside the engine; each map entry's key is looked up in
// place (no key string is made), unknown keys are skipped, and for a
// planned key the value of its last entry is remembered (protobuf map
// semantics). Then every feature's list is appended to its column,
// packed and unpacked runs alike.
//
// The results and errors are tf.io.parse_example's: a FixedLen feature
// absent without default is ErrFeatureMissing (an empty default counts as
// none, as in TensorFlow), a list of another kind than the dtype is
// ErrFeatureType, a count that the shape does not allow is
// ErrFeatureShape, and a Feature that holds no list counts as absent for
// the fixed-length kinds (an earlier entry of the key then counts, as in
// TensorFlow) and as an empty list for the others. TensorFlow's
// SequenceExample parser differs on two points, followed here: an empty
// default is a default, and an empty Feature of a fixed-length context
// feature holds no values (ErrFeatureShape unless its shape holds none).
// Its checks of a batch run in several passes, so among several bad
// records it may name another one than the first. When a record has
// several bad features the one reported is TensorFlow's choice: the last
// in the record, then the first missing one in name order. Ragged
// partitions must fit each record, and the first record they do not fit
// is named (TensorFlow checks them on the whole batch, where one record's
// surplus can hide another's shortfall, and so fails on a subset of the
// batches that fail here; each record that fails here fails alone there).
// Row splits must start at 0 (TensorFlow's batched parser drops the
// first split unread).
//
// Where TensorFlow's fast parser departs from protobuf on records no
// serializer writes, this decoder follows protobuf: several packed runs
// of a list are concatenated (TensorFlow reads the first), packed and
// unpacked runs may mix, unknown fields are skipped anywhere (TensorFlow
// rejects some), and a truncated record is ErrMalformed (TensorFlow
// accepts some). A Feature holding several lists keeps the last, as
// protobuf's oneof does; protobuf would concatenate two lists of the same
// kind, TensorFlow reads the first.
//
// # Projections
//
// Paths use struct2tensor's syntax: field names joined by dots, an
// extension as "(full.name)", a map field's "key" and "value". A path that
// ends at a message selects everything below it. With no paths every
// field is selected, and the recursion of a message type into itself is
// cut (a path may still name a recursive field explicitly, as deep as it
// likes). Fields appear in declaration order, extensions last.
//
// # The engine
//
// Decoding runs in package native, a C++ engine behind cgo: one pass over
// each record, appending every value straight into its column at its
// nesting level and every row split at the end of each message, so the
// output is built in the same pass that reads the input. Batches are cut
// into chunks of about 1 MiB decoded by up to DecodeOptions.Threads threads (all
// cores by default), with output identical to a serial run. The columns are then
// copied once into Go memory, all in one call into one block when they
// come to 8 MiB or less (a batch of a few records of a schema of hundreds
// of leaves has hundreds of small outputs, and a call and an allocation
// each were most of its cost; a block past 32 KiB comes from the pool
// below), and wrapped by the value model's constructors without further
// copies, every value of the batch (a column with its tensor and
// partition, a struct with its partition) placed in one slab over a
// field index each plan node builds once (package internal/unchecked):
// wide sparse records in batches of 256 went from 1.1 to 1.5 times
// protobuf-go's generated parser's speed, sparse nested ones from 0.7 to
// 1.0 (bench's BenchmarkSmallBatches). What it costs is that a value
// kept keeps its whole batch's output, as the one block a batch is
// decoded into below already did. A batch of 64 KiB or more skips
// even that copy: the engine writes into Go buffers sized from the plan's
// previous such batch (or a sample of the first), which become the
// output; on several threads each writes its share, closed up afterwards.
// Those buffers are one block of Go memory per batch (outputs over 128
// MiB: blocks of about an eighth each, so that the runtime placing one
// of them in fresh pages while the last batch's are still resident costs
// an eighth of the output, not all of it). Fresh memory for
// every batch would cost more than decoding simple records (the
// allocation starts a garbage collection cycle, and the runtime hands the
// previous batch's memory back to the kernel only to fault it in again),
// so a block comes back by itself: once nothing refers to any byte of it
// (no output, no slice or Arrow array taken from one), a garbage
// collection puts it into a process-wide pool, and the next batch of
// about its size is decoded into it, as the TensorFlow op's outputs reuse
// the memory of released tensors (flat records of 32 MB batches, one
// thread: about 45% more MB per CPU-second than fresh blocks; bench
// -run-one on an AMD EPYC VM). The pool lets go of a block two
// collections find idle in it, and takes back at most twice the memory of
// the largest recent decode (at least 128 MiB): past that, outputs are
// collected as any garbage. A batch that finds the pool starved (the
// bound taken by outputs a collection would bring back) runs that
// collection itself, where the heap's pointerful memory is small beside
// the outputs (never with GOGC=off). A loop over batches that is done with
// each output before the next may hand it back at once with
// Plan.Recycle, which saves the wait for a collection; a Stream does so
// itself with StreamOptions.ReuseMemory (each batch valid until the next).
// Recycle also hands back the slab of the output's values, which the
// plan's next batch is built in instead of a new one: on small batches,
// whose cost is mostly those values (a record of a schema of hundreds of
// leaves), that is half the time or less (decode's BenchmarkRecycle: one
// record of wide sparse records 50-58 -> 25-26 us, of sparse nested ones
// 163-166 -> 73-74 us, a tf.Example 4.7-5.4 -> 2.6-2.7 us, a tf.Example
// of 41 features by spec, ExamplePlan.Recycle, 19-21 -> 10-11 us; Intel
// Xeon model 167). The plan
// finds the slab through the output's structs, which refer to it, by a
// weak pointer: it keeps no output alive, and a slab some value still
// holds is never handed out unless that output was recycled.
//
// Plan.MarshalBinary gives the plan's versioned byte form, which the
// TensorFlow op carries as an attribute and UnmarshalPlan reads back,
// checking everything it reads (and the engine checks it again). The
// layout is specified once, with the engine that shares it (package
// native's documentation); programs need not know it.
//
// The way back is Plan.Encode: each row of a StructTensor shaped as the
// plan decodes becomes one serialized record (Plan.Messages gives the
// messages themselves, Plan.EncodeTFRecord writes a TFRecord file), so
// Decode(Encode(s)) is s.
//
// For streams of records, Plan.Batches ranges over the decoded batches of
// a reader, and Plan.NewStream reads TFRecord files (optionally
// GZIP or ZLIB compressed) or varint-delimited records batch by batch, and
// DecodeContiguous decodes records laid out in one buffer with offsets
// (an Arrow binary array, a tfrecord.Batch) without copying them.
package decode
