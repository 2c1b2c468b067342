// Output buffers: Buf (growable, or a stretch of a caller's buffer) and
// Column (values, string offsets).
//
// Part of the engine (engine.cc), which includes it once after the
// standard headers it relies on: the engine is one translation unit, so
// that the record walker and the wire decoders inline into each other.
// Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_COLUMNS_H_
#define STRUCTTENSOR_NATIVE_ENGINE_COLUMNS_H_

namespace {

// ---------------------------------------------------------------------
// Output buffers.

// Buf is a growable byte buffer (malloc-based, so a column can grow
// without zero-filling the way std::vector::resize would). It may instead
// write into a caller's buffer (st_decode_contiguous_into): such a buffer
// is never freed or reallocated here; outgrowing it moves the data to
// memory of the engine's own.
// lent_outgrown counts the lent buffers (or threads' stretches of them)
// that outputs outgrew, moving to engine memory (st_test_lent_outgrown).
std::atomic<int64_t> lent_outgrown{0};

struct Buf {
  uint8_t* p = nullptr;
  size_t len = 0;
  size_t cap = 0;
  bool external = false;  // p belongs to the caller
  // A row-splits buffer of one chunk of a batch decoded on several
  // threads, whose last split is where the next chunk's leading 0 is
  // (Decoder::attach_part), leaves it out (Decoder::end_splits holds it).
  // In the padding after external: a Buf stays 32 bytes, two to a cache
  // line, for the hundreds of partitions a wide record walk touches.
  bool end_elsewhere = false;
  // A nested list field's splits placed by record count from the
  // decoder's split_base for them (Decoder::place_exact_part): read on
  // the line a fill touches anyway, so that a fill of splits counting
  // from 0 (every one on one thread) does not load the base, a line
  // further on. In the padding too.
  bool based = false;
  // The index, among the decoder's records' own list fields placed by
  // record (Decoder::record_parts), of the field whose splits these are,
  // or -1: what a fill of them deferred logs (Decoder::defer_splits). In
  // the padding too, on the line a fill touches anyway.
  int32_t record_part = -1;

  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf(Buf&& o) noexcept
      : p(o.p), len(o.len), cap(o.cap), external(o.external), end_elsewhere(o.end_elsewhere), based(o.based),
        record_part(o.record_part) {
    o.p = nullptr;
    o.len = o.cap = 0;
    o.external = false;
  }
  ~Buf() {
    if (!external) free(p);
  }
  // release frees the memory (the buffer reads as empty afterwards).
  void release() {
    if (!external) free(p);
    p = nullptr;
    len = cap = 0;
    external = false;
  }
  // attach makes the caller's buffer of cap bytes the storage.
  void attach(void* q, size_t c) {
    release();
    p = static_cast<uint8_t*>(q);
    cap = c;
    external = true;
  }

  void grow(size_t need) {
    size_t nc = cap ? cap : 64;
    while (nc < need) nc *= 2;
    if (external) {
      lent_outgrown.fetch_add(1, std::memory_order_relaxed);
      void* q = malloc(nc);
      if (!q) throw std::bad_alloc();
      if (len) memcpy(q, p, len);
      p = static_cast<uint8_t*>(q);
      external = false;
    } else {
      void* q = realloc(p, nc);
      if (!q) throw std::bad_alloc();
      p = static_cast<uint8_t*>(q);
    }
    cap = nc;
  }
  void reserve_more(size_t n) {
    if (len + n > cap) grow(len + n);
  }
  template <class T>
  void push(T v) {
    if (len + sizeof(T) > cap) grow(len + sizeof(T));
    memcpy(p + len, &v, sizeof(T));
    len += sizeof(T);
  }
  void append(const void* s, size_t n) {
    if (len + n > cap) grow(len + n);
    if (n) memcpy(p + len, s, n);
    len += n;
  }
  // append_short is append for the short runs of wire data (keys, small
  // strings, short packed lists) that dominate: when the source may be
  // read 32 bytes on (up to readable, the end of the record), it copies a
  // fixed 32 bytes, inline, instead of calling memcpy for n. The bytes
  // past n land in spare capacity and are overwritten or never read.
  __attribute__((always_inline)) void append_short(const uint8_t* s, size_t n, const uint8_t* readable) {
    // Only within capacity: growing for the slack would abandon an exactly
    // sized lent buffer (Buf::external) near its end.
    if (n <= 32 && readable - s >= 32 && len + 32 <= cap) {
      memcpy(p + len, s, 32);
      len += n;
      return;
    }
    // Near the record's end: up to 16 bytes by two loads that may overlap,
    // within the source, still inline.
    if (n <= 16 && len + 16 <= cap) {
      copy_upto16(p + len, s, n);
      len += n;
      return;
    }
    append(s, n);
  }
  // copy_upto16 copies n <= 16 bytes with two loads and two stores of 8,
  // 4, 2 or 1 bytes each, which overlap when n is not their sum.
  static void copy_upto16(uint8_t* d, const uint8_t* s, size_t n) {
    if (n >= 8) {
      copy_ends<uint64_t>(d, s, n);
    } else if (n >= 4) {
      copy_ends<uint32_t>(d, s, n);
    } else if (n >= 2) {
      copy_ends<uint16_t>(d, s, n);
    } else if (n == 1) {
      d[0] = s[0];
    }
  }
  // copy_ends copies n bytes, sizeof(T) <= n <= 2 * sizeof(T): the first
  // and the last sizeof(T), both loaded before either is stored.
  template <class T>
  static void copy_ends(uint8_t* d, const uint8_t* s, size_t n) {
    T a, b;
    memcpy(&a, s, sizeof(T));
    memcpy(&b, s + n - sizeof(T), sizeof(T));
    memcpy(d, &a, sizeof(T));
    memcpy(d + n - sizeof(T), &b, sizeof(T));
  }
  int64_t i64(size_t i) const {
    int64_t v;
    memcpy(&v, p + i * 8, 8);
    return v;
  }
  int64_t last_i64() const { return i64(len / 8 - 1); }
};
static_assert(sizeof(void*) != 8 || sizeof(Buf) == 32, "a Buf is 32 bytes, two to a cache line");

struct Column {
  // n first, then the values' buffer: what storing a value touches lies
  // in one 32-byte stretch, which a 96-byte column in an array never
  // splits across cache lines.
  int64_t n = 0;  // number of values, kept beside the buffers for speed
  Buf vals;       // values, or string bytes
  Buf offs;       // strings only: int64 offsets, starting with 0
  uint8_t dtype = 0;
  uint8_t shift = 0;
  // utf8 is what a decode that marks strings (Decoder::mark_utf8) knows
  // of the strings of a string field's column: each valid UTF-8 on its
  // own (kUTF8Valid), one not (kUTF8Invalid), or unknown: a string was
  // taken back (a singular field set again, a oneof's other member)
  // after one was found invalid, which may have been that one. In this
  // order: the state of chunks together is the largest of theirs.
  enum : uint8_t { kUTF8Valid, kUTF8Invalid, kUTF8Unknown };
  uint8_t utf8 = kUTF8Valid;

