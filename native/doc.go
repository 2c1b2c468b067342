// Package native is the structtensor shredding engine: C++17 code that
// decodes serialized protobuf records into columns in one pass per record,
// with a small C ABI (include/structtensor_native.h) and this cgo wrapper.
// Package decode is the Go API over it; the TensorFlow kernels in cops call
// the same C ABI directly.
//
// The Go API of this package is the low-level engine interface: plans in
// their byte form, results read out by column and partition index, engine
// error codes. decode is the API for programs (descriptors, names,
// StructTensors, sentinel errors); no type of this package appears in
// decode's, cops' or savedmodel's API. It is nonetheless safe to call from
// outside: inputs are validated by the engine, and every method that hands
// a handle to C keeps its Go owner alive until the C call returns
// (runtime.KeepAlive), so a cleanup cannot free the handle under it.
//
// Who owns the memory at the boundary: the input records are Go memory
// the engine reads during the call only (cgo arguments, pinned for it).
// A Result's own columns are C memory it owns until Free (a finalizer
// frees a forgotten one). The blocks lent for a decode are Go memory
// that the engine writes during the call (pinned for it, unpinned when
// the Result is freed); afterwards they belong to the outputs carved out
// of them, and to whatever those are lent to (Arrow arrays that share
// them, TensorFlow tensors that pin them until TensorFlow's last
// reference goes), for as long as any of those is reachable; then to the
// pool of lent blocks (lendpool.go), or to the collector.
//
// # Design
//
// struct2tensor decodes a message tree one TensorFlow op per level, each op
// re-parsing the submessages its parent op cut out. This engine walks each
// record once. A plan, compiled in Go from descriptors, gives every
// projected message node a table from field number to field slot; each
// field slot names its output: a value column (scalar fields) or a child
// node (message and group fields), and for list-valued fields (repeated,
// map, singular with presence) a partition. While walking the wire format
// the engine appends each value to its column at whatever nesting level it
// is, and the row splits of list fields follow: columns and row splits
// come out together, in final form, with submessages parsed in place.
//
// A field that does not occur costs nothing while an element is walked,
// which matters for wide, sparse records (hundreds of declared fields, a
// handful set in each record). A list field's row splits are written when
// the field next occurs, for every element since it last did (all equal
// to its count of values, which has not moved since), and those still
// missing at the end of a chunk all at once; implicit scalars' defaults
// likewise. So a list field's partition may lag behind its node: it holds
// splits up to the start of the element in which the field last occurred,
// and everything that reads a partition while decoding (a singular
// field's "seen in this element" test, oneof clearing, truncation) reads
// a lagging one as "nothing since".
//
// What a field occurrence touches is kept to two cache lines besides the
// ends of its outputs, for records that touch hundreds of fields across
// dozens of nodes, where each line is most often a first-level miss. A
// node's tag table (one-byte tags, and two-byte ones up to field 2047)
// holds the field's key itself (type, mode, wire type, child node, 16
// bytes), not an index to its plan; nodes with equal keys (one message
// type projected alike, wherever it occurs) share one table, since a key
// names its child relative to its node and its outputs by field index in
// the node's run of slots. A key also answers, for the walk, what it
// would otherwise look up at each occurrence: a repeated scalar's packed
// form has a key of its own (its type marked packed, so one switch on the
// type dispatches every occurrence, with no test of the wire type);
// a message field's key says whether its child has anything to check at
// its end, and whether it lies past the nesting limit, which is the
// child's depth in the plan (a tree), so the walk carries no depth; and
// whether its child has a shape the walk takes without walking it (its
// type marked shaped: a map entry, key then value, and a message that is
// one packed run, in the form serializers write; any other form of the
// same bytes is walked), which spares a tf.Example's features two of
// their three calls and tag lookups (9% of the instructions). A decoder keeps each field's outputs in a slot
// of 128 bytes: the row splits buffer of a list field, then the column's
// count and values' buffer, in the slot's first cache line. callgrind on
// sparse nested records (30 sections of one type, 20 optional fields
// each, a few set a record): the walk's first-level read misses fell from
// 5.9M to 2.2M on 4 MB.
//
// Protobuf's merge semantics fall out of the layout. Whether a singular
// field was already seen in the current element is a comparison of its
// column's length with the element's start, so "last scalar wins" is an
// overwrite of the last value and "singular submessages merge" reopens the
// child's last element (whose row splits are not written yet). Setting a
// oneof member truncates the other members, recursively for message
// members. Required scalars are filled with their default at
// element end when absent (or fail, unless the plan says to fill them),
// implicit ones in bulk as above.
//
// Every read is bounds-checked against the end of the enclosing message:
// varints (at most 10 bytes, the 10th at most 1), fixed-width values,
// lengths, packed runs (a fixed-width run must be a multiple of its width)
// and group nesting (an end-group tag must match its start); nesting
// deeper than the plan's limit fails. Errors carry the record index, the
// byte offset inside the record and the field path, and no output is
// returned with them.
//
// A batch is split into chunks of whole records of about 1 MiB, decoded in
// order by up to the requested number of threads (the engine's pool of
// worker threads, shared with the feature decoder: engine_shared.h),
// each chunk into a column set of its own. Bounded chunks keep the output
// being written close to the cache, and their buffers go back to the
// plan's pool when the result is freed, so the next batch reuses their
// capacity without reallocating or faulting pages in. The copy-out
// functions concatenate chunks and shift string offsets and row splits,
// so the output is byte-identical whatever the thread count; the error
// reported is the one of the first bad record in batch order. The copy
// into caller-owned buffers (Go slices here, TensorFlow output tensors in
// the kernel) is the only copy of the data: one memcpy per column and
// chunk. Large columns are freed as soon as they are copied
// (st_result_release_column), so a big batch never holds its output twice.
//
// A pool thread woken for a batch is kept off the waking thread's CPU
// until it runs (engine_threads.h). Woken from sleep, a thread may be
// placed on its waker's CPU: the virtual machines these benchmarks run
// on (KVM guests, two vCPUs, a guest kernel that keeps an idle vCPU
// halted) did so most of the time, and the two threads then shared one
// CPU until the scheduler balanced them. The helper of an 8 MB batch
// started 220-370 us after it was asked (a batch on two threads takes
// 2-7 ms), 71-148 us steered; a 500 us job on two threads took 1010 us
// (median) unsteered and 560 steered. Two threads over one, calls
// alternating (bench, ours-all-8mb-paired; Intel Xeon model 167): recipes
// 1.58-1.61x -> 1.73-1.74x, tf.Examples by feature spec 1.49-1.54x ->
// 1.73-1.76x, ELWC's 32 MB batches 1.65-1.70x -> 1.80-1.84x.
// Nor does either side of a job's hand-over wait on the pool's lock
// while the other holds it: a glibc mutex found taken sleeps in the
// kernel, and in such a guest wakes tens of microseconds after it is let
// go. A job is posted to the helpers watching for one after the caller
// has let go of the lock, and the last helper to end marks it finished
// for the caller, which watches without the lock; the locks a decode's
// threads take at every stretch of records spin a while before they
// sleep (BriefMutex, engine_shared.h). A helper watches for a job only
// where one follows at once (the close-up after the decode, when it is
// shared out); after a batch's last job it sleeps: the caller's way back
// through Go to the next batch outlasted any watch worth its CPU time.
//
// The copy-out still holds the output twice for a moment and writes it
// twice. So a decode into lent buffers (st_decode_into and
// st_decode_contiguous_into, which Plan.Decode and Plan.DecodeContiguous
// use for batches of 64 KiB or more) can skip it: the caller lends one
// buffer per column, string offsets and partition, the batch is decoded
// straight into them, and the output is those buffers. The Go side sizes
// them from the plan's previous such batch, scaled by input bytes or
// records (whichever grew more) plus 1/32, or for a plan's first batch
// from a decode of its first sixteenth. A decode on several threads cuts
// the batch into one chunk per thread, gives each the share of every
// buffer that its share of the bytes suggests (value stretches 8-byte
// aligned, each output with room for its shares' spread: three square
// roots of its size per share); a value column whose previous batch held
// a whole number of values per record gets instead the stretch its
// chunk's records fill, so the stretches meet and nothing of it moves;
// so do the row splits of the records' own list fields (one split a
// record), whose stretches meet at a shared split: the chunk before
// leaves it out, the chunk after writes its leading 0 there, rebased to
// the same value later. So do the row splits of a nested list field
// whose previous batch held a whole number of splits and of elements per
// record (a tf.Example's feature map, each feature's list of one kind):
// each chunk's start at its first record's split, and they count from
// the elements the records before it are expected to hold, so that they
// are written final and neither move nor shift (tf.Examples, 32 MB, two
// threads: the splits moved a batch 10.5 MB -> 2.4 MB); a wrong guess
// costs what the gap did. The decoders' own state that the walk writes
// at every element (element counts, oneof marks, the deferred splits'
// logs) sits on cache lines of its own: the decoders of a batch are made
// one after the other, and where two threads' arrays shared a line, about
// one call in eight on two threads took 2.5 times as long (tf.Examples,
// 32 MB, Intel Xeon model 167). It closes each output's stretches up
// afterwards, the outputs shared out among the threads (a memmove per
// output and thread, string offsets and row splits shifted as they
// move, or only shifted in place where they meet). Wide records' output
// is mostly those record splits (18-24 bytes an input byte on 200
// sparse fields), and shifting a later chunk's was a pass over half the
// output after the decode. So the thread done with a chunk hands the
// totals over to the next chunk's thread, which takes them between two
// records and writes the rest of its record splits final. Until then that
// chunk defers its record splits: a fill of them is logged (the split it
// ends at and its value, 8 bytes in a short stream a field, where the
// fill stored twenty splits and more of a wide sparse field, each fill's
// lines a store miss), and the thread that handed the totals over writes
// them all once, final, while the other decodes on: where the CPU has
// AVX-512, each 64-byte line built in a register and stored whole past
// the cache (a store that misses reads its line in first, which splits
// written once need not; runs of 1-39 splits, 142 MB: 13 ms against 20
// by plain stores, Intel Xeon model 207), elsewhere by plain stores.
// Before, the later chunk wrote its splits counting from 0 and the first
// thread rebased them in place: a read and a second write of each. A
// chunk that ends its walk before it is asked leaves them logged and its
// thread goes to split a chunk still walking; whichever thread settles
// the chunks before it (their totals known) writes them, final. Written
// by the chunk itself counting from 0, as before, they took a pass over
// most of the output while the chunk before walked on and the close-up
// another to shift them: on wide sparse records in 8 MB batches, a batch
// in six or so whose first chunk ran slow took 65-88 ms against 35-45.
// Deferring makes the later chunk's walk faster
// and the first thread's part larger, so the later chunk gets more
// bytes: as many more as the plan's own batches measure (the first
// chunk's walk w seconds a byte, the later one's d deferring, and f
// writing the deferred splits: b1/b0 = (w + f)/d, 1.6-2 on wide
// records). Measured on 8 MB batches, one and two threads alternating in
// one process (the engine alone, Intel Xeon model 207): two threads'
// wall-clock speedup 1.51-1.61x -> 1.90x on wide sparse records and
// 1.58-1.67x -> 1.90x on wide repeated ones, the CPU time of two threads
// no more than one's; the others unchanged. Chunks defer only where the
// records' own splits are a tenth of the output or more (wide records
// 90%, sparse nested 29%): on flat records (0.9%) the first thread's
// pass writing a hundred fields' deferred splits into as many scattered
// streams took 71 µs (median) of a 2.6 ms batch while the other thread
// walked on, and not deferring made two threads' 8 MB batches 1.62-1.71x
// -> 1.72-1.81x as fast as one's. Equal bytes are still not
// equal time: records differ, and on a shared machine one thread runs at
// half speed for a spell while the other does not, so one chunk ended
// far earlier than the other (tf.Examples, 32 MB, two threads: 5-11% of
// the decode's wall time with a thread idle, Intel Xeon model 207). So a
// thread done with its chunk splits the chunk with the most input left
// (64 KiB or more): that chunk's walk answers between two records,
// keeping the first half of its records left by bytes and giving the
// rest to a fresh decoder, the tail, which the asking thread runs; the
// tail gets the rest of every stretch, split by the same share of bytes
// (by record where outputs are placed by record, so those still meet),
// and comes right after its chunk in the batch's order, which the
// hand-over and the close-up follow as they do the first chunks. A tail
// may be split in its turn. Measured in alternating calls of one and two
// threads in one process (the Go path, before and after in turn): the
// wall-clock speedup on 32 MB batches of tf.Examples 1.68-1.72x ->
// 1.84-1.93x, ELWC 1.70-1.77x -> 1.75-1.93x, recipes 1.78-1.81x ->
// 1.87-1.92x, flat 1.72-1.76x -> 1.81-1.83x; on 8 MB batches
// tf.Examples 1.59-1.60x -> 1.79-1.85x, ELWC 1.56-1.63x -> 1.75-1.77x,
// recipes 1.59-1.72x -> 1.78x; wide and flat 8 MB batches within noise.
// A share that its chunk
// outgrows moves to engine memory and is
// copied back in once the stretches after it have moved, whenever the
// output as a whole fits its buffer: one thread's bad guess costs that
// share's copies, not the batch's lent buffers. A guess that is too small
// for the whole output costs that output's buffer and the usual copy: it
// is copied out as before (st_result_column_in_place tells what is in
// place), so the output never depends on the guess. Packed runs, which
// reserve one value per byte, count their values instead when that
// reserve would not fit, so an exact buffer is not abandoned at its last
// run. A lent buffer's slack stays with the output as unused capacity
// (sliced off, not freed). The Go buffers are allocated without clearing
// (the runtime's allocator with zeroing off): the engine writes every
// element the output exposes, and clearing them first was a second pass
// over the whole output, a fifth of the Go path's time on flat records
// and most of what it lost to the TensorFlow op, whose kernel reuses
// pooled blocks. The Go path now pools its blocks too: a block goes back
// into a process-wide pool by itself once nothing refers to any byte of
// it (a finalizer armed while it is lent out; lendpool.go), so a batch is
// written into resident memory rather than pages faulted in afresh. A
// decode that finds the pool starved (empty, its bound taken by blocks
// lent out that only a collection would bring back) runs that collection
// itself where scanning the heap costs less than faulting in a fresh
// block: small batches of wide records, whose blocks came back only
// every other batch, now nearly always reuse one (wide repeated records
// in 1 MB batches: 26% more MB per CPU-second, peak RSS 308 -> 176 MB).
// A fresh block of four huge pages or more is advised to the kernel for
// transparent huge pages before its first write (hugepages_linux.go): a
// decode writes a hundred and more output streams at once, and with 4 KiB
// pages nearly every store needs a translation the first-level TLB has
// dropped (flat records, 32 MB batches: fastest calls 1923-2051 ->
// 2176-2246 MB per CPU-second; wide repeated 159-167 -> 181-182; peak RSS
// 1-3% higher; Intel Xeon model 207).
//
// Packed varints are where the flat, numeric records spend their time,
// and a loop with a branch per value loses most of it to mispredicting
// the lengths. On x86-64 CPUs with AVX-512 VBMI and VBMI2 (Ice Lake and
// later Intel servers, AMD Zen 4 and later) a vector decoder takes a run
// in chunks of up to 1 KiB, two passes over each, with no branch per
// value. The first pass lists where the values end: 64 bytes at a fixed
// stride (masked loads, so nothing past the run is read), the positions
// after their terminating bytes compressed into a vector (vpcompressb),
// widened to 16 bits and stored whatever their count, the count moving
// the next store on. The second pass takes eight values a step: their
// starts and ends from the list spread over each 64-bit lane's bytes, one
// 64-byte load from the first start, one byte permute gathering each
// value into its lane (zero past its last byte), two multiply-adds and a
// shift squeezing out the continuation bits; the conversion (truncation
// to 32 bits, zigzag, bool) and a store finish the lanes. No step waits
// for the one before. The steps are laid along the output: the first
// takes the values up to the output's next 64-byte line, so that each
// whole step writes one aligned line, not two halves. The decoder this replaced stepped from value
// to value, sixteen at a time, each step's start known only at the end of
// the step before (load, mask, mask move, count, select): on an Intel
// Xeon (model 207, Emerald Rapids) that chain held flat records to
// 0.81-0.90 of the AVX2 decoder below, and the two passes took them from 1139-1304 to
// 1651-1748 MB per CPU-second (bench's ours-1t, alternating runs). Runs
// of up to 64 bytes (tf.Example's short lists), which one or two steps
// take, still step: setting up the passes costs more there. A value
// longer than eight bytes (negative int64s are ten) leaves its lane with
// no terminating byte, bytes past each value's end entering the lanes as
// continuation bytes, so one running minimum over the chunk's lanes finds
// it (a list of such steps, stored step by step at an index the step
// before moved, cost flat records 5-6%); the steps holding one are found
// again from the list of ends and decoded again four values a step, one
// to a 128-bit lane. A value cut short by the end of the run, or longer
// than ten bytes, goes to the scalar decoder, which reports the error. Both vector decoders prefetch, for writing, the
// output lines their field's next runs will most likely fill (see below):
// without it the same Xeon decoded flat records at half the speed.
// Without AVX-512, a loop that finds each value's end from the bytes it has just read waits, value
// after value, for a load and the scan of its result. With AVX2 (Intel
// from Haswell, AMD from Zen 1: nearly every x86-64 CPU without AVX-512)
// a chunk of up to 512 bytes takes two passes. The first only lists where
// the values end: 32 bytes' terminators at a time (vpmovmskb), each byte
// of that mask turned into the ends it holds by one table load and
// stored, eight slots at a time whatever their count, the count (popcnt)
// moving the next store on, with no branch on the data. The second pass
// takes four values a step, with no branch on their lengths: eight bytes
// from the start of each (read from the list one slot at a time: a wider
// load spanning several of the first pass's stores would wait for them,
// and for the output stores before them, to reach the cache), one per
// 64-bit lane; each lane is cut after its first terminator, two
// multiply-adds (pmaddubsw, pmaddwd) and a shift squeeze out the
// continuation bits, the conversion follows in the lanes and the four
// values leave in one store. A lane with no terminator in its eight bytes
// marks the chunk; its values of nine and ten bytes (each lane is loaded
// apart, so only theirs are wrong) are found sixteen at a time from the
// list and decoded again one at a time; the last values of a chunk (fewer than four)
// take BMI2's bzhi and pext (where pext is fast: Intel, AMD from Zen 3;
// shifts and masks elsewhere). A record's fields write to as many
// columns, too many streams for the hardware prefetcher: after each chunk
// the decoder prefetches, for writing, the lines its field's next runs
// will most likely fill. Without AVX2, one step takes a mask of the terminating
// bytes of the next 64 (SSE2's byte mask, which every x86-64 CPU has),
// and each value's start and end come from the mask alone (count
// trailing zeros, clear the lowest bit), so a step's values are
// independent and overlap in the pipeline, with bzhi and pext where pext
// is fast and shifts and masks elsewhere; it leaves its loop at a
// different value in every step, a mispredicted branch every twenty
// values or so, which the AVX2 decoder does not. Values longer than eight
// bytes (ten for the AVX2 decoder), and the last bytes of a record, go to
// a loop that takes eight bytes at a time, two values per word. On flat
// records, bench's ours-1t on an AMD EPYC (Zen 4, load 3.2-4.5, two
// runs of three rounds, before the AVX-512 decoder took two passes):
// AVX-512 2333-2690 MB per CPU-second, AVX2
// 2227-2614 (0.83-1.12 of AVX-512 in the same round); earlier, the
// 64-byte masks with pext did 0.65 of AVX-512.
//
// STRUCTTENSOR_NATIVE_PORTABLE names the decoder tiers below the CPU's
// best, so that tests and benchmarks reach the code of other CPUs: "1"
// (or "avx2") the code of CPUs without AVX-512, "bmi2" that of CPUs
// without AVX2 (the 64-byte masks with pext where it is fast), "scalar"
// that of CPUs without BMI2; unset or "0", the best the CPU has; any
// other value counts as "1". A tier the CPU lacks falls to the best below
// it. The sanitizer test compares the four on every packed varint type,
// and FuzzDecode (package decode) compares every tier below the best in
// the same process (st_test_packed_tier).
//
// A plan also carries a mutex-guarded pool of decoders; free every result
// before its plan.
//
// internal/runner/runner.cc drives the engine from C++ alone; the test
// TestEngineUnderSanitizers builds it with AddressSanitizer and
// UndefinedBehaviorSanitizer and feeds it valid, mutated and random records
// and corrupt plans.
//
// # Building the engine without Go
//
// The engine is engine.cc (one translation unit, with its parts in
// engine_plan.h, engine_columns.h, engine_wire.h, engine_walker.h,
// engine_threads.h and engine_sizing.h), with no dependency beyond the C++17
// standard library (no libprotobuf, no TensorFlow, no Go). For the
// TensorFlow kernel or any C program:
//
//	g++ -std=c++17 -O2 -shared -fPIC -pthread native/*.cc -o libstructtensor_native.so
//
// and include native/include/structtensor_native.h. No C++ exception
// crosses the C ABI (allocation failures become ST_ERR_INTERNAL).
//
// # The plan's byte form (version 1)
//
// Plan.MarshalBinary in package decode writes it; st_plan_new parses and
// validates it. uvarint is protobuf's unsigned varint; string is a uvarint
// length followed by that many bytes.
//
//	magic       "STPL" (4 bytes)
//	version     uvarint = 1
//	message     string: full name of the root message (for diagnostics)
//	flags       uvarint: 1 = fill missing required fields with defaults,
//	                     2 = accept invalid UTF-8 in validated strings
//	max_depth   uvarint: nesting limit, 1..10000
//	ncolumns    uvarint, then ncolumns x dtype uvarint
//	            (1 bool, 2 int32, 3 int64, 4 uint32, 5 uint64,
//	             6 float32, 7 float64, 8 string)
//	npartitions uvarint
//	nnodes      uvarint, then nnodes x node; node 0 is the root and every
//	            other node is the child of exactly one field of an earlier
//	            node (pre-order)
//	node        path string (the projection path, "" for the root),
//	            nfields uvarint, then nfields x field
//	field       number   uvarint (1..2^29-1, unique in the node)
//	            name     string (the output field name)
//	            type     uvarint, google.protobuf.FieldDescriptorProto.Type
//	                     (1 double .. 18 sint64; 10 group, 11 message)
//	            mode     uvarint: 0 required (scalar, missing fails),
//	                     1 implicit (scalar, missing = default),
//	                     2 optional (list of 0 or 1), 3 repeated (list)
//	            flags    uvarint: 1 = validate UTF-8 (string fields)
//	            oneof    uvarint: 0, or k for the node's k-th oneof
//	                     (members must have mode 2)
//	            target   uvarint: the column (scalar types, whose dtype
//	                     must match the type) or the child node (group,
//	                     message)
//	            partition uvarint: the partition for modes 2 and 3, else 0
//	            default  for modes 0 and 1 of scalar types only: a string
//	                     (string, bytes) or a uvarint holding the value's
//	                     bits (two's complement for signed integers,
//	                     IEEE-754 bits for floats, 0/1 for bool)
//
// Every column and partition must be used by exactly one field; the
// parser rejects anything else with ST_ERR_PLAN, so a plan that parses
// cannot make the engine index out of range.
//
// # The feature plan (tf.Example and tf.SequenceExample)
//
// example.cc decodes tf.Example and tf.SequenceExample records by feature
// spec, behind include/structtensor_example.h. Its plan is a list of
// slots, one per feature key to read, compiled by decode.CompileExample:
//
//	magic    "STEX" (4 bytes)
//	version  uvarint = 1
//	kind     uvarint: 1 tf.Example, 2 tf.SequenceExample
//	nslots   uvarint, then nslots x slot
//	slot     section uvarint: 0 the features (the context of a
//	                  SequenceExample), 1 the feature_lists
//	         key     string
//	         dtype   uvarint: 3 int64 (int64_list), 6 float32
//	                 (float_list), 8 string (bytes_list)
//	         mode    uvarint: 0 any number of values, 1 exactly count
//	                 values (per record, or per step of a feature list),
//	                 2 a multiple of count values (features only)
//	         count   uvarint, at most 2^31
//	         flags   uvarint: 1 has a default (mode 1, features only),
//	                 2 the feature list must be present
//	         default with flag 1: count values, uvarint bits (int64 two's
//	                 complement, float32 IEEE-754) or strings
//
// Several slots may share a key. The plan's keys go into an
// open-addressing hash table per section, so the walk looks each map
// entry's key up in place. The walk remembers each slot's last entry in
// the record (a pointer and a length); then each slot's value is parsed
// and appended to its column, and the record's row splits are pushed.
// Output per slot: a value column and up to two row-split levels: level 0
// has one row per record (values of a list slot, steps of a feature-list
// slot), level 1 one row per step (list slots of a feature list). A batch
// is cut into one chunk per thread (at least 256 KiB each), each decoded
// into slot columns of its own and concatenated by the copy-out, so the
// output and the error (the first bad record's) do not depend on the
// thread count. A thread done with its chunk splits the chunk with the
// most input left, by the engine's rules (engine_shared.h): that chunk
// keeps the first half of its records left and the rest goes to a fresh
// chunk after it in the batch's order, which the asking thread decodes;
// as chunks write outputs of their own, a split moves nothing (two
// threads' wall-clock speedup over one, in alternating calls in one
// process, 32 MB batches: tf.Examples by feature 1.54-1.62x -> 1.88-1.93x,
// SequenceExamples 1.55-1.69x -> 1.86-1.95x; Intel Xeon model 207). Every
// chunk's part of every output has its place known before any is copied,
// so st_example_result_copy_into copies all of them in one call, in
// stretches shared out among the same threads (a serial copy-out was a
// quarter of a decode on two threads). Freed results hand their chunks
// back to the plan (up to 64, keeping those whose buffers hold most), and
// a batch takes those holding most first, so that its first chunks
// reuse their buffers' capacity and the smaller tails take the smaller
// ones (taken last in, first out, a tail's small buffers went to a
// batch's first chunk, which grew them afresh: five times the page
// faults).
//
// A batch decoded into one chunk a thread and then copied out was
// written twice in memory: by the time the copy read a chunk, as large
// as its share of the output, it had left the cache, and 32 MB batches
// on one thread took 1.6 times as long per byte as 1 MB ones. So a batch
// of 6 MiB or more goes straight into one block of Go memory laid out
// from the plan's last batch (st_example_lend_sizes: the proto decoder's
// sizing policy, the last batch's sizes scaled by the larger ratio of
// bytes and records, plus 1/32 and three square roots; dense features'
// values and level-0 splits exact): st_example_decode_contiguous_into
// cuts the batch into stretches of 256 KiB of records, which the threads
// take in turn, each into a chunk of its own emptied before it; a
// stretch's place in every output is known once those before it are
// decoded (their sizes, not their copies), so the thread that decodes
// the stretch completing a run places the run and copies it while it is
// in cache, and no thread waits for another. A guess too small for any
// output makes the batch decode again the usual way, so the output never
// depends on it. Below 6 MiB the usual chunk stays in cache and was
// faster (1 MB batches: 1.25-1.35 GB per CPU-second against 1.05-1.2).
// tf.Examples by feature, bench's ours-1t in alternating runs, 32 MB
// batches: 810-844 -> 1304-1350 MB per CPU-second, the same digest;
// two threads over one 1.09x -> 1.57-1.70x; SequenceExamples 1.60x ->
// 1.79-1.83x (Intel Xeon, model 167 as the VM reports it).
//
// A string column is marked UTF-8 when each of its strings is valid
// UTF-8 on its own (st_options.mark_utf8, which Go always sets and the
// TensorFlow kernel, whose strings are bytes, never does). The threads
// check the strings they decoded, a stretch (into a block) or a chunk at
// a time, while in cache; the caller used to check every string column
// after the decode, alone: 165-180 us of an 8 MB batch of tf.Examples
// by feature, 5% of its time on two threads, against 1.6 us a stretch,
// 39 us a batch, on the threads (Intel Xeon, model 167).
//
// The protobuf decoder marks the columns of string fields the same way
// (st_result_column_utf8), checking each string of a field it does not
// validate (proto2) as it stores it, in the first-level cache: Go used to
// read every such string again after the decode, 2.4% of a batch of wide
// repeated records on one thread. A column in which a string found invalid
// was taken back later in its record (a singular field set again, a
// oneof's other member) is left unknown, and Go checks it itself.
//
// # Output of a decode
//
// For B records the root node has B elements; a node reached through a
// field of mode 0 or 1 has as many elements as its parent, and through a
// field of mode 2 or 3 as many as the last row split of that field's
// partition. A scalar field's column holds one value per parent element
// (modes 0, 1) or the values listed by its partition (modes 2, 3).
// Partition splits have one entry per parent element plus one and start
// at 0. Map fields are repeated entry messages with key and value fields
// of mode 1, in wire order (duplicate keys are kept).
package native
