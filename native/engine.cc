// The structtensor shredding engine: serialized protobuf records to
// columns in one pass per record. See include/structtensor_native.h for the
// C ABI and doc.go for the design and the plan's byte form.
//
// Everything here is plain C++17 with no dependency beyond the standard
// library, so the same file builds under cgo and as a shared library for
// the TensorFlow kernel:
//
//	g++ -std=c++17 -O2 -shared -fPIC -pthread native/*.cc -o libstructtensor_native.so

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif

#include "include/structtensor_native.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ST_X86_64 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define ST_X86_64 0
#endif

#include "engine_shared.h"
#include "engine_plan.h"
#include "engine_columns.h"
#include "engine_wire.h"
#include "engine_walker.h"
#include "engine_threads.h"
#include "engine_sizing.h"

// ---------------------------------------------------------------------
// Results, batches (chunks over threads) and the C ABI.

struct st_result {
  const st_plan* plan;
  int64_t nrecords = 0;
  bool utf8_marked = false;  // decoded with st_options.mark_utf8
  std::vector<std::unique_ptr<Decoder>> chunks;

  ~st_result() {
    // Hand the decoders back to the plan (up to kPoolDecoders, none that
    // holds more than kPoolDecoderBytes, no more than kPoolBytes in all)
    // for the next batch.
    std::lock_guard<std::mutex> lock(plan->pool_mu);
    for (auto& c : chunks) {
      if (c->external || plan->closed || plan->pool.size() >= kPoolDecoders) continue;
      const size_t cap = c->capacity();
      if (cap > kPoolDecoderBytes || plan->pool_bytes + cap > kPoolBytes) continue;
      try {
        plan->pool.push_back(c.get());
        c.release();
        plan->pool_bytes += cap;
      } catch (...) {
      }
    }
  }
  static constexpr size_t kPoolDecoders = 16;
  static constexpr size_t kPoolDecoderBytes = size_t(64) << 20;
  static constexpr size_t kPoolBytes = size_t(ST_PLAN_POOL_BYTES);
};

namespace {

std::unique_ptr<Decoder> get_decoder(const st_plan* plan) {
  {
    std::lock_guard<std::mutex> lock(plan->pool_mu);
    if (!plan->pool.empty()) {
      std::unique_ptr<Decoder> d(plan->pool.back());
      plan->pool.pop_back();
      plan->pool_bytes -= std::min(plan->pool_bytes, d->capacity());
      d->reset();
      return d;
    }
  }
  return std::unique_ptr<Decoder>(new Decoder(plan));
}

// ---------------------------------------------------------------------
// Closing up the stretches of a multi-threaded decode into lent buffers.
//
// Each chunk of a batch decoded on several threads into the caller's
// buffers writes its own stretch of each buffer (Decoder::attach_part),
// sized by its share of the input bytes. Afterwards each output is closed
// up on its own (assemble_output): the chunks' pieces are moved together
// to the start of the buffer, string offsets and row splits rebased. A
// piece that outgrew its stretch went to engine memory (Buf::grow); it is
// copied back in, after the pieces it may overlap have moved, whenever
// the output as a whole fits the buffer, so one chunk's bad guess costs
// that piece's copies and nothing else. An output that does not fit stays
// in pieces and is copied out, alone.
//
// What the close-up costs is the outputs whose size per record varies:
// every piece after the first moves by the gap its guess left. On
// tf.Examples (32 MB, two threads) that was 27 MB of the 70 MB output,
// 1.5-2.1 ms of a 25 ms call, while the walk itself costs the two
// threads what it costs one; the value columns and nested row splits
// with as many values (splits and elements) a record as the batch
// before are now placed by record (exact_per_record, exact_parts), and
// 13 MB of values and splits a call move (the string columns' offsets
// besides): strings, and the values of lists whose lengths vary.
// Leaving nothing to close up instead, as the feature decoder does
// (example.cc, decode_into: each thread decodes stretches of about 256
// KiB of records into engine memory, in cache, and copies each into
// place once the stretches before it are decoded) was measured and is
// slower here: the copy is a second pass over all of the output, not a
// part of it. Flat records took 22-25 ms of CPU against 11.4 in place,
// tf.Examples 55-56 against 52 (stretches of 128 KiB to 512 KiB; Intel
// Xeon model 167).

// closeup_moved_values counts the bytes of values that close-ups moved
// within lent buffers (st_test_closeup_moved_values).
std::atomic<int64_t> closeup_moved_values{0};

// closeup_moved_splits counts the bytes of row splits that close-ups
// moved within lent buffers, rebased or not (st_test_closeup_moved_splits).
std::atomic<int64_t> closeup_moved_splits{0};

// closeup_rebased_splits counts the bytes of the records' own row splits
// (placed by record: Decoder::record_parts) that close-ups rebased, moved
// or in place (st_test_closeup_rebased_splits).
std::atomic<int64_t> closeup_rebased_splits{0};

// Piece is one chunk's part of one output: the Buf, and whether its
// elements are cumulative int64s (string offsets, row splits), whose
// leading 0 a later chunk drops and whose values it rebases.
struct Piece {
  Buf* buf;
  size_t src = 0;     // first byte of the buffer kept
  size_t bytes = 0;   // bytes kept
  size_t dst = 0;     // byte offset in the closed-up output
  int64_t base = 0;   // added to each element (cumulative outputs)
};

// move_piece writes piece at dst (inside the lent buffer at `to`),
// rebasing cumulative elements, and counts the bytes moved within the
// lent buffer in moved and those rebased in rebased (each if not null).
// Overlapping moves go in the right direction: memmove for raw bytes,
// and for rebased int64s backwards when moving up. It returns the bytes
// it wrote (0 for a piece already in place).
size_t move_piece(const Piece& pc, uint8_t* to, bool cumulative, std::atomic<int64_t>* moved, std::atomic<int64_t>* rebased) {
  const uint8_t* from = pc.buf->p + pc.src;
  uint8_t* dst = to + pc.dst;
  if (pc.bytes == 0 || (from == dst && pc.base == 0)) return 0;
  if (moved && from != dst && pc.buf->external) moved->fetch_add(int64_t(pc.bytes), std::memory_order_relaxed);
  if (rebased && cumulative && pc.base != 0) rebased->fetch_add(int64_t(pc.bytes), std::memory_order_relaxed);
  if (!cumulative || pc.base == 0) {
    memmove(dst, from, pc.bytes);
    return pc.bytes;
  }
  // Eight elements at a time, each block loaded whole before it is
  // stored: a block stored overlaps only elements already loaded (moving
  // down, forwards; moving up, backwards).
  typedef int64_t Block __attribute__((vector_size(64)));
  const size_t m = pc.bytes / 8, whole = m / 8 * 8;
  const int64_t base = pc.base;
  auto one = [&](size_t i) {
    int64_t v;
    memcpy(&v, from + i * 8, 8);
    v += base;
    memcpy(dst + i * 8, &v, 8);
  };
  auto block = [&](size_t i) {
    Block v;
    memcpy(&v, from + i * 8, 64);
    v += base;
    memcpy(dst + i * 8, &v, 64);
  };
  if (dst <= from) {
    for (size_t i = 0; i < whole; i += 8) block(i);
    for (size_t i = whole; i < m; i++) one(i);
  } else {
    for (size_t i = m; i-- > whole;) one(i);
    for (size_t i = whole; i > 0; i -= 8) block(i - 8);
  }
  return pc.bytes;
}

// rebase_in_place adds base to the first n int64s of b, where they are.
void rebase_in_place(Buf& b, size_t n, int64_t base) {
  Piece pc{&b, 0, n * 8, 0, base};
  move_piece(pc, b.p, true, nullptr, nullptr);
}

// Assembly is one output's pieces (one per chunk, in order) and where
// each goes in the lent buffer.
struct Assembly {
  std::vector<Piece> pcs;
  bool cumulative = false;
  std::atomic<int64_t>* moved = nullptr;    // counts the bytes moved (move_piece)
  std::atomic<int64_t>* rebased = nullptr;  // counts the bytes rebased (move_piece)
  uint8_t* lent = nullptr;
  size_t lent_bytes = 0;
  size_t total = 0;

  // plan places the pieces bufs (nbufs of them) one after another and
  // tells whether they fit the lent buffer lent of lent_bytes (nullptr:
  // nothing lent, they do not). ends[k] is the last split of bufs[k] when
  // it leaves it out (Buf::end_elsewhere; ends may be null when none does).
  // based[k] is what bufs[k]'s splits count from (Decoder::split_base;
  // based may be null when all count from 0): a piece is rebased by what
  // the pieces before it hold less that, so a piece that took the
  // hand-over (Handovers) is not rebased at all.
  bool plan(Buf* const* bufs, size_t nbufs, bool cum, uint8_t* to, size_t to_bytes, const int64_t* ends = nullptr,
            const int64_t* based = nullptr) {
    cumulative = cum;
    lent = to;
    lent_bytes = to_bytes;
    if (!lent) return false;
    pcs.assign(nbufs, Piece{});
    total = 0;
    int64_t base = 0;
    for (size_t k = 0; k < nbufs; k++) {
      Piece& pc = pcs[k];
      pc.buf = bufs[k];
      // A leading 0 is dropped, unless the piece before left its last
      // split out for it (Buf::end_elsewhere): rebased, it is that split.
      pc.src = cumulative && k > 0 && !bufs[k - 1]->end_elsewhere ? 8 : 0;
      pc.bytes = pc.buf->len - std::min(pc.buf->len, pc.src);
      pc.dst = total;
      const int64_t from = based ? based[k] : 0;
      pc.base = base - from;
      total += pc.bytes;
      if (cumulative && pc.buf->end_elsewhere) {
        base += ends[k] - from;
      } else if (cumulative && pc.buf->len >= 8) {
        base += pc.buf->last_i64() - from;
      }
    }
    return total <= lent_bytes;
  }

