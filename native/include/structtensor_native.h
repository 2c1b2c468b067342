/*
 * structtensor_native.h: the C ABI of the structtensor shredding engine.
 *
 * The engine decodes serialized protobuf records into columns in one pass
 * per record, following a plan compiled from descriptors by the Go package
 * decode (Plan.MarshalBinary; the byte form is documented in native/doc.go).
 * It needs neither libprotobuf nor TensorFlow nor Go; no C++ exception
 * crosses this interface.
 *
 * Output model. A plan has C value columns and P partitions (row splits).
 * Column c holds the values of one projected scalar field, in record
 * order, at its nesting level: a fixed-width typed array, or for strings a
 * byte buffer plus length+1 int64 offsets. Partition p holds the int64
 * row_splits (length rows+1, starting at 0) of one list-valued field
 * (repeated, map, or singular with presence), with one row per element of
 * the field's parent message node. Which column and partition belong to
 * which field is part of the plan, so the caller knows it before decoding.
 *
 * Threading: st_decode* splits a batch into chunks of about 1 MiB decoded
 * by up to `threads` threads (0 = the thread limit), the calling thread
 * and helpers from one bounded process-wide pool; the output is identical
 * to a serial run, and so is the reported error (the first bad record in
 * batch order).
 * A plan may be shared by concurrent calls (it is immutable but for a
 * mutex-guarded pool of decode buffers, which results hand back when freed
 * so that the next batch reuses their capacity). Free every result before
 * its plan.
 *
 * Errors: every fallible call takes an st_error* (may be NULL) filled on
 * failure with a code, the index of the bad record, the byte offset in
 * that record, and a message naming the field path. On error no result is
 * returned (never partial output).
 */
#ifndef STRUCTTENSOR_NATIVE_H_
#define STRUCTTENSOR_NATIVE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. */
enum {
  ST_OK = 0,
  ST_ERR_MALFORMED = 1,  /* truncated varint/fixed, length past the end, bad tag, broken group nesting */
  ST_ERR_WIRE_TYPE = 2,  /* a known field arrived with a wire type its type cannot have */
  ST_ERR_DEPTH = 3,      /* messages nested deeper than the plan's limit */
  ST_ERR_UTF8 = 4,       /* invalid UTF-8 in a string field that requires validation */
  ST_ERR_REQUIRED = 5,   /* a proto2 required field is missing */
  ST_ERR_PLAN = 6,       /* the serialized plan is invalid */
  ST_ERR_CANCELLED = 7,  /* the cancel flag was raised */
  ST_ERR_ARGUMENT = 8,   /* a bad argument (NULL pointer, offsets out of range, bad index) */
  ST_ERR_INTERNAL = 9    /* out of memory or another internal failure */
};

/* Column element types (the same numbering as structtensor.DType). */
enum {
  ST_BOOL = 1, /* one byte, 0 or 1 */
  ST_INT32 = 2,
  ST_INT64 = 3,
  ST_UINT32 = 4,
  ST_UINT64 = 5,
  ST_FLOAT32 = 6,
  ST_FLOAT64 = 7,
  ST_STRING = 8
};

typedef struct st_error {
  int32_t code;          /* ST_OK when no error */
  int64_t record;        /* index of the bad record in the batch, or -1 */
  int64_t offset;        /* byte offset of the problem inside that record, or -1 */
  char message[512];     /* NUL-terminated, names the field path */
} st_error;

typedef struct st_plan st_plan;
typedef struct st_result st_result;

/* Decode options. Zero-initialise, then set what you need. */
typedef struct st_options {
  int32_t threads;                /* 0 = the thread limit (st_set_thread_limit), 1 = serial */
  const volatile int32_t* cancel; /* optional: decoding stops with ST_ERR_CANCELLED once *cancel != 0;
                                     read with atomic loads, so the writer must store atomically */
  int32_t mark_utf8;              /* nonzero marks each string column (feature decodes,
                                     structtensor_example.h: each string slot) whose every string is
                                     valid UTF-8 on its own, checked by the decoding threads as they
                                     store the strings: st_result_column_utf8 (st_example_result_utf8,
                                     and the utf8 argument of st_example_decode_contiguous_into) */
} st_options;

/* Plans. */
st_plan* st_plan_new(const uint8_t* data, size_t len, st_error* err);
void st_plan_free(st_plan* plan);
/* st_plan_close frees the decoders the plan keeps for reuse and keeps no
 * more (results still out stay valid); the plan can still decode. The
 * pool holds up to 16 decoders of at most 64 MiB each and at most
 * ST_PLAN_POOL_BYTES in all. */