  int64_t count() const {
    return n;
  }
  // utf8_invalid records that a string stored was not valid UTF-8.
  void utf8_invalid() {
    if (utf8 == kUTF8Valid) utf8 = kUTF8Invalid;
  }
  void truncate(int64_t m) {
    if (utf8 == kUTF8Invalid) utf8 = kUTF8Unknown;
    if (dtype == ST_STRING) {
      offs.len = size_t(m + 1) * 8;
      vals.len = size_t(offs.i64(size_t(m)));
    } else {
      vals.len = size_t(m) << shift;
    }
    n = m;
  }
  template <class T>
  void push(T v) {
    vals.push<T>(v);
    n++;
  }
  // drop_last removes the last value (to overwrite a singular field).
  void drop_last() { truncate(count() - 1); }
  __attribute__((always_inline)) void push_string(const uint8_t* s, size_t len, const uint8_t* readable) {
    vals.append_short(s, len, readable);
    offs.push<int64_t>(int64_t(vals.len));
    n++;
  }
  void push_string(const uint8_t* s, size_t len) {
    vals.append(s, len);
    offs.push<int64_t>(int64_t(vals.len));
    n++;
  }
};

// Slot holds the outputs of one field in a Decoder: its partition's row
// splits (a list field), its column (a scalar) and what its splits count
// from (Decoder::split_base). Storing a value of a list scalar, the common
// case of sparse and wide records, touches the splits' buffer, the count
// and the values' buffer: side by side in the slot's first cache line,
// one first-level miss where the two arrays they were in before (columns,
// partitions) took two.
struct alignas(64) Slot {
  Buf part;
  Column col;
  int64_t split_base = 0;
};
static_assert(sizeof(void*) != 8 || (offsetof(Slot, col) + offsetof(Column, vals) + 3 * sizeof(size_t) <= 64 &&
                                     sizeof(Slot) == 128),
              "a slot's splits buffer, count and values' buffer share its first cache line");

// SlotArray presents one member of the slots as an array indexed by
// column or partition (st_plan::col_slot, part_slot): what the walk does
// not reach through a FieldKey's slot.
template <class T, T Slot::*Member>
class SlotArray {
 public:
  SlotArray() = default;
  SlotArray(Slot* slots, const std::vector<int32_t>& at) : slots_(slots), at_(at.data()), n_(at.size()) {}
  T& operator[](size_t i) const { return slots_[at_[i]].*Member; }
  size_t size() const { return n_; }
  struct iterator {
    const SlotArray* a;
    size_t i;
    T& operator*() const { return (*a)[i]; }
    iterator& operator++() {
      i++;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i != o.i; }
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, n_}; }

 private:
  Slot* slots_ = nullptr;
  const int32_t* at_ = nullptr;
  size_t n_ = 0;
};

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_COLUMNS_H_
