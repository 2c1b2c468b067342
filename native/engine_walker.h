// The record walker: Decoder holds one chunk's outputs and walks each
// record in one pass (parse_message), filling absent fields' row splits
// and defaults in bulk (catch_up, finish).
//
// Part of the engine (engine.cc), which includes it once after the
// standard headers it relies on: the engine is one translation unit, so
// that the record walker and the wire decoders inline into each other.
// Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_WALKER_H_
#define STRUCTTENSOR_NATIVE_ENGINE_WALKER_H_

namespace {

// defer_mode is st_test_defer_splits's switch: whether decoders defer
// their records' own splits (Decoder::defer_splits) by the rule
// (defers_splits, 0), wherever they may (1) or never (-1), and
// deferred_adopted counts the decoders that deferred them and, the
// hand-over not taken, had them written once the chunks before were
// settled (adopt_pending_splits; st_test_deferred_adoptions).
std::atomic<int32_t> defer_mode{0};
std::atomic<int64_t> deferred_adopted{0};

// The splitting's states, rules and request (engine_shared.h).
using namespace structtensor_engine;

// SplitBatch is the state a decode into lent buffers on several threads
// shares among its chunks, for splitting them (engine.cc).
struct SplitBatch;

// seconds_since returns the seconds since start.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---------------------------------------------------------------------
// Decoding state for one chunk of records.

struct alignas(64) Decoder {
  const st_plan* plan;
  // The outputs, a slot a field (Slot): the walk finds a field's by its
  // key (FieldKey::slot), the rest of the engine by column or partition.
  std::vector<Slot> slots;
  SlotArray<Column, &Slot::col> cols;
  SlotArray<Buf, &Slot::part> parts;
  // end_splits holds, per partition, the last split of a buffer that
  // leaves it out (Buf::end_elsewhere); empty when none does.
  std::vector<int64_t> end_splits;
  // split_base holds, per partition, what the row splits this decoder
  // writes count from: 0, or, once the decoder has taken the hand-over
  // (take_handover), for the records' own list fields placed by record
  // (record_parts) the elements the chunks before it hold, so that the
  // rest of its splits are written final and the close-up need not
  // rebase them; for a nested list field placed by record
  // (place_exact_part), from the start, what the chunks before it are
  // expected to hold. Values read back subtract it: the walk itself
  // counts from 0 either way. In the slots, beside the splits.
  SlotArray<int64_t, &Slot::split_base> split_base;
  // record_parts lists the partitions placed by record (attach_part)
  // that are the records' own list fields; placed, per partition, how
  // each was placed (kOwnPart, kExactPart, 0: by share of bytes).
  std::vector<int32_t> record_parts;
  std::vector<uint8_t> placed;
  // The hand-over of a chunk after the first of a decode into lent
  // buffers: the thread that finished the chunk before it, its splits
  // final, asks (ask_handover) with the bases; this decoder takes it
  // between two records (take_handover): from then on it writes its
  // records' own splits based, and the asker rebases in place those
  // written before (Handovers) while this one decodes on. The
  // records' own splits are placed exactly (one a record), so they never
  // move to engine memory under the asker. handover_base (per partition,
  // the asker's, which it keeps unchanged until the batch ends) is set
  // before kHandoverAsked; handover_fill (per record part, the splits
  // still counting from 0) this decoder's, before kHandoverTaken.
  enum : int32_t { kHandoverOpen = 0, kHandoverAsked = 1, kHandoverTaken = 2, kHandoverClosed = 3 };
  std::atomic<int32_t> handover{kHandoverOpen};
  const int64_t* handover_base = nullptr;
  std::vector<size_t> handover_fill;
  // defer_splits: until it takes the hand-over (deferring), this decoder
  // writes none of its records' own splits: a fill of them (catch_up,
  // kRootDeferred) is logged, per record part (DeferredPart), and
  // whoever learns the base writes them all once, final
  // (write_deferred, engine.cc), where splits written counting from 0 were
  // written, then read and written again. Set for the chunks after the
  // first whose records' own list fields are all placed by record, in a
  // batch of under 4 GB (decode_batch): a log entry is two uint32s.
  bool defer_splits = false;
  bool deferring = false;
  // adopt_pending: the walk ended deferring, the hand-over not asked (run);
  // pending_upto, per record part, the splits the log holds (finish wrote
  // those after them, counting from 0). Guarded by SplitBatch::mu once
  // the decoder is done.
  bool adopt_pending = false;
  std::vector<size_t> pending_upto;
  struct DeferredPart {
    Buf log;           // (end, value) a fill: splits up to end - 1 are value
    int64_t last = 0;  // the last split (the leading 0 before any fill)
  };
  structtensor_engine::LineVector<DeferredPart> deferred;
  // The timing of the deferring (note_defer_timing): the walk's seconds
  // and input bytes until it took the hand-over (or ended), and the
  // seconds the deferred splits took to write, by whichever thread.
  double deferred_walk_s = 0;
  int64_t deferred_walk_bytes = 0;
  double deferred_write_s = 0;
  std::chrono::steady_clock::time_point run_start;
  // RootSplits says how the walk writes the splits of the records' own
  // list fields: counting from 0 (kRootPlain), from split_base, after the
  // hand-over (kRootBased), or deferred, before it (kRootDeferred).
  enum RootSplits { kRootPlain, kRootBased, kRootDeferred };
  // walked is about how many records a decoder that may take the
  // hand-over has walked (updated every 64): for tests that make the
  // hand-over happen in the middle of a chunk.
  std::atomic<int64_t> walked{0};
  // Splitting, in a decode into lent buffers on several threads (batch
  // set; engine.cc, SplitBatch): a thread done with its chunk asks the
  // decoder with the most input left (split kSplitAsked, offering a fresh
  // decoder, split_tail); this one answers between two records
  // (split_here): it gives the second half of its records left to the
  // tail, with the rest of its stretch of each buffer, and walks on to
  // the new end (run_hi), or declines; either way it opens again and
  // answers in the tail (split_answer). Closed once its walk has ended,
  // declining a split asked for then. at is the record the walk is at
  // (for the asker's choice).
  std::atomic<int32_t> split{kSplitClosed};
  Decoder* split_tail = nullptr;
  std::atomic<int32_t> split_answer{kSplitPending};  // as a tail offered
  SplitBatch* batch = nullptr;
  std::atomic<int64_t> run_hi{0};
  std::atomic<int64_t> at{0};
  int64_t lent_lo = 0;  // the first record of the part (attach_part)
  // slow_walk: walk slowly until the batch's first split (st_test_steal).
  bool slow_walk = false;
  // The batch's bookkeeping (guarded by SplitBatch::mu): claimed (a
  // thread runs this decoder or will), chunk_done (decoded without
  // error), chunk_failed (decoded with one), settled_ends (per partition,
  // the records' own last splits counting from the batch's start:
  // Handovers).
  bool claimed = false;
  bool chunk_done = false;
  bool chunk_failed = false;
  std::vector<int64_t> settled_ends;
  double run_s = 0;  // the run's seconds
  structtensor_engine::LineVector<int64_t> counts;
  // For each oneof, the element (of its node) and the member last set: a
  // oneof needs clearing only when another member was set in the same
  // element, which the mark tells without looking at the members.
  struct OneofMark {
    int64_t element;
    uint32_t member;
  };
  structtensor_engine::LineVector<OneofMark> oneof_marks;
  // The packed form of a field that parse_message's general path found
  // (a tag longer than the tables'): read until the run is stored, which
  // walks no submessage. A member, not a local: a local would be
  // initialised at every message's walk.
  FieldKey packed_key;
  const volatile int32_t* cancel = nullptr;
  // The packed decoders' tier (packed_tier), read once a run rather than
  // at each packed field: a call (on tf.Examples 0.6% of the
  // instructions, callgrind).
  int run_tier = kPackedScalar;
  // Writes into caller's buffers (st_decode_contiguous_into): such a
  // decoder never goes back to the plan's pool.
  bool external = false;
  // Marks string fields' columns UTF-8 (Column::utf8) as the strings are
  // stored, in the first-level cache (st_options.mark_utf8): a check in
  // Go after the decode read every byte again, from memory, on one
  // thread. Fields whose strings are validated (proto3) need no mark.
  bool mark_utf8 = false;