#define ST_PLAN_POOL_BYTES (256u << 20)
void st_plan_close(st_plan* plan);
size_t st_plan_pool_bytes(const st_plan* plan); /* capacity held by the pool */
/* st_set_thread_limit bounds the engine's worker threads in the process
 * (all decodes together, the calling threads included); 0 restores the
 * default, the number of CPUs. Workers are started on demand and kept; a
 * thread that cannot start makes a decode slower, never fail. */
void st_set_thread_limit(int32_t n);
int32_t st_worker_threads(void); /* pool threads running now */
/* st_packed_varint_tier returns the tier of the decoder packed varints
 * take in this process (0 AVX-512, 1 AVX2, 2 BMI2's pext, 3 scalar): the
 * CPU's best, or the lower one STRUCTTENSOR_NATIVE_PORTABLE names. */
int32_t st_packed_varint_tier(void);
/* st_test_fail_thread_starts makes every later start of a pool thread fail
 * (nonzero) as if the system refused it, or start again (0): for tests of
 * the fallback to the threads there are. */
void st_test_fail_thread_starts(int32_t fail);
/* st_test_packed_tier makes packed varints take the decoder of a tier (0
 * AVX-512, 1 AVX2, 2 BMI2's pext, 3 scalar), or the best below it the CPU
 * has when it lacks that one; -1 restores the default (the CPU's best, or
 * the tier STRUCTTENSOR_NATIVE_PORTABLE names). With no_pext nonzero the
 * AVX2 and BMI2 decoders do without pext, as on CPUs where it is slow. It
 * returns the tier packed runs take now. For tests that compare the
 * decoders in one process. */
int32_t st_test_packed_tier(int32_t tier, int32_t no_pext);
int64_t st_plan_num_columns(const st_plan* plan);
int64_t st_plan_num_partitions(const st_plan* plan);
/* st_plan_num_tag_tables returns how many field tables the plan's nodes
 * use: nodes with equal fields (one message type, projected alike) share
 * one. A diagnostic. */
int64_t st_plan_num_tag_tables(const st_plan* plan);
int32_t st_plan_column_dtype(const st_plan* plan, int64_t column); /* ST_BOOL..ST_STRING, or 0 */

/* Decoding. Record i is ptrs[i][0:lens[i]] (TensorFlow string tensors hand
 * out such pairs), or data[offsets[i]:offsets[i+1]] for the contiguous form
 * (n+1 non-decreasing offsets, as in an Arrow binary array). */
st_result* st_decode(const st_plan* plan, const uint8_t* const* ptrs, const size_t* lens,
                     int64_t n, const st_options* opts, st_error* err);
st_result* st_decode_contiguous(const st_plan* plan, const uint8_t* data, size_t data_len,
                                const int64_t* offsets, int64_t n, const st_options* opts,
                                st_error* err);
void st_result_free(st_result* result);

/* Output buffers a caller lends to st_decode_into or st_decode_contiguous_into, so that the
 * engine writes the columns and row splits straight into their final
 * place instead of into its own memory to be copied out afterwards (a
 * caller decoding a stream of similar batches can size them from the
 * previous one). Each array has one entry per column (per partition for
 * the splits); a NULL array or entry means engine memory for that output.
 * The buffers must stay valid and untouched until the result is freed.
 * An output that outgrows its buffer moves to engine memory and is copied
 * out as usual: st_result_column_in_place and st_result_partition_in_place
 * tell which outputs are complete in the caller's buffers, where their
 * lengths are those of st_result_column_length, st_result_column_bytes and
 * st_result_partition_length. */
typedef struct st_output {
  void* const* column_data;         /* values, or string bytes */
  const size_t* column_bytes;       /* capacity of column_data[c], in bytes */
  int64_t* const* string_offsets;   /* string columns: length+1 offsets (from 0) */
  const size_t* string_offsets_len; /* capacity of string_offsets[c], in int64s */
  int64_t* const* partition_splits; /* row splits (from 0) */
  const size_t* partition_len;      /* capacity of partition_splits[p], in int64s */
} st_output;

/* st_decode and st_decode_contiguous writing into the caller's buffers
 * (out may be NULL). The batch is cut into one chunk per thread (not
 * chunks of 1 MiB), each writing the share of every buffer that its share
 * of the input bytes suggests; each output's stretches are closed up
 * afterwards, a share the output outgrew (kept in engine memory) copied
 * back in, whenever the output as a whole fits its buffer; an output
 * that does not is copied out as usual (st_result_*_in_place say which). */
st_result* st_decode_into(const st_plan* plan, const uint8_t* const* ptrs, const size_t* lens, int64_t n,
                          const st_options* opts, const st_output* out, st_error* err);
st_result* st_decode_contiguous_into(const st_plan* plan, const uint8_t* data, size_t data_len,
                                     const int64_t* offsets, int64_t n, const st_options* opts,
                                     const st_output* out, st_error* err);

