// Sizing the buffers a caller lends the engine (st_plan_lend_sizes): the
// policy, in one place for every caller.
//
// Part of the engine (engine.cc), which includes it once after the
// standard headers it relies on. Not a public header; the C ABI is
// include/structtensor_native.h.
//
// Two callers lend buffers: package native (Go memory that becomes the
// StructTensor) and the TensorFlow kernel (pooled blocks that become the
// output tensors). They allocate differently (Go one block per batch, the
// kernel one pool block per output, rounded up to a size class so that
// similar batches reuse each other's blocks), but how much room each
// output gets is this one policy, computed here from the history the
// plan keeps, so that the same batches get the same sizes whoever
// decodes them. What it trades:
//
//   - Too small costs speed only: an output that outgrows its buffer
//     moves to engine memory and is copied out, as when nothing is lent,
//     so the output never depends on a guess. Too large costs memory
//     that lives as long as the output (the slack is sliced off, not
//     freed). So the guess is the last batch's size, scaled, plus a
//     little: 1/32 and 16 elements.
//   - A batch's count of values (strings, splits) strays from the last
//     batch's, scaled, by about its square root, and so does each
//     share's from its byte fraction when a batch decoded on T threads
//     (T chunks) splits every buffer into T shares by input bytes (a
//     share its chunk outgrows is copied back in afterwards when the
//     whole output fits: engine.cc, assemble). So each output gets three
//     of those more: 3 * sqrt(size * T) elements in all (T = 1 on one
//     thread; a string column's bytes spread as its count of strings
//     does, times their mean length: 3 * sqrt(bytes * mean * T)). That
//     is little beside 1/32 for large outputs and keeps small batches of
//     sparse records from outgrowing a tenth of their buffers.
//   - The guess scales the plan's last batch of at least
//     ST_LEND_MIN_BYTES by the larger of the ratios of input bytes and of
//     records: most outputs grow with the bytes, some (row splits,
//     implicit scalars) with the records.
//   - No output of a batch of B bytes in N records has more than B + N + 1
//     elements in practice (no value takes less than a byte of input, nor
//     a nested message less than two; the +N is the implicit scalars and
//     the splits), and no string column more than B bytes: the bounds keep
//     a batch much larger than the last from lending far too much.
//   - A plan's first large batch has no history: the first sixteenth of
//     it (at least half of ST_LEND_MIN_BYTES) is decoded first, into
//     engine memory of its own (not the plan's pool, which lending
//     decodes never use), and sizes the rest. When that sample would be
//     the whole batch, nothing is lent.
//   - Below ST_LEND_MIN_BYTES nothing is lent: copying the output out is
//     cheap there, and the slack (and each buffer's alignment) would
//     weigh more than the output.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_SIZING_H_
#define STRUCTTENSOR_NATIVE_ENGINE_SIZING_H_

// BatchSizes are the sizes of one batch's input and outputs, which the
// plan keeps (st_plan::last_sizes) to size the next batch's buffers from.
struct BatchSizes {
  int64_t in_bytes = 0, records = 0;
  std::vector<int64_t> col_len;    // per column: values (strings: strings)
  std::vector<int64_t> col_bytes;  // per column: value bytes
  std::vector<int64_t> part_len;   // per partition: row splits
  std::vector<int64_t> part_elems;  // per partition: the elements its splits count (the last split)
};