  // The first error.
  int32_t code = ST_OK;
  int64_t err_record = -1;
  int64_t err_offset = -1;
  std::string err_msg;
  const uint8_t* rec_start = nullptr;
  const uint8_t* rec_end = nullptr;  // reads may look ahead up to here

  explicit Decoder(const st_plan* pl) : Decoder(pl, kUnattached) { reset(); }

  // A decoder made to write into the caller's buffers (attach_part, or a
  // split's tail: split_here) is reset once they are attached, not
  // before: reset gives every output without a buffer one of engine
  // memory (for a leading 0), which attaching frees at once, two
  // allocator calls an output (on flat records two threads' decoders and
  // a tail took 14-65 us to make, of a 2.4 ms batch).
  enum Unattached { kUnattached };
  Decoder(const st_plan* pl, Unattached)
      : plan(pl),
        slots(size_t(pl->nslots)),
        cols(slots.data(), pl->col_slot),
        parts(slots.data(), pl->part_slot),
        split_base(slots.data(), pl->part_slot),
        counts(pl->nodes.size()) {
    for (size_t i = 0; i < cols.size(); i++) {
      cols[i].dtype = pl->col_dtype[i];
      cols[i].shift = shift_of(cols[i].dtype);
    }
  }

  // reset empties the outputs, keeping the buffers' capacity.
  void reset() {
    for (auto& c : cols) {
      c.vals.len = 0;
      c.n = 0;
      c.offs.len = 0;
      c.utf8 = Column::kUTF8Valid;
      if (c.dtype == ST_STRING) c.offs.push<int64_t>(0);
    }
    for (auto& p : parts) {
      p.len = 0;
      p.end_elsewhere = false;
      p.based = false;
      p.record_part = -1;
      p.push<int64_t>(0);
    }
    std::fill(counts.begin(), counts.end(), 0);
    for (Slot& s : slots) s.split_base = 0;
    record_parts.clear();
    placed.clear();
    defer_splits = false;
    deferring = false;
    adopt_pending = false;
    handover.store(kHandoverOpen, std::memory_order_relaxed);
    walked.store(0, std::memory_order_relaxed);
    split.store(kSplitClosed, std::memory_order_relaxed);
    split_tail = nullptr;
    batch = nullptr;
    slow_walk = false;
    claimed = chunk_done = chunk_failed = false;
    settled_ends.clear();
    oneof_marks.assign(size_t(plan->noneofs), OneofMark{-1, 0});
    code = ST_OK;
    err_record = err_offset = -1;
    err_msg.clear();
    cancel = nullptr;
  }

  // attach makes the caller's buffers the storage of the outputs that
  // have one, then empties the outputs.
  // attach_part makes the share [lo, hi) (fractions) of each of the
  // caller's buffers the storage of the outputs that have one, then
  // empties the outputs: the parts of a batch decoded on several threads
  // each write their own stretch, closed up by assemble afterwards. Value
  // stretches start 8-byte aligned. A value column with per_record[c]
  // values in every record (exact_per_record; 0: not known) gets instead
  // the stretch of the part's records [rec_lo, rec_hi) of nrecords
  // exactly (the last part: to the end), so that the pieces meet and the
  // close-up moves none of them. The same for the row splits of the
  // records' own list fields when every part has records (records_exact):
  // one split a record, so a part's splits are those of its records
  // [rec_lo, rec_hi] exactly; its last split is the next part's leading
  // 0, so a part other than the last leaves it out of the buffer
  // (Buf::end_elsewhere) and the close-up keeps the next part's leading
  // element instead, rebased to the same value. The splits then need only
  // rebasing in place, not moving: half the output of wide sparse
  // records on two threads.
  // The row splits of a nested list field whose splits and elements per
  // record are known (part_per_record, exact_parts: splits, elements) are
  // placed by record too, and count from the elements of the records
  // before the part (place_exact_part): the close-up neither moves nor
  // rebases them.
  void attach_part(const st_output& out, double lo, double hi, const int64_t* per_record, const int64_t* part_per_record,
                   int64_t rec_lo, int64_t rec_hi, int64_t nrecords, bool records_exact) {
    external = true;
    auto region = [&](size_t cap, size_t align, size_t* start) {
      size_t a = lo <= 0 ? 0 : size_t(double(cap) * lo) / align * align;
      size_t b = hi >= 1 ? cap : size_t(double(cap) * hi) / align * align;
      a = std::min(a, cap);
      b = std::max(a, std::min(b, cap));
      *start = a;
      return b - a;
    };
    size_t at;
    for (size_t c = 0; c < cols.size(); c++) {
      if (out.column_data && out.column_data[c]) {
        size_t len;
        const size_t cap = out.column_bytes[c];
        if (per_record && per_record[c] > 0) {
          auto end = [&](int64_t rec) {
            return rec <= 0 ? 0 : rec >= nrecords ? cap : std::min(cap, size_t(per_record[c] * rec) << cols[c].shift);
          };
          at = end(rec_lo);
          len = std::max(at, end(rec_hi)) - at;
        } else {
          len = region(cap, 8, &at);
        }
        cols[c].vals.attach(static_cast<uint8_t*>(out.column_data[c]) + at, len);
      }
      if (cols[c].dtype == ST_STRING && out.string_offsets && out.string_offsets[c]) {
        size_t len = region(out.string_offsets_len[c], 1, &at);
        cols[c].offs.attach(out.string_offsets[c] + at, len * 8);
      }
    }
    // by_record[k]: partition k gets the stretch of the part's records,
    // per_record[k] splits a record (kOwnPart: the records' own, one).
    std::vector<uint8_t> by_record(parts.size(), 0);
    if (records_exact && out.partition_splits) {
      for (const NodePlan::ListSlot& ls : plan->nodes[0].list_slots) {
        const size_t k = size_t(ls.partition);
        if (out.partition_splits[k] && out.partition_len[k] >= size_t(nrecords) + 1) by_record[k] = kOwnPart;
      }
      for (size_t k = 0; part_per_record && k < parts.size(); k++) {
        if (part_per_record[2 * k] > 0) by_record[k] = kExactPart;
      }
    }
    const bool last = rec_hi >= nrecords;
    for (size_t k = 0; k < parts.size(); k++) {
      if (!out.partition_splits || !out.partition_splits[k]) continue;
      size_t len;
      if (by_record[k]) {
        const size_t per = by_record[k] == kOwnPart ? 1 : size_t(part_per_record[2 * k]);
        at = size_t(rec_lo) * per;
        len = last ? out.partition_len[k] - at : size_t(rec_hi - rec_lo) * per;
      } else {
        len = region(out.partition_len[k], 1, &at);
      }
      parts[k].attach(out.partition_splits[k] + at, len * 8);
    }
    reset();
    lent_lo = rec_lo;
    place_by_record(by_record, last);
    for (size_t k = 0; k < parts.size(); k++) {
      if (by_record[k] == kExactPart) place_exact_part(k, part_per_record[2 * k + 1] * rec_lo);
    }
  }

  // How attach_part places a partition's splits by record: the records'
  // own list fields' (one split a record), or a nested list field's
  // (exact_parts).
  enum : uint8_t { kOwnPart = 1, kExactPart = 2 };

  // place_by_record marks the partitions placed by record (by_record[k])
  // that are the records' own (kOwnPart) as record_parts and, unless this
  // part is the batch's last, all of them as leaving their last split to
  // the next part.
  void place_by_record(const std::vector<uint8_t>& by_record, bool last) {
    placed = by_record;
    for (size_t k = 0; k < parts.size(); k++) {
      if (by_record[k] == kOwnPart) {
        parts[k].record_part = int32_t(record_parts.size());
        record_parts.push_back(int32_t(k));
      }
    }
    if (last) return;
    end_splits.assign(parts.size(), 0);
    for (size_t k = 0; k < parts.size(); k++) parts[k].end_elsewhere = by_record[k] != 0;
  }

  // place_exact_part makes partition k's splits, placed by record
  // (kExactPart) and empty but for their leading split, count from base,
  // the elements the records before this part are expected to hold:
  // written final (catch_up, finish), the leading one included, which
  // the close-up keeps as the end of the part before (Buf::end_elsewhere).
  void place_exact_part(size_t k, int64_t base) {
    split_base[k] = base;
    parts[k].based = true;
    memcpy(parts[k].p, &base, 8);
  }

