/*
 * structtensor_example.h: the C ABI of the engine's tf.Example and
 * tf.SequenceExample decoder (example.cc).
 *
 * A feature plan (byte form "STEX", documented in native/doc.go and written
 * by the Go package decode) lists slots: one per feature key to decode,
 * each with the section it is read from (the Example's features or a
 * SequenceExample's context, or a SequenceExample's feature_lists), its
 * list kind and its shape rule. The decoder walks each record once,
 * remembers the last occurrence of every planned key (protobuf map
 * semantics) without copying key bytes, skips every other key, and then
 * appends each slot's values to the slot's column.
 *
 * Output per slot: a value column (int64, float32, or strings as bytes
 * plus length+1 int64 offsets) and up to two row-split arrays: level 0
 * has one row per record, level 1 (feature_lists slots of list mode) one
 * row per step. Which levels a slot has follows from its section and
 * mode, so the caller knows the shapes before decoding.
 *
 * Threading and errors are those of st_decode (structtensor_native.h):
 * output and error identical on any thread count, no output on error.
 * A plan is immutable and may be shared by concurrent calls; free every
 * result before its plan.
 */
#ifndef STRUCTTENSOR_EXAMPLE_H_
#define STRUCTTENSOR_EXAMPLE_H_

#include <stddef.h>
#include <stdint.h>

#include "structtensor_native.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes of the feature decoder, besides ST_ERR_MALFORMED,
 * ST_ERR_PLAN, ST_ERR_CANCELLED, ST_ERR_ARGUMENT and ST_ERR_INTERNAL. */
enum {
  ST_ERR_FEATURE_MISSING = 20, /* a fixed-length feature without default is absent */
  ST_ERR_FEATURE_TYPE = 21,    /* a feature holds another list kind than its spec's dtype */
  ST_ERR_FEATURE_SHAPE = 22    /* a feature holds a number of values its shape does not allow */
};

typedef struct st_example_plan st_example_plan;
typedef struct st_example_result st_example_result;

st_example_plan* st_example_plan_new(const uint8_t* data, size_t len, st_error* err);
void st_example_plan_free(st_example_plan* plan);
int64_t st_example_plan_num_slots(const st_example_plan* plan);
/* The dtype of a slot's values (ST_INT64, ST_FLOAT32 or ST_STRING), or 0 on a bad index. */
int32_t st_example_plan_slot_dtype(const st_example_plan* plan, int64_t slot);

/* Record i is ptrs[i][0:lens[i]]. */
st_example_result* st_example_decode(const st_example_plan* plan, const uint8_t* const* ptrs,
                                     const size_t* lens, int64_t n, const st_options* opts,
                                     st_error* err);
/* Record i is data[offsets[i]:offsets[i+1]] (n+1 non-decreasing offsets). */
st_example_result* st_example_decode_contiguous(const st_example_plan* plan, const uint8_t* data,
                                                size_t data_len, const int64_t* offsets, int64_t n,
                                                const st_options* opts, st_error* err);
void st_example_result_free(st_example_result* r);

/* Number of values of a slot's column (strings: number of strings), or -1 on a bad index. */
int64_t st_example_result_values_length(const st_example_result* r, int64_t slot);
/* Bytes of value data: length * element size, or the total string bytes. */
int64_t st_example_result_values_bytes(const st_example_result* r, int64_t slot);
int32_t st_example_result_copy_values(const st_example_result* r, int64_t slot, void* dst, size_t dst_bytes);
/* length+1 string offsets, from 0. */
int32_t st_example_result_copy_string_offsets(const st_example_result* r, int64_t slot, int64_t* dst,
                                              size_t dst_len);
/* Number of row splits of a slot at level 0 or 1 (rows + 1), or 0 when the slot has no such level. */
int64_t st_example_result_splits_length(const st_example_result* r, int64_t slot, int32_t level);
int32_t st_example_result_copy_splits(const st_example_result* r, int64_t slot, int32_t level, int64_t* dst,
                                      size_t dst_len);

/* The sizes of every slot's outputs in one call: for slot s, sizes[4s]
 * its values length, sizes[4s+1] its value bytes, sizes[4s+2] and
 * sizes[4s+3] its row splits lengths at levels 0 and 1 (0: no such
 * level). sizes holds sizes_len >= 4 * slots elements. */