/* Sizing lent buffers: one policy for every caller that lends them (the
 * Go package native and the TensorFlow kernel), so that the same batches
 * get the same sizes whoever decodes them. The plan keeps the output sizes
 * of its last decode of at least ST_LEND_MIN_BYTES of input; the sizes for
 * a batch are those scaled to the batch, with room to spare and bounded by
 * its input (native/engine_sizing.h says why). A plan's first large batch
 * decodes a sample of its first records to size the rest. st_lend_sizes
 * holds the caller's arrays (one entry per column, per partition for
 * partition_len), filled in the units of st_output's capacities. */
#define ST_LEND_MIN_BYTES (64u << 10)
typedef struct st_lend_sizes {
  size_t* column_bytes;       /* values (strings: string bytes), in bytes */
  size_t* string_offsets_len; /* string columns: int64 offsets; 0 for the others */
  size_t* partition_len;      /* row splits, in int64s */
} st_lend_sizes;

/* st_plan_lend_sizes and st_plan_lend_sizes_contiguous take the batch a
 * decode is about to get (the arguments of st_decode_into and
 * st_decode_contiguous_into) and return 1 with sizes filled when the
 * caller should lend buffers of those sizes, or 0 when it should lend
 * nothing (a batch under ST_LEND_MIN_BYTES, or a first batch too small
 * to sample, or a failed sample: the decode then reports the error). */
int32_t st_plan_lend_sizes(const st_plan* plan, const uint8_t* const* ptrs, const size_t* lens, int64_t n,
                           const st_options* opts, const st_lend_sizes* sizes);
int32_t st_plan_lend_sizes_contiguous(const st_plan* plan, const uint8_t* data, size_t data_len,
                                      const int64_t* offsets, int64_t n, const st_options* opts,
                                      const st_lend_sizes* sizes);
/* st_test_lend_log, for tests of the callers: with on != 0, every later
 * st_plan_lend_sizes* call (any plan, process-wide) appends to a log its
 * input bytes, records, result, number of columns C and partitions P, and
 * then C column_bytes, C string_offsets_len and P partition_len (zeros
 * when the result is 0). Each call clears the log.
 * st_test_lend_log_read copies up to cap entries into dst and returns the
 * log's length. */
void st_test_lend_log(int32_t on);
int64_t st_test_lend_log_read(int64_t* dst, int64_t cap);
/* st_test_lent_outgrown returns how many lent buffers, or threads' shares
 * of them, outputs have outgrown (moving to engine memory), process-wide. */
int64_t st_test_lent_outgrown(void);
/* st_test_steered_helpers returns how many times a pool thread about to
 * be woken for a job was kept off the waking thread's CPU until it ran,
 * process-wide (Linux). */
int64_t st_test_steered_helpers(void);
/* st_test_closeup_moved_values returns how many bytes of values (not
 * string offsets nor row splits) the close-ups of multi-threaded decodes
 * into lent buffers have moved within those buffers, process-wide. */
int64_t st_test_closeup_moved_values(void);
/* st_test_closeup_moved_splits returns how many bytes of row splits the
 * same close-ups have moved within the lent buffers, process-wide (not
 * those only rebased where they were written). */
int64_t st_test_closeup_moved_splits(void);
/* st_test_closeup_rebased_splits returns how many bytes of the records'
 * own row splits (those of the top-level list fields, placed by record)
 * the same close-ups have rebased, moved or in place, process-wide. */
int64_t st_test_closeup_rebased_splits(void);
/* st_test_handover makes multi-threaded decodes into lent buffers hand
 * the records' own row splits over to later chunks never (mode -1), as
 * the plan's last batch says (0, the default), or always (1), the first
 * chunk then taking share less time than the others (a share of 4 gives
 * it a sixth of two chunks' bytes); mode 2 is 1 with the thread that
 * asks waiting (up to a few seconds) until the next chunk's thread has
 * walked 64 of its records. */
void st_test_handover(int32_t mode, double share);
/* st_test_handovers returns how many hand-overs later chunks have taken,
 * process-wide, and stores in rebased_bytes (if not NULL) the bytes of
 * splits their askers rebased. */
int64_t st_test_handovers(int64_t* rebased_bytes);
/* st_test_steal makes multi-threaded decodes into lent buffers, and
 * those by feature spec (st_example_decode*), split a chunk with input left for a thread done with its own never (mode -1),
 * when worth it (0, the default), whenever 2 records or more are left
 * (1), or so, the first (2) or the last (3) chunk's walk slowed down until
 * the batch's first split.
 * st_test_splits returns how many splits were made in the process. */