  // split_here answers a split asked for, before record i (SplitBatch).
  void split_here(int64_t i);

  // all_external tells whether every output is in the caller's buffers.
  bool all_external() const {
    for (const Column& c : cols) {
      if (!c.vals.external || (c.dtype == ST_STRING && !c.offs.external)) return false;
    }
    for (const Buf& b : parts) {
      if (!b.external) return false;
    }
    return true;
  }

  size_t capacity() const {
    size_t n = 0;
    for (auto& c : cols) n += c.vals.cap + c.offs.cap;
    for (auto& p : parts) n += p.cap;
    return n;
  }

  __attribute__((noinline, cold)) std::nullptr_t fail(int32_t c, const uint8_t* at, const char* what, const std::string& path) {
    code = c;
    err_offset = at - rec_start;
    err_msg = what;
    err_msg += path.empty() ? std::string(" at the top level") : " at field \"" + path + "\"";
    return nullptr;
  }

  // fail_field is fail naming the path of field k of node np: the walk
  // reads a field's FieldPlan only on such cold paths.
  __attribute__((noinline, cold)) std::nullptr_t fail_field(int32_t c, const uint8_t* at, const char* what, const NodePlan& np,
                                                             const FieldKey& k) {
    return fail(c, at, what, np.fields[size_t(k.field)].cold->path);
  }

  // last_split returns the last split of sp: of a record part whose
  // splits are deferred, the one logged last, which is not in sp.
  int64_t last_split(const Buf& sp) const {
    if (__builtin_expect(deferring, 0) && sp.record_part >= 0) return deferred[size_t(sp.record_part)].last;
    return sp.last_i64();
  }

  // key_of returns the number of values a singular field's column or child
  // had before the current element: a value past it is this element's.
  int64_t singular_key(const FieldKey& k, const Slot& s, int32_t node) const {
    return k.mode <= M_IMPLICIT ? counts[size_t(node)] : last_split(s.part) - s.split_base;
  }

  // truncate_node drops the elements of node from the n-th on. Outputs
  // that lag (catch_up) may already be shorter: a partition without a
  // split for element n had no values since its last one, and an implicit
  // column shorter than n has defaults still to come.
  void truncate_node(int32_t node, int64_t n) {
    const NodePlan& np = plan->nodes[size_t(node)];
    for (const FieldPlan& f : np.fields) {
      int64_t m = n;
      if (f.mode >= M_OPTIONAL) {
        Buf& sp = parts[size_t(f.partition)];
        if (sp.len > size_t(n) * 8) {
          sp.len = size_t(n + 1) * 8;
          m = sp.i64(size_t(n)) - split_base[size_t(f.partition)];
        } else {
          m = f.message ? counts[size_t(f.child)] : cols[size_t(f.column)].count();
        }
      }
      if (f.message) {
        truncate_node(f.child, m);
      } else if (cols[size_t(f.column)].count() > m) {
        cols[size_t(f.column)].truncate(m);
      }
    }
    counts[size_t(node)] = n;
  }

  // clear_oneof removes the other members of f's oneof from the current
  // element: setting one member of a oneof clears the others.
  void clear_oneof(int32_t node, const NodePlan& np, const FieldPlan& f) {
    const size_t splits = size_t(counts[size_t(node)] + 1) * 8;
    for (int32_t gi : np.oneofs[f.oneof - 1]) {
      const FieldPlan& g = np.fields[size_t(gi)];
      if (g.number == f.number) continue;
      // A member whose splits lag did not occur in this element.
      if (parts[size_t(g.partition)].len != splits) continue;
      int64_t start = last_split(parts[size_t(g.partition)]) - split_base[size_t(g.partition)];
      if (g.message) {
        if (counts[size_t(g.child)] > start) truncate_node(g.child, start);
      } else {
        Column& c = cols[size_t(g.column)];
        if (c.count() > start) c.truncate(start);
      }
    }
  }

  // reopen makes the last (ended) element of node current again, so that a
  // second occurrence of a singular message field merges into it.
  // Its list fields have no split for its end yet (catch_up writes
  // splits only up to the start of the current element).
  void reopen(int32_t node) { counts[size_t(node)]--; }

  // open_child returns the child node of message field k (of an element
  // of node), its last element made current again when k is singular and
  // already holds one (a second occurrence merges into it).
  __attribute__((always_inline)) inline int32_t open_child(const FieldKey& k, const Slot& s, int32_t node, bool fresh) {
    const int32_t child = node + k.child_offset;
    if (!fresh && k.mode != M_REPEATED && counts[size_t(child)] > singular_key(k, s, node)) reopen(child);
    return child;
  }

  __attribute__((always_inline)) inline bool end_element(int32_t node, const uint8_t* at) {
    const NodePlan& np = plan->nodes[size_t(node)];
    int64_t* const cnt = counts.data();
    Slot* const ss_slots = slots.data();
    const int64_t idx = cnt[node];
    for (const NodePlan::SingularSlot& ss : np.singular_slots) {
      int64_t have = ss.message ? cnt[ss.source] : ss_slots[ss.source].col.count();
      if (__builtin_expect(have > idx, 1)) continue;
      if (!fill_default(np.fields[size_t(ss.field)], at)) return false;
    }
    cnt[node] = idx + 1;
    return true;
  }

  // catch_up brings field f of node up to date before a value of the
  // current element is stored: a list field gets the row splits of every
  // element since its last value (all at its count of values, which has
  // not moved since) and the start of the current one; an implicit scalar
  // gets the default of every earlier element that lacked it.
  // It returns true when f is a list field that had no split for the
  // current element's start: every stored value is preceded by catch_up,
  // and truncation shortens the splits with the values, so the element
  // holds no value of f yet, and a singular f needs no check for one to
  // replace (the common case of a sparse field: it lags).
  // Root: how f's splits are written when node is the root (RootSplits):
  // f is then one of the records' own list fields. idx is counts[node],
  // the current element's index (parse_message reads it once).
  template <RootSplits Root>
  __attribute__((always_inline)) inline bool catch_up(const FieldKey& k, const NodePlan& np, Slot& s, int32_t node, int64_t idx) {
    if (k.mode >= M_OPTIONAL) {
      Buf& sp = s.part;
      const size_t want = size_t(idx + 1) * 8;
      if (__builtin_expect(sp.len < want, 1)) {
        const int64_t v = k.message() ? counts[size_t(node + k.child_offset)] : s.col.count();
        if (Root == kRootDeferred) {
          defer_fill(sp, want, v);
          return true;
        }
        // The records' own splits count from a base only once handed over
        // (kRootBased); a nested list field's may from the start
        // (place_exact_part, Buf::based).
        append_splits(sp, (want - sp.len) / 8, Root == kRootBased || sp.based ? v + s.split_base : v);
        // The line 512 bytes on, for writing: wide records write the
        // splits of hundreds of fields, too many streams for the hardware
        // prefetchers, and a store that misses waits for its line. On an
        // Intel Xeon (model 207): wide sparse and wide repeated records
        // 5-8% more MB per CPU-second, tf.Examples 2-4%, the rest the same
        // (8 and 32 MB batches into lent buffers, the code before and
        // after run side by side on the two cores, best of 30); 256 bytes
        // on gained less, 1024 the same.
        __builtin_prefetch(sp.p + sp.len + 512, 1);
        return true;
      }
    } else if (k.mode == M_IMPLICIT && !k.message()) {
      Column& c = s.col;
      if (c.count() < idx) fill_defaults(np.fields[size_t(k.field)], c, idx);
    }
    return false;
  }

  // fill_splits appends copies of v until sp holds n splits.
  static void fill_splits(Buf& sp, int64_t n, int64_t v) {
    size_t have = sp.len / 8;
    if (size_t(n) <= have) return;
    append_splits(sp, size_t(n) - have, v);
  }