int32_t st_example_result_layout(const st_example_result* r, int64_t* sizes, size_t sizes_len);
/* Copies every slot's outputs into block (block_bytes) in one call, on up
 * to threads threads of the engine's pool (<= 0: as many as
 * st_set_thread_limit allows): slot s's values at byte offset at[4s], its
 * string offsets (string slots) at at[4s+1], its row splits at levels 0
 * and 1 at at[4s+2] and at[4s+3]. An offset < 0 skips that output; every
 * other must leave room for the output within the block (sizes as
 * st_example_result_layout gives them), else nothing is copied and the
 * call returns ST_ERR_ARGUMENT. The engine keeps no reference to block
 * or at after the call. */
/* Sets utf8[s] (utf8_len >= slots) to 1 where slot s holds strings each
 * of which is valid UTF-8 on its own (as Go's utf8.Valid has it), else 0.
 * Returns ST_ERR_ARGUMENT when r was not decoded with mark_utf8 set. */
int32_t st_example_result_utf8(const st_example_result* r, uint8_t* utf8, size_t utf8_len);
int32_t st_example_result_copy_into(const st_example_result* r, void* block, size_t block_bytes, const int64_t* at,
                                    size_t at_len, int32_t threads);

/* Sets cap (cap_len >= 4 * slots) to the room in bytes to give each
 * output of a batch of in_bytes bytes in n records decoded with
 * st_example_decode_contiguous_into (0 for outputs the slot does not
 * have), guessed from the plan's last batch, and returns 1; returns 0
 * when there is no guess (no last batch) or the batch is too small to
 * gain from it. */
int32_t st_example_lend_sizes(const st_example_plan* plan, int64_t in_bytes, int64_t n, int64_t* cap, size_t cap_len);
/* Decodes records as st_example_decode_contiguous does, straight into
 * block (block_bytes): slot s's values at byte offset
 * at[4s] with room for cap[4s] bytes, its string offsets (string slots)
 * at at[4s+1], its row splits at levels 0 and 1 at at[4s+2] and at[4s+3]
 * (each 8-byte aligned; outputs the slot does not have are ignored),
 * each output's part copied there as soon as the stretch of records
 * that wrote it is decoded. On success, returns ST_OK with *rest NULL
 * and sizes (sizes_len >= 4 * slots) set as st_example_result_layout
 * sets them: the outputs are in block. If an output outgrows its room,
 * the block's contents are undefined and the batch is decoded the usual
 * way: ST_OK with *rest that result (to copy out, then free). Otherwise
 * returns the error code, with err set. With opts->mark_utf8 set, utf8
 * (utf8_len >= slots) is set as st_example_result_utf8 sets it when the
 * outputs went into block (when not, the rest's marks it); it may be NULL
 * otherwise. The engine keeps no reference to block, at, cap, sizes or
 * utf8 after the call. */
int32_t st_example_decode_contiguous_into(const st_example_plan* plan, const uint8_t* data, size_t data_len,
                                          const int64_t* offsets, int64_t n, const st_options* opts, void* block,
                                          size_t block_bytes, const int64_t* at, const int64_t* cap, size_t at_len,
                                          int64_t* sizes, size_t sizes_len, uint8_t* utf8, size_t utf8_len,
                                          st_example_result** rest, st_error* err);

/* For tests: how many copy-outs (st_example_result_copy_into) were
 * shared among several threads in this process. */
int64_t st_test_example_shared_copies(void);
/* For tests: sets the records' bytes per stretch of
 * st_example_decode_contiguous_into, and the least batch
 * st_example_lend_sizes guesses for, to bytes (> 0), or both back to
 * their defaults (0). */
void st_test_example_stream_bytes(int64_t bytes);
/* For tests: how many decodes into a block found it too small. */
int64_t st_test_example_stream_fallbacks(void);
/* For tests: the thread that takes a multi-threaded decode's first chunk
 * waits us microseconds before claiming it (0: none), so that a later
 * chunk fails first, as a slow start of that thread may have it. */
void st_test_example_claim_delay(int32_t us);

#ifdef __cplusplus
}
#endif

#endif /* STRUCTTENSOR_EXAMPLE_H_ */