namespace {

constexpr int64_t kLendMinBytes = int64_t(ST_LEND_MIN_BYTES);

// sample_bytes is the size of the first records of a batch of in_bytes
// decoded to size a plan's first lent buffers.
int64_t sample_bytes(int64_t in_bytes) { return std::max(in_bytes / 16, kLendMinBytes / 2); }

// fill_lend_sizes writes the room to lend each output of a batch of
// in_bytes bytes in n records, scaled from last (see the top of the file),
// in the units of st_output's capacities.
void fill_lend_sizes(const std::vector<uint8_t>& dtypes, const BatchSizes& last, int64_t in_bytes, int64_t n,
                     int64_t chunks, const st_lend_sizes& out) {
  double ratio = double(in_bytes) / double(std::max<int64_t>(last.in_bytes, 1));
  ratio = std::max(ratio, double(n) / double(std::max<int64_t>(last.records, 1)));
  const int64_t limit = in_bytes + n + 1;
  // unit is the size of one counted thing (a string's bytes, on average)
  // in the units of prev: the spread is that of the count.
  auto scale = [&](int64_t prev, int64_t bound, double unit = 1) {
    return structtensor_engine::lend_room(double(prev) * ratio, unit, chunks, bound);
  };
  for (size_t c = 0; c < dtypes.size(); c++) {
    if (dtypes[c] == ST_STRING) {
      const double per_string = double(last.col_bytes[c]) / double(std::max<int64_t>(last.col_len[c], 1));
      out.column_bytes[c] = size_t(std::max<int64_t>(scale(last.col_bytes[c], in_bytes, std::max(per_string, 1.0)), 1));
      out.string_offsets_len[c] = size_t(scale(last.col_len[c], limit) + 1);
      continue;
    }
    out.column_bytes[c] = size_t(std::max<int64_t>(scale(last.col_len[c], limit), 1)) << shift_of(dtypes[c]);
    out.string_offsets_len[c] = 0;
  }
  for (size_t p = 0; p < last.part_len.size(); p++) {
    out.partition_len[p] = size_t(std::max<int64_t>(scale(last.part_len[p], limit), 1));
  }
}

// exact_per_record tells, for each column of a batch of n records decoded
// into lent buffers on several chunks, how many values each record gives
// it when that is known (else 0): a fixed-width column whose last batch
// held a whole number of values per record (a dense scalar, a packed list
// of one length), as many as this batch's buffer has room for. Each chunk
// then writes exactly the stretch its records fill (Decoder::attach_part)
// and the close-up moves nothing, where a stretch sized by input bytes
// leaves a gap that moves every later chunk's piece: half the output on
// two threads, at memory speed, after the decode. A wrong guess (a batch
// whose records differ) costs what the gap would have: an earlier piece
// that outgrows its stretch moves to engine memory and is copied back.
// Values per record must keep every stretch 8-byte aligned.
void exact_per_record(const std::vector<uint8_t>& dtypes, const BatchSizes& last, int64_t n, const st_output& out,
                      std::vector<int64_t>* per_record) {
  per_record->assign(dtypes.size(), 0);
  if (last.records <= 0 || n <= 0 || !out.column_data || !out.column_bytes) return;
  for (size_t c = 0; c < dtypes.size(); c++) {
    const int64_t len = last.col_len[c];
    if (dtypes[c] == ST_STRING || !out.column_data[c] || len <= 0 || len % last.records != 0) continue;
    const int64_t per = len / last.records;
    const uint8_t shift = shift_of(dtypes[c]);
    if ((size_t(per) << shift) % 8 != 0) continue;
    if (per > int64_t(out.column_bytes[c] >> shift) / n) continue;
    (*per_record)[c] = per;
  }
}

// exact_parts is exact_per_record for the row splits of the list fields
// of nested messages (the records' own are placed by record anyway:
// attach_part's records_exact). It tells, for each partition p, how many
// splits each record gives it ((*per_record)[2p], else 0) and how many
// elements those splits count a record ((*per_record)[2p + 1]) when the
// plan's last batch held a whole number of both per record: the list
// fields of a message that every record holds the same number of times
// with the same number of elements, such as a tf.Example's features, each
// with one list of one kind. A later chunk then writes its splits where
// they belong and counts them from where they will begin, the elements of
// the records before it (Decoder::place_exact_part), so that the close-up
// neither moves nor rebases them; where splits counted from 0 and placed
// by share of bytes, every later chunk's moved by the gap its guess left
// and was rebased on the way: on tf.Examples in 32 MB batches on two
// threads, 10 MB of splits a batch. A wrong guess costs what the gap did:
// the close-up moves and rebases what is not where it belongs, and a
// piece that outgrows its stretch moves to engine memory and is copied
// back.
void exact_parts(const st_plan* plan, const BatchSizes& last, int64_t n, const st_output& out, std::vector<int64_t>* per_record) {
  per_record->assign(size_t(2 * plan->nparts), 0);
  if (last.records <= 0 || n <= 0 || !out.partition_splits || last.part_elems.size() != size_t(plan->nparts)) return;
  std::vector<uint8_t> own(size_t(plan->nparts), 0);
  for (const NodePlan::ListSlot& ls : plan->nodes[0].list_slots) own[size_t(ls.partition)] = 1;
  for (size_t p = 0; p < size_t(plan->nparts); p++) {
    const int64_t splits = last.part_len[p] - 1, elems = last.part_elems[p];
    if (own[p] || !out.partition_splits[p] || splits <= 0 || elems < 0) continue;
    if (splits % last.records != 0 || elems % last.records != 0) continue;
    const int64_t per = splits / last.records;
    if (per > (int64_t(out.partition_len[p]) - 1) / n) continue;
    (*per_record)[2 * p] = per;
    (*per_record)[2 * p + 1] = elems / last.records;
  }
}

// min_thread_seconds is the least walk a thread of a decode into lent
// buffers is given: a thread costs a wake-up (or its watch) and a share of
// the close-up, which a short walk does not repay. 200 KB batches on two
// threads against one, wall-clock (Intel Xeon model 167): flat records
// (62 us of walk a thread) 0.6x, tf.Examples (155 us) 1.3x, wide sparse
// records (550 us) 1.27x. st_test_min_thread_seconds sets it (0: no
// floor).
constexpr double kMinThreadSeconds = 100e-6;
std::atomic<double> min_thread_seconds{kMinThreadSeconds};

// lend_chunks is the number of chunks (each with its share of every lent
// buffer) that decode_batch cuts a batch of n records, in_bytes long, into
// on threads threads (0: default_threads()): no more than the batch's
// walk, at the plan's last rate (walk_s_per_byte), gives each
// min_thread_seconds; as many as threads until a rate is measured.
int64_t lend_chunks(const st_plan* plan, int32_t threads, int64_t n, int64_t in_bytes) {
  if (threads <= 0) threads = default_threads();
  int64_t worth = threads;
  const double rate = plan->walk_s_per_byte.load(std::memory_order_relaxed);
  const double least = min_thread_seconds.load(std::memory_order_relaxed);
  if (rate > 0 && least > 0) worth = int64_t(std::min(double(threads), double(in_bytes) * rate / least));
  return std::max<int64_t>(1, std::min<int64_t>({n, int64_t(threads), worth}));
}

// note_walk_rate folds a decode's walk into plan's walk_s_per_byte: its
// chunks walked in_bytes of records in walk_s seconds, all threads
// together. Half the last estimate, half this one, as for rebase_cost.
void note_walk_rate(const st_plan* plan, double walk_s, int64_t in_bytes) {
  if (walk_s <= 0 || in_bytes <= 0) return;
  const double rate = walk_s / double(in_bytes);
  const double old = plan->walk_s_per_byte.load(std::memory_order_relaxed);
  plan->walk_s_per_byte.store(old > 0 ? (old + rate) / 2 : rate, std::memory_order_relaxed);
}

// The test log of st_test_lend_log: every st_plan_lend_sizes* result while on.
std::atomic<bool> lend_log_on{false};
std::mutex lend_log_mu;
std::vector<int64_t> lend_log;

void log_lend_sizes(size_t ncols, size_t nparts, int64_t in_bytes, int64_t n, int32_t lend, const st_lend_sizes& s) {
  if (!lend_log_on.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(lend_log_mu);
  lend_log.insert(lend_log.end(), {in_bytes, n, int64_t(lend), int64_t(ncols), int64_t(nparts)});
  for (size_t c = 0; c < ncols; c++) lend_log.push_back(lend ? int64_t(s.column_bytes[c]) : 0);
  for (size_t c = 0; c < ncols; c++) lend_log.push_back(lend ? int64_t(s.string_offsets_len[c]) : 0);
  for (size_t p = 0; p < nparts; p++) lend_log.push_back(lend ? int64_t(s.partition_len[p]) : 0);
}

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_SIZING_H_