  // append_splits appends k > 0 copies of v to sp. Two a store (SSE2,
  // which every x86-64 CPU has), the last store ending at the last copy
  // and overlapping the one before when k is odd: no tail loop and no
  // write past the k copies. Against one copy a store, sparse nested
  // records (fills of about six splits) decoded 5-6% more MB per
  // CPU-second and wide repeated ones (fills of dozens) the same
  // (interleaved runs of bench -run-one, AMD EPYC Zen 4). Stores aligned
  // to 16 bytes, after a first single copy when needed, were 6-10%
  // slower on all three wide datasets than either (one more branch a
  // fill); fills in groups of four or eight into spare capacity took
  // fewer instructions but measured slower on wide repeated records.
  static inline void append_splits(Buf& sp, size_t k, int64_t v) {
    sp.reserve_more(k * 8);
    store_splits(reinterpret_cast<int64_t*>(sp.p + sp.len), k, v);
    sp.len += k * 8;
  }

  // store_splits stores k > 0 copies of v at q (append_splits).
  static inline void store_splits(int64_t* q, size_t k, int64_t v) {
#if ST_X86_64
    if (k >= 2) {
      const __m128i w = _mm_set1_epi64x(v);
      for (size_t i = 0; i + 2 < k; i += 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), w);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k - 2), w);
    } else {
      memcpy(q, &v, 8);
    }
#else
    for (size_t i = 0; i < k; i++) memcpy(q + i, &v, 8);
#endif
  }

  // defer_fill is append_splits of a decoder that defers its records'
  // own splits (defer_splits), up to want bytes: it logs the fill and
  // writes none of it. On wide sparse records, fills of twenty splits and
  // more, 8 bytes where the fill stored 160 (the log is one short stream
  // a field, the splits were 2.5 lines a fill, a store that misses each).
  inline void defer_fill(Buf& sp, size_t want, int64_t v) {
    // The buffer is placed by record, so exactly sized: reserve_more never
    // grows it, but keeps the splits that write_deferred_part writes to
    // within it.
    sp.reserve_more(want - sp.len);
    sp.len = want;
    DeferredPart& d = deferred[size_t(sp.record_part)];
    d.last = v;
    const uint32_t entry[2] = {uint32_t(want / 8), uint32_t(v)};
    d.log.reserve_more(sizeof entry);
    memcpy(d.log.p + d.log.len, entry, sizeof entry);
    d.log.len += sizeof entry;
  }

  // deferred_run returns run r of a record part's deferred splits, as
  // write_deferred_part writes them into n: r = 0 the leading split
  // (base), then each logged fill (end, value), value + base; *end never
  // past n.
  static inline int64_t deferred_run(const uint32_t* log, size_t r, size_t n, int64_t base, size_t* end) {
    *end = std::min(n, r == 0 ? size_t(1) : size_t(log[2 * r - 2]));
    return r == 0 ? base : int64_t(log[2 * r - 1]) + base;
  }

  // write_deferred_part writes record part j's first upto splits final,
  // base added, from the fills logged (defer_fill) and the leading 0, and
  // frees its log. The splits past upto are the walk's (the last logged,
  // at upto, written by take_handover). Called, a part at a time, by the
  // thread that took the decoder's hand-over or adopted its pending
  // splits, and any thread helping it (engine.cc, DeferredWrite); with
  // AVX-512 its streaming stores need a fence before they are read.
  void write_deferred_part(size_t j, size_t upto, int64_t base) {
    int64_t* q = reinterpret_cast<int64_t*>(parts[size_t(record_parts[j])].p);
    const uint32_t* log = reinterpret_cast<const uint32_t*>(deferred[j].log.p);
    const size_t nlog = deferred[j].log.len / 8;
#if ST_X86_64
    if (run_tier == kPackedAVX512) {
      write_splits_avx512(q, upto, base, log, nlog);
      deferred[j].log.release();
      return;
    }
#endif
    size_t i = 0;
    for (size_t r = 0; r <= nlog && i < upto; r++) {
      size_t end;
      const int64_t v = deferred_run(log, r, upto, base, &end);
      if (end > i) store_splits(q + i, end - i, v);
      i = std::max(i, end);
    }
    deferred[j].log.release();
  }

#if ST_X86_64
  // write_splits_avx512 is write_deferred_part on a CPU with AVX-512:
  // splits [0, n) of q, the leading one base, then each logged fill
  // (end, value) value + base. Each 64-byte line whole
  // within [0, n) is built in a register and stored past the cache
  // (streaming store) once complete: a store that misses the cache reads
  // its line in first, which splits written once and not read again need
  // not (runs of 1 to 39 splits, 142 MB: 13 ms against 20 by plain
  // stores, Intel Xeon model 207; streaming each split or pair of them
  // instead took 27). The ends, which may share a line with splits another
  // thread writes, take plain stores.
  __attribute__((target("avx512f"))) static void write_splits_avx512(int64_t* q, size_t n, int64_t base, const uint32_t* log,
                                                                    size_t nlog) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(q);
    // q is 8-byte aligned where the engine and its callers keep int64s;
    // if not, no split is in a line of its own.
    size_t line0 = n, full_end = n;
    if (a % 8 == 0) {
      line0 = std::min(n, size_t((64 - a % 64) % 64) / 8);
      full_end = line0 + (n - line0) / 8 * 8;
    }
    __m512i cur = _mm512_setzero_si512();
    size_t i = 0;
    for (size_t r = 0; r <= nlog && i < n; r++) {
      size_t end;
      const int64_t v = deferred_run(log, r, n, base, &end);
      for (; i < end && i < line0; i++) memcpy(q + i, &v, 8);
      const size_t mid = std::min(end, full_end);
      const __m512i vv = _mm512_set1_epi64(v);
      while (i < mid) {
        const size_t off = (i - line0) % 8, line = i - off, stop = std::min(mid, line + 8);
        if (off == 0 && stop == line + 8) {
          _mm512_stream_si512(reinterpret_cast<__m512i*>(q + line), vv);
        } else {
          const __mmask8 m = __mmask8((1u << (stop - line)) - (1u << off));
          cur = _mm512_mask_mov_epi64(cur, m, vv);
          if (stop == line + 8) _mm512_stream_si512(reinterpret_cast<__m512i*>(q + line), cur);
        }
        i = stop;
      }
      for (; i < end && i >= full_end; i++) memcpy(q + i, &v, 8);
    }
    // A line left short (fills that stop before n, which the log's do
    // not): its splits so far, by plain stores.
    if (i > line0 && i < full_end && (i - line0) % 8 != 0) {
      alignas(64) int64_t staged[8];
      _mm512_store_si512(reinterpret_cast<__m512i*>(staged), cur);
      const size_t off = (i - line0) % 8;
      memcpy(q + i - off, staged, off * 8);
    }
  }