void st_test_steal(int32_t mode);
/* st_test_min_thread_seconds sets the least walk, in seconds at the
 * plan's measured rate, that a thread of a decode into lent buffers is
 * given (0: none, every thread asked for takes a chunk), or back to its
 * default (< 0): tests of several chunks on small batches set 0. */
void st_test_min_thread_seconds(double seconds);
int64_t st_test_splits(void);
/* st_test_defer_splits makes the chunks that may take a hand-over defer
 * the records' own row splits until they take it where they are a large
 * enough share of the output (mode 0, the default), wherever they may
 * (1), or never, writing them as they go (-1).
 * st_test_deferred_adoptions returns how many chunks deferred them, ended
 * their walk without taking the hand-over and had them written once the
 * chunks before them were done, in this process.
 * st_test_deferred_parts_helped returns how many record parts of such
 * deferred splits a thread other than the one writing them wrote. */
void st_test_defer_splits(int32_t mode);
int64_t st_test_deferred_adoptions(void);
int64_t st_test_deferred_parts_helped(void);

/* Results. Sizes first, then copy into buffers the caller allocated (a
 * TensorFlow output tensor, a Go slice): chunks decoded on other threads
 * are concatenated, and offsets and splits fixed up, during the copy. */
int64_t st_result_num_records(const st_result* r);
/* 1 when the column (values, and offsets for strings) or partition lies
 * complete in the buffers lent by st_decode_into or
 * st_decode_contiguous_into, 0 when it is
 * in engine memory, -1 on a bad index. */
int32_t st_result_column_in_place(const st_result* r, int64_t column);
int32_t st_result_partition_in_place(const st_result* r, int64_t partition);
/* st_result_column_utf8 tells what a decode with mark_utf8 set found of
 * the strings of a column of a protobuf string field: 1 when each is
 * valid UTF-8 on its own (as Go's utf8.Valid has it), 0 when one is not;
 * -1 when it cannot tell: the decode did not mark, the column is not a
 * string field's (a bytes field's values are never marked), a string
 * found invalid was taken back later (a singular field set again, a
 * oneof's other member), or the index is bad. A string field that
 * requires valid UTF-8 (proto3) is 1 in any result with the mark. */
int32_t st_result_column_utf8(const st_result* r, int64_t column);
/* st_result_layout writes what st_result_column_length,
 * st_result_column_bytes, st_result_column_in_place,
 * st_result_partition_length and st_result_partition_in_place return, for
 * every column c into columns[3c], columns[3c+1] and columns[3c+2], and
 * for every partition p into partitions[2p] and partitions[2p+1]: one
 * call instead of five per output, for a caller that takes every output
 * of a small batch. */
void st_result_layout(const st_result* r, int64_t* columns, int64_t* partitions);
/* Number of values of a column (strings: number of strings). -1 on a bad index. */
int64_t st_result_column_length(const st_result* r, int64_t column);
/* Bytes of value data: length * element size, or total string bytes. */
int64_t st_result_column_bytes(const st_result* r, int64_t column);
/* Copies the value data (column_bytes bytes) into dst; returns 0 or an error code. */
int32_t st_result_copy_column(const st_result* r, int64_t column, void* dst, size_t dst_bytes);
/* Copies length+1 string offsets (starting at 0) into dst. */
int32_t st_result_copy_string_offsets(const st_result* r, int64_t column, int64_t* dst, size_t dst_len);
/* Number of row splits of a partition (rows + 1). */
int64_t st_result_partition_length(const st_result* r, int64_t partition);
int32_t st_result_copy_partition(const st_result* r, int64_t partition, int64_t* dst, size_t dst_len);
/* st_result_copy_outputs copies several outputs in one call, for a caller
 * that takes every output of a small batch (a few hundred columns cost a
 * few hundred calls otherwise): for every column c whose columns[c] is not
 * NULL its value data into columns[c] (st_result_column_bytes bytes) and,
 * for a string column, its offsets into offsets[c] (length + 1 of them;
 * offsets may be NULL when no string column is copied), and for every
 * partition p whose partitions[p] is not NULL its splits (as
 * st_result_copy_partition). Each array has one entry per column or
 * partition of the plan. Returns 0 or the first error code, outputs
 * before it copied. */
int32_t st_result_copy_outputs(const st_result* r, void* const* columns, int64_t* const* offsets,
                               int64_t* const* partitions);
/* Free a column's or a partition's engine memory once it has been copied
 * out, so that a large batch never holds two full copies of its output.
 * Afterwards the column or partition reads as empty. Optional: small
 * buffers are better kept (st_result_free hands them back to the plan for
 * the next batch). */
void st_result_release_column(st_result* r, int64_t column);
void st_result_release_partition(st_result* r, int64_t partition);

#ifdef __cplusplus
}
#endif

#endif /* STRUCTTENSOR_NATIVE_H_ */