  // restore_ends puts back the last split of each of the nbufs pieces
  // bufs that left it out (Buf::end_elsewhere), for an output that is
  // not closed up: its pieces are then read each with its own leading 0
  // and last split (st_result_copy_partition).
  // Splits that count from based[k] (not 0) are made to count from 0.
  static void restore_ends(Buf* const* bufs, const int64_t* ends, const int64_t* based, size_t nbufs) {
    for (size_t k = 0; k < nbufs; k++) {
      if (bufs[k]->end_elsewhere) {
        bufs[k]->end_elsewhere = false;
        bufs[k]->push<int64_t>(ends[k]);
      }
      if (based[k] != 0) rebase_in_place(*bufs[k], bufs[k]->len / 8, -based[k]);
    }
  }

  // apply moves the planned pieces together: those still in their
  // stretch that move up first, last first, then those that move down
  // (or stay), first first, then the ones in engine memory. No move
  // overwrites a piece not yet moved: each stretch lies after the ones
  // before it, and a piece in its stretch is no longer than the stretch.
  // The first piece's Buf then holds the whole output in the lent
  // buffer; the others are emptied (a cumulative one keeps its leading
  // 0, in engine memory: its stretch now holds the output).
  // It returns the bytes written (move_piece).
  size_t apply() {
    auto moves_up = [&](const Piece& pc) { return pc.buf->external && pc.buf->p + pc.src < lent + pc.dst; };
    size_t written = 0;
    for (size_t k = pcs.size(); k-- > 0;) {
      if (moves_up(pcs[k])) written += move_piece(pcs[k], lent, cumulative, moved, rebased);
    }
    for (auto& pc : pcs) {
      if (pc.buf->external && !moves_up(pc)) written += move_piece(pc, lent, cumulative, moved, rebased);
    }
    for (auto& pc : pcs) {
      if (!pc.buf->external) written += move_piece(pc, lent, cumulative, moved, rebased);
    }
    for (auto& pc : pcs) pc.buf->end_elsewhere = false;
    pcs[0].buf->attach(lent, lent_bytes);
    pcs[0].buf->len = total;
    for (size_t k = 1; k < pcs.size(); k++) {
      pcs[k].buf->release();
      if (cumulative) pcs[k].buf->push<int64_t>(0);
    }
    return written;
  }
};

// kSerialCloseUpBytes: a close-up that writes less runs on one thread
// (assemble).
constexpr int64_t kSerialCloseUpBytes = 256 << 10;

// closeup_helpers returns the pool threads a close-up of plan's outputs
// on up to threads threads takes (assemble): none when the plan's last
// close-up wrote less than kSerialCloseUpBytes.
int64_t closeup_helpers(const st_plan* plan, int threads) {
  const int64_t last = plan->closeup_bytes.load(std::memory_order_relaxed);
  if (last >= 0 && last < kSerialCloseUpBytes) return 0;
  return std::min<int64_t>(threads, int64_t(plan->col_dtype.size()) + plan->nparts) - 1;
}

// assemble closes up every output of a multi-threaded decode into out's
// buffers (assemble_output), the outputs shared out among up to threads
// workers. When every output is whole, one chunk is left.
//
// Shared out, an output's bookkeeping costs several times what it costs
// one thread: on flat records (100 columns and 100 row partitions, all
// in place: the close-up writes nothing) in 8 MB batches on two
// threads, each thread took 34 us for its 100 outputs (Intel Xeon model
// 167), one thread 20 us for all 200 (most likely the lines of the
// chunks' records, which the threads taking turns at neighbouring
// outputs both write, going back and forth). So a close-up is
// shared out only when the plan's last one wrote at least
// kSerialCloseUpBytes (tf.Examples write megabytes: moved values and
// splits); a wrong guess costs only time.
void assemble(st_result& res, const st_output& out, int threads) {
  const size_t nchunks = res.chunks.size();
  const size_t ncols = res.chunks[0]->cols.size(), nparts = res.chunks[0]->parts.size();
  std::atomic<size_t> next{0};
  std::atomic<size_t> whole{0};
  std::atomic<int64_t> written{0};
  std::atomic<bool> oom{false};
  auto work = [&] {
    size_t closed = 0, wrote = 0;  // this thread's, added up once
    try {
      std::vector<Buf*> bufs(nchunks);
      std::vector<int64_t> ends(nchunks), based(nchunks);
      Assembly vals, offs;
      Assembly splits;
      vals.moved = &closeup_moved_values;
      splits.moved = &closeup_moved_splits;
      for (;;) {
        const size_t j = next.fetch_add(1);
        if (j >= ncols + nparts) break;
        if (j >= ncols) {
          const size_t p = j - ncols;
          for (size_t k = 0; k < nchunks; k++) {
            Decoder& d = *res.chunks[k];
            bufs[k] = &d.parts[p];
            ends[k] = bufs[k]->end_elsewhere ? d.end_splits[p] : 0;
            based[k] = d.split_base[p];
          }
          int64_t* to = out.partition_splits ? out.partition_splits[p] : nullptr;
          // The first chunk leaves its last split out when placed by record.
          splits.rebased = bufs[0]->end_elsewhere ? &closeup_rebased_splits : nullptr;
          if (splits.plan(bufs.data(), nchunks, true, reinterpret_cast<uint8_t*>(to), to ? out.partition_len[p] * 8 : 0, ends.data(),
                          based.data())) {
            wrote += splits.apply();
            closed++;
          } else {
            Assembly::restore_ends(bufs.data(), ends.data(), based.data(), nchunks);
          }
          continue;
        }
        const size_t c = j;
        Column& c0 = res.chunks[0]->cols[c];
        for (size_t k = 0; k < nchunks; k++) bufs[k] = &res.chunks[k]->cols[c].vals;
        void* to = out.column_data ? out.column_data[c] : nullptr;
        if (!vals.plan(bufs.data(), nchunks, false, static_cast<uint8_t*>(to), to ? out.column_bytes[c] : 0)) continue;
        // A string column is closed up when both its bytes and its
        // offsets fit, or else neither is.
        if (c0.dtype == ST_STRING) {
          for (size_t k = 0; k < nchunks; k++) bufs[k] = &res.chunks[k]->cols[c].offs;
          int64_t* o = out.string_offsets ? out.string_offsets[c] : nullptr;
          if (!offs.plan(bufs.data(), nchunks, true, reinterpret_cast<uint8_t*>(o), o ? out.string_offsets_len[c] * 8 : 0)) continue;
          wrote += offs.apply();
        }
        wrote += vals.apply();
        int64_t n = 0;
        uint8_t utf8 = Column::kUTF8Valid;
        for (size_t k = 0; k < nchunks; k++) {
          n += res.chunks[k]->cols[c].n;
          utf8 = std::max(utf8, res.chunks[k]->cols[c].utf8);
          if (k > 0) res.chunks[k]->cols[c].n = 0;
        }
        c0.n = n;
        c0.utf8 = utf8;  // the other chunks go when every output is whole
        closed++;
      }
      whole += closed;
      written += int64_t(wrote);
    } catch (...) {
      oom = true;
      next = ncols + nparts;
    }
  };
  const int64_t helpers = closeup_helpers(res.plan, threads);
  if (helpers <= 0) {
    work();
  } else {
    Workers::get().run(helpers, work);
  }
  if (oom) throw std::bad_alloc();
  res.plan->closeup_bytes.store(written.load(), std::memory_order_relaxed);
  if (whole == ncols + nparts) res.chunks.resize(1);
}

// remember_sizes makes a result's sizes the plan's last_sizes, from which
// st_plan_lend_sizes sizes the next batch; out of memory, it keeps the
// old ones (a guess, never needed for a correct output).
void remember_sizes(const st_plan* plan, const st_result* r, int64_t in_bytes, int64_t n) {
  try {
    auto s = std::make_shared<BatchSizes>();
    s->in_bytes = in_bytes;
    s->records = n;
    const size_t ncols = plan->col_dtype.size(), nparts = size_t(plan->nparts);
    s->col_len.resize(ncols);
    s->col_bytes.resize(ncols);
    s->part_len.resize(nparts);
    for (size_t c = 0; c < ncols; c++) {
      s->col_len[c] = st_result_column_length(r, int64_t(c));
      s->col_bytes[c] = st_result_column_bytes(r, int64_t(c));
    }
    s->part_elems.assign(nparts, 0);
    for (size_t p = 0; p < nparts; p++) {
      s->part_len[p] = st_result_partition_length(r, int64_t(p));
      // Each chunk's splits count from 0 once a decode is over (assemble,
      // restore_ends): the elements are the sum of their last splits.
      for (auto& ch : r->chunks) {
        const Buf& b = ch->parts[p];
        if (b.len >= 8) s->part_elems[p] += b.last_i64();
      }
    }
    std::lock_guard<std::mutex> lock(plan->sizes_mu);
    plan->last_sizes = std::move(s);
  } catch (...) {
  }
}

// lend_sizes is st_plan_lend_sizes for a batch of n records of in_bytes,
// whose first first_with(b) records hold at least b bytes (their bytes:
// bytes_of(k)), and sample(k, out) decodes the first k into out.
template <class FirstWith, class BytesOf, class Sample>
int32_t lend_sizes(const st_plan* plan, int64_t n, int64_t in_bytes, int32_t threads, const FirstWith& first_with,
                   const BytesOf& bytes_of, const Sample& sample, const st_lend_sizes* sizes) {
  if (in_bytes < kLendMinBytes || n <= 0) return 0;
  std::shared_ptr<const BatchSizes> last;
  {
    std::lock_guard<std::mutex> lock(plan->sizes_mu);
    last = plan->last_sizes;
  }
  if (!last) {
    const int64_t k = first_with(sample_bytes(in_bytes));
    if (k >= n) return 0;
    // Lending nothing-but-the-arrays (an st_output without buffers) gives
    // the sample decoders of its own, freed with the result, rather than
    // pooled ones that lending decodes never use.
    st_output unpooled{};
    st_result* r = sample(k, &unpooled);
    if (!r) return 0;
    if (bytes_of(k) < kLendMinBytes) remember_sizes(plan, r, bytes_of(k), k);
    st_result_free(r);
    std::lock_guard<std::mutex> lock(plan->sizes_mu);
    last = plan->last_sizes;
  }
  if (!last) return 0;
  fill_lend_sizes(plan->col_dtype, *last, in_bytes, n, lend_chunks(plan, threads, n, in_bytes), *sizes);
  return 1;
}

// lend_sizes_logged is lend_sizes, logged for st_test_lend_log.
template <class... Args>
int32_t lend_sizes_logged(const st_plan* plan, int64_t n, int64_t in_bytes, const st_options* opts,
                          const st_lend_sizes* sizes, const Args&... args) {
  if (!plan || !sizes || !sizes->column_bytes || !sizes->string_offsets_len || !sizes->partition_len) return 0;
  int32_t lend = 0;
  try {
    lend = lend_sizes(plan, n, in_bytes, opts ? opts->threads : 1, args..., sizes);
  } catch (...) {
    lend = 0;
  }
  try {
    log_lend_sizes(plan->col_dtype.size(), size_t(plan->nparts), in_bytes, n, lend, *sizes);
  } catch (...) {
  }
  return lend;
}

// ---------------------------------------------------------------------
// Handing over the records' own row splits.
//
// In a decode into lent buffers on several threads, a chunk after the
// first writes the splits of the records' own list fields (placed by
// record, one a record: Decoder::record_parts) counting from 0, and the
// close-up rebases them by what the chunks before hold: on wide records
// a memory-speed pass over half the output, after the decode. Instead,
// the thread that finishes the first chunk hands the totals over to the
// second while it runs (Decoder::ask_handover): the second writes the
// rest of its splits based, and the first rebases those it had written
// before, in place, while the second decodes on. The first chunk is
// given fewer bytes (handover_rebase_share) so that its thread has the
// time. Whatever the timing (asked at a record, after the last one, or
// too late), the output is the same: a chunk that did not take the
// hand-over is rebased by the close-up, as before.

// handover_mode and handover_share are st_test_handover's switches: mode
// -1 never hands over, 0 as the batch's sizes say, 1 with the share
// handover_share, and 2 too, the asker waiting (up to a few seconds) for
// the next chunk to be claimed and 64 records in before it asks (so
// that tests make it happen in the middle of a chunk), and the writer of
// deferred splits for a thread to help it (SplitBatch::write_deferred).
std::atomic<int32_t> handover_mode{0};
std::atomic<double> handover_share{0};

// handovers_taken counts the hand-overs taken, and handover_rebased_splits
// the bytes of splits the askers rebased (st_test_handovers).
std::atomic<int64_t> handovers_taken{0};
std::atomic<int64_t> handover_rebased_splits{0};

// kRebasePerSplitByte is the time rebasing a byte of the records' own
// splits in place takes, as a share of the time decoding one input byte
// of the records that have them, until a plan's own hand-overs have
// measured it (st_plan::rebase_cost): measured on wide sparse records,
// AMD EPYC Zen 4 (about 23 bytes of such splits an input byte, rebased
// in a fifth to a quarter of the time their decode took).
constexpr double kRebasePerSplitByte = 0.01;

// kRebaseCostMinBytes is the fewest bytes of splits a hand-over must have
// rebased for its timing to count (st_plan::rebase_cost).
constexpr int64_t kRebaseCostMinBytes = int64_t(1) << 20;

// handover_rebase_share is how much longer than the first chunk's decode
// a later chunk's takes: the first chunk's thread, done, spends that
// share rebasing the second's splits (the time it took, times the cost
// of rebasing a split byte against decoding an input byte, times the
// split bytes an input byte gave in the plan's last batch, last). Under
// 2% it is not worth skewing the chunks for (flat and nested records:
// under 2 bytes of such splits a byte).
double handover_rebase_share(const st_plan* plan, const BatchSizes& last) {
  const int32_t mode = handover_mode.load(std::memory_order_relaxed);
  if (mode < 0) return 0;
  if (mode > 0) return handover_share.load(std::memory_order_relaxed);
  if (last.in_bytes <= 0 || last.part_len.empty()) return 0;
  double split_bytes = 0;
  for (const NodePlan::ListSlot& ls : plan->nodes[0].list_slots) split_bytes += 8.0 * double(last.part_len[size_t(ls.partition)]);
  const double measured = plan->rebase_cost.load(std::memory_order_relaxed);
  const double share = (measured > 0 ? measured : kRebasePerSplitByte) * split_bytes / double(last.in_bytes);
  return share < 0.02 ? 0 : std::min(share, 1.0);
}

// note_rebase_cost folds one hand-over's timing into plan's rebase_cost:
// rebased bytes of splits in rebase_s seconds, by the thread that had
// decoded in_bytes of input in decode_s.
void note_rebase_cost(const st_plan* plan, int64_t rebased, double rebase_s, int64_t in_bytes, double decode_s) {
  if (rebased < kRebaseCostMinBytes || in_bytes <= 0 || decode_s <= 0 || rebase_s <= 0) return;
  const double cost = (rebase_s / double(rebased)) / (decode_s / double(in_bytes));
  const double old = plan->rebase_cost.load(std::memory_order_relaxed);
  // Half the last estimate, half this one: a batch on a busy machine moves
  // it, and does not set it.
  plan->rebase_cost.store(old > 0 ? (old + cost) / 2 : cost, std::memory_order_relaxed);
}

// kDeferWeightGuess is Plan::defer_weight until a batch has measured it:
// about what wide repeated and sparse nested records measured (wide
// sparse ones, 2), Intel Xeon model 207.
constexpr double kDeferWeightGuess = 1.6;

// note_defer_timing folds the timing of a batch whose chunk 1 (c1)
// deferred its records' own splits into plan's defer_weight; chunk 0 ran
// c0_s seconds on c0_bytes of input. Chunk 0 walked w
// seconds an input byte; chunk 1 walked d a byte deferring, and its
// deferred splits took f a byte it walked so to write, by chunk 0's
// thread once done (the hand-over taken) or by its own. The threads
// finish together when chunk 0's thread, after w * b0, spends the time
// chunk 1's walks on writing those splits, so that d * x = w * b0 and
// f * x = w * (b1 - x): b1 / b0 = (w + f) / d.
void note_defer_timing(const st_plan* plan, double c0_s, int64_t c0_bytes, const Decoder& c1) {
  constexpr int64_t kMinBytes = int64_t(1) << 18;
  if (c0_bytes < kMinBytes || c1.deferred_walk_bytes < kMinBytes || c0_s <= 0 || c1.deferred_walk_s <= 0 || c1.deferred_write_s <= 0) return;
  const double w = c0_s / double(c0_bytes);
  const double d = c1.deferred_walk_s / double(c1.deferred_walk_bytes);
  const double f = c1.deferred_write_s / double(c1.deferred_walk_bytes);
  const double weight = std::min(4.0, std::max(1.0, (w + f) / d));
  const double old = plan->defer_weight.load(std::memory_order_relaxed);
  // Half the last estimate, half this one, as for rebase_cost.
  plan->defer_weight.store(old > 0 ? (old + weight) / 2 : weight, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------
// Splitting chunks among the threads.
//
// A decode into lent buffers on T threads cuts the batch into T chunks by
// input bytes, each writing its stretch of every buffer. Equal bytes are
// not equal time: records differ, and on a shared machine one thread may
// run at half speed for a spell while the other does not, so that one
// chunk ended up to a quarter earlier than the other (tf.Examples, 32 MB,
// two threads, Intel Xeon model 207: 5-11% of the decode's wall time
// idle). So a thread done with its chunk (and with any chunk not yet
// claimed) splits the chunk with the most input left: it asks that
// chunk's decoder, which answers between two records (Decoder::split_here)
// by keeping the first half of its records left (by bytes) and giving the
// rest to a fresh decoder, the tail, with the rest of its stretch of each
// buffer (split by the same share of bytes, or by record where outputs
// are placed by record), and walks on to its new end. The tail is placed
// right after it in the batch's order of chunks (order), which is record
// order: the close-up (assemble) and the hand-over (Handovers) read it
// as they read the first chunks. A tail may be split in its turn. Under
// kMinSplitBytes left, a decoder declines (engine_shared.h, with the test
// switch st_test_steal; the feature decoder, example.cc, splits its
// chunks by the same rules).

// DeferredWrite is the writing of one decoder's deferred splits (the
// first upto[j] of each record part j, base[j] added) by the thread that
// took its hand-over or adopted them (Handovers), shared with the
// batch's other threads: a thread with no chunk left worth splitting
// takes record parts too (help_write) instead of idling while it runs.
// On wide sparse records the write is a third of the output, and on two
// threads the other one, done walking, waited for it: 1.2-4.7 ms of a
// 40 ms batch in most 8 MB batches (Intel Xeon model 207).
struct DeferredWrite {
  Decoder* d;
  const size_t* upto;
  const int64_t* base;
  std::atomic<size_t> next{0};  // the next record part to take

  // write takes record parts until none is left and returns how many it
  // wrote.
  size_t write() {
    const size_t n = d->record_parts.size();
    size_t wrote = 0;
    for (size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < n; wrote++) d->write_deferred_part(j, upto[j], base[j]);
#if ST_X86_64
    _mm_sfence();  // the streaming stores before whatever follows
#endif
    return wrote;
  }
};

// deferred_parts_helped counts the record parts that threads helping
// with a deferred write wrote (st_test_deferred_parts_helped).
std::atomic<int64_t> deferred_parts_helped{0};

struct SplitBatch {
  const st_plan* plan = nullptr;
  const st_output* out = nullptr;
  const int64_t* per_record = nullptr;  // exact_per_record's, or null
  const int64_t* part_per_record = nullptr;  // exact_parts', or null
  const int64_t* prefix = nullptr;      // the records' bytes, prefix sums
  int64_t nrecords = 0;
  bool defer = false;  // tails defer their records' own splits (defer_splits)
  const volatile int32_t* cancel = nullptr;
  std::atomic<bool> failed{false};  // a chunk failed: no more splits
  std::atomic<bool> split_once{false};
  // The deferred write under way that other threads may help with (at
  // most one at a time; null when none), the threads helping with it, the
  // chunks deferring their splits that may yet leave them to be adopted
  // (walking, or done and waiting: Handovers), and the threads idle until
  // one is.
  std::atomic<DeferredWrite*> write{nullptr};
  std::atomic<int32_t> write_helpers{0};
  std::atomic<int32_t> deferring_chunks{0};
  std::atomic<int32_t> adoption_waiters{0};
  std::mutex mu;
  std::vector<Decoder*> order;                   // the chunks, in record order (guarded by mu)
  std::vector<std::unique_ptr<Decoder>> tails;   // the decoders splits made (guarded by mu)

  // split_point returns where a chunk at record i, ending at hi, splits,
  // or -1 when it does not.
  int64_t split_point(int64_t i, int64_t hi) const {
    return failed.load(std::memory_order_relaxed) ? -1 : structtensor_engine::split_point(prefix, i, hi);
  }

  // write_deferred writes d's deferred splits (DeferredWrite), shared
  // with the threads that call help_write meanwhile, and returns once all
  // are written. A helper announces itself (write_helpers) before it
  // looks for the write, and the writer withdraws the write before it
  // waits for the helpers to leave: in that order (sequentially
  // consistent), a helper that found the write is waited for, so the
  // write (on this stack) outlives every use of it.
  void write_deferred(Decoder& d, const size_t* upto, const int64_t* base) {
    DeferredWrite w{&d, upto, base};
    DeferredWrite* none = nullptr;
    const bool shared = write.compare_exchange_strong(none, &w);
    // Hand-over mode 2 (tests) waits, up to a few seconds, for a thread
    // waiting for an adoption to come and take a part.
    if (shared && handover_mode.load(std::memory_order_relaxed) == 2) {
      for (int waits = 0; waits < 3000 && w.next.load() == 0 && (adoption_waiters.load() > 0 || write_helpers.load() > 0); waits++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    w.write();
    if (!shared) return;
    write.store(nullptr);
    for (int spins = 0; write_helpers.load() > 0; spins++) wait_for_answer(spins);
  }

  // help_write takes record parts of the deferred write under way, if
  // any, and tells whether there was one.
  bool help_write() {
    if (!write.load(std::memory_order_relaxed)) return false;
    write_helpers.fetch_add(1);
    DeferredWrite* w = write.load();
    if (w) deferred_parts_helped.fetch_add(int64_t(w->write()), std::memory_order_relaxed);
    write_helpers.fetch_sub(1);
    return w != nullptr;
  }
};

void Decoder::slow_down() {
  if (batch && !batch->split_once.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void Decoder::split_here(int64_t i) {
  SplitBatch& b = *batch;
  Decoder& t = *split_tail;
  const int64_t hi = run_hi.load(std::memory_order_relaxed);
  int64_t mid = b.split_point(i, hi);
  if (mid >= 0) {
    // Room first, so that the tail is placed and owned (below), or neither.
    std::lock_guard<std::mutex> lock(b.mu);
    try {
      b.order.reserve(b.order.size() + 1);
      b.tails.reserve(b.tails.size() + 1);
    } catch (const std::bad_alloc&) {
      mid = -1;
    }
  }
  if (mid < 0) {
    split.store(kSplitOpen, std::memory_order_release);
    t.split_answer.store(kSplitDeclined, std::memory_order_release);
    return;
  }
  const st_output& out = *b.out;
  const bool last = hi >= b.nrecords;
  // The records' own splits are placed by record, exactly: the tail's
  // start at record mid lies in this decoder's stretch, past what it has
  // written (one split a record walked). Were it not so, the tail's would
  // grow in engine memory, where the hand-over's asker must not write.
  // The same for the nested list fields placed by record (kExactPart):
  // a decoder whose records gave one more splits than expected has
  // written past the tail's start (or outgrown its stretch) and keeps
  // its records.
  std::vector<uint8_t> by_record = placed;
  by_record.resize(parts.size(), 0);
  auto split_start = [&](size_t k) { return size_t(mid) * (by_record[k] == kOwnPart ? 1 : size_t(b.part_per_record[2 * k])); };
  for (size_t k = 0; k < parts.size(); k++) {
    if (!by_record[k]) continue;
    const Buf& v = parts[k];
    const uint8_t* at = reinterpret_cast<const uint8_t*>(out.partition_splits[k] + split_start(k));
    if (!v.external || v.p + v.len > at || at > v.p + v.cap) {
      split.store(kSplitOpen, std::memory_order_release);
      t.split_answer.store(kSplitDeclined, std::memory_order_release);
      return;
    }
  }
  // The share of this decoder's room left that it keeps: that of its
  // bytes left.
  const double keep = double(b.prefix[mid] - b.prefix[i]) / double(std::max<int64_t>(b.prefix[hi] - b.prefix[i], 1));
  // by_share gives the tail the end of v's stretch, past this decoder's
  // share of its room left (8-byte aligned, as attach_part's stretches).
  auto by_share = [&](Buf& v, Buf& w) {
    if (!v.external || v.cap < v.len) return;
    size_t at = (v.len + size_t(double(v.cap - v.len) * keep)) / 8 * 8;
    if (at < v.len) at = (v.len + 7) / 8 * 8;
    if (at >= v.cap) return;
    w.attach(v.p + at, v.cap - at);
    v.cap = at;
  };
  // at_offset gives the tail v's stretch from byte `at` of the caller's
  // buffer base on, if this decoder has not written past it.
  auto at_offset = [&](Buf& v, Buf& w, uint8_t* base, size_t at) {
    if (!v.external || v.p < base || v.p + v.len > base + at || base + at > v.p + v.cap) return;
    w.attach(base + at, size_t(v.p + v.cap - (base + at)));
    v.cap = size_t(base + at - v.p);
  };
  for (size_t c = 0; c < cols.size(); c++) {
    Column& col = cols[c];
    if (b.per_record && b.per_record[c] > 0 && out.column_data && out.column_data[c]) {
      const size_t at = std::min(out.column_bytes[c], size_t(b.per_record[c] * mid) << col.shift);
      at_offset(col.vals, t.cols[c].vals, static_cast<uint8_t*>(out.column_data[c]), at);
    } else {
      by_share(col.vals, t.cols[c].vals);
    }
    if (col.dtype == ST_STRING) by_share(col.offs, t.cols[c].offs);
  }
  for (size_t k = 0; k < parts.size(); k++) {
    if (by_record[k]) {
      at_offset(parts[k], t.parts[k], reinterpret_cast<uint8_t*>(out.partition_splits[k]), split_start(k) * 8);
    } else {
      by_share(parts[k], t.parts[k]);
    }
  }
  t.external = true;
  t.reset();
  t.lent_lo = mid;
  t.place_by_record(by_record, last);
  for (size_t k = 0; k < parts.size(); k++) {
    if (by_record[k] == kExactPart) t.place_exact_part(k, b.part_per_record[2 * k + 1] * mid);
  }
  t.cancel = b.cancel;
  t.defer_splits = b.defer;
  t.batch = &b;
  t.slow_walk = slow_walk;
  t.run_hi.store(hi, std::memory_order_relaxed);
  t.at.store(mid, std::memory_order_relaxed);
  t.split.store(kSplitOpen, std::memory_order_relaxed);
  if (last) {
    // No longer the last: its last splits placed by record go to the tail.
    end_splits.assign(parts.size(), 0);
    for (size_t k = 0; k < parts.size(); k++) parts[k].end_elsewhere = by_record[k] != 0;
  }
  {
    std::lock_guard<std::mutex> lock(b.mu);
    t.claimed = true;
    b.order.insert(std::find(b.order.begin(), b.order.end(), this) + 1, &t);
    b.tails.emplace_back(&t);
  }
  run_hi.store(mid, std::memory_order_relaxed);
  b.split_once.store(true, std::memory_order_relaxed);
  count_split();
  split.store(kSplitOpen, std::memory_order_release);
  t.split_answer.store(kSplitGiven, std::memory_order_release);
}

// adopt_pending_splits writes the records' own splits chunk d left
// pending (Decoder::adopt_pending), now that the chunks before it are
// settled: ends[p] (per partition) is what they hold, each of d's splits
// counts from it. The logged ones are written final, those finish wrote
// after them (counting from 0) rebased in place; d is then as a chunk
// that took the hand-over at its start (based: split_base, end_splits
// and its hand-over state say so), which the close-up does not rebase.
void adopt_pending_splits(SplitBatch& b, Decoder& d, const int64_t* ends) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<int64_t> bases(d.record_parts.size());
  for (size_t j = 0; j < bases.size(); j++) bases[j] = ends[size_t(d.record_parts[j])];
  b.write_deferred(d, d.pending_upto.data(), bases.data());
  for (size_t j = 0; j < bases.size(); j++) {
    const size_t p = size_t(d.record_parts[j]);
    Buf& sp = d.parts[p];
    const size_t from = d.pending_upto[j], n = sp.len / 8;
    if (n > from) {
      const Piece tail{&sp, from * 8, (n - from) * 8, from * 8, bases[j]};
      move_piece(tail, sp.p, true, nullptr, nullptr);
    }
    d.split_base[p] = bases[j];
    if (sp.end_elsewhere) d.end_splits[p] += bases[j];
  }
  d.deferred_write_s = seconds_since(start);
  d.adopt_pending = false;
  d.handover.store(Decoder::kHandoverTaken, std::memory_order_release);
  b.deferring_chunks.fetch_sub(1);
  deferred_adopted.fetch_add(1, std::memory_order_relaxed);
}

// Handovers keeps, for the chunks of one batch (SplitBatch::order),
// which have been decoded and the records' own last splits (counting
// from the batch's start) of the leading run of decoded ones, and asks
// the chunk after that run to take the hand-over.
class Handovers {
 public:
  Handovers(SplitBatch& b, size_t nparts) : b_(b), nparts_(nparts) {}

  // decoded is called by the thread that decoded chunk d without error.
  // When that makes the chunks up to the next one decoded, it writes the
  // splits of those among them that ended their walk deferring them
  // (Decoder::adopt_pending) and asks the next one, if claimed (then a
  // thread runs it), to take the hand-over, waits for the answer, and
  // rebases the splits it wrote before it took it.
  // decode_s is the time d's decode took, in_bytes its input: with
  // the rebase's time, they make the plan's measured rebase cost.
  void decoded(Decoder* done, double decode_s, int64_t in_bytes) {
    Decoder* next;
    const int64_t* base;
    bool adjacent;
    {
      std::unique_lock<std::mutex> lock(b_.mu);
      done->chunk_done = true;
      if (settled_ >= b_.order.size() || b_.order[settled_] != done) return;
      for (;;) {
        while (settled_ < b_.order.size() && b_.order[settled_]->chunk_done && !b_.order[settled_]->adopt_pending) {
          settle(settled_++);
        }
        if (settled_ >= b_.order.size() || !b_.order[settled_]->chunk_done) break;
        // A chunk done with its splits pending; the chunks before it are
        // settled, so their ends are its bases. No other thread settles
        // meanwhile: each returns above, order[settled_] not its chunk.
        Decoder& d = *b_.order[settled_];
        const int64_t* ends = b_.order[settled_ - 1]->settled_ends.data();
        lock.unlock();
        adopt_pending_splits(b_, d, ends);
        lock.lock();
      }
      if (settled_ >= b_.order.size()) return;
      next = b_.order[settled_];
      base = b_.order[settled_ - 1]->settled_ends.data();
      adjacent = b_.order[settled_ - 1] == done;
    }
    Decoder& d = *next;
    auto claimed = [&] {
      std::lock_guard<std::mutex> lock(b_.mu);
      return d.claimed;
    };
    if (handover_mode.load(std::memory_order_relaxed) == 2) {
      for (int waits = 0; waits < 5000 && !(claimed() && d.walked.load(std::memory_order_relaxed) > 0) &&
                              d.handover.load(std::memory_order_relaxed) == Decoder::kHandoverOpen;
           waits++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    // A chunk not claimed yet is never claimed after one before it ended
    // with an error; claimed, it answers at its end, unless the batch
    // failed (then its output is discarded).
    if (!claimed()) return;
    if (!d.ask_handover(base)) return;
    if (!d.handover_answer([&] { return b_.failed.load(std::memory_order_relaxed); })) return;
    handovers_taken.fetch_add(1, std::memory_order_relaxed);
    // The splits chunk d wrote before it took the hand-over.
    const auto start = std::chrono::steady_clock::now();
    int64_t rebased = 0;
    if (d.defer_splits) {
      std::vector<int64_t> bases(d.record_parts.size());
      for (size_t i = 0; i < d.record_parts.size(); i++) bases[i] = d.split_base[size_t(d.record_parts[i])];
      b_.write_deferred(d, d.handover_fill.data(), bases.data());
      d.deferred_write_s = seconds_since(start);
    }
    for (size_t i = 0; i < d.record_parts.size(); i++) {
      const size_t p = size_t(d.record_parts[i]);
      if (!d.defer_splits) rebase_in_place(d.parts[p], d.handover_fill[i], d.split_base[p]);
      rebased += int64_t(d.handover_fill[i]) * 8;
    }
    handover_rebased_splits.fetch_add(rebased, std::memory_order_relaxed);
    if (adjacent && !d.defer_splits) note_rebase_cost(d.plan, rebased, seconds_since(start), in_bytes, decode_s);
  }

 private:
  // settle works out chunk j's last splits counting from the batch's
  // start: its own (Decoder::end_splits), based already when it took the
  // hand-over, or else plus the chunk before's. Called under mu, with
  // chunks 0..j decoded: no chunk is placed before them any more (a
  // split places its tail after a chunk still walking).
  void settle(size_t j) {
    Decoder& d = *b_.order[j];
    if (d.end_splits.empty()) return;  // the last: no chunk after it
    const bool based = d.handover.load(std::memory_order_acquire) == Decoder::kHandoverTaken;
    d.settled_ends.assign(nparts_, 0);
    for (int32_t p : d.record_parts) {
      const int64_t before = j == 0 || based ? 0 : b_.order[j - 1]->settled_ends[size_t(p)];
      d.settled_ends[size_t(p)] = d.end_splits[size_t(p)] + before;
    }
  }

  SplitBatch& b_;
  const size_t nparts_;
  size_t settled_ = 0;  // order[0..settled_) are decoded and settled (guarded by b_.mu)
};

// kMinDeferShare is the least share of a batch's output that the
// records' own splits must make for later chunks to defer them. Deferring
// pays where they are most of it (wide records: 90-92% on the bench's
// wide sparse and wide repeated ones, 29% on sparse nested ones); where
// they are not, it moves little work off the later chunk's walk and costs
// the thread done first a pass that writes them into as many scattered
// streams as there are list fields, while the other walks on: on flat
// records (100 list fields, 0.9%; 8 MB batches, two threads over one in
// alternating calls) 1.61-1.64x deferring, 1.67-1.75x not; recipes
// (2.6%) 1.76-1.79x and 1.76-1.84x; sparse nested records 1.65-1.82x
// and 1.53-1.76x (Intel Xeon model 207).
constexpr double kMinDeferShare = 0.1;

// defers_splits tells whether the chunks after the first of a batch of n
// records and total bytes, decoded into out on several threads, defer
// their records' own splits (Decoder::defer_splits): when the hand-over
// is on, every one of the records' own list fields is placed by record
// (Decoder::attach_part), their splits are kMinDeferShare or more of the
// buffers lent, and the batch is under 4 GB (a deferred fill's log
// entry holds a split's index and value in 32 bits each; each value of a
// record's list field takes at least a byte).
bool defers_splits(const st_plan* plan, const st_output& out, int64_t n, int64_t total) {
  const int32_t mode = defer_mode.load(std::memory_order_relaxed);
  if (handover_mode.load(std::memory_order_relaxed) < 0 || mode < 0) return false;
  constexpr int64_t kLimit = (int64_t(1) << 32) - 2;
  if (n > kLimit || total > kLimit || !out.partition_splits) return false;
  const auto& root = plan->nodes[0].list_slots;
  if (root.empty()) return false;
  for (const NodePlan::ListSlot& ls : root) {
    const size_t k = size_t(ls.partition);
    if (!out.partition_splits[k] || out.partition_len[k] < size_t(n) + 1) return false;
  }
  double lent = 0;
  for (size_t c = 0; c < plan->col_dtype.size(); c++) {
    if (out.column_data && out.column_data[c]) lent += double(out.column_bytes[c]);
    if (out.string_offsets && out.string_offsets[c]) lent += double(out.string_offsets_len[c]) * 8;
  }
  for (int64_t k = 0; k < plan->nparts; k++) {
    if (out.partition_splits[k]) lent += double(out.partition_len[k]) * 8;
  }
  return mode > 0 || double(root.size()) * double(n + 1) * 8 >= kMinDeferShare * lent;
}

template <class Get>
st_result* decode_batch(const st_plan* plan, int64_t n, const int64_t* sizes_prefix, const st_options* opts,
                        const st_output* out, st_error* err, const Get& get) {
  clear_error(err);
  try {
    std::unique_ptr<st_result> res(new st_result);
    res->plan = plan;
    res->nrecords = n;
    res->utf8_marked = opts && opts->mark_utf8;
    int threads = opts ? opts->threads : 1;
    if (threads <= 0) threads = default_threads();
    const volatile int32_t* cancel = opts ? opts->cancel : nullptr;
    const bool mark_utf8 = res->utf8_marked;
    // Split by bytes into chunks of about kChunkBytes, decoded in order by
    // up to `threads` workers. Chunks bound each decoder's buffers (which
    // the plan's pool then reuses without reallocating or faulting pages
    // in) and keep the output being written near the cache.
    constexpr int64_t kChunkBytes = int64_t(1) << 20;
    int64_t total = sizes_prefix[n];
    // With the caller's buffers, one chunk per thread, each writing its
    // share of the buffers (by bytes), closed up afterwards (assemble).
    int64_t nchunks = out ? lend_chunks(plan, threads, n, total)
                          : std::max<int64_t>(1, std::min<int64_t>(n, (total + kChunkBytes - 1) / kChunkBytes));
    std::shared_ptr<const BatchSizes> last;
    if (out && nchunks > 1) {
      std::lock_guard<std::mutex> lock(plan->sizes_mu);
      last = plan->last_sizes;
    }
    // A later chunk's records' own splits are handed over (Handovers):
    // the first chunk gets fewer bytes, its thread rebasing the second's
    // splits written so far once it is done.
    const double rebase_share = last ? handover_rebase_share(plan, *last) : 0;
    // Chunks that defer their records' own splits instead (defer_splits)
    // walk faster until asked and leave the asker more to do: they get
    // what the plan's last such batches measured (note_defer_timing).
    const bool defers = out && nchunks > 1 && defers_splits(plan, *out, n, total);
    const double measured_weight = plan->defer_weight.load(std::memory_order_relaxed);
    const double later = defers ? (measured_weight > 0 ? measured_weight : kDeferWeightGuess) : 1 + rebase_share;
    std::vector<int64_t> bounds(static_cast<size_t>(nchunks + 1));
    bounds[0] = 0;
    for (int64_t k = 1; k < nchunks; k++) {
      // Chunk 0 of weight 1, each later one 1 + rebase_share.
      const int64_t target = int64_t(double(total) * (1 + double(k - 1) * later) / (1 + double(nchunks - 1) * later));
      bounds[size_t(k)] = std::max(bounds[size_t(k - 1)], int64_t(std::lower_bound(sizes_prefix, sizes_prefix + n + 1, target) - sizes_prefix));
    }
    bounds[size_t(nchunks)] = n;
    // The chunks in record order, split among the threads as they go
    // (SplitBatch) when they write into lent buffers.
    SplitBatch batch;
    batch.plan = plan;
    batch.out = out;
    batch.prefix = sizes_prefix;
    batch.nrecords = n;
    batch.cancel = cancel;
    std::vector<int64_t> per_record, part_per_record;
    std::unique_ptr<Handovers> handovers;
    const bool splits = out && nchunks > 1 && split_mode() >= 0;
    if (out) {
      if (last) {
        exact_per_record(plan->col_dtype, *last, n, *out, &per_record);
        exact_parts(plan, *last, n, *out, &part_per_record);
      }
      batch.per_record = per_record.empty() ? nullptr : per_record.data();
      batch.part_per_record = part_per_record.empty() ? nullptr : part_per_record.data();
      auto frac = [&](int64_t k) {
        return total > 0 ? double(sizes_prefix[bounds[size_t(k)]]) / double(total) : double(bounds[size_t(k)]) / double(n);
      };
      bool records_exact = true;
      for (int64_t k = 0; k < nchunks; k++) records_exact = records_exact && bounds[size_t(k)] < bounds[size_t(k + 1)];
      for (int64_t k = 0; k < nchunks; k++) {
        res->chunks.push_back(std::unique_ptr<Decoder>(new Decoder(plan, Decoder::kUnattached)));
        res->chunks.back()->attach_part(*out, k == 0 ? 0.0 : frac(k), k + 1 == nchunks ? 1.0 : frac(k + 1), batch.per_record,
                                        batch.part_per_record, bounds[size_t(k)], bounds[size_t(k + 1)], n, records_exact);
        res->chunks.back()->cancel = cancel;
      }
      if (nchunks > 1 && !res->chunks[0]->record_parts.empty() && handover_mode.load(std::memory_order_relaxed) >= 0) {
        handovers.reset(new Handovers(batch, size_t(plan->nparts)));
        // The chunks that may be asked defer their records' own splits.
        batch.defer = defers && res->chunks[0]->record_parts.size() == plan->nodes[0].list_slots.size();
        for (int64_t k = 1; k < nchunks && batch.defer; k++) res->chunks[size_t(k)]->defer_splits = true;
      }
    } else {
      for (int64_t k = 0; k < nchunks; k++) {
        res->chunks.push_back(get_decoder(plan));
        res->chunks.back()->cancel = cancel;
      }
    }
    for (int64_t k = 0; k < nchunks; k++) {
      Decoder& d = *res->chunks[size_t(k)];
      d.mark_utf8 = mark_utf8;
      batch.order.push_back(&d);
      d.run_hi.store(bounds[size_t(k + 1)], std::memory_order_relaxed);
      d.at.store(bounds[size_t(k)], std::memory_order_relaxed);
      if (!splits) continue;
      d.batch = &batch;
      const int32_t mode = split_mode();
      d.slow_walk = (mode == 2 && k == 0) || (mode == 3 && k + 1 == nchunks);
      d.split.store(kSplitOpen, std::memory_order_relaxed);
    }
    // A chunk that fails stops the chunks after it (their output would be
    // discarded) but not those before: the error reported is the first in
    // batch order, as in a serial run.
    std::atomic<int64_t> next{0};
    auto run_chunk = [&](Decoder& d, int64_t lo) {
      const auto start = std::chrono::steady_clock::now();
      const bool defers = d.defer_splits;
      if (defers) batch.deferring_chunks.fetch_add(1);
      d.run(lo, get);
      d.run_s = seconds_since(start);
      if (defers && !d.adopt_pending) batch.deferring_chunks.fetch_sub(1);
      if (d.code != ST_OK) {
        std::lock_guard<std::mutex> lock(batch.mu);
        d.chunk_failed = true;
        batch.failed = true;
      } else if (handovers) {
        handovers->decoded(&d, d.run_s, sizes_prefix[d.run_hi.load(std::memory_order_relaxed)] - sizes_prefix[lo]);
      }
    };
    std::atomic<bool> oom{false};
    auto work = [&] {
      // waiting: this thread counts among the batch's adoption_waiters.
      struct Waiting {
        SplitBatch& b;
        bool on = false;
        void set(bool w) {
          if (w != on) b.adoption_waiters.fetch_add(w ? 1 : -1);
          on = w;
        }
        ~Waiting() { set(false); }
      } waiting{batch};
      try {
        for (;;) {
          const int64_t k = next.fetch_add(1);
          if (k < nchunks) {
            Decoder& d = *res->chunks[size_t(k)];
            {
              std::lock_guard<std::mutex> lock(batch.mu);
              if (structtensor_engine::preceded_by_failure<Decoder>(batch.order, &d)) continue;
              d.claimed = true;
            }
            run_chunk(d, bounds[size_t(k)]);
            continue;
          }
          Decoder* t = splits ? ask_for_split(batch.mu, batch.order, batch.prefix, batch.failed,
                                              [&] {
                                                std::unique_ptr<Decoder> tail(new Decoder(plan, Decoder::kUnattached));
                                                tail->mark_utf8 = mark_utf8;
                                                return tail;
                                              })
                              : nullptr;
          if (!t) {
            // Nothing left worth splitting: help with a deferred write
            // under way, or wait while one may come (a chunk deferring its
            // splits may leave them to be adopted, once the chunks before
            // it end).
            if (batch.help_write()) continue;
            if (batch.deferring_chunks.load() > 0 && !batch.failed.load(std::memory_order_relaxed)) {
              waiting.set(true);
              std::this_thread::sleep_for(std::chrono::microseconds(20));
              continue;
            }
            return;
          }
          waiting.set(false);
          run_chunk(*t, t->lent_lo);
        }
      } catch (...) {
        batch.failed = true;
        oom = true;
      }
    };
    int64_t nworkers = std::min<int64_t>(threads, nchunks);
    if (nworkers <= 1) {
      work();
    } else {
      // The close-up, when it goes to the pool too, follows at once.
      const bool closeup_follows = out && closeup_helpers(plan, threads) > 0;
      Workers::get().run(nworkers - 1, work, closeup_follows ? Workers::kFollowUp : Workers::kLastJob);
    }
    if (oom) throw std::bad_alloc();
    // The chunks in record order, the splits' tails among them.
    Decoder* const first = res->chunks[0].get();
    Decoder* const second = nchunks > 1 ? res->chunks[1].get() : nullptr;
    if (!batch.tails.empty()) {
      std::vector<std::unique_ptr<Decoder>> all;
      for (auto& c : res->chunks) all.push_back(std::move(c));
      for (auto& c : batch.tails) all.push_back(std::move(c));
      res->chunks.clear();
      for (Decoder* d : batch.order) {
        for (auto& c : all) {
          if (c.get() == d) res->chunks.push_back(std::move(c));
        }
      }
    }
    for (auto& c : res->chunks) {
      if (c->code != ST_OK) {
        set_error(err, c->code, c->err_record, c->err_offset, "%s", c->err_msg.c_str());
        return nullptr;
      }
    }
    if (second && second->defer_splits) {
      note_defer_timing(plan, first->run_s, sizes_prefix[first->run_hi.load(std::memory_order_relaxed)] - sizes_prefix[bounds[0]],
                        *second);
    }
    if (out && total >= kLendMinBytes) {
      double walk_s = 0;
      for (auto& c : res->chunks) walk_s += c->run_s;
      note_walk_rate(plan, walk_s, total);
    }
    if (out && res->chunks.size() > 1) assemble(*res, *out, threads);
    if (total >= kLendMinBytes) remember_sizes(plan, res.get(), total, n);
    return res.release();
  } catch (const std::bad_alloc&) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory");
  } catch (...) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "internal error");
  }
  return nullptr;
}

// output_ok checks that every buffer lent in out comes with its capacity.
bool output_ok(const st_plan* plan, const st_output* out, st_error* err, const char* fn) {
  if (!plan || !out) return true;
  size_t ncols = plan->col_dtype.size();
  for (size_t c = 0; c < ncols; c++) {
    if ((out->column_data && out->column_data[c] && !out->column_bytes) ||
        (out->string_offsets && out->string_offsets[c] && !out->string_offsets_len)) {
      set_error(err, ST_ERR_ARGUMENT, -1, -1, "%s: column %zu: buffer without capacity", fn, c);
      return false;
    }
  }
  for (int64_t k = 0; k < plan->nparts; k++) {
    if (out->partition_splits && out->partition_splits[k] && !out->partition_len) {
      set_error(err, ST_ERR_ARGUMENT, -1, -1, "%s: partition %lld: buffer without capacity", fn, (long long)k);
      return false;
    }
  }
  return true;
}

bool col_ok(const st_result* r, int64_t c) { return r && c >= 0 && c < int64_t(r->plan->col_dtype.size()); }
bool part_ok(const st_result* r, int64_t p) { return r && p >= 0 && p < r->plan->nparts; }

}  // namespace

namespace structtensor_engine {

void run_on_workers(int64_t helpers, const std::function<void()>& fn) { Workers::get().run(helpers, fn); }

int32_t thread_count() { return default_threads(); }

namespace {
std::atomic<int32_t> steal_mode{0};     // st_test_steal
std::atomic<int64_t> splits_taken{0};  // st_test_splits
}  // namespace

int32_t split_mode() { return steal_mode.load(std::memory_order_relaxed); }

int64_t split_point(const int64_t* prefix, int64_t i, int64_t hi) {
  const int32_t mode = split_mode();
  if (mode < 0 || hi - i < 2) return -1;
  const int64_t left = prefix[hi] - prefix[i];
  if (mode == 0 && left < kMinSplitBytes) return -1;
  const int64_t mid = std::lower_bound(prefix + i + 1, prefix + hi, prefix[i] + left / 2) - prefix;
  return std::min(mid, hi - 1);
}

void count_split() { splits_taken.fetch_add(1, std::memory_order_relaxed); }

}  // namespace structtensor_engine

extern "C" {

st_plan* st_plan_new(const uint8_t* data, size_t len, st_error* err) {
  clear_error(err);
  try {
    return parse_plan(data, len, err);
  } catch (...) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory parsing the plan");
    return nullptr;
  }
}

void st_plan_free(st_plan* plan) {
  if (!plan) return;
  for (Decoder* d : plan->pool) delete d;
  delete plan;
}

void st_plan_close(st_plan* plan) {
  if (!plan) return;
  std::vector<Decoder*> pool;
  {
    std::lock_guard<std::mutex> lock(plan->pool_mu);
    plan->closed = true;
    pool.swap(plan->pool);
    plan->pool_bytes = 0;
  }
  for (Decoder* d : pool) delete d;
}

size_t st_plan_pool_bytes(const st_plan* plan) {
  if (!plan) return 0;
  std::lock_guard<std::mutex> lock(plan->pool_mu);
  return plan->pool_bytes;
}

#ifdef ST_COUNT_DECODERS
void st_count_packed_runs(int64_t* vector, int64_t* portable, int64_t* avx2, int64_t* pext) {
  *vector = packed_runs_vector.load();
  *portable = packed_runs_portable.load();
  *avx2 = packed_runs_avx2.load();
  *pext = packed_runs_pext.load();
}
#endif

void st_set_thread_limit(int32_t n) { thread_limit.store(n > 0 ? n : 0, std::memory_order_relaxed); }

int32_t st_worker_threads(void) { return int32_t(Workers::get().threads()); }
int32_t st_packed_varint_tier(void) { return packed_tier(); }

void st_test_fail_thread_starts(int32_t fail) { fail_thread_starts.store(fail != 0, std::memory_order_relaxed); }

int32_t st_test_packed_tier(int32_t tier, int32_t no_pext) {
  packed_tier_forced.store(tier >= kPackedAVX512 && tier <= kPackedScalar ? tier : -1, std::memory_order_relaxed);
#if ST_X86_64
  packed_pext_off.store(no_pext != 0, std::memory_order_relaxed);
#else
  (void)no_pext;
#endif
  return packed_tier();
}

int64_t st_plan_num_columns(const st_plan* plan) { return plan ? int64_t(plan->col_dtype.size()) : -1; }
int64_t st_plan_num_partitions(const st_plan* plan) { return plan ? plan->nparts : -1; }
int64_t st_plan_num_tag_tables(const st_plan* plan) { return plan ? int64_t(plan->tag_tables.size()) : -1; }
int32_t st_plan_column_dtype(const st_plan* plan, int64_t c) {
  if (!plan || c < 0 || c >= int64_t(plan->col_dtype.size())) return 0;
  return plan->col_dtype[size_t(c)];
}

st_result* st_decode(const st_plan* plan, const uint8_t* const* ptrs, const size_t* lens, int64_t n,
                     const st_options* opts, st_error* err) {
  return st_decode_into(plan, ptrs, lens, n, opts, nullptr, err);
}

namespace {
// resize_or_fail sizes the batch's byte-offset prefix, reporting running
// out of memory as ST_ERR_INTERNAL rather than throwing across the C ABI.
bool resize_or_fail(std::vector<int64_t>& v, int64_t n, st_error* err) {
  try {
    v.resize(size_t(n));
  } catch (...) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory");
    return false;
  }
  return true;
}
}  // namespace

st_result* st_decode_into(const st_plan* plan, const uint8_t* const* ptrs, const size_t* lens, int64_t n,
                          const st_options* opts, const st_output* out, st_error* err) {
  clear_error(err);
  if (!plan || n < 0 || (n > 0 && (!ptrs || !lens))) {
    set_error(err, ST_ERR_ARGUMENT, -1, -1, "st_decode: bad arguments");
    return nullptr;
  }
  if (!output_ok(plan, out, err, "st_decode_into")) return nullptr;
  std::vector<int64_t> prefix;
  if (!resize_or_fail(prefix, n + 1, err)) return nullptr;
  for (int64_t i = 0; i < n; i++) {
    if (!ptrs[i] && lens[i]) {
      set_error(err, ST_ERR_ARGUMENT, i, -1, "st_decode: record %lld is NULL with length %zu", (long long)i, lens[i]);
      return nullptr;
    }
    prefix[size_t(i + 1)] = prefix[size_t(i)] + int64_t(lens[i]);
  }
  return decode_batch(plan, n, prefix.data(), opts, out, err, [&](int64_t i, const uint8_t** p, size_t* l) {
    *p = ptrs[i];
    *l = lens[i];
  });
}

st_result* st_decode_contiguous(const st_plan* plan, const uint8_t* data, size_t data_len, const int64_t* offsets,
                                int64_t n, const st_options* opts, st_error* err) {
  return st_decode_contiguous_into(plan, data, data_len, offsets, n, opts, nullptr, err);
}

st_result* st_decode_contiguous_into(const st_plan* plan, const uint8_t* data, size_t data_len, const int64_t* offsets,
                                     int64_t n, const st_options* opts, const st_output* out, st_error* err) {
  clear_error(err);
  if (!output_ok(plan, out, err, "st_decode_contiguous_into")) return nullptr;
  if (!plan || n < 0 || !offsets || (!data && data_len)) {
    set_error(err, ST_ERR_ARGUMENT, -1, -1, "st_decode_contiguous: bad arguments");
    return nullptr;
  }
  if (offsets[0] < 0) {
    set_error(err, ST_ERR_ARGUMENT, 0, -1, "st_decode_contiguous: offset 0 is negative");
    return nullptr;
  }
  for (int64_t i = 0; i < n; i++) {
    if (offsets[i + 1] < offsets[i] || uint64_t(offsets[i + 1]) > data_len) {
      set_error(err, ST_ERR_ARGUMENT, i, -1, "st_decode_contiguous: offsets[%lld..%lld] = %lld..%lld out of range (data is %zu bytes)",
                (long long)i, (long long)(i + 1), (long long)offsets[i], (long long)offsets[i + 1], data_len);
      return nullptr;
    }
  }
  std::vector<int64_t> prefix;
  if (!resize_or_fail(prefix, n + 1, err)) return nullptr;
  for (int64_t i = 0; i <= n; i++) prefix[size_t(i)] = offsets[i] - offsets[0];
  return decode_batch(plan, n, prefix.data(), opts, out, err, [&](int64_t i, const uint8_t** p, size_t* l) {
    *p = data ? data + offsets[i] : nullptr;
    *l = size_t(offsets[i + 1] - offsets[i]);
  });
}

int32_t st_plan_lend_sizes(const st_plan* plan, const uint8_t* const* ptrs, const size_t* lens, int64_t n,
                           const st_options* opts, const st_lend_sizes* sizes) {
  if (n < 0 || (n > 0 && (!ptrs || !lens))) return 0;
  int64_t in_bytes = 0;
  for (int64_t i = 0; i < n; i++) in_bytes += int64_t(lens[i]);
  auto bytes_of = [&](int64_t k) {
    int64_t b = 0;
    for (int64_t i = 0; i < k; i++) b += int64_t(lens[i]);
    return b;
  };
  auto first_with = [&](int64_t want) {
    int64_t b = 0;
    for (int64_t i = 0; i < n; i++) {
      if ((b += int64_t(lens[i])) >= want) return i + 1;
    }
    return n;
  };
  auto sample = [&](int64_t k, const st_output* out) { return st_decode_into(plan, ptrs, lens, k, opts, out, nullptr); };
  return lend_sizes_logged(plan, n, in_bytes, opts, sizes, first_with, bytes_of, sample);
}

int32_t st_plan_lend_sizes_contiguous(const st_plan* plan, const uint8_t* data, size_t data_len,
                                      const int64_t* offsets, int64_t n, const st_options* opts,
                                      const st_lend_sizes* sizes) {
  // Offsets out of range lend nothing; the decode reports them. Sizing
  // from the plan's last batch needs only the batch's ends (its bytes,
  // within data); every offset is checked only before a first batch's
  // sample searches them, so a steady stream of batches does not walk
  // the offsets once more (the decode checks them all anyway).
  if (n < 0 || !offsets || offsets[0] < 0 || offsets[n] < offsets[0] || uint64_t(offsets[n]) > data_len) return 0;
  auto bytes_of = [&](int64_t k) { return offsets[k] - offsets[0]; };
  auto first_with = [&](int64_t want) {
    for (int64_t i = 0; i < n; i++) {
      if (offsets[i + 1] < offsets[i] || uint64_t(offsets[i + 1]) > data_len) return n;  // n: no sample, lend nothing
    }
    return int64_t(std::lower_bound(offsets + 1, offsets + n + 1, offsets[0] + want) - offsets);
  };
  auto sample = [&](int64_t k, const st_output* out) {
    return st_decode_contiguous_into(plan, data, data_len, offsets, k, opts, out, nullptr);
  };
  return lend_sizes_logged(plan, n, bytes_of(n), opts, sizes, first_with, bytes_of, sample);
}

void st_test_lend_log(int32_t on) {
  std::lock_guard<std::mutex> lock(lend_log_mu);
  lend_log.clear();
  lend_log_on.store(on != 0, std::memory_order_relaxed);
}

int64_t st_test_lend_log_read(int64_t* dst, int64_t cap) {
  std::lock_guard<std::mutex> lock(lend_log_mu);
  const int64_t n = int64_t(lend_log.size());
  if (dst) std::copy(lend_log.begin(), lend_log.begin() + std::min(n, std::max<int64_t>(cap, 0)), dst);
  return n;
}

int64_t st_test_lent_outgrown(void) { return lent_outgrown.load(std::memory_order_relaxed); }

int64_t st_test_steered_helpers(void) { return steered_helpers.load(std::memory_order_relaxed); }

int64_t st_test_closeup_moved_values(void) { return closeup_moved_values.load(std::memory_order_relaxed); }

int64_t st_test_closeup_moved_splits(void) { return closeup_moved_splits.load(std::memory_order_relaxed); }

int64_t st_test_closeup_rebased_splits(void) { return closeup_rebased_splits.load(std::memory_order_relaxed); }

void st_test_handover(int32_t mode, double share) {
  handover_mode.store(mode, std::memory_order_relaxed);
  handover_share.store(share, std::memory_order_relaxed);
}

int64_t st_test_handovers(int64_t* rebased_bytes) {
  if (rebased_bytes) *rebased_bytes = handover_rebased_splits.load(std::memory_order_relaxed);
  return handovers_taken.load(std::memory_order_relaxed);
}

void st_test_min_thread_seconds(double seconds) {
  min_thread_seconds.store(seconds >= 0 ? seconds : kMinThreadSeconds, std::memory_order_relaxed);
}

void st_test_steal(int32_t mode) { structtensor_engine::steal_mode.store(mode, std::memory_order_relaxed); }

int64_t st_test_splits(void) { return structtensor_engine::splits_taken.load(std::memory_order_relaxed); }

void st_test_defer_splits(int32_t mode) { defer_mode.store(mode, std::memory_order_relaxed); }

int64_t st_test_deferred_adoptions(void) { return deferred_adopted.load(std::memory_order_relaxed); }

int64_t st_test_deferred_parts_helped(void) { return deferred_parts_helped.load(std::memory_order_relaxed); }

void st_result_free(st_result* r) { delete r; }

void st_result_release_column(st_result* r, int64_t c) {
  if (!col_ok(r, c)) return;
  for (auto& ch : r->chunks) {
    Column& col = ch->cols[size_t(c)];
    col.vals.release();
    col.offs.release();
    col.n = 0;
    if (col.dtype == ST_STRING) col.offs.push<int64_t>(0);
  }
}

void st_result_release_partition(st_result* r, int64_t p) {
  if (!part_ok(r, p)) return;
  for (auto& ch : r->chunks) {
    ch->parts[size_t(p)].release();
    ch->parts[size_t(p)].push<int64_t>(0);
  }
}

int64_t st_result_num_records(const st_result* r) { return r ? r->nrecords : -1; }

int32_t st_result_column_in_place(const st_result* r, int64_t c) {
  if (!col_ok(r, c)) return -1;
  // In place: whole in the first chunk's buffers, which are the lent ones
  // (assemble leaves the other chunks' pieces empty).
  for (size_t k = 1; k < r->chunks.size(); k++) {
    if (r->chunks[k]->cols[size_t(c)].n != 0) return 0;
  }
  const Column& col = r->chunks[0]->cols[size_t(c)];
  return col.vals.external && (col.dtype != ST_STRING || col.offs.external) ? 1 : 0;
}

int32_t st_result_column_utf8(const st_result* r, int64_t c) {
  if (!col_ok(r, c) || !r->utf8_marked || !r->plan->col_text[size_t(c)]) return -1;
  uint8_t utf8 = Column::kUTF8Valid;
  for (auto& ch : r->chunks) utf8 = std::max(utf8, ch->cols[size_t(c)].utf8);
  return utf8 == Column::kUTF8Valid ? 1 : utf8 == Column::kUTF8Invalid ? 0 : -1;
}

int32_t st_result_partition_in_place(const st_result* r, int64_t p) {
  if (!part_ok(r, p)) return -1;
  for (size_t k = 1; k < r->chunks.size(); k++) {
    if (r->chunks[k]->parts[size_t(p)].len > 8) return 0;
  }
  return r->chunks[0]->parts[size_t(p)].external ? 1 : 0;
}

void st_result_layout(const st_result* r, int64_t* columns, int64_t* partitions) {
  if (!r) return;
  for (int64_t c = 0; c < int64_t(r->plan->col_dtype.size()); c++) {
    columns[3 * c] = st_result_column_length(r, c);
    columns[3 * c + 1] = st_result_column_bytes(r, c);
    columns[3 * c + 2] = st_result_column_in_place(r, c);
  }
  for (int64_t p = 0; p < r->plan->nparts; p++) {
    partitions[2 * p] = st_result_partition_length(r, p);
    partitions[2 * p + 1] = st_result_partition_in_place(r, p);
  }
}

int64_t st_result_column_length(const st_result* r, int64_t c) {
  if (!col_ok(r, c)) return -1;
  int64_t n = 0;
  for (auto& ch : r->chunks) n += ch->cols[size_t(c)].count();
  return n;
}

int64_t st_result_column_bytes(const st_result* r, int64_t c) {
  if (!col_ok(r, c)) return -1;
  int64_t n = 0;
  for (auto& ch : r->chunks) n += int64_t(ch->cols[size_t(c)].vals.len);
  return n;
}

int32_t st_result_copy_column(const st_result* r, int64_t c, void* dst, size_t dst_bytes) {
  if (!col_ok(r, c)) return ST_ERR_ARGUMENT;
  if (size_t(st_result_column_bytes(r, c)) != dst_bytes) return ST_ERR_ARGUMENT;
  uint8_t* out = static_cast<uint8_t*>(dst);
  for (auto& ch : r->chunks) {
    const Buf& b = ch->cols[size_t(c)].vals;
    if (b.len) memcpy(out, b.p, b.len);
    out += b.len;
  }
  return ST_OK;
}

int32_t st_result_copy_string_offsets(const st_result* r, int64_t c, int64_t* dst, size_t dst_len) {
  if (!col_ok(r, c) || r->plan->col_dtype[size_t(c)] != ST_STRING) return ST_ERR_ARGUMENT;
  if (size_t(st_result_column_length(r, c) + 1) != dst_len) return ST_ERR_ARGUMENT;
  dst[0] = 0;
  size_t k = 1;
  int64_t base = 0;
  for (auto& ch : r->chunks) {
    const Column& col = ch->cols[size_t(c)];
    size_t m = col.offs.len / 8;
    for (size_t i = 1; i < m; i++) dst[k++] = base + col.offs.i64(i);
    base += int64_t(col.vals.len);
  }
  return ST_OK;
}

int64_t st_result_partition_length(const st_result* r, int64_t p) {
  if (!part_ok(r, p)) return -1;
  int64_t n = 1;
  for (auto& ch : r->chunks) n += int64_t(ch->parts[size_t(p)].len / 8) - 1;
  return n;
}

int32_t st_result_copy_partition(const st_result* r, int64_t p, int64_t* dst, size_t dst_len) {
  if (!part_ok(r, p)) return ST_ERR_ARGUMENT;
  if (size_t(st_result_partition_length(r, p)) != dst_len) return ST_ERR_ARGUMENT;
  dst[0] = 0;
  size_t k = 1;
  int64_t base = 0;
  for (auto& ch : r->chunks) {
    const Buf& b = ch->parts[size_t(p)];
    size_t m = b.len / 8;
    if (base == 0) {
      if (m > 1) memcpy(dst + k, b.p + 8, (m - 1) * 8);
      k += m - 1;
    } else {
      for (size_t i = 1; i < m; i++) dst[k++] = base + b.i64(i);
    }
    base += b.last_i64();
  }
  return ST_OK;
}

int32_t st_result_copy_outputs(const st_result* r, void* const* columns, int64_t* const* offsets,
                               int64_t* const* partitions) {
  if (!r) return ST_ERR_ARGUMENT;
  const int64_t ncols = int64_t(r->plan->col_dtype.size());
  for (int64_t c = 0; c < ncols && columns; c++) {
    if (!columns[c]) continue;
    int32_t rc = st_result_copy_column(r, c, columns[c], size_t(st_result_column_bytes(r, c)));
    if (rc == ST_OK && r->plan->col_dtype[size_t(c)] == ST_STRING) {
      rc = offsets && offsets[c] ? st_result_copy_string_offsets(r, c, offsets[c], size_t(st_result_column_length(r, c) + 1))
                                 : ST_ERR_ARGUMENT;
    }
    if (rc != ST_OK) return rc;
  }
  for (int64_t p = 0; p < r->plan->nparts && partitions; p++) {
    if (!partitions[p]) continue;
    const int32_t rc = st_result_copy_partition(r, p, partitions[p], size_t(st_result_partition_length(r, p)));
    if (rc != ST_OK) return rc;
  }
  return ST_OK;
}

}  // extern "C"