#endif

  // fill_defaults appends f's default to column c until it holds n values.
  void fill_defaults(const FieldPlan& f, Column& c, int64_t n) {
    size_t k = size_t(n - c.count());
    if (f.dtype == ST_STRING) {
      const std::string& d = f.cold->def_str;
      if (!f.cold->def_utf8 && k > 0) c.utf8_invalid();
      c.vals.reserve_more(k * d.size());
      c.offs.reserve_more(k * 8);
      for (size_t i = 0; i < k; i++) c.push_string(reinterpret_cast<const uint8_t*>(d.data()), d.size());
      return;
    }
    c.vals.reserve_more(k << c.shift);
    uint8_t* q = c.vals.p + c.vals.len;
    switch (c.shift) {
      case 0: memset(q, f.def_bits != 0, k); break;
      case 2: {
        uint32_t v = uint32_t(f.def_bits);
        for (size_t i = 0; i < k; i++) memcpy(q + i * 4, &v, 4);
        break;
      }
      default:
        for (size_t i = 0; i < k; i++) memcpy(q + i * 8, &f.def_bits, 8);
        break;
    }
    c.vals.len += k << c.shift;
    c.n = n;
  }

  // finish completes the outputs at the end of a chunk: the splits and
  // defaults that catch_up has not written yet.
  void finish() {
    for (size_t ni = 0; ni < plan->nodes.size(); ni++) {
      const NodePlan& np = plan->nodes[ni];
      const int64_t n = counts[ni];
      for (const NodePlan::ListSlot& ls : np.list_slots) {
        Buf& sp = parts[size_t(ls.partition)];
        const int64_t v = (ls.message ? counts[size_t(ls.source)] : cols[size_t(ls.source)].count()) + split_base[size_t(ls.partition)];
        if (__builtin_expect(sp.end_elsewhere, 0)) {
          fill_splits(sp, n, v);
          end_splits[size_t(ls.partition)] = v;
          // No element (a nested list field's, placed by record: the
          // guess was wrong): the leading split is the end of the part
          // before and this part's own, and leaves with it.
          if (n == 0) sp.len = 0;
        } else {
          fill_splits(sp, n + 1, v);
        }
      }
      for (int32_t fi : np.implicit_scalars) {
        const FieldPlan& f = np.fields[size_t(fi)];
        Column& c = cols[size_t(f.column)];
        if (c.count() < n) fill_defaults(f, c, n);
      }
    }
  }

  // fill_default completes a singular field absent from the element that
  // is ending: its default, an empty message, or a required-field error.
  __attribute__((noinline)) bool fill_default(const FieldPlan& f, const uint8_t* at) {
    if (f.mode == M_REQUIRED && !(plan->flags & PF_FILL_REQUIRED)) {
      fail(ST_ERR_REQUIRED, at, "required field missing", f.cold->path);
      return false;
    }
    if (f.message) return end_element(f.child, at);
    Column& c = cols[size_t(f.column)];
    switch (f.dtype) {
      case ST_STRING:
        if (!f.cold->def_utf8) c.utf8_invalid();
        c.push_string(reinterpret_cast<const uint8_t*>(f.cold->def_str.data()), f.cold->def_str.size());
        break;
      case ST_BOOL: c.push<uint8_t>(f.def_bits != 0); break;
      case ST_INT32: case ST_UINT32: case ST_FLOAT32: c.push<uint32_t>(uint32_t(f.def_bits)); break;
      default: c.push<uint64_t>(f.def_bits); break;
    }
    return true;
  }

  // put stores one decoded scalar of field k (of a node) honouring its
  // mode; fresh: the current element holds no value of it (catch_up).
  template <class T>
  __attribute__((always_inline)) inline void put(const FieldKey& k, Slot& s, int32_t node, bool fresh, T v) {
    Column& c = s.col;
    if (!fresh && k.mode != M_REPEATED && c.count() > singular_key(k, s, node)) c.drop_last();
    c.push<T>(v);
  }

  const uint8_t* skip_field(const uint8_t* p, const uint8_t* end, uint32_t wt, uint64_t num, int depth,
                            const uint8_t* field_start, const NodePlan& np) {
    uint64_t v;
    switch (wt) {
      case W_VARINT:
        p = read_varint(p, end, &v);
        if (!p) return fail(ST_ERR_MALFORMED, field_start, "truncated varint in unknown field", np.path + "#" + std::to_string(num));
        return p;
      case W_I64:
        if (end - p < 8) return fail(ST_ERR_MALFORMED, field_start, "truncated fixed64 in unknown field", np.path + "#" + std::to_string(num));
        return p + 8;
      case W_I32:
        if (end - p < 4) return fail(ST_ERR_MALFORMED, field_start, "truncated fixed32 in unknown field", np.path + "#" + std::to_string(num));
        return p + 4;
      case W_LEN:
        p = read_varint(p, end, &v);
        if (!p || v > uint64_t(end - p)) return fail(ST_ERR_MALFORMED, field_start, "length past the end in unknown field", np.path + "#" + std::to_string(num));
        return p + v;
      case W_SGROUP: {
        if (uint32_t(depth + 1) > plan->max_depth) return fail(ST_ERR_DEPTH, field_start, "nesting deeper than the limit", np.path + "#" + std::to_string(num));
        while (true) {
          const uint8_t* fs = p;
          uint64_t tag;
          if (p >= end) return fail(ST_ERR_MALFORMED, field_start, "unterminated group in unknown field", np.path + "#" + std::to_string(num));
          p = read_varint(p, end, &tag);
          if (!p) return fail(ST_ERR_MALFORMED, fs, "truncated tag in unknown group", np.path + "#" + std::to_string(num));
          uint64_t n2 = tag >> 3;
          uint32_t w2 = uint32_t(tag & 7);
          if (n2 == 0 || n2 > kMaxFieldNumber) return fail(ST_ERR_MALFORMED, fs, "invalid field number in unknown group", np.path + "#" + std::to_string(num));
          if (w2 == W_EGROUP) {
            if (n2 != num) return fail(ST_ERR_MALFORMED, fs, "mismatched end-group in unknown group", np.path + "#" + std::to_string(num));
            return p;
          }
          p = skip_field(p, end, w2, n2, depth + 1, fs, np);
          if (!p) return nullptr;
        }
      }
    }
    return fail(ST_ERR_MALFORMED, field_start, "invalid wire type", np.path + "#" + std::to_string(num));
  }

  template <class V, class Conv>
  const uint8_t* packed_varints(const FieldKey& key, Slot& s, const NodePlan& np, const uint8_t* p, const uint8_t* q, const uint8_t* fs, Conv conv) {
    using T = typename V::T;
    Column& c = s.col;
    // Every value takes at least one byte: reserve for the worst case
    // rather than counting terminators first, while it fits.
    size_t n = size_t(q - p);
    if (c.vals.len + n * sizeof(T) > c.vals.cap) {
      // The worst case does not fit: count the values (their last bytes)
      // rather than grow, so that a buffer sized exactly (a caller's, see
      // st_decode_contiguous_into) is not abandoned for a few values.
      // Only terminated values are written, so the count bounds k.
      c.vals.reserve_more(count_terminators(p, q) * sizeof(T));
    }
    T* out = reinterpret_cast<T*>(c.vals.p + c.vals.len);
    size_t k = 0;
    // slow decodes one value with the general decoder: one longer than
    // eight bytes, one the run cuts short (false: an error), or one too
    // near the record's end for an 8-byte load.
    auto slow = [&] {
      uint64_t v;
      p = read_varint(p, q, &v);
      if (!p) return false;
      T t = conv(v);
      memcpy(out + k, &t, sizeof(T));
      k++;
      return true;
    };
    const int tier = run_tier;
    const bool vector = tier == kPackedAVX512;
#ifdef ST_COUNT_DECODERS
    (vector ? packed_runs_vector : packed_runs_portable).fetch_add(1, std::memory_order_relaxed);
    bool counted = false;
#endif
    // k never passes the reserve: each value written ends in the run.
    // Without AVX-512, the decoder of the CPU's tier (varints_by_tier)
    // while 72 bytes of the record remain; what it
    // leaves (values longer than eight bytes, the record's last bytes):
    // eight bytes at a time, the first two values that end in the word
    // decoded from it with no branch on their lengths (a loop with a trip
    // count per word would mispredict on every mix of lengths): the
    // second is stored, and counted, only when it ends in the word. The
    // word may reach past the run (not past the record): terminators
    // beyond the run are masked off.
    T unused;
    while (p < q) {
#if ST_X86_64
      if (vector) {
        p = varints_avx512<V>(p, q, out, &k);
        if (p < q && !slow()) return fail_field(ST_ERR_MALFORMED, fs, "truncated varint in packed field", np, key);
        continue;
      }
#endif
      if (rec_end - p >= 72) {
        const uint8_t* r = varints_by_tier(tier, p, q, rec_end, out, &k, conv);
        if (r != p) {
#ifdef ST_COUNT_DECODERS
          if (!counted) {
            counted = true;
            count_fast_run(tier);
          }
#endif
          p = r;
          continue;
        }
      }
      uint64_t stop = 0, w = 0;
      if (rec_end - p >= 8) {
        memcpy(&w, p, 8);
        stop = ~w & 0x8080808080808080ull;
        size_t avail = size_t(q - p);
        if (avail < 8) stop &= (uint64_t(1) << (avail * 8)) - 1;
      }
      if (__builtin_expect(stop == 0, 0)) {
        if (!slow()) return fail_field(ST_ERR_MALFORMED, fs, "truncated varint in packed field", np, key);
        continue;
      }
      // end1, end2: the bit after each value's last byte (end2 == end1
      // when only one value ends in the word).
      unsigned end1 = unsigned(__builtin_ctzll(stop)) + 1;
      uint64_t rest = stop & (stop - 1);
      unsigned end2 = rest ? unsigned(__builtin_ctzll(rest)) + 1 : end1;
      T t1 = conv(squeeze7(w & (~uint64_t(0) >> (64 - end1))));
      T t2 = conv(squeeze7((w & (~uint64_t(0) >> (64 - end2))) >> (end1 & 63)));
      memcpy(out + k, &t1, sizeof(T));
      memcpy(rest ? out + k + 1 : &unused, &t2, sizeof(T));
      k += rest ? 2 : 1;
      p += (rest ? end2 : end1) / 8;
    }
    c.vals.len += k * sizeof(T);
    c.n += int64_t(k);
    return q;
  }


  template <class T>
  const uint8_t* packed_fixed(const FieldKey& key, Slot& s, const NodePlan& np, const uint8_t* p, const uint8_t* q, const uint8_t* fs) {
    size_t n = size_t(q - p);
    if (n % sizeof(T)) return fail_field(ST_ERR_MALFORMED, fs, "packed fixed-width field length is not a multiple of the width", np, key);
    Column& c = s.col;
    c.vals.append_short(p, n, rec_end);
    c.n += int64_t(n / sizeof(T));
    return q;
  }

  // packed starts on a page boundary, so that where it and the decoders
  // inlined into it lie against the rest of the engine's hot code does
  // not move with every change to the code before it: the AVX2 decoder's
  // second pass, 1.3 KB smaller, moved the walker that much and cost
  // tfexample and elwc 10% (bench, ours-1t, AVX-512 and AVX2 alike) with
  // none of their instructions changed; padded back, or with this, they
  // were as fast as before.
  __attribute__((aligned(4096))) const uint8_t* packed(const FieldKey& k, Slot& s, const NodePlan& np, const uint8_t* p, const uint8_t* q, const uint8_t* fs) {
    switch (k.type & ~FieldKey::kPacked) {
      case T_INT64: case T_UINT64: return packed_varints<VecU64>(k, s, np, p, q, fs, as_u64);
      case T_INT32: case T_UINT32: case T_ENUM: return packed_varints<VecU32>(k, s, np, p, q, fs, as_u32);
      case T_SINT32: return packed_varints<VecZigzag32>(k, s, np, p, q, fs, zigzag32);
      case T_SINT64: return packed_varints<VecZigzag64>(k, s, np, p, q, fs, zigzag64);
      case T_BOOL: return packed_varints<VecBool>(k, s, np, p, q, fs, as_bool);
      case T_DOUBLE: case T_FIXED64: case T_SFIXED64: return packed_fixed<uint64_t>(k, s, np, p, q, fs);
      case T_FLOAT: case T_FIXED32: case T_SFIXED32: return packed_fixed<uint32_t>(k, s, np, p, q, fs);
    }
    return fail_field(ST_ERR_WIRE_TYPE, fs, "packed encoding for a non-scalar field", np, k);
  }

  // varint_field and fixed_field decode one scalar of field k (of an
  // element of node) at p, store it (put) and return the position after
  // it, or nullptr on error (naming the field's path).
  template <class T, class Conv>
  __attribute__((always_inline)) inline const uint8_t* varint_field(const FieldKey& k, const NodePlan& np, Slot& s, int32_t node, bool fresh,
                                                                    const uint8_t* p, const uint8_t* end, const uint8_t* fs, Conv conv) {
    uint64_t v;
    const uint8_t* start = p;
    // A bool is all but always one byte: the one-byte test predicts well.
    p = sizeof(T) == 1 ? read_varint_lim(p, end, rec_end, &v) : read_varint_value(p, end, rec_end, &v);
    if (!p) return fail_field(ST_ERR_MALFORMED, fs, varint_failure(start, end, false), np, k);
    put<T>(k, s, node, fresh, conv(v));
    return p;
  }
  template <class T>
  __attribute__((always_inline)) inline const uint8_t* fixed_field(const FieldKey& k, const NodePlan& np, Slot& s, int32_t node, bool fresh,
                                                                   const uint8_t* p, const uint8_t* end, const uint8_t* fs,
                                                                   const char* truncated) {
    if (size_t(end - p) < sizeof(T)) return fail_field(ST_ERR_MALFORMED, fs, truncated, np, k);
    T x;
    memcpy(&x, p, sizeof(T));
    put<T>(k, s, node, fresh, x);
    return p + sizeof(T);
  }

  // string_field stores the string or bytes value of field k (of an
  // element of node) whose length is at p, and returns the position after
  // it, or nullptr on error.
  __attribute__((always_inline)) inline const uint8_t* string_field(const FieldKey& k, const NodePlan& np, Slot& s, int32_t node, bool fresh,
                                                                    const uint8_t* p, const uint8_t* end, const uint8_t* fs) {
    uint64_t len;
    p = read_varint_lim(p, end, rec_end, &len);
    if (!p || len > uint64_t(end - p)) return fail_field(ST_ERR_MALFORMED, fs, "length past the end", np, k);
    Column& c = s.col;
    if (k.validate_utf8()) {
      if (!valid_utf8(p, size_t(len))) return fail_field(ST_ERR_UTF8, fs, "invalid UTF-8 in string", np, k);
    } else if (mark_utf8 && k.type == T_STRING && c.utf8 == Column::kUTF8Valid && !valid_utf8(p, size_t(len))) {
      c.utf8_invalid();
    }
    if (!fresh && k.mode != M_REPEATED && c.count() > singular_key(k, s, node)) c.drop_last();
    c.push_string(p, size_t(len), rec_end);
    return p + len;
  }

  // message_field decodes the message of field k (of an element of node)
  // whose length is at p, one element of its child node, and returns the
  // position after it, or nullptr on error.
  // Inline: k's child may be taken by inline_child (k is a shaped key,
  // FieldKey::kShaped; never within inline_child itself).
  template <bool Inline>
  __attribute__((always_inline)) inline const uint8_t* message_field(const FieldKey& k, const NodePlan& np, Slot& s, int32_t node, bool fresh,
                                                                     const uint8_t* p, const uint8_t* end, const uint8_t* fs) {
    if (k.too_deep()) return fail_field(ST_ERR_DEPTH, fs, "nesting deeper than the limit", np, k);
    const int32_t child = open_child(k, s, node, fresh);
    uint64_t len;
    p = read_varint_lim(p, end, rec_end, &len);
    if (!p || len > uint64_t(end - p)) return fail_field(ST_ERR_MALFORMED, fs, "length past the end", np, k);
    const uint8_t* q = p + len;
    const int taken = Inline ? inline_child(k, child, p, q) : kNotTaken;
    if (taken == kFailed) return nullptr;
    if (taken == kNotTaken && !parse_message(child, p, q, 0)) return nullptr;
    // A child with no singular slots has nothing to check at its end
    // (the key says so: no load of its NodePlan).
    if (k.child_singular()) {
      if (!end_element(child, fs)) return nullptr;
    } else {
      counts[size_t(child)]++;
    }
    return q;
  }

  // inline_child takes the fields of one element of child, the child of
  // message field k, at [p, q) without a walk of its own (no call, no tag
  // lookup per field) when they are in the form every serializer writes
  // for k.child_shape: a map entry's key, then its value (inline_entry),
  // or one packed run filling the message (inline_list). It returns
  // kNotTaken, having stored nothing, when they are not
  // (the walk then takes them: any order, repeats, unknown fields, a
  // longer tag or length), kTaken when it took them, kFailed on an error
  // (reported as the walk would). On tf.Examples and ELWC, where a
  // feature is a map entry holding a Feature holding a list, callgrind
  // (lent buffers, AVX2 path) counted 9% fewer instructions; recipe and
  // sparse nested records, with no such fields, 0.5-0.8% more (the code
  // around the walk's switch), which the separate case for shaped keys
  // (FieldKey::kShaped) keeps at that: a test in the message case cost
  // them 1.4-2.5%.
  enum { kNotTaken, kTaken, kFailed };
  __attribute__((always_inline)) inline int inline_child(const FieldKey& k, int32_t child, const uint8_t* p, const uint8_t* q) {
    return k.child_shape == FieldKey::kShapeEntry ? inline_entry(child, p, q) : inline_list(child, p, q);
  }

  // inline_list: the tag (one byte) and length (one byte) of one packed
  // run, the run to q.
  __attribute__((always_inline)) inline int inline_list(int32_t child, const uint8_t* p, const uint8_t* q) {
    const size_t n = size_t(q - p);
    if (n < 2 || p[0] >= 0x80 || p[1] >= 0x80 || p[1] != n - 2) return kNotTaken;
    const NodePlan& cnp = plan->nodes[size_t(child)];
    const FieldKey& ck = cnp.tags->by_tag[p[0]];
    if (!(ck.type & FieldKey::kPacked)) return kNotTaken;  // a tag of no field has type 0
    Slot& cs = slots[size_t(cnp.slot_base + ck.field)];
    catch_up<kRootPlain>(ck, cnp, cs, child, counts[size_t(child)]);
    return packed(ck, cs, cnp, p + 2, q, p) ? kTaken : kFailed;
  }

  // inline_entry: the key's tag (field 1), its length (one byte) and
  // bytes, the value's tag (field 2) and length, the value to q.
  __attribute__((always_inline)) inline int inline_entry(int32_t child, const uint8_t* p, const uint8_t* q) {
    const size_t n = size_t(q - p);
    if (n < 4 || p[0] != ((1u << 3) | W_LEN) || p[1] >= 0x80 || size_t(p[1]) + 4 > n || p[2 + p[1]] != ((2u << 3) | W_LEN)) return kNotTaken;
    const uint8_t* v = p + 2 + p[1];  // the value's tag
    uint64_t vn;
    const uint8_t* vb = read_varint_lim(v + 1, q, rec_end, &vn);
    if (!vb || vn != uint64_t(q - vb)) return kNotTaken;
    const NodePlan& cnp = plan->nodes[size_t(child)];
    const int64_t idx = counts[size_t(child)];
    const FieldKey& kk = cnp.tags->by_tag[(1u << 3) | W_LEN];
    Slot& ks = slots[size_t(cnp.slot_base + kk.field)];
    if (!string_field(kk, cnp, ks, child, catch_up<kRootPlain>(kk, cnp, ks, child, idx), p + 1, q, p)) return kFailed;
    const FieldKey& vk = cnp.tags->by_tag[(2u << 3) | W_LEN];
    Slot& vs = slots[size_t(cnp.slot_base + vk.field)];
    return message_field<false>(vk, cnp, vs, child, catch_up<kRootPlain>(vk, cnp, vs, child, idx), v + 1, q, v) ? kTaken : kFailed;
  }

  // parse_message decodes the fields of one element of node from [p, end).
  // group is the field number of the group being parsed, or 0 for a
  // length-delimited message. It returns the position after the message
  // (after the end-group tag for a group), or nullptr on error.
  // Root: how the splits of the records' own list fields are written
  // (RootSplits) when node is the root; nested nodes' from 0, or from
  // their split_base when placed by record (place_exact_part).
  // InGroup: node is a group's, ended by its end-group tag (group's
  // number); a length-delimited message's walk ignores group and keeps
  // no register or stack slot for it (2.5% of the instructions on
  // tf.Examples, a call per submessage).
  template <RootSplits Root = kRootPlain, bool InGroup = false>
  const uint8_t* parse_message(int32_t node, const uint8_t* p, const uint8_t* end, uint64_t group) {
    if (!InGroup) group = 0;  // a constant: no field number is 0
    const NodePlan& np = plan->nodes[size_t(node)];
    // The element's index moves only when it ends (its parent's
    // end_element): read once, not at each field.
    const int64_t elem = counts[size_t(node)];
    while (p < end) {
      // Read through np at each field rather than kept in registers: the
      // loop has few to spare (on recipe records, +5% instructions).
      const TagTable& tags = *np.tags;
      const uint8_t* fs = p;
      prefetch_input(p);
      const FieldKey* key;
      // Fast path: a one-byte tag (fields 1..15), or a two-byte one
      // (16..2047), of a projected field with its own wire type (or a
      // repeated scalar's packed form), resolved by one table load, of
      // the field's key itself, whose type says which (kPacked). Anything
      // else (other fields, other wire types, longer or malformed tags)
      // takes the general path, which checks the wire type against the
      // key's. Marked likely, the one-byte case falls through to the
      // field's handling instead of jumping out and back, two taken
      // branches a field: on an Intel Xeon (model 207) the engine alone,
      // cache-resident, pinned, eight alternating pairs, tf.Examples 566
      // -> 589 MB per CPU-second and elwc 506 -> 546; the bench's 32 MB
      // (ours-1t, eight pairs, median of the fastest calls) tfexample
      // 493 -> 528, elwc 447 -> 498, recipe 650 -> 701, the rest the same
      // or a little faster.
      if (__builtin_expect(*p < 0x80, 1)) {
        key = &tags.by_tag[*p];
        if (__builtin_expect(key->field >= 0, 1)) {
          p++;
          goto field;
        }
      } else if (end - p >= 2 && p[1] < 0x80) {
        const uint32_t t = (uint32_t(*p) & 0x7f) | (uint32_t(p[1]) << 7);
        if (t < tags.by_tag2.size() && (key = &tags.by_tag2[t])->field >= 0) {
          p += 2;
          goto field;
        }
      }
      {
      uint64_t tag;
      const uint8_t* start = p;
      p = read_varint_lim(p, end, rec_end, &tag);
      if (!p) return fail(ST_ERR_MALFORMED, fs, varint_failure(start, end, true), np.path);
      if ((tag >> 3) == 0 || (tag >> 3) > kMaxFieldNumber) return fail(ST_ERR_MALFORMED, fs, "invalid field number", np.path);
      const uint64_t num = tag >> 3;
      const uint32_t wt = uint32_t(tag & 7);
      if (wt == W_EGROUP) {
        if (group == num) return p;
        return fail(ST_ERR_MALFORMED, fs, "unexpected end-group tag", np.path);
      }
      if (wt > W_I32) return fail(ST_ERR_MALFORMED, fs, "invalid wire type", np.path);
      const int32_t fi = np.lookup(num);
      if (fi < 0) {
        p = skip_field(p, end, wt, num, np.depth, fs, np);
        if (!p) return nullptr;
        continue;
      }
      key = &tags.keys[size_t(fi)];
      if (wt != key->wire) {
        if (wt != W_LEN || !key->packable()) {
          return fail_field(ST_ERR_WIRE_TYPE, fs, "wrong wire type", np, *key);
        }
        packed_key = key->as_packed();  // as the tag tables hold it
        key = &packed_key;
      }
      }
    field:
      // k is what each occurrence reads; its FieldPlan, only what
      // errors, defaults and oneofs need.
      const FieldKey& k = *key;
      Slot& s = slots[size_t(np.slot_base + k.field)];
      const bool fresh = catch_up<Root>(k, np, s, node, elem);
      if (k.oneof()) {
        const FieldPlan& f = np.fields[size_t(k.field)];
        OneofMark& m = oneof_marks[size_t(f.oneof_id)];
        if (m.element == elem && m.member != f.number) clear_oneof(node, np, f);
        m.element = elem;
        m.member = f.number;
      }
      switch (k.type) {
        case T_DOUBLE | FieldKey::kPacked: case T_FLOAT | FieldKey::kPacked: case T_INT64 | FieldKey::kPacked:
        case T_UINT64 | FieldKey::kPacked: case T_INT32 | FieldKey::kPacked: case T_FIXED64 | FieldKey::kPacked:
        case T_FIXED32 | FieldKey::kPacked: case T_BOOL | FieldKey::kPacked: case T_UINT32 | FieldKey::kPacked:
        case T_ENUM | FieldKey::kPacked: case T_SFIXED32 | FieldKey::kPacked: case T_SFIXED64 | FieldKey::kPacked:
        case T_SINT32 | FieldKey::kPacked: case T_SINT64 | FieldKey::kPacked: {
          uint64_t len;
          p = read_varint_lim(p, end, rec_end, &len);
          if (!p || len > uint64_t(end - p)) return fail_field(ST_ERR_MALFORMED, fs, "length past the end", np, k);
          p = packed(k, s, np, p, p + len, fs);
          if (!p) return nullptr;
          continue;
        }
        case T_INT64: case T_UINT64: p = varint_field<uint64_t>(k, np, s, node, fresh, p, end, fs, as_u64); break;
        case T_INT32: case T_UINT32: case T_ENUM: p = varint_field<uint32_t>(k, np, s, node, fresh, p, end, fs, as_u32); break;
        case T_SINT32: p = varint_field<int32_t>(k, np, s, node, fresh, p, end, fs, zigzag32); break;
        case T_SINT64: p = varint_field<int64_t>(k, np, s, node, fresh, p, end, fs, zigzag64); break;
        case T_BOOL: p = varint_field<uint8_t>(k, np, s, node, fresh, p, end, fs, as_bool); break;
        case T_DOUBLE: case T_FIXED64: case T_SFIXED64: p = fixed_field<uint64_t>(k, np, s, node, fresh, p, end, fs, "truncated fixed64"); break;
        case T_FLOAT: case T_FIXED32: case T_SFIXED32: p = fixed_field<uint32_t>(k, np, s, node, fresh, p, end, fs, "truncated fixed32"); break;
        case T_STRING: case T_BYTES: p = string_field(k, np, s, node, fresh, p, end, fs); break;
        default:  // parse_plan admits no other type
          __builtin_unreachable();
        // Nesting is the child's depth in the plan (a tree), checked
        // against the limit when the plan was read. A group and a message
        // take cases of their own: no test of the type for either.
        case T_GROUP: {
          if (k.too_deep()) return fail_field(ST_ERR_DEPTH, fs, "nesting deeper than the limit", np, k);
          const int32_t child = open_child(k, s, node, fresh);
          p = parse_message<kRootPlain, true>(child, p, end, np.fields[size_t(k.field)].number);
          if (!p) return nullptr;
          if (!end_element(child, fs)) return nullptr;
          break;
        }
        case T_MESSAGE: p = message_field<false>(k, np, s, node, fresh, p, end, fs); break;
        case T_MESSAGE | FieldKey::kShaped: p = message_field<true>(k, np, s, node, fresh, p, end, fs); break;
      }
      if (!p) return nullptr;
    }
    if (InGroup) return fail(ST_ERR_MALFORMED, end, "group not terminated", np.path);
    return p;
  }

  // ask_handover asks this decoder, which another thread may be running,
  // to count its records' own splits from base[p] (per partition) from
  // its next record on. It returns false when the decoder had already
  // finished (or failed) and will not take it.
  bool ask_handover(const int64_t* base) {
    handover_base = base;
    int32_t s = kHandoverOpen;
    return handover.compare_exchange_strong(s, kHandoverAsked, std::memory_order_release, std::memory_order_relaxed);
  }

  // take_handover switches this decoder to the bases asked for, between
  // two records: each record part's last split written (which the walk
  // may read back) is rebased here, those before it are left to the
  // asker (handover_fill), and every later one is written based.
  void take_handover() {
    handover_fill.assign(record_parts.size(), 0);
    for (size_t j = 0; j < record_parts.size(); j++) {
      const size_t p = size_t(record_parts[j]);
      Buf& sp = parts[p];
      const size_t m = sp.len / 8;  // >= 1: the leading split
      split_base[p] = handover_base[p];
      const int64_t v = (deferring ? deferred[j].last : sp.i64(m - 1)) + split_base[p];
      memcpy(sp.p + (m - 1) * 8, &v, 8);
      handover_fill[j] = m - 1;
    }
    if (deferring) deferred_walk_s = seconds_since(run_start);
    deferring = false;
    handover.store(kHandoverTaken, std::memory_order_release);
  }

  // handover_answer waits until this decoder, asked, has taken the
  // hand-over or ended without it (or given_up() tells that it never
  // will run), and returns whether it took it.
  template <class GivenUp>
  bool handover_answer(const GivenUp& given_up) {
    for (int spins = 0;; spins++) {
      const int32_t s = handover.load(std::memory_order_acquire);
      if (s != kHandoverAsked) return s == kHandoverTaken;
      if (given_up()) {
        // Withdraw the request; the decoder may be taking it right now.
        int32_t asked = kHandoverAsked;
        if (handover.compare_exchange_strong(asked, kHandoverClosed, std::memory_order_acq_rel)) return false;
        continue;
      }
      wait_for_answer(spins);
    }
  }

  // run decodes records [lo, run_hi) (set before the run; a split lowers
  // it); get(i, &ptr, &len) returns record i.
  // A hand-over asked for is taken before the next record or, asked for
  // after the last, before finish writes the last splits; a decoder that
  // fails closes it untaken.
  template <class Get>
  void run(int64_t lo, const Get& get) {
    run_tier = packed_tier();
    if (record_parts.empty()) {
      walk<kPlain>(lo, get);
      end_splitting();
    } else {
      if (defer_splits) {
        deferring = true;
        deferred.clear();
        deferred.resize(record_parts.size());
        deferred_walk_bytes = 0;
        deferred_walk_s = deferred_write_s = 0;
        run_start = std::chrono::steady_clock::now();
        walk<kDeferring>(lo, get);
      } else {
        walk<kWatching>(lo, get);
      }
      end_splitting();
      int32_t s = kHandoverOpen;
      if (!handover.compare_exchange_strong(s, kHandoverClosed, std::memory_order_acq_rel) && s == kHandoverAsked) {
        if (code == ST_OK) {
          take_handover();
        } else {
          handover.store(kHandoverClosed, std::memory_order_release);
        }
      }
      // Not taken: the walk ended before the chunks before it did. The
      // splits stay in the log until they have (adopt_pending): whoever
      // settles the chunk before this one writes them based (Handovers,
      // adopt_pending_splits), while this decoder's thread splits a chunk
      // still walking. Written here, counting from 0, they took a pass
      // over most of the output on wide records and the close-up another
      // to rebase them, while the chunk before walked on: on wide sparse
      // records in 8 MB batches on two threads, a batch in six or so
      // whose first chunk ran slow took 65-88 ms against 35-45.
      if (deferring && code == ST_OK) {
        deferred_walk_s = seconds_since(run_start);
        pending_upto.resize(record_parts.size());
        for (size_t j = 0; j < record_parts.size(); j++) pending_upto[j] = parts[size_t(record_parts[j])].len / 8;
        adopt_pending = true;
      }
      deferring = false;
    }
    if (code == ST_OK) finish();
  }

 private:
  // end_splitting closes the decoder to splits once its walk has ended,
  // declining a split asked for and not yet answered (its asker waits on
  // the answer).
  void end_splitting() {
    if (split.exchange(kSplitClosed, std::memory_order_acq_rel) == kSplitAsked) {
      split_tail->split_answer.store(kSplitDeclined, std::memory_order_release);
    }
  }

  // slow_down is the test's slow walk (slow_walk).
  void slow_down();

  // walk decodes records [lo, run_hi), the end lowered by a split on the
  // way: kPlain, with no hand-over to watch
  // for (the first chunk, one thread, no lent buffers); kWatching, taking
  // one when asked and going on based; kDeferring, the same, deferring
  // the records' own splits until then (defer_splits); kBased, after it.
  enum WalkMode { kPlain, kWatching, kDeferring, kBased };
  template <WalkMode Mode, class Get>
  void walk(int64_t lo, const Get& get) {
    for (int64_t i = lo; i < run_hi.load(std::memory_order_relaxed); i++) {
      if (((i - lo) & 63) == 0) {
        if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
          code = ST_ERR_CANCELLED;
          err_record = i;
          err_msg = "decoding cancelled";
          return;
        }
        if (Mode != kPlain) walked.store(i - lo, std::memory_order_relaxed);
      }
      if ((Mode == kWatching || Mode == kDeferring) && handover.load(std::memory_order_acquire) == kHandoverAsked) {
        take_handover();
        return walk<kBased>(i, get);
      }
      if (__builtin_expect(split.load(std::memory_order_acquire) == kSplitAsked, 0)) split_here(i);
      at.store(i, std::memory_order_relaxed);
      if (__builtin_expect(slow_walk, 0)) slow_down();
      const uint8_t* rec;
      size_t len;
      get(i, &rec, &len);
      if (Mode == kDeferring) deferred_walk_bytes += int64_t(len);
      static const uint8_t empty[1] = {0};
      if (!rec) rec = empty;  // a zero-length record may come with a null pointer
      rec_start = rec;
      rec_end = rec + len;
      constexpr RootSplits root = Mode == kBased ? kRootBased : Mode == kDeferring ? kRootDeferred : kRootPlain;
      if (!parse_message<root>(0, rec, rec + len, 0) || !end_element(0, rec + len)) {
        err_record = i;
        return;
      }
    }
  }
};

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_WALKER_H_
