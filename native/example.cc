// The tf.Example and tf.SequenceExample decoder: serialized records to one
// column per feature in one pass per record. See
// include/structtensor_example.h for the C ABI and doc.go for the design
// and the feature plan's byte form.
//
// Plain C++17 with no dependency beyond the standard library, like
// engine.cc, with which it builds into the same library.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "include/structtensor_example.h"
#include "include/structtensor_native.h"
#include "engine_shared.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define STEX_X86_64 1
#include <immintrin.h>
#else
#define STEX_X86_64 0
#endif

namespace {

// Wire types.
enum : uint32_t { XW_VARINT = 0, XW_I64 = 1, XW_LEN = 2, XW_SGROUP = 3, XW_EGROUP = 4, XW_I32 = 5 };

// Slot modes (part of the byte form).
enum : uint32_t {
  XM_LIST = 0,    // any number of values (per record, or per step)
  XM_FIXED = 1,   // exactly count values (per record, or per step)
  XM_STRIDE = 2,  // a multiple of count values per record (features only)
};
// Slot flags.
enum : uint32_t { XF_DEFAULT = 1, XF_REQUIRED_LIST = 2 };
// Sections.
enum : uint32_t { XS_FEATURES = 0, XS_FEATURE_LISTS = 1 };
// Feature list kinds, numbered as the fields of tensorflow.Feature.
enum : int { K_NONE = 0, K_BYTES = 1, K_FLOAT = 2, K_INT64 = 3 };

constexpr int kMaxSkipDepth = 100;
constexpr uint64_t kMaxCount = uint64_t(1) << 31;

struct Slot {
  std::string key;
  uint32_t section = 0;
  int32_t dtype = 0;  // ST_INT64, ST_FLOAT32, ST_STRING
  uint32_t mode = 0;
  uint64_t count = 0;
  uint32_t flags = 0;
  int kind = 0;  // the list kind the dtype reads
  std::vector<int64_t> def_i64;
  std::vector<float> def_f32;
  std::vector<uint8_t> def_bytes;
  std::vector<int64_t> def_offs;  // def_bytes offsets, count+1
  int32_t next_same_key = -1;
  // How a feature (section 0) slot's values are appended during the
  // walk: one of the Fast* emitters, chosen when the plan is built, so
  // that a record's features in any order cost one indirect branch each,
  // not a branch on kind and mode apiece.
  uint8_t fast = 0;
};

enum : uint8_t { FAST_GENERIC = 0, FAST_LIST_I64, FAST_LIST_F32, FAST_LIST_BYTES, FAST_FIXED_I64, FAST_FIXED_F32, FAST_FIXED_BYTES };

inline uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// KeyWords are two words that, with its length, identify a key of up to
// 16 bytes exactly (its first and last eight bytes, or a shorter key's
// bytes in full); a longer key also needs its middle compared. They are
// read with no load past the key.
struct KeyWords {
  uint64_t a, b;
};

inline KeyWords key_words(const uint8_t* p, size_t n) {
  if (n >= 8) return {load_u64(p), load_u64(p + n - 8)};
  if (n >= 4) return {load_u32(p), load_u32(p + n - 4)};
  if (n > 0) return {uint64_t(p[0]) | uint64_t(p[n / 2]) << 8 | uint64_t(p[n - 1]) << 16, 0};
  return {0, 0};
}

// KeyEntry is a planned key in a section's key table.
struct KeyEntry {
  KeyWords w{0, 0};
  uint64_t n = 0;
  int32_t slot = -1;  // the first slot of the key; -1 for an empty entry
};

// Buf is a growable array of a plain type whose growth neither
// initialises nor copies element by element: the output columns, written
// once per value. Growth doubles, so a chunk reused across batches stops
// growing after the first.
template <class T>
struct Buf {
  T* p = nullptr;
  size_t n = 0, cap = 0;

  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf(Buf&& o) noexcept : p(o.p), n(o.n), cap(o.cap) { o.p = nullptr, o.n = o.cap = 0; }
  ~Buf() { std::free(p); }

  size_t size() const { return n; }
  const T* data() const { return p; }
  T back() const { return p[n - 1]; }
  T operator[](size_t i) const { return p[i]; }
  void clear() { n = 0; }
  // reset0 empties the array to the one element 0 (splits, offsets).
  void reset0() {
    n = 0;
    push(T(0));
  }
  void truncate(size_t m) {
    if (m < n) n = m;
  }
  // grow appends k elements, uninitialised, and returns the first.
  inline T* grow(size_t k) {
    if (__builtin_expect(cap - n < k, 0)) more(k);
    T* r = p + n;
    n += k;
    return r;
  }
  // room returns where the next k elements go, without adding them;
  // commit adds the first k written there.
  inline T* room(size_t k) {
    if (__builtin_expect(cap - n < k, 0)) more(k);
    return p + n;
  }
  inline void commit(size_t k) { n += k; }
  inline void push(T v) {
    if (__builtin_expect(n == cap, 0)) more(1);
    p[n++] = v;
  }
  void append(const T* s, size_t k) {
    if (k) std::memcpy(grow(k), s, k * sizeof(T));
  }
  // append_short appends k elements from s, where the bytes from s to
  // limit may be read: a short run (the usual list) is copied in 16-byte
  // steps inline, which may read past the run (not past limit) and write
  // past the new end into the slack that more keeps; a long one, or one
  // too near limit, by memcpy.
  inline void append_short(const T* s, size_t k, const uint8_t* limit) {
    size_t bytes = k * sizeof(T);
    if (bytes <= 64 && limit - reinterpret_cast<const uint8_t*>(s) >= 64) {
      if (__builtin_expect(cap - n < k + kSlack, 0)) more(k + kSlack);
      uint8_t* d = reinterpret_cast<uint8_t*>(p + n);
      const uint8_t* src = reinterpret_cast<const uint8_t*>(s);
      for (size_t i = 0; i < bytes; i += 16) std::memcpy(d + i, src + i, 16);
      n += k;
      return;
    }
    append(s, k);
  }
  // kSlack elements past the end may be written by append_short (64
  // bytes at least).
  static constexpr size_t kSlack = (64 + sizeof(T) - 1) / sizeof(T);
  __attribute__((noinline)) void more(size_t k) {
    size_t c = std::max<size_t>({cap * 2, n + k, 64});
    T* q = static_cast<T*>(std::realloc(p, c * sizeof(T)));
    if (!q) throw std::bad_alloc();
    p = q;
    cap = c;
  }
};

}  // namespace

namespace {
struct Chunk;
}  // namespace

struct st_example_plan {
  // Chunks of freed results, whose buffers the next batch reuses without
  // reallocating or faulting pages in, by the bytes their buffers hold,
  // least first (take_chunk takes the most: a batch's first chunks are
  // its largest, the tails of its splits smaller).
  mutable std::mutex pool_mu;
  mutable std::vector<Chunk*> pool;
  ~st_example_plan();
  // The last batch of at least kHistoryMinBytes: its input and its
  // outputs' sizes (as st_example_result_layout gives them), which guess
  // the next batch's (st_example_lend_sizes).
  mutable std::mutex last_mu;
  mutable int64_t last_bytes = 0, last_records = 0;
  mutable std::vector<int64_t> last_sizes;

  uint32_t kind = 1;  // 1 Example, 2 SequenceExample
  std::vector<Slot> slots;
  // Per section: an open-addressing table of the first slot of each key,
  // hashed with a multiplier chosen when the plan is built so that no two
  // planned keys share an entry (a perfect hash, when one of the tried
  // multipliers gives it): a planned key is found at its first probe, an
  // unknown one at its first empty entry or after a mismatch or two.
  std::vector<KeyEntry> table[2];
  uint64_t mult[2] = {0, 0};
  uint32_t shift[2] = {64, 64};
  uint64_t mask[2] = {0, 0};

  static uint64_t mix(const KeyWords& w, size_t n) { return w.a ^ ((w.b << 29) | (w.b >> 35)) ^ (uint64_t(n) << 56); }

  inline uint64_t home(uint32_t section, const KeyWords& w, size_t n) const {
    return (mix(w, n) * mult[section]) >> shift[section];
  }

  inline int32_t lookup(uint32_t section, const uint8_t* p, size_t n) const {
    const KeyEntry* t = table[section].data();
    if (!t) return -1;
    KeyWords w = key_words(p, n);
    for (uint64_t i = home(section, w, n);; i = (i + 1) & mask[section]) {
      const KeyEntry& e = t[i];
      if (e.slot < 0) return -1;
      if (e.w.a == w.a && e.w.b == w.b && e.n == n &&
          (n <= 16 || std::memcmp(slots[e.slot].key.data() + 8, p + 8, n - 16) == 0))
        return e.slot;
    }
  }

  // The feature (section 0) slots by how a record closes them: lists
  // take their row split, fixed-length ones a check for presence.
  std::vector<int32_t> list_features, fixed_features, feature_lists;
  bool avx512 = false;  // short packed int64 runs take varints64_avx512

  void build_tables();
};

namespace {

void set_error(st_error* err, int32_t code, int64_t record, int64_t offset, const char* fmt, ...) {
  if (!err) return;
  err->code = code;
  err->record = record;
  err->offset = offset;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

bool read_varint_slow(const uint8_t*& p, const uint8_t* end, uint64_t* v);

// varint_word decodes the varint that ends in the first byte of x with
// its top bit clear (stop: the mask of those bytes' top bits, nonzero):
// the bytes up to it, seven bits each, squeezed together without a loop.
// It returns the value and sets *len to its length in bytes.
inline uint64_t varint_word(uint64_t x, uint64_t stop, size_t* len) {
  unsigned last = unsigned(__builtin_ctzll(stop));  // 8i+7 for the i-th byte
  *len = last / 8 + 1;
  x &= (~uint64_t(0) >> (63 - last)) & 0x7f7f7f7f7f7f7f7full;
  x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
  x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
  return (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
}

// read_varint reads a varint. A one-byte one (tags, lengths, small
// values: most of a tf.Example) takes the first branch; one of up to
// eight bytes with eight bytes left to read is decoded from one load.
inline __attribute__((always_inline)) bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  if (__builtin_expect(end - p >= 8, 1)) {
    if (p[0] < 0x80) {
      *v = p[0];
      p += 1;
      return true;
    }
    uint64_t x = load_u64(p);
    uint64_t stop = ~x & 0x8080808080808080ull;
    if (__builtin_expect(stop != 0, 1)) {
      size_t len;
      *v = varint_word(x, stop, &len);
      p += len;
      return true;
    }
  } else if (p < end && p[0] < 0x80) {
    *v = p[0];
    p += 1;
    return true;
  }
  return read_varint_slow(p, end, v);
}

__attribute__((noinline)) bool read_varint_slow(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  uint64_t r = 0;
  for (int i = 0; i < 10; i++) {
    if (p >= end) return false;
    uint8_t b = *p++;
    if (i == 9 && b > 1) return false;
    r |= uint64_t(b & 0x7f) << (7 * i);
    if (b < 0x80) {
      *v = r;
      return true;
    }
  }
  return false;
}

// read_len reads a length prefix and checks that the bytes it covers lie
// before end.
inline __attribute__((always_inline)) bool read_len(const uint8_t*& p, const uint8_t* end, const uint8_t** start, size_t* n) {
  uint64_t l;
  if (!read_varint(p, end, &l) || l > uint64_t(end - p)) return false;
  *start = p;
  *n = size_t(l);
  p += l;
  return true;
}

// skip_field skips the value of a field with the given tag, groups
// included (to a matching end-group tag, nesting bounded).
bool skip_field(const uint8_t*& p, const uint8_t* end, uint64_t tag, int depth) {
  uint64_t v;
  switch (uint32_t(tag & 7)) {
    case XW_VARINT:
      return read_varint(p, end, &v);
    case XW_I64:
      if (end - p < 8) return false;
      p += 8;
      return true;
    case XW_I32:
      if (end - p < 4) return false;
      p += 4;
      return true;
    case XW_LEN: {
      const uint8_t* s;
      size_t n;
      return read_len(p, end, &s, &n);
    }
    case XW_SGROUP: {
      if (depth >= kMaxSkipDepth) return false;
      for (;;) {
        uint64_t t;
        if (!read_varint(p, end, &t) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff) return false;
        if ((t & 7) == XW_EGROUP) return (t >> 3) == (tag >> 3);
        if (!skip_field(p, end, t, depth + 1)) return false;
      }
    }
    default:
      return false;
  }
}

// read_tag reads a tag and rejects field number 0 and out of range numbers.
inline __attribute__((always_inline)) bool read_tag(const uint8_t*& p, const uint8_t* end, uint64_t* tag) {
  return read_varint(p, end, tag) && (*tag >> 3) != 0 && (*tag >> 3) <= 0x1fffffff &&
         (*tag & 7) != XW_EGROUP && (*tag & 7) <= XW_I32;
}

// count_varints counts the varints of a packed run by their terminating
// bytes (top bit clear), eight bytes at a time.
inline size_t count_varints(const uint8_t* q, size_t n) {
  size_t k = 0, i = 0;
  for (; i + 8 <= n; i += 8) k += (((~load_u64(q + i) & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56;
  for (; i < n; i++) k += q[i] < 0x80;
  return k;
}

// packed_varints decodes the k varints of the packed run [q, qend) into
// dst. While eight bytes are readable (before limit), each value of up
// to eight bytes is decoded from one load with no branch on its length;
// longer values go through read_varint. On a
// malformed run it returns false and sets *bad to where.
inline bool packed_varints(const uint8_t* q, const uint8_t* qend, const uint8_t* limit, size_t k, int64_t* dst,
                           const uint8_t** bad) {
  size_t i = 0;
  // The load may cross qend (not limit, the end of readable memory): a
  // value found to end past qend is left to read_varint, which fails.
  while (i < k && limit - q >= 8) {
    uint64_t x = load_u64(q);
    uint64_t stop = ~x & 0x8080808080808080ull;
    if (__builtin_expect(stop == 0, 0)) break;
    size_t len;
    uint64_t v = varint_word(x, stop, &len);
    if (__builtin_expect(len > size_t(qend - q), 0)) break;
    dst[i++] = int64_t(v);
    q += len;
  }
  for (; i < k; i++) {
    const uint8_t* at = q;
    uint64_t v;
    if (!read_varint(q, qend, &v)) {
      *bad = at;
      return false;
    }
    dst[i] = int64_t(v);
  }
  if (q != qend) {
    *bad = q;
    return false;
  }
  return true;
}

#if STEX_X86_64
// The AVX-512 packed-varint decoder needs VBMI (byte permutes), VBMI2
// (byte compress) and BMI2: Ice Lake and later Intel server cores, AMD
// Zen 4 and later.
#define STEX_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")))

// use_avx512 tells whether short packed int64 runs take the AVX-512
// decoder. STRUCTTENSOR_NATIVE_PORTABLE set to any tier below it ("1",
// "avx2", "bmi2", "scalar"; see packed_tier_of_cpu in engine_wire.h)
// forces the portable one.
bool use_avx512() {
  static const bool on = [] {
    const char* portable = std::getenv("STRUCTTENSOR_NATIVE_PORTABLE");
    if (portable && *portable && std::strcmp(portable, "0") != 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
           __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
  }();
  return on;
}

// varints64_avx512 decodes a whole packed run of at most 64 bytes [q,
// q+n) into dst (room for 64 values) with no branch per value, and
// returns the number of values; or -1 when the run is not for it (a value
// longer than eight bytes, or a last value cut short), which the scalar
// decoder then reads or reports.
//
// One masked load takes the run; the terminating bytes (top bit clear)
// give each value's last byte, and the byte after the previous one its
// first. Eight values at a time, a byte permute gathers each value into
// a 64-bit lane (zero past its last byte), and three shift-and-select
// steps squeeze out the continuation bits: 7 bits per byte -> 14 per 16
// -> 28 per 32 -> 56 per 64.
STEX_AVX512 int varints64_avx512(const uint8_t* q, size_t n, int64_t* dst) {
  alignas(64) static const uint8_t kIota[64] = {
      0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
      44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
  if (n == 0) return 0;
  const uint64_t valid = _bzhi_u64(~uint64_t(0), unsigned(n));
  const __m512i w = _mm512_maskz_loadu_epi8(valid, q);
  const uint64_t cont = _mm512_movepi8_mask(w) & valid;
  const uint64_t stop = ~cont & valid;
  uint64_t run = cont & (cont >> 1);  // eight continuation bytes in a row
  run &= run >> 2;
  run &= run >> 4;
  if (((stop >> (n - 1)) & 1) == 0 || run != 0) return -1;
  const int k = __builtin_popcountll(stop);
  const __m512i iota = _mm512_load_si512(kIota);
  const __m512i last = _mm512_maskz_compress_epi8(stop, iota);                          // value i's last byte
  const __m512i first = _mm512_maskz_compress_epi8(((stop << 1) | 1) & valid, iota);    // value i's first byte
  const __m512i place = _mm512_and_si512(iota, _mm512_set1_epi8(7));                   // byte b of a lane
  const __m512i lane = _mm512_srli_epi16(_mm512_andnot_si512(_mm512_set1_epi8(7), iota), 3);  // lane j of byte 8j+b
  const __m512i low7 = _mm512_set1_epi8(0x7f);
  for (int g = 0; 8 * g < k; g++) {
    const __m512i value = _mm512_add_epi8(_mm512_and_si512(lane, _mm512_set1_epi8(7)), _mm512_set1_epi8(char(8 * g)));
    const __m512i idx = _mm512_add_epi8(_mm512_permutexvar_epi8(value, first), place);
    const __mmask64 in = _mm512_cmple_epu8_mask(idx, _mm512_permutexvar_epi8(value, last));
    __m512i x = _mm512_and_si512(_mm512_maskz_permutexvar_epi8(in, idx, w), low7);
    x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 1), _mm512_set1_epi16(0x007f), 0xe4);
    x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 2), _mm512_set1_epi32(0x3fff), 0xe4);
    x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 4), _mm512_set1_epi64(0x0fffffff), 0xe4);
    const int lanes = k - 8 * g;
    _mm512_mask_storeu_epi64(dst + 8 * g, __mmask8(lanes >= 8 ? 0xff : (1u << lanes) - 1), x);
  }
  return k;
}
#else
bool use_avx512() { return false; }
int varints64_avx512(const uint8_t*, size_t, int64_t*) { return -1; }
#endif

const char* kind_name(int k) {
  switch (k) {
    case K_BYTES: return "bytes_list";
    case K_FLOAT: return "float_list";
    case K_INT64: return "int64_list";
    default: return "no list";
  }
}

// SlotOut is one slot's output in one chunk. Splits start at 0.
struct SlotOut {
  Buf<int64_t> i64;
  Buf<float> f32;
  Buf<uint8_t> bytes;
  Buf<int64_t> offs;
  Buf<int64_t> splits0;
  Buf<int64_t> splits1;

  SlotOut() { reset(); }
  // held returns the bytes the buffers hold, used or not.
  size_t held() const {
    return i64.cap * 8 + f32.cap * 4 + bytes.cap + offs.cap * 8 + splits0.cap * 8 + splits1.cap * 8;
  }
  void reset() {
    i64.clear();
    f32.clear();
    bytes.clear();
    offs.reset0();
    splits0.reset0();
    splits1.reset0();
  }

  int64_t length(int32_t dtype) const {
    switch (dtype) {
      case ST_INT64: return int64_t(i64.size());
      case ST_FLOAT32: return int64_t(f32.size());
      default: return int64_t(offs.size()) - 1;
    }
  }
};

struct Span {
  const uint8_t* p = nullptr;
  size_t n = 0;
};

// SlotState is where a slot's key last occurred in the record being decoded.
struct SlotState {
  int64_t gen = -1;      // the record in which the key was last seen
  Span value;            // the value of its last occurrence
  bool present = false;  // emit found a list in it
};

// The splitting's states, rules and request (engine_shared.h).
using namespace structtensor_engine;

struct ChunkOrder;

// Chunk decodes records [first_rec, run_hi) of a batch into slot outputs
// of its own.
struct alignas(64) Chunk {
  const st_example_plan* plan = nullptr;
  LineVector<SlotOut> out;
  LineVector<SlotState> state;
  const volatile int32_t* cancel = nullptr;
  // Splitting, on several threads (ChunkOrder; the states in
  // engine_shared.h): a thread done with its chunk asks the chunk with
  // the most input left (split kSplitAsked, offering split_tail), which
  // answers between two records (split_here): it gives the second half of
  // its records left to the tail and walks on to the new end, run_hi.
  // at is the record the walk is at, for the asker's choice.
  ChunkOrder* order = nullptr;
  std::atomic<int32_t> split{kSplitClosed};
  std::atomic<int32_t> split_answer{kSplitPending};  // as a tail offered
  Chunk* split_tail = nullptr;
  std::atomic<int64_t> run_hi{0};
  std::atomic<int64_t> at{0};
  bool claimed = false;    // a thread runs it or will (guarded by ChunkOrder::mu)
  bool chunk_failed = false;  // its run ended failed (guarded by ChunkOrder::mu)
  size_t held = 0;         // the bytes its buffers hold, in the plan's pool
  bool slow_walk = false;  // split modes 2 and 3 (split_mode)
  // utf8[s]: every string the chunk holds for slot s is valid UTF-8 on
  // its own, once marked (mark_utf8; one per slot from take_chunk on).
  std::vector<uint8_t> utf8;
  bool marked = false;

  // utf8_strings tells whether every string the chunk holds for slot s
  // is valid UTF-8 on its own (false for a slot of another dtype).
  bool utf8_strings(size_t s) const;
  // mark_utf8 sets utf8 once the walk is over: each thread checks the
  // strings it decoded, rather than the caller all of them after.
  void mark_utf8();

  // split_here answers a split asked for, before record i.
  void split_here(int64_t i);

  // end_splitting closes the chunk to splits as its walk ends, declining
  // one asked for and not answered.
  void end_splitting() {
    if (split.exchange(kSplitClosed, std::memory_order_acq_rel) == kSplitAsked) {
      split_tail->split_answer.store(kSplitDeclined, std::memory_order_release);
    }
  }
  // The error, if any: the first bad record of the chunk.
  st_error err{};
  bool failed = false;
  // The record being decoded, for error offsets.
  int64_t rec = 0;
  int64_t first_rec = 0;  // the chunk's first record
  const uint8_t* rec_start = nullptr;
  const uint8_t* rec_end = nullptr;  // the record's end: readable memory

  bool fail(int32_t code, const uint8_t* at, const char* fmt, ...) {
    failed = true;
    err.code = code;
    err.record = rec;
    err.offset = at ? int64_t(at - rec_start) : -1;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err.message, sizeof err.message, fmt, ap);
    va_end(ap);
    return false;
  }

  // cancelled tells whether the decode was cancelled, checked before
  // record i every 64 records; the chunk then fails at record i.
  bool cancelled(int64_t i) {
    if (!cancel || (i & 63) != 0 || !*cancel) return false;
    failed = true;
    err.code = ST_ERR_CANCELLED;
    err.record = i;
    err.offset = -1;
    std::snprintf(err.message, sizeof err.message, "decoding cancelled");
    return true;
  }

  bool malformed(const uint8_t* at, const char* where) {
    return fail(ST_ERR_MALFORMED, at, "malformed %s", where);
  }

  // walk_map reads the entries of a map<string, Feature> (Features) or
  // map<string, FeatureList> (FeatureLists) message and remembers, for
  // each planned key, the value of its last entry.
  //
  // Direct (the first try at a record) also appends the values of a
  // feature (not a feature list) as soon as its entry is read: an entry
  // of a key seen before in the record takes back the values of the
  // earlier one first. A bad value stops the walk; record then starts
  // over the exact way.
  template <bool Direct>
  bool walk_map(const uint8_t* p, const uint8_t* end, uint32_t section, const char* what) {
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag;
      if (!read_tag(p, end, &tag)) return malformed(at, what);
      if (tag != ((1u << 3) | XW_LEN)) {
        if (!skip_field(p, end, tag, 0)) return malformed(at, what);
        continue;
      }
      const uint8_t* e;
      size_t n;
      if (!read_len(p, end, &e, &n)) return malformed(at, what);
      const uint8_t* eend = e + n;
      const uint8_t* key = e;  // an absent key is ""
      size_t key_n = 0;
      Span value;  // an absent value is an empty message
      value.p = e;
      // The form serializers write: the key (shorter than 128 bytes),
      // then the value, nothing else. Any other form takes the loop.
      if (__builtin_expect(n >= 4 && e[0] == ((1u << 3) | XW_LEN) && e[1] < 0x80 && size_t(e[1]) + 4 <= n, 1) &&
          e[2 + e[1]] == ((2u << 3) | XW_LEN)) {
        const uint8_t* v = e + 3 + e[1];
        uint64_t vn;
        if (read_varint(v, eend, &vn) && vn == uint64_t(eend - v)) {
          key = e + 2;
          key_n = e[1];
          value.p = v;
          value.n = size_t(vn);
          e = eend;
        }
      }
      while (e < eend) {
        const uint8_t* eat = e;
        if (!read_tag(e, eend, &tag)) return malformed(eat, "map entry");
        if (tag == ((1u << 3) | XW_LEN)) {
          if (!read_len(e, eend, &key, &key_n)) return malformed(eat, "map entry key");
        } else if (tag == ((2u << 3) | XW_LEN)) {
          if (!read_len(e, eend, &value.p, &value.n)) return malformed(eat, "map entry value");
        } else if (!skip_field(e, eend, tag, 0)) {
          return malformed(eat, "map entry");
        }
      }
      for (int32_t s = plan->lookup(section, key, key_n); s >= 0; s = plan->slots[s].next_same_key) {
        // For a dense (fixed-length) feature TensorFlow passes over an
        // entry whose Feature is empty, so an earlier entry of the key
        // still counts; for the others the empty Feature is the last
        // word, an empty list.
        // (TensorFlow's SequenceExample parser does not: there an empty
        // Feature of a dense context feature has no values, an error.)
        if (plan->kind == 1 && section == XS_FEATURES && value.n == 0 && plan->slots[s].mode != XM_LIST) continue;
        if (Direct && section == XS_FEATURES) {
          if (state[s].gen == rec) rollback_slot(s);
          state[s].gen = rec;
          state[s].value = value;
          if (!emit_fast(s)) return false;
          continue;
        }
        state[s].gen = rec;
        state[s].value = value;
      }
    }
    return true;
  }

  template <bool Direct>
  bool walk_record(const uint8_t* p, const uint8_t* end) {
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag;
      if (!read_tag(p, end, &tag)) return malformed(at, "record");
      const uint8_t* m;
      size_t n;
      if (tag == ((1u << 3) | XW_LEN)) {
        if (!read_len(p, end, &m, &n)) return malformed(at, "record");
        if (!walk_map<Direct>(m, m + n, XS_FEATURES, plan->kind == 1 ? "features" : "context")) return false;
      } else if (plan->kind == 2 && tag == ((2u << 3) | XW_LEN)) {
        if (!read_len(p, end, &m, &n)) return malformed(at, "record");
        if (!walk_map<Direct>(m, m + n, XS_FEATURE_LISTS, "feature_lists")) return false;
      } else if (!skip_field(p, end, tag, 0)) {
        return malformed(at, "record");
      }
    }
    return true;
  }

  // read_feature finds the list a Feature message holds (the last member
  // of its oneof) and returns its kind (K_NONE for none).
  bool read_feature(const Span& f, const Slot& s, int* kind, const uint8_t** list, size_t* list_n) {
    *kind = K_NONE;
    const uint8_t* p = f.p;
    const uint8_t* end = f.p + f.n;
    // The form serializers write: one list, nothing else.
    if (__builtin_expect(f.n >= 2, 1)) {
      uint8_t t = p[0];
      if (t == ((1u << 3) | XW_LEN) || t == ((2u << 3) | XW_LEN) || t == ((3u << 3) | XW_LEN)) {
        const uint8_t* q = p + 1;
        uint64_t l;
        if (read_varint(q, end, &l) && l == uint64_t(end - q)) {
          *kind = int(t >> 3);
          *list = q;
          *list_n = size_t(l);
          return true;
        }
      }
    }
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag;
      if (!read_tag(p, end, &tag)) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed Feature", s.key.c_str());
      uint64_t field = tag >> 3;
      if ((tag & 7) == XW_LEN && field >= 1 && field <= 3) {
        if (!read_len(p, end, list, list_n))
          return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed Feature", s.key.c_str());
        *kind = int(field);
      } else if (!skip_field(p, end, tag, 0)) {
        return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed Feature", s.key.c_str());
      }
    }
    return true;
  }

  // append_values appends the values of a list message of the slot's kind
  // to o and adds their number to *count.
  bool append_values(const Slot& s, SlotOut& o, const uint8_t* p, size_t n, uint64_t* count) {
    const uint8_t* end = p + n;
    // The form serializers write for numbers: one packed run, nothing
    // else.
    if (s.kind != K_BYTES && n >= 2 && p[0] == ((1u << 3) | XW_LEN)) {
      const uint8_t* q = p + 1;
      uint64_t qn;
      if (read_varint(q, end, &qn) && qn == uint64_t(end - q)) {
        if (s.kind == K_FLOAT) {
          if (qn % 4 == 0) {
            o.f32.append(reinterpret_cast<const float*>(q), qn / 4);
            *count += qn / 4;
            return true;
          }
        } else {
          size_t k = count_varints(q, qn);
          size_t base = o.i64.size();
          const uint8_t* bad = nullptr;
          if (packed_varints(q, end, rec_end, k, o.i64.grow(k), &bad)) {
            *count += k;
            return true;
          }
          o.i64.truncate(base);
        }
      }
    }
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag;
      if (!read_tag(p, end, &tag)) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed %s", s.key.c_str(), kind_name(s.kind));
      if ((tag >> 3) != 1) {
        if (!skip_field(p, end, tag, 0))
          return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed %s", s.key.c_str(), kind_name(s.kind));
        continue;
      }
      uint32_t wt = uint32_t(tag & 7);
      switch (s.kind) {
        case K_INT64:
          if (wt == XW_VARINT) {
            uint64_t v;
            if (!read_varint(p, end, &v)) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed int64_list", s.key.c_str());
            o.i64.push(int64_t(v));
            ++*count;
          } else if (wt == XW_LEN) {
            const uint8_t* q;
            size_t qn;
            if (!read_len(p, end, &q, &qn)) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed int64_list", s.key.c_str());
            size_t k = count_varints(q, qn);
            size_t base = o.i64.size();
            const uint8_t* bad = nullptr;
            if (!packed_varints(q, q + qn, rec_end, k, o.i64.grow(k), &bad)) {
              o.i64.truncate(base);
              return fail(ST_ERR_MALFORMED, bad, "feature \"%s\": malformed packed int64_list", s.key.c_str());
            }
            *count += k;
          } else {
            return fail(ST_ERR_MALFORMED, at, "feature \"%s\": int64_list value with wire type %u", s.key.c_str(), wt);
          }
          break;
        case K_FLOAT:
          if (wt == XW_I32) {
            if (end - p < 4) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed float_list", s.key.c_str());
            float f;
            std::memcpy(&f, p, 4);
            p += 4;
            o.f32.push(f);
            ++*count;
          } else if (wt == XW_LEN) {
            const uint8_t* q;
            size_t qn;
            if (!read_len(p, end, &q, &qn) || qn % 4 != 0)
              return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed packed float_list", s.key.c_str());
            o.f32.append(reinterpret_cast<const float*>(q), qn / 4);
            *count += qn / 4;
          } else {
            return fail(ST_ERR_MALFORMED, at, "feature \"%s\": float_list value with wire type %u", s.key.c_str(), wt);
          }
          break;
        case K_BYTES: {
          if (wt != XW_LEN) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": bytes_list value with wire type %u", s.key.c_str(), wt);
          const uint8_t* q;
          size_t qn;
          if (!read_len(p, end, &q, &qn)) return fail(ST_ERR_MALFORMED, at, "feature \"%s\": malformed bytes_list", s.key.c_str());
          o.bytes.append(q, qn);
          o.offs.push(int64_t(o.bytes.size()));
          ++*count;
          break;
        }
      }
    }
    return true;
  }

  void append_default(const Slot& s, SlotOut& o) {
    switch (s.dtype) {
      case ST_INT64: o.i64.append(s.def_i64.data(), s.def_i64.size()); break;
      case ST_FLOAT32: o.f32.append(s.def_f32.data(), s.def_f32.size()); break;
      default: {
        int64_t base = int64_t(o.bytes.size());
        o.bytes.append(s.def_bytes.data(), s.def_bytes.size());
        for (size_t i = 1; i < s.def_offs.size(); i++) o.offs.push(base + s.def_offs[i]);
      }
    }
  }

  // feature appends one Feature's values for slot s: kind is checked, the
  // count is returned in *count. present is false when the Feature holds
  // no list at all (TensorFlow treats it as absent).
  bool feature(const Slot& s, SlotOut& o, const Span& f, bool* present, uint64_t* count) {
    int kind;
    const uint8_t* list = nullptr;
    size_t list_n = 0;
    *count = 0;
    if (!read_feature(f, s, &kind, &list, &list_n)) return false;
    *present = kind != K_NONE;
    if (!*present) return true;
    if (kind != s.kind)
      return fail(ST_ERR_FEATURE_TYPE, f.p, "feature \"%s\": holds a %s, its spec wants a %s", s.key.c_str(),
                  kind_name(kind), kind_name(s.kind));
    return append_values(s, o, list, list_n, count);
  }

  // emit appends the record's values of slot si (its key's last
  // occurrence, protobuf map semantics), checking them as TensorFlow
  // does. Missing features are checked by finish.
  // emit_fast appends a feature's values during the walk by the slot's
  // Fast* emitter: the form serializers write (a Feature of one list of
  // the slot's kind, numbers in one packed run) with no branch on the
  // slot's kind or mode; anything else, bad values included, goes to
  // emit, from nothing appended.
  inline bool emit_fast(int32_t si) {
    switch (plan->slots[si].fast) {
      case FAST_LIST_I64: return fast_numbers<K_INT64, false>(si);
      case FAST_LIST_F32: return fast_numbers<K_FLOAT, false>(si);
      case FAST_LIST_BYTES: return fast_bytes<false>(si);
      case FAST_FIXED_I64: return fast_numbers<K_INT64, true>(si);
      case FAST_FIXED_F32: return fast_numbers<K_FLOAT, true>(si);
      case FAST_FIXED_BYTES: return fast_bytes<true>(si);
      default: return emit(si);
    }
  }

  // fast_list finds the list of a Feature in the form serializers write:
  // the list's field (kind) and length, nothing else. False: another
  // form.
  template <int Kind>
  static inline bool fast_list(const Span& f, const uint8_t** list, const uint8_t** end) {
    const uint8_t* p = f.p;
    const uint8_t* e = f.p + f.n;
    if (f.n < 2 || p[0] != ((Kind << 3) | XW_LEN)) return false;
    p++;
    uint64_t l;
    if (!read_varint(p, e, &l) || l != uint64_t(e - p)) return false;
    *list = p;
    *end = e;
    return true;
  }

  template <int Kind, bool Fixed>
  bool fast_numbers(int32_t si) {
    const Slot& s = plan->slots[si];
    SlotState& st = state[si];
    const uint8_t* q;
    const uint8_t* end;
    if (fast_list<Kind>(st.value, &q, &end) && end - q >= 2 && q[0] == ((1u << 3) | XW_LEN)) {
      q++;
      uint64_t qn;
      if (read_varint(q, end, &qn) && qn == uint64_t(end - q)) {
        SlotOut& o = out[si];
        if (Kind == K_FLOAT) {
          size_t k = size_t(qn / 4);
          if (qn % 4 == 0 && (!Fixed || k == s.count)) {
            o.f32.append_short(reinterpret_cast<const float*>(q), k, rec_end);
            st.present = true;
            return true;
          }
        } else {
          const size_t base = o.i64.size();
          const int64_t k = append_run(q, end, o.i64);
          if (k >= 0 && (!Fixed || uint64_t(k) == s.count)) {
            st.present = true;
            return true;
          }
          o.i64.truncate(base);
        }
      }
    }
    return emit(si);
  }

  // append_run appends the varints of the packed int64 run [q, qend) to
  // v and returns how many, or -1 with nothing appended when the run is
  // malformed (for the general reader to report). A short run (a
  // feature's ids, a step's id and tags) is taken whole by one AVX-512
  // step where the CPU has it; the rest, and what that step refuses,
  // are counted and read value by value.
  __attribute__((always_inline)) int64_t append_run(const uint8_t* q, const uint8_t* qend, Buf<int64_t>& v) {
    const size_t qn = size_t(qend - q);
    if (qn <= 64 && plan->avx512) {
      const int k = varints64_avx512(q, qn, v.room(64));
      if (k >= 0) {
        v.commit(size_t(k));
        return k;
      }
    }
    const size_t k = count_varints(q, qn);
    const size_t base = v.size();
    const uint8_t* bad;
    if (!packed_varints(q, qend, rec_end, k, v.grow(k), &bad)) {
      v.truncate(base);
      return -1;
    }
    return int64_t(k);
  }

  template <bool Fixed>
  bool fast_bytes(int32_t si) {
    const Slot& s = plan->slots[si];
    SlotState& st = state[si];
    const uint8_t* q;
    const uint8_t* end;
    if (fast_list<K_BYTES>(st.value, &q, &end)) {
      SlotOut& o = out[si];
      size_t base = o.offs.size();
      while (q < end && q[0] == ((1u << 3) | XW_LEN)) {
        q++;
        const uint8_t* v;
        size_t vn;
        if (!read_len(q, end, &v, &vn)) break;
        o.bytes.append_short(v, vn, rec_end);
        o.offs.push(int64_t(o.bytes.size()));
      }
      if (q == end && (!Fixed || o.offs.size() - base == s.count)) {
        st.present = true;
        return true;
      }
      o.offs.truncate(base);
      o.bytes.truncate(size_t(o.offs.back()));
    }
    return emit(si);
  }

  // emit_list reads a feature list (slot si of a SequenceExample's
  // feature_lists) in the form serializers write: each step a Feature of
  // one list of the slot's kind, numbers in one packed run, no value of
  // another field; with no branch on anything else. Anything else, bad
  // values and counts included, is taken back and read by emit, which
  // reports the error.
  bool emit_list(int32_t si) {
    const Slot& s = plan->slots[si];
    SlotState& st = state[si];
    if (st.gen != rec) return emit(si);
    st.present = false;
    SlotOut& o = out[si];
    const uint8_t* p = st.value.p;
    const uint8_t* end = p + st.value.n;
    const uint8_t list_tag = uint8_t((uint32_t(s.kind) << 3) | XW_LEN);
    int64_t steps = 0;
    while (p < end) {
      // A step: field 1 of the FeatureList, a Feature holding one list.
      if (p[0] != ((1u << 3) | XW_LEN)) return emit_again(si);
      p++;
      uint64_t fl;
      if (!read_varint(p, end, &fl) || fl > uint64_t(end - p) || fl < 2) return emit_again(si);
      const uint8_t* f = p;
      const uint8_t* fe = p + fl;
      p = fe;
      if (f[0] != list_tag) return emit_again(si);
      f++;
      uint64_t ln;
      if (!read_varint(f, fe, &ln) || ln != uint64_t(fe - f)) return emit_again(si);
      uint64_t count = 0;
      if (s.kind == K_BYTES) {
        while (f < fe) {
          if (f[0] != ((1u << 3) | XW_LEN)) return emit_again(si);
          f++;
          const uint8_t* v;
          size_t vn;
          if (!read_len(f, fe, &v, &vn)) return emit_again(si);
          o.bytes.append_short(v, vn, rec_end);
          o.offs.push(int64_t(o.bytes.size()));
          count++;
        }
      } else if (f < fe) {
        if (fe - f < 2 || f[0] != ((1u << 3) | XW_LEN)) return emit_again(si);
        f++;
        uint64_t qn;
        if (!read_varint(f, fe, &qn) || qn != uint64_t(fe - f)) return emit_again(si);
        if (s.kind == K_FLOAT) {
          if (qn % 4 != 0) return emit_again(si);
          count = qn / 4;
          o.f32.append_short(reinterpret_cast<const float*>(f), size_t(count), rec_end);
        } else if (qn == 1 && f[0] < 0x80) {
          o.i64.push(int64_t(f[0]));
          count = 1;
        } else {
          const int64_t k = append_run(f, fe, o.i64);
          if (k < 0) return emit_again(si);
          count = uint64_t(k);
        }
      }
      if (s.mode == XM_FIXED) {
        if (count != s.count) return emit_again(si);
      } else {
        o.splits1.push(o.length(s.dtype));
      }
      steps++;
    }
    o.splits0.push(o.splits0.back() + steps);
    return true;
  }

  // emit_again takes back what emit_list appended of the record's slot
  // si and reads it with emit.
  bool emit_again(int32_t si) {
    rollback_slot(si);
    return emit(si);
  }

  bool emit(int32_t si) {
    const Slot& s = plan->slots[si];
    SlotOut& o = out[si];
    SlotState& st = state[si];
    st.present = false;
    if (st.gen != rec) return true;
    const Span& v = st.value;
    if (s.section == XS_FEATURES) {
      bool present = false;
      uint64_t count = 0;
      if (!feature(s, o, v, &present, &count)) return false;
      st.present = present;
      if (!present) return true;
      if (s.mode == XM_FIXED && count != s.count)
        return fail(ST_ERR_FEATURE_SHAPE, v.p, "feature \"%s\": %llu values, its shape holds %llu", s.key.c_str(),
                    (unsigned long long)count, (unsigned long long)s.count);
      if (s.mode == XM_STRIDE && count % s.count != 0)
        return fail(ST_ERR_FEATURE_SHAPE, v.p, "feature \"%s\": %llu values, not a multiple of %llu", s.key.c_str(),
                    (unsigned long long)count, (unsigned long long)s.count);
      return true;
    }
    // A FeatureList: a repeated Feature, one per step.
    int64_t steps = 0;
    const uint8_t* p = v.p;
    const uint8_t* end = v.p + v.n;
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag;
      if (!read_tag(p, end, &tag)) return fail(ST_ERR_MALFORMED, at, "feature list \"%s\": malformed FeatureList", s.key.c_str());
      if (tag != ((1u << 3) | XW_LEN)) {
        if (!skip_field(p, end, tag, 0))
          return fail(ST_ERR_MALFORMED, at, "feature list \"%s\": malformed FeatureList", s.key.c_str());
        continue;
      }
      Span f;
      if (!read_len(p, end, &f.p, &f.n))
        return fail(ST_ERR_MALFORMED, at, "feature list \"%s\": malformed FeatureList", s.key.c_str());
      bool present = false;
      uint64_t count = 0;
      if (!feature(s, o, f, &present, &count)) return false;
      if (s.mode == XM_FIXED && count != s.count)
        return fail(ST_ERR_FEATURE_SHAPE, f.p, "feature list \"%s\", step %lld: %llu values, its shape holds %llu",
                    s.key.c_str(), (long long)steps, (unsigned long long)count, (unsigned long long)s.count);
      if (s.mode == XM_LIST) o.splits1.push(o.length(s.dtype));
      steps++;
    }
    o.splits0.push(o.splits0.back() + steps);
    return true;
  }

  // finish closes the record for slot si after emit: defaults and
  // missing features, then the record's row splits.
  bool finish(int32_t si) {
    const Slot& s = plan->slots[si];
    SlotOut& o = out[si];
    const SlotState& st = state[si];
    bool seen = st.gen == rec;
    if (s.section == XS_FEATURES) {
      if (s.mode == XM_FIXED) {
        // Present with values: emit checked the count. Absent or holding
        // no list: the default.
        if (seen && st.present) return true;
        if (seen && plan->kind == 2 && s.count != 0)
          return fail(ST_ERR_FEATURE_SHAPE, st.value.p, "feature \"%s\": no values, its shape holds %llu", s.key.c_str(),
                      (unsigned long long)s.count);
        if (!(s.flags & XF_DEFAULT))
          return fail(ST_ERR_FEATURE_MISSING, seen ? st.value.p : nullptr,
                      "feature \"%s\": required but missing (no default)", s.key.c_str());
        append_default(s, o);
        return true;
      }
      o.splits0.push(o.length(s.dtype));
      return true;
    }
    if (!seen) {
      if (s.flags & XF_REQUIRED_LIST)
        return fail(ST_ERR_FEATURE_MISSING, nullptr, "feature list \"%s\": required but missing", s.key.c_str());
      o.splits0.push(o.splits0.back());
    }
    return true;
  }

  // record decodes one record. When several features of it are bad, the
  // error is the one TensorFlow reports: its parser checks the features
  // from the last in the record to the first, then the missing ones; a
  // SequenceExample's context before its feature lists.
  bool record(int64_t index, const uint8_t* p, size_t n) {
    rec = index;
    rec_start = p;
    rec_end = p + n;
    // The first try: features appended during the walk, then each slot
    // closed (defaults, missing features, row splits; feature lists
    // appended) in one loop.
    if (walk_record<true>(p, p + n)) {
      bool ok = true;
      for (int32_t i : plan->list_features) {
        SlotOut& o = out[i];
        o.splits0.push(o.length(plan->slots[i].dtype));
      }
      for (int32_t i : plan->fixed_features) {
        if (!(state[i].gen == rec && state[i].present) && !finish(i)) {
          ok = false;
          break;
        }
      }
      if (ok) {
        for (int32_t i : plan->feature_lists) {
          if (!emit_list(i) || !finish(i)) {
            ok = false;
            break;
          }
        }
      }
      if (__builtin_expect(ok, 1)) return true;
    }
    // A bad record, or one whose bad values a later entry of their key
    // overrides: take back its values and decode it again in
    // TensorFlow's order, to report the error TensorFlow reports.
    failed = false;
    for (size_t s = 0; s < plan->slots.size(); s++) {
      rollback_slot(int32_t(s));
      state[s] = SlotState{};
    }
    if (!walk_record<false>(p, p + n)) return false;
    // Slots come context first (section 0), then feature lists.
    size_t split = 0;
    while (split < plan->slots.size() && plan->slots[split].section == XS_FEATURES) split++;
    return section(0, split) && section(split, plan->slots.size());
  }

  // rollback_slot takes back whatever slot si holds of the record being
  // decoded: its outputs return to their length at the record's start,
  // which the records before it determine.
  void rollback_slot(int32_t si) {
    const Slot& s = plan->slots[si];
    SlotOut& o = out[si];
    const size_t done = size_t(rec - first_rec);  // records of the chunk before this one
    size_t values;
    if (s.section == XS_FEATURES && s.mode == XM_FIXED) {
      values = done * s.count;
    } else {
      o.splits0.truncate(done + 1);
      if (s.section == XS_FEATURES) {
        values = size_t(o.splits0.back());
      } else if (s.mode == XM_LIST) {
        o.splits1.truncate(size_t(o.splits0.back()) + 1);
        values = size_t(o.splits1.back());
      } else {
        values = size_t(o.splits0.back()) * s.count;
      }
    }
    switch (s.dtype) {
      case ST_INT64: o.i64.truncate(values); break;
      case ST_FLOAT32: o.f32.truncate(values); break;
      default:
        o.offs.truncate(values + 1);
        o.bytes.truncate(size_t(o.offs.back()));
    }
  }

  bool section(size_t lo, size_t hi) {
    bool ok = true;
    const uint8_t* worst = nullptr;
    st_error chosen{};
    for (size_t i = lo; i < hi; i++) {
      if (emit(int32_t(i))) continue;
      if (ok || state[i].value.p > worst) {
        worst = state[i].value.p;
        chosen = err;
      }
      ok = false;
    }
    if (!ok) {
      err = chosen;
      return false;
    }
    for (size_t i = lo; i < hi; i++) {
      if (!finish(int32_t(i))) return false;
    }
    return true;
  }
};

bool read_plan_string(const uint8_t*& p, const uint8_t* end, std::string* s) {
  const uint8_t* q;
  size_t n;
  if (!read_len(p, end, &q, &n)) return false;
  s->assign(reinterpret_cast<const char*>(q), n);
  return true;
}

}  // namespace

struct st_example_result {
  const st_example_plan* plan = nullptr;
  std::vector<std::unique_ptr<Chunk>> chunks;
  int64_t n = 0;
};

extern "C" {

st_example_plan* st_example_plan_new(const uint8_t* data, size_t len, st_error* err) {
  if (err) *err = st_error{};
  if (!data && len) {
    set_error(err, ST_ERR_ARGUMENT, -1, -1, "NULL plan data");
    return nullptr;
  }
  try {
    std::unique_ptr<st_example_plan> plan(new st_example_plan);
    const uint8_t* p = data;
    const uint8_t* end = data + len;
    auto bad = [&](const char* why) {
      set_error(err, ST_ERR_PLAN, -1, p ? int64_t(p - data) : -1, "feature plan: %s", why);
      return nullptr;
    };
    if (len < 4 || std::memcmp(data, "STEX", 4) != 0) return bad("no STEX magic");
    p += 4;
    uint64_t version, kind, nslots;
    if (!read_varint(p, end, &version) || version != 1) return bad("unknown version");
    if (!read_varint(p, end, &kind) || (kind != 1 && kind != 2)) return bad("bad record kind");
    plan->kind = uint32_t(kind);
    if (!read_varint(p, end, &nslots) || nslots > uint64_t(end - p)) return bad("bad slot count");
    plan->slots.resize(nslots);
    for (uint64_t i = 0; i < nslots; i++) {
      Slot& s = plan->slots[i];
      uint64_t section, dtype, mode, count, flags;
      if (!read_varint(p, end, &section) || section > 1 || (section == 1 && kind != 2)) return bad("bad section");
      if (!read_plan_string(p, end, &s.key)) return bad("bad key");
      if (!read_varint(p, end, &dtype) || (dtype != ST_INT64 && dtype != ST_FLOAT32 && dtype != ST_STRING))
        return bad("bad dtype");
      if (!read_varint(p, end, &mode) || mode > XM_STRIDE || (mode == XM_STRIDE && section != XS_FEATURES))
        return bad("bad mode");
      if (!read_varint(p, end, &count) || count > kMaxCount || (mode == XM_STRIDE && count == 0)) return bad("bad count");
      if (!read_varint(p, end, &flags) || flags > 3) return bad("bad flags");
      if ((flags & XF_DEFAULT) && (mode != XM_FIXED || section != XS_FEATURES)) return bad("default on a slot that takes none");
      s.section = uint32_t(section);
      s.dtype = int32_t(dtype);
      s.mode = uint32_t(mode);
      s.count = count;
      s.flags = uint32_t(flags);
      s.kind = dtype == ST_INT64 ? K_INT64 : dtype == ST_FLOAT32 ? K_FLOAT : K_BYTES;
      if (flags & XF_DEFAULT) {
        if (count > uint64_t(end - p)) return bad("default longer than the plan");
        s.def_offs.push_back(0);
        for (uint64_t k = 0; k < count; k++) {
          if (dtype == ST_STRING) {
            std::string v;
            if (!read_plan_string(p, end, &v)) return bad("bad default");
            s.def_bytes.insert(s.def_bytes.end(), v.begin(), v.end());
            s.def_offs.push_back(int64_t(s.def_bytes.size()));
          } else {
            uint64_t bits;
            if (!read_varint(p, end, &bits)) return bad("bad default");
            if (dtype == ST_INT64) {
              s.def_i64.push_back(int64_t(bits));
            } else {
              if (bits > 0xffffffffu) return bad("bad float default");
              uint32_t b32 = uint32_t(bits);
              float f;
              std::memcpy(&f, &b32, 4);
              s.def_f32.push_back(f);
            }
          }
        }
      }
    }
    if (p != end) return bad("trailing bytes");
    plan->build_tables();
    plan->avx512 = use_avx512();
    for (uint64_t i = 0; i < nslots; i++) {
      Slot& s = plan->slots[i];
      if (s.section == XS_FEATURE_LISTS) {
        plan->feature_lists.push_back(int32_t(i));
        continue;
      }
      if (s.mode == XM_FIXED) {
        plan->fixed_features.push_back(int32_t(i));
        s.fast = s.kind == K_INT64 ? FAST_FIXED_I64 : s.kind == K_FLOAT ? FAST_FIXED_F32 : FAST_FIXED_BYTES;
      } else {
        plan->list_features.push_back(int32_t(i));
        if (s.mode == XM_LIST) s.fast = s.kind == K_INT64 ? FAST_LIST_I64 : s.kind == K_FLOAT ? FAST_LIST_F32 : FAST_LIST_BYTES;
      }
    }
    return plan.release();
  } catch (...) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory");
    return nullptr;
  }
}

void st_example_plan_free(st_example_plan* plan) { delete plan; }

}  // extern "C"

void st_example_plan::build_tables() {
  // Multipliers to try (odd, bits spread), then the last one with probing.
  static const uint64_t kMults[] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                                    0xd6e8feb86659fd93ull, 0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull,
                                    0x87c37b91114253d5ull, 0x4cf5ad432745937full, 0xa0761d6478bd642full,
                                    0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull, 0x589965cc75374cc3ull};
  for (uint32_t sec = 0; sec < 2; sec++) {
    // The first slot of each distinct key; later slots of a key chain on.
    std::vector<int32_t> firsts;
    for (size_t i = 0; i < slots.size(); i++) {
      if (slots[i].section != sec) continue;
      int32_t first = -1;
      for (int32_t f : firsts)
        if (slots[f].key == slots[i].key) first = f;
      if (first < 0) {
        firsts.push_back(int32_t(i));
        continue;
      }
      while (slots[first].next_same_key >= 0) first = slots[first].next_same_key;
      slots[first].next_same_key = int32_t(i);
    }
    if (firsts.empty()) continue;
    uint32_t bits = 2;
    while ((size_t(1) << bits) < 2 * firsts.size()) bits++;
    std::vector<KeyWords> words;
    for (int32_t f : firsts) words.push_back(key_words(reinterpret_cast<const uint8_t*>(slots[f].key.data()), slots[f].key.size()));
    bool perfect = false;
    for (uint32_t grow = 0; grow < 3 && !perfect; grow++, bits++) {
      for (uint64_t m : kMults) {
        mult[sec] = m;
        shift[sec] = 64 - bits;
        std::vector<bool> used(size_t(1) << bits);
        perfect = true;
        for (size_t i = 0; i < firsts.size() && perfect; i++) {
          uint64_t h = home(sec, words[i], slots[firsts[i]].key.size());
          perfect = !used[h];
          used[h] = true;
        }
        if (perfect) break;
      }
      if (perfect) break;
    }
    if (!perfect) bits--;  // the loop stepped past the last size tried
    shift[sec] = 64 - bits;
    mask[sec] = (uint64_t(1) << bits) - 1;
    table[sec].assign(size_t(1) << bits, KeyEntry{});
    for (size_t i = 0; i < firsts.size(); i++) {
      uint64_t j = home(sec, words[i], slots[firsts[i]].key.size());
      while (table[sec][j].slot >= 0) j = (j + 1) & mask[sec];
      table[sec][j] = KeyEntry{words[i], slots[firsts[i]].key.size(), firsts[i]};
    }
  }
}

st_example_plan::~st_example_plan() {
  for (Chunk* c : pool) delete c;
}

namespace {

constexpr size_t kMaxPooledChunks = 64;

// take_chunk returns a chunk ready for a batch: a pooled one emptied (its
// buffers keep their capacity) or a new one.
std::unique_ptr<Chunk> take_chunk(const st_example_plan* plan) {
  Chunk* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(plan->pool_mu);
    if (!plan->pool.empty()) {
      c = plan->pool.back();
      plan->pool.pop_back();
    }
  }
  if (!c) {
    c = new Chunk;
    c->plan = plan;
    c->out.resize(plan->slots.size());
    c->state.resize(plan->slots.size());
    c->utf8.resize(plan->slots.size());
    return std::unique_ptr<Chunk>(c);
  }
  for (SlotOut& o : c->out) o.reset();
  for (SlotState& st : c->state) st = SlotState{};
  c->failed = false;
  c->err = st_error{};
  c->order = nullptr;
  c->split.store(kSplitClosed, std::memory_order_relaxed);
  c->split_answer.store(kSplitPending, std::memory_order_relaxed);
  c->split_tail = nullptr;
  c->claimed = c->chunk_failed = false;
  c->slow_walk = false;
  c->marked = false;
  return std::unique_ptr<Chunk>(c);
}

// ---------------------------------------------------------------------
// Splitting chunks among the threads.
//
// A batch on T threads is cut into T chunks of about equal bytes, but
// equal bytes are not equal time (records differ; on a shared machine one
// thread may run at half speed for a spell), so a thread done with its
// chunk splits the chunk with the most input left, as the engine's
// decoders do (engine.cc, SplitBatch; the rules and states in
// engine_shared.h): that chunk keeps the first half of its records left,
// by bytes, and gives the rest to a fresh chunk, the tail, placed right
// after it in the batch's order. Chunks decode into outputs of their
// own, so a split moves no output: the copy-out reads the chunks in that
// order.

// claim_delay_us delays the claim of a batch's first chunk
// (st_test_example_claim_delay).
std::atomic<int32_t> claim_delay_us{0};

// ChunkOrder is a batch's chunks in record order, the splits' tails among
// them, and what splitting them needs.
struct ChunkOrder {
  const int64_t* prefix = nullptr;     // the records' bytes, prefix sums
  std::atomic<bool> failed{false};     // a chunk failed: no more splits
  std::atomic<bool> split_once{false}; // for split modes 2 and 3
  std::mutex mu;
  std::vector<Chunk*> chunks;                 // (guarded by mu)
  std::vector<std::unique_ptr<Chunk>> tails;  // the splits' (guarded by mu)
};

void Chunk::split_here(int64_t i) {
  ChunkOrder& o = *order;
  Chunk& t = *split_tail;
  const int64_t hi = run_hi.load(std::memory_order_relaxed);
  int64_t mid = o.failed.load(std::memory_order_relaxed) ? -1 : split_point(o.prefix, i, hi);
  if (mid >= 0) {
    std::lock_guard<std::mutex> lock(o.mu);
    try {
      // Room first, so that the tail is placed and owned, or neither.
      o.chunks.reserve(o.chunks.size() + 1);
      o.tails.reserve(o.tails.size() + 1);
      t.order = &o;
      t.cancel = cancel;
      t.slow_walk = slow_walk;
      t.first_rec = mid;
      t.run_hi.store(hi, std::memory_order_relaxed);
      t.at.store(mid, std::memory_order_relaxed);
      t.split.store(kSplitOpen, std::memory_order_relaxed);
      t.claimed = true;
      o.chunks.insert(std::find(o.chunks.begin(), o.chunks.end(), this) + 1, &t);
      o.tails.emplace_back(&t);
    } catch (const std::bad_alloc&) {
      mid = -1;
    }
  }
  if (mid >= 0) {
    run_hi.store(mid, std::memory_order_relaxed);
    o.split_once.store(true, std::memory_order_relaxed);
    count_split();
  }
  split.store(kSplitOpen, std::memory_order_release);
  t.split_answer.store(mid >= 0 ? kSplitGiven : kSplitDeclined, std::memory_order_release);
}

bool Chunk::utf8_strings(size_t s) const {
  const SlotOut& o = out[s];
  return plan->slots[s].dtype == ST_STRING && valid_utf8_strings(o.bytes.data(), o.offs.data(), o.offs.size() - 1);
}

void Chunk::mark_utf8() {
  for (size_t s = 0; s < out.size(); s++) utf8[s] = utf8_strings(s);
  marked = true;
}

}  // namespace

extern "C" {

int64_t st_example_plan_num_slots(const st_example_plan* plan) { return plan ? int64_t(plan->slots.size()) : 0; }

int32_t st_example_plan_slot_dtype(const st_example_plan* plan, int64_t slot) {
  if (!plan || slot < 0 || slot >= int64_t(plan->slots.size())) return 0;
  return plan->slots[size_t(slot)].dtype;
}

}  // extern "C"

namespace {

// offsets_ok checks a contiguous batch's n records' offsets into
// data_len bytes, setting err where they are wrong.
bool offsets_ok(const int64_t* offsets, int64_t n, size_t data_len, st_error* err) {
  for (int64_t i = 0; i < n; i++) {
    if (offsets[i] < 0 || offsets[i] > offsets[i + 1] || uint64_t(offsets[i + 1]) > data_len) {
      set_error(err, ST_ERR_ARGUMENT, i, -1, "record offsets out of order or past the data");
      return false;
    }
  }
  return true;
}

// kHistoryMinBytes is the least batch whose sizes guess the next's:
// smaller ones are never decoded into a block (st_example_lend_sizes)
// and would guess a larger one badly. (Tests that make small batches go
// into a block lower it with into_min_bytes.)
constexpr int64_t kHistoryMinBytes = 64 << 10;

// stream_bytes is the records' bytes per stretch, into_min_bytes the
// least batch decoded so (st_example_lend_sizes): below it the usual
// decode's chunk stays in cache and it is faster (tf.Examples by feature,
// one thread: 1.25-1.35 GB per CPU-second in 1-4 MB batches against
// 1.05-1.2 into a block, and 1.23-1.28 against 1.29-1.41 in 8 MB ones;
// Intel Xeon, model 167). Both st_test_example_stream_bytes.
constexpr int64_t kStreamBytes = 256 << 10, kIntoMinBytes = 6 << 20;
std::atomic<int64_t> stream_bytes{kStreamBytes}, into_min_bytes{kIntoMinBytes};

// note_batch records a batch of in_bytes in n records and its outputs'
// sizes as the plan's last.
void note_batch(const st_example_plan* plan, int64_t in_bytes, int64_t n, const std::vector<int64_t>& sizes) {
  std::lock_guard<std::mutex> lock(plan->last_mu);
  plan->last_bytes = in_bytes;
  plan->last_records = n;
  plan->last_sizes = sizes;
}

// decode_batch decodes record i = rec(i) for i in [0, n).
template <typename RecordAt>
st_example_result* decode_batch(const st_example_plan* plan, int64_t n, const st_options* opts, st_error* err,
                                size_t total_bytes, RecordAt rec) {
  try {
    std::unique_ptr<st_example_result> res(new st_example_result);
    res->plan = plan;
    res->n = n;
    int threads = opts ? opts->threads : 0;
    if (threads <= 0) threads = structtensor_engine::thread_count();
    // At least 256 KiB of records per thread: below that a thread costs
    // more than it saves.
    int64_t by_bytes = int64_t(total_bytes / (256 << 10)) + 1;
    int64_t nchunks = std::max<int64_t>(1, std::min<int64_t>({int64_t(threads), by_bytes, n}));
    const volatile int32_t* cancel = opts ? opts->cancel : nullptr;
    const bool mark = opts && opts->mark_utf8;
    std::vector<int64_t> bounds(nchunks + 1, n);
    bounds[0] = 0;
    // Cut by bytes so that every chunk has about the same work; the
    // records' bytes' prefix sums are kept for splitting.
    std::vector<int64_t> prefix;
    if (nchunks > 1) {
      prefix.resize(size_t(n) + 1);
      prefix[0] = 0;
      int64_t c = 1;
      for (int64_t i = 0; i < n; i++) {
        size_t len;
        rec(i, &len);
        prefix[size_t(i) + 1] = prefix[size_t(i)] + int64_t(len);
        if (c < nchunks && size_t(prefix[size_t(i) + 1]) >= total_bytes * size_t(c) / size_t(nchunks)) bounds[c++] = i + 1;
      }
      for (; c < nchunks; c++) bounds[c] = n;
    }
    const bool splits = nchunks > 1 && split_mode() >= 0;
    ChunkOrder order;
    order.prefix = prefix.data();
    for (int64_t c = 0; c < nchunks; c++) {
      std::unique_ptr<Chunk> ch = take_chunk(plan);
      ch->cancel = cancel;
      ch->first_rec = bounds[c];
      ch->run_hi.store(bounds[c + 1], std::memory_order_relaxed);
      ch->at.store(bounds[c], std::memory_order_relaxed);
      if (splits) {
        const int32_t mode = split_mode();
        ch->order = &order;
        ch->slow_walk = (mode == 2 && c == 0) || (mode == 3 && c + 1 == nchunks);
        ch->split.store(kSplitOpen, std::memory_order_relaxed);
      }
      order.chunks.push_back(ch.get());
      res->chunks.push_back(std::move(ch));
    }
    auto run = [&](Chunk& ch) {
      try {
        for (int64_t i = ch.first_rec; i < ch.run_hi.load(std::memory_order_relaxed); i++) {
          if (ch.cancelled(i)) break;
          if (__builtin_expect(ch.split.load(std::memory_order_acquire) == kSplitAsked, 0)) ch.split_here(i);
          ch.at.store(i, std::memory_order_relaxed);
          // A test's slow walk (split modes 2 and 3): 100 us a record, so
          // that the other threads finish their chunks and ask for a
          // split before it ends. At 20 us, on a slow 2-core guest, one
          // thread walking the seven other chunks of an 8-chunk batch of
          // SequenceExamples lost the race in most of ten tries.
          if (__builtin_expect(ch.slow_walk, 0) && !order.split_once.load(std::memory_order_relaxed)) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
          }
          size_t len;
          const uint8_t* p = rec(i, &len);
          if (!ch.record(i, p, len)) break;
        }
      } catch (...) {
        ch.failed = true;
        ch.err.code = ST_ERR_INTERNAL;
        ch.err.record = -1;
        ch.err.offset = -1;
        std::snprintf(ch.err.message, sizeof ch.err.message, "out of memory");
      }
      ch.end_splitting();
      if (ch.failed) {
        std::lock_guard<std::mutex> lock(order.mu);
        ch.chunk_failed = true;
        order.failed = true;
      } else if (mark) {
        ch.mark_utf8();  // (after end_splitting: the chunk's records are final)
      }
    };
    if (nchunks == 1) {
      run(*res->chunks[0]);
    } else {
      // On the engine's pool of threads: a chunk each, taken in order by
      // whichever thread is free (a helper that is busy elsewhere or
      // cannot start leaves its chunks to the others), then tails split
      // off the chunks still walking. A chunk that failed stops the
      // chunks after it from starting (their output would be discarded),
      // not those before: the error reported is the first in batch order.
      std::atomic<int64_t> next{0};
      structtensor_engine::run_on_workers(nchunks - 1, [&] {
        for (;;) {
          const int64_t c = next.fetch_add(1);
          if (c < nchunks) {
            Chunk& ch = *res->chunks[size_t(c)];
            if (c == 0) {
              if (const int32_t us = claim_delay_us.load(std::memory_order_relaxed)) {
                std::this_thread::sleep_for(std::chrono::microseconds(us));
              }
            }
            {
              std::lock_guard<std::mutex> lock(order.mu);
              if (structtensor_engine::preceded_by_failure<Chunk>(order.chunks, &ch)) continue;
              ch.claimed = true;
            }
            run(ch);
            continue;
          }
          Chunk* t = nullptr;
          if (splits) {
            try {
              t = ask_for_split(order.mu, order.chunks, order.prefix, order.failed, [&] { return take_chunk(plan); });
            } catch (const std::bad_alloc&) {
            }
          }
          if (!t) return;
          run(*t);
        }
      });
      // The chunks in record order, the tails among them.
      if (!order.tails.empty()) {
        res->chunks.reserve(order.chunks.size());  // (no throw between release and owning again)
        for (auto& c : res->chunks) c.release();
        for (auto& t : order.tails) t.release();
        res->chunks.clear();
        for (Chunk* c : order.chunks) res->chunks.emplace_back(c);
      }
    }
    for (auto& ch : res->chunks) {
      if (ch->failed) {
        if (err) *err = ch->err;
        return nullptr;
      }
    }
    if (int64_t(total_bytes) >= std::min(kHistoryMinBytes, into_min_bytes.load(std::memory_order_relaxed))) {
      std::vector<int64_t> sizes(4 * plan->slots.size());
      if (!sizes.empty()) st_example_result_layout(res.get(), sizes.data(), sizes.size());
      note_batch(plan, int64_t(total_bytes), n, sizes);
    }
    return res.release();
  } catch (...) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory");
    return nullptr;
  }
}

bool slot_ok(const st_example_result* r, int64_t slot) {
  return r && slot >= 0 && slot < int64_t(r->plan->slots.size());
}

bool has_level(const Slot& s, int32_t level) {
  if (level == 0) return s.mode != XM_FIXED || s.section == XS_FEATURE_LISTS;
  if (level == 1) return s.section == XS_FEATURE_LISTS && s.mode == XM_LIST;
  return false;
}

// ---------------------------------------------------------------------
// Copying a result out.
//
// Each chunk decoded its records into outputs of its own; a slot's output
// in the caller's memory is the chunks' parts one after another, the
// cumulative ones (string offsets, row splits) with each later chunk's
// leading 0 dropped and the totals of the chunks before it added to its
// elements. Every part goes to a place known before any is copied, so the
// parts of all slots are copied at once on the engine's threads
// (st_example_result_copy_into): after a decode on several threads, a
// serial copy-out was a quarter of the call.

// The outputs of a slot, in the order of st_example_result_copy_into's at.
enum OutKind : int { kOutValues = 0, kOutOffsets = 1, kOutSplits0 = 2, kOutSplits1 = 3 };

// CopyPiece is bytes of one chunk's part of an output, from src to dst;
// a cumulative part's elements (int64) get base added.
struct CopyPiece {
  const uint8_t* src;
  uint8_t* dst;
  size_t bytes;
  int64_t base;  // 0: copied as it is
};

// Part is one chunk's part of an output: its bytes, and whether its
// elements are cumulative (int64 counts from the chunk's start).
struct Part {
  const uint8_t* src;
  size_t bytes;
  bool cumulative;
};

// chunk_part returns o's part of output kind of a slot of dtype; a part
// that follows another (first false) leaves out a cumulative output's
// leading 0.
Part chunk_part(const SlotOut& o, int32_t dtype, int kind, bool first) {
  if (kind == kOutValues) {
    switch (dtype) {
      case ST_INT64: return {reinterpret_cast<const uint8_t*>(o.i64.data()), o.i64.size() * 8, false};
      case ST_FLOAT32: return {reinterpret_cast<const uint8_t*>(o.f32.data()), o.f32.size() * 4, false};
      default: return {o.bytes.data(), o.bytes.size(), false};
    }
  }
  const Buf<int64_t>& cum = kind == kOutOffsets ? o.offs : kind == kOutSplits0 ? o.splits0 : o.splits1;
  const size_t skip = first ? 0 : 1;
  return {reinterpret_cast<const uint8_t*>(cum.data() + skip), (cum.size() - skip) * 8, true};
}

// output_pieces calls piece(CopyPiece) for each part of slot's output
// kind, laid out from dst on.
template <class Piece>
void output_pieces(const st_example_result* r, int64_t slot, int kind, uint8_t* dst, const Piece& piece) {
  const int32_t dtype = r->plan->slots[size_t(slot)].dtype;
  int64_t base = 0;
  for (size_t k = 0; k < r->chunks.size(); k++) {
    const SlotOut& o = r->chunks[k]->out[size_t(slot)];
    const Part part = chunk_part(o, dtype, kind, k == 0);
    if (part.bytes) piece(CopyPiece{part.src, dst, part.bytes, part.cumulative ? base : 0});
    dst += part.bytes;
    if (part.cumulative) base += (kind == kOutOffsets ? o.offs : kind == kOutSplits0 ? o.splits0 : o.splits1).back();
  }
}

// copy_piece copies one piece (or a stretch of one).
void copy_piece(const CopyPiece& pc) {
  if (pc.base == 0) {
    std::memcpy(pc.dst, pc.src, pc.bytes);
    return;
  }
  const size_t m = pc.bytes / 8;
  for (size_t i = 0; i < m; i++) {
    int64_t v;
    std::memcpy(&v, pc.src + i * 8, 8);
    v += pc.base;
    std::memcpy(pc.dst + i * 8, &v, 8);
  }
}

// copy_serially copies slot's output kind to dst on the calling thread
// (allocating nothing: the per-output copy functions cannot fail).
void copy_serially(const st_example_result* r, int64_t slot, int kind, uint8_t* dst) {
  output_pieces(r, slot, kind, dst, copy_piece);
}

// shared_copies counts the copy-outs shared among threads
// (st_test_example_shared_copies).
std::atomic<int64_t> shared_copies{0};

// copy_pieces copies pieces on up to threads threads, in stretches of at
// most kCopyStretch bytes (whole elements) taken in turn, so that one
// large output is shared out as well as many small ones. Copies of less
// than kCopyMinShared bytes in all stay on the calling thread: waking a
// helper would cost more.
void copy_pieces(const std::vector<CopyPiece>& pieces, int32_t threads) {
  constexpr size_t kCopyStretch = 256 << 10, kCopyMinShared = 1 << 20;
  size_t total = 0;
  for (const CopyPiece& pc : pieces) total += pc.bytes;
  if (threads <= 0) threads = structtensor_engine::thread_count();
  if (threads <= 1 || total < kCopyMinShared) {
    for (const CopyPiece& pc : pieces) copy_piece(pc);
    return;
  }
  std::vector<CopyPiece> stretches;
  stretches.reserve(pieces.size() + total / kCopyStretch);
  for (const CopyPiece& pc : pieces) {
    for (size_t at = 0; at < pc.bytes; at += kCopyStretch) {
      stretches.push_back({pc.src + at, pc.dst + at, std::min(kCopyStretch, pc.bytes - at), pc.base});
    }
  }
  std::atomic<size_t> next{0};
  const int64_t helpers = std::min<int64_t>(threads, int64_t(stretches.size())) - 1;
  shared_copies.fetch_add(1, std::memory_order_relaxed);
  structtensor_engine::run_on_workers(helpers, [&] {
    for (size_t i; (i = next.fetch_add(1)) < stretches.size();) copy_piece(stretches[i]);
  });
}

// ---------------------------------------------------------------------
// Decoding into the caller's block as the walk goes.
//
// A batch decoded on one thread into one chunk and then copied out was
// written twice in memory: the chunk's buffers, as large as the batch's
// output, were out of cache by the time the copy read them. The 32 MB
// batches of tf.Examples by feature so took 1.6 times as long per byte
// as 1 MB ones, whose chunk stays in cache (Intel Xeon, model 167). So a
// decode into a block the caller laid out (each output's place and room,
// guessed from the plan's last batch) walks the batch in stretches of
// about stream_bytes of records, each into a chunk emptied before it,
// and copies each stretch's outputs to their places right after it: the
// chunk is written in cache, read in cache, and only the block goes to
// memory. A guess too small for any output makes the batch decode again
// the usual way (decode_batch), so the output never depends on the
// guess.


// stream_fallbacks counts the decodes into a block whose guess was too
// small (st_test_example_stream_fallbacks).
std::atomic<int64_t> stream_fallbacks{0};

// decode_into decodes records [0, n) as above into block (block_bytes),
// output o (4 per slot, in st_example_result_copy_into's order) at at[o]
// with room for cap[o] bytes, and sets sizes as st_example_result_layout
// does, and utf8 as st_example_result_utf8 does (with opts->mark_utf8:
// each stretch's strings are checked by the thread that decoded them,
// while in cache). It returns ST_OK with *rest null when every output
// went into the block, ST_OK with *rest the batch decoded the usual way
// when one did not fit, or an error code with err set.
//
// On several threads, each takes the next stretch in turn into a chunk
// of its own; a stretch's place in every output is known once every
// stretch before it is decoded (their sizes, not their copies), so the
// thread that decodes the stretch that completes a run places the run
// and copies it, and no thread waits for another. A stretch decoded
// before those ahead of it keeps its chunk until they are.
template <typename RecordAt>
int32_t decode_into(const st_example_plan* plan, int64_t n, const st_options* opts, st_error* err, size_t total_bytes,
                    RecordAt rec, uint8_t* block, size_t block_bytes, const int64_t* at, const int64_t* cap,
                    int64_t* sizes, uint8_t* utf8, st_example_result** rest) {
  const size_t nslots = plan->slots.size(), nout = 4 * nslots;
  // has[o]: the plan has output o.
  std::vector<bool> has(nout);
  for (size_t s = 0; s < nslots; s++) {
    const Slot& slot = plan->slots[s];
    has[4 * s] = true;
    has[4 * s + 1] = slot.dtype == ST_STRING;
    has[4 * s + 2] = has_level(slot, 0);
    has[4 * s + 3] = has_level(slot, 1);
    for (size_t o = 4 * s; o < 4 * s + 4; o++) {
      const int64_t a = at[o], c = cap[o];
      if (!has[o]) continue;
      if (a < 0 || c < 0 || a % 8 != 0 || uint64_t(a) > block_bytes || uint64_t(c) > block_bytes - uint64_t(a)) {
        set_error(err, ST_ERR_ARGUMENT, -1, -1, "bad output layout for st_example_decode_contiguous_into");
        return ST_ERR_ARGUMENT;
      }
    }
  }
  // The stretches: bounds[k] is stretch k's first record (one stretch,
  // of no records, for an empty batch).
  const size_t stretch = size_t(std::max<int64_t>(1, stream_bytes.load(std::memory_order_relaxed)));
  std::vector<int64_t> bounds{0};
  for (size_t bytes = 0, i = 0; int64_t(i) < n; i++) {
    size_t len;
    rec(int64_t(i), &len);
    bytes += len;
    if (bytes >= stretch && int64_t(i) + 1 < n) {
      bounds.push_back(int64_t(i) + 1);
      bytes = 0;
    }
  }
  bounds.push_back(n);
  const int64_t nstretches = int64_t(bounds.size()) - 1;
  int threads = opts ? opts->threads : 0;
  if (threads <= 0) threads = structtensor_engine::thread_count();
  const volatile int32_t* cancel = opts ? opts->cancel : nullptr;
  // utf8_so_far[s]: no string of slot s decoded so far is invalid UTF-8
  // (stores only ever clear it, so no lock).
  const bool mark = opts && opts->mark_utf8;
  std::unique_ptr<std::atomic<bool>[]> utf8_so_far(new std::atomic<bool>[nslots]);
  for (size_t s = 0; s < nslots; s++) utf8_so_far[s].store(mark && plan->slots[s].dtype == ST_STRING, std::memory_order_relaxed);

  // Shared among the threads, under mu.
  structtensor_engine::BriefMutex mu;
  // The chunks taken (back to the plan's pool at the end, as a result's),
  // those free for another stretch, and each stretch's once decoded.
  std::unique_ptr<st_example_result, void (*)(st_example_result*)> held(new st_example_result, st_example_result_free);
  held->plan = plan;
  std::vector<Chunk*> idle;
  std::vector<Chunk*> decoded(size_t(nstretches), nullptr);
  int64_t next = 0;                 // the next stretch to decode
  int64_t placed = 0;               // the stretches before it have their places
  int64_t failed_at = nstretches;   // the first stretch that failed
  st_error failed_err{};
  bool overflow = false, oom = false;
  // used[o]: the bytes of output o placed; last[o]: a cumulative
  // output's last element placed, which the next stretch's add to.
  std::vector<size_t> used(nout, 0);
  std::vector<int64_t> last(nout, 0);

  auto work = [&] {
    std::vector<CopyPiece> pieces;
    std::vector<Chunk*> copied;  // chunks whose pieces were copied
    try {
      for (;;) {
        Chunk* ch = nullptr;
        int64_t k;
        {
          std::lock_guard lock(mu);
          idle.insert(idle.end(), copied.begin(), copied.end());
          copied.clear();
          if (next >= failed_at || overflow || oom) return;
          k = next++;
          if (!idle.empty()) {
            ch = idle.back();
            idle.pop_back();
          } else {
            held->chunks.push_back(take_chunk(plan));
            ch = held->chunks.back().get();
            ch->cancel = cancel;
          }
        }
        for (SlotOut& o : ch->out) o.reset();
        for (SlotState& st : ch->state) st = SlotState{};
        ch->first_rec = bounds[size_t(k)];
        for (int64_t i = bounds[size_t(k)]; i < bounds[size_t(k) + 1]; i++) {
          if (ch->cancelled(i)) break;
          size_t len;
          const uint8_t* p = rec(i, &len);
          if (!ch->record(i, p, len)) break;
        }
        for (size_t s = 0; mark && !ch->failed && s < nslots; s++) {
          if (utf8_so_far[s].load(std::memory_order_relaxed) && !ch->utf8_strings(s)) {
            utf8_so_far[s].store(false, std::memory_order_relaxed);
          }
        }
        {
          std::lock_guard lock(mu);
          if (ch->failed) {
            if (k < failed_at) {
              failed_at = k;
              failed_err = ch->err;
            }
            continue;  // (the chunk is not reused: the decode ends)
          }
          decoded[size_t(k)] = ch;
          // Place every stretch whose place is now known; all of one
          // must fit before any is placed.
          for (; !overflow && placed < failed_at && placed < nstretches && decoded[size_t(placed)]; placed++) {
            Chunk& c = *decoded[size_t(placed)];
            const bool first = placed == 0;
            for (size_t o = 0; o < nout && !overflow; o++) {
              if (has[o]) overflow = used[o] + chunk_part(c.out[o / 4], plan->slots[o / 4].dtype, int(o % 4), first).bytes > size_t(cap[o]);
            }
            if (overflow) break;
            for (size_t o = 0; o < nout; o++) {
              if (!has[o]) continue;
              const Part part = chunk_part(c.out[o / 4], plan->slots[o / 4].dtype, int(o % 4), first);
              if (part.bytes) pieces.push_back(CopyPiece{part.src, block + at[o] + used[o], part.bytes, part.cumulative ? last[o] : 0});
              used[o] += part.bytes;
              if (part.cumulative && part.bytes) {
                int64_t end;
                std::memcpy(&end, part.src + part.bytes - 8, 8);
                last[o] += end;
              }
            }
            copied.push_back(&c);
          }
        }
        for (const CopyPiece& pc : pieces) copy_piece(pc);
        pieces.clear();
      }
    } catch (...) {
      std::lock_guard lock(mu);
      oom = true;
    }
  };
  structtensor_engine::run_on_workers(std::min<int64_t>(threads, nstretches) - 1, work);
  if (oom) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory");
    return ST_ERR_INTERNAL;
  }
  if (overflow) {
    stream_fallbacks.fetch_add(1, std::memory_order_relaxed);
    held.reset();
    *rest = decode_batch(plan, n, opts, err, total_bytes, rec);
    return *rest ? ST_OK : err->code;  // err: never null here (the C function's own)
  }
  if (failed_at < nstretches) {
    if (err) *err = failed_err;
    return failed_err.code;
  }
  *rest = nullptr;
  for (size_t s = 0; s < nslots; s++) {
    const int32_t dtype = plan->slots[s].dtype;
    sizes[4 * s] = dtype == ST_STRING    ? int64_t(used[4 * s + 1] / 8) - 1
                   : dtype == ST_FLOAT32 ? int64_t(used[4 * s] / 4)
                                         : int64_t(used[4 * s] / 8);
    sizes[4 * s + 1] = int64_t(used[4 * s]);
    sizes[4 * s + 2] = int64_t(used[4 * s + 2] / 8);
    sizes[4 * s + 3] = int64_t(used[4 * s + 3] / 8);
    if (mark) utf8[s] = utf8_so_far[s].load(std::memory_order_relaxed);
  }
  note_batch(plan, int64_t(total_bytes), n, std::vector<int64_t>(sizes, sizes + nout));
  return ST_OK;
}

}  // namespace

extern "C" {

st_example_result* st_example_decode(const st_example_plan* plan, const uint8_t* const* ptrs, const size_t* lens,
                                     int64_t n, const st_options* opts, st_error* err) {
  if (err) *err = st_error{};
  if (!plan || n < 0 || (n > 0 && (!ptrs || !lens))) {
    set_error(err, ST_ERR_ARGUMENT, -1, -1, "bad arguments to st_example_decode");
    return nullptr;
  }
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!ptrs[i] && lens[i]) {
      set_error(err, ST_ERR_ARGUMENT, i, -1, "NULL record with a length");
      return nullptr;
    }
    total += lens[i];
  }
  return decode_batch(plan, n, opts, err, total, [&](int64_t i, size_t* len) {
    *len = lens[i];
    return ptrs[i];
  });
}

st_example_result* st_example_decode_contiguous(const st_example_plan* plan, const uint8_t* data, size_t data_len,
                                                const int64_t* offsets, int64_t n, const st_options* opts,
                                                st_error* err) {
  if (err) *err = st_error{};
  if (!plan || n < 0 || !offsets || (!data && data_len)) {
    set_error(err, ST_ERR_ARGUMENT, -1, -1, "bad arguments to st_example_decode_contiguous");
    return nullptr;
  }
  if (!offsets_ok(offsets, n, data_len, err)) return nullptr;
  size_t total = n > 0 ? size_t(offsets[n] - offsets[0]) : 0;
  return decode_batch(plan, n, opts, err, total, [&](int64_t i, size_t* len) {
    *len = size_t(offsets[i + 1] - offsets[i]);
    return data + offsets[i];
  });
}

int32_t st_example_lend_sizes(const st_example_plan* plan, int64_t in_bytes, int64_t n, int64_t* cap,
                              size_t cap_len) {
  if (!plan || !cap || cap_len / 4 < plan->slots.size() || in_bytes < 0 || n < 0) return ST_ERR_ARGUMENT;
  if (in_bytes < into_min_bytes.load(std::memory_order_relaxed)) return 0;
  int64_t last_bytes, last_records;
  std::vector<int64_t> last;
  {
    std::lock_guard<std::mutex> lock(plan->last_mu);
    if (plan->last_sizes.size() != 4 * plan->slots.size() || plan->last_bytes == 0) return 0;
    last_bytes = plan->last_bytes;
    last_records = plan->last_records;
    last = plan->last_sizes;
  }
  // The policy of engine_sizing.h: the last batch scaled by the larger
  // ratio of bytes and of records, plus lend_room's margin; what the
  // slot's shape fixes (a dense feature's values, one level-0 split a
  // record) is exact, and room beyond 2^40 bytes is not guessed.
  const double ratio = std::max(double(in_bytes) / double(last_bytes), double(n) / double(std::max<int64_t>(last_records, 1)));
  const int64_t limit = in_bytes + n + 1;
  constexpr double kMaxRoom = double(int64_t(1) << 40);
  for (size_t s = 0; s < plan->slots.size(); s++) {
    const Slot& slot = plan->slots[s];
    const int64_t* l = &last[4 * s];
    int64_t* c = &cap[4 * s];
    const bool dense = slot.section == XS_FEATURES && slot.mode == XM_FIXED;
    const double dense_values = double(n) * double(slot.count);
    if (dense && dense_values > kMaxRoom) return 0;
    const int64_t values = dense ? int64_t(dense_values) : lend_room(double(l[0]) * ratio, 1, 1, limit);
    if (slot.dtype == ST_STRING) {
      const double mean = double(l[1]) / double(std::max<int64_t>(l[0], 1));
      const double scaled = double(l[1]) * ratio;
      if (scaled > kMaxRoom) return 0;
      c[0] = lend_room(scaled, std::max(mean, 1.0), 1, dense ? int64_t(kMaxRoom) : in_bytes);
      c[1] = 8 * (values + 1);
    } else {
      c[0] = values * (slot.dtype == ST_FLOAT32 ? 4 : 8);
      c[1] = 0;
    }
    c[2] = !has_level(slot, 0) ? 0 : slot.section == XS_FEATURES ? 8 * (n + 1) : 8 * (lend_room(double(l[2] - 1) * ratio, 1, 1, limit) + 1);
    c[3] = !has_level(slot, 1) ? 0 : 8 * (lend_room(double(l[3] - 1) * ratio, 1, 1, limit) + 1);
  }
  return 1;
}

int32_t st_example_decode_contiguous_into(const st_example_plan* plan, const uint8_t* data, size_t data_len,
                                          const int64_t* offsets, int64_t n, const st_options* opts, void* block,
                                          size_t block_bytes, const int64_t* at, const int64_t* cap, size_t at_len,
                                          int64_t* sizes, size_t sizes_len, uint8_t* utf8, size_t utf8_len,
                                          st_example_result** rest, st_error* err) {
  st_error own{};
  if (!err) err = &own;
  *err = st_error{};
  if (rest) *rest = nullptr;
  if (!plan || n < 0 || !offsets || (!data && data_len) || !rest || !at || !cap || !sizes ||
      at_len / 4 < plan->slots.size() || sizes_len / 4 < plan->slots.size() || (!block && block_bytes) ||
      (opts && opts->mark_utf8 && (!utf8 || utf8_len < plan->slots.size()))) {
    set_error(err, ST_ERR_ARGUMENT, -1, -1, "bad arguments to st_example_decode_contiguous_into");
    return ST_ERR_ARGUMENT;
  }
  if (!offsets_ok(offsets, n, data_len, err)) return ST_ERR_ARGUMENT;
  const size_t total = n > 0 ? size_t(offsets[n] - offsets[0]) : 0;
  try {
    return decode_into(
        plan, n, opts, err, total,
        [&](int64_t i, size_t* len) {
          *len = size_t(offsets[i + 1] - offsets[i]);
          return data + offsets[i];
        },
        static_cast<uint8_t*>(block), block_bytes, at, cap, sizes, utf8, rest);
  } catch (...) {
    set_error(err, ST_ERR_INTERNAL, -1, -1, "out of memory");
    return ST_ERR_INTERNAL;
  }
}

int32_t st_example_result_utf8(const st_example_result* r, uint8_t* utf8, size_t utf8_len) {
  if (!r || !utf8 || utf8_len < r->plan->slots.size()) return ST_ERR_ARGUMENT;
  for (const auto& c : r->chunks) {
    if (!c->marked) return ST_ERR_ARGUMENT;
  }
  for (size_t s = 0; s < r->plan->slots.size(); s++) {
    bool all = r->plan->slots[s].dtype == ST_STRING;
    for (size_t k = 0; all && k < r->chunks.size(); k++) all = r->chunks[k]->utf8[s];
    utf8[s] = all;
  }
  return ST_OK;
}

void st_example_result_free(st_example_result* r) {
  if (!r) return;
  for (auto& c : r->chunks) {
    c->held = 0;
    for (const SlotOut& o : c->out) c->held += o.held();
  }
  {
    std::lock_guard<std::mutex> lock(r->plan->pool_mu);
    std::vector<Chunk*>& pool = r->plan->pool;
    try {
      pool.reserve(kMaxPooledChunks + 1);
      for (auto& c : r->chunks) {
        const auto less = [](const Chunk* a, const Chunk* b) { return a->held < b->held; };
        const auto at = std::upper_bound(pool.begin(), pool.end(), c.get(), less);
        pool.insert(at, c.release());
        if (pool.size() > kMaxPooledChunks) {  // the one holding least goes
          delete pool.front();
          pool.erase(pool.begin());
        }
      }
    } catch (const std::bad_alloc&) {
    }
  }
  delete r;
}

int64_t st_example_result_values_length(const st_example_result* r, int64_t slot) {
  if (!slot_ok(r, slot)) return -1;
  int64_t n = 0;
  for (auto& ch : r->chunks) n += ch->out[slot].length(r->plan->slots[slot].dtype);
  return n;
}

int64_t st_example_result_values_bytes(const st_example_result* r, int64_t slot) {
  if (!slot_ok(r, slot)) return -1;
  int64_t n = 0;
  for (auto& ch : r->chunks) {
    const SlotOut& o = ch->out[slot];
    switch (r->plan->slots[slot].dtype) {
      case ST_INT64: n += int64_t(o.i64.size() * 8); break;
      case ST_FLOAT32: n += int64_t(o.f32.size() * 4); break;
      default: n += int64_t(o.bytes.size());
    }
  }
  return n;
}

int32_t st_example_result_copy_values(const st_example_result* r, int64_t slot, void* dst, size_t dst_bytes) {
  int64_t need = st_example_result_values_bytes(r, slot);
  if (need < 0 || size_t(need) > dst_bytes || (need > 0 && !dst)) return ST_ERR_ARGUMENT;
  copy_serially(r, slot, kOutValues, static_cast<uint8_t*>(dst));
  return ST_OK;
}

int32_t st_example_result_copy_string_offsets(const st_example_result* r, int64_t slot, int64_t* dst,
                                              size_t dst_len) {
  if (!slot_ok(r, slot) || r->plan->slots[slot].dtype != ST_STRING) return ST_ERR_ARGUMENT;
  int64_t n = st_example_result_values_length(r, slot);
  if (!dst || dst_len < size_t(n) + 1) return ST_ERR_ARGUMENT;
  copy_serially(r, slot, kOutOffsets, reinterpret_cast<uint8_t*>(dst));
  return ST_OK;
}

int64_t st_example_result_splits_length(const st_example_result* r, int64_t slot, int32_t level) {
  if (!slot_ok(r, slot) || !has_level(r->plan->slots[slot], level)) return 0;
  int64_t n = 1;
  for (auto& ch : r->chunks) n += int64_t((level == 0 ? ch->out[slot].splits0 : ch->out[slot].splits1).size()) - 1;
  return n;
}

int32_t st_example_result_copy_splits(const st_example_result* r, int64_t slot, int32_t level, int64_t* dst,
                                      size_t dst_len) {
  int64_t n = st_example_result_splits_length(r, slot, level);
  if (n == 0 || !dst || dst_len < size_t(n)) return ST_ERR_ARGUMENT;
  copy_serially(r, slot, level == 0 ? kOutSplits0 : kOutSplits1, reinterpret_cast<uint8_t*>(dst));
  return ST_OK;
}

int32_t st_example_result_layout(const st_example_result* r, int64_t* sizes, size_t sizes_len) {
  if (!r || !sizes || sizes_len / 4 < r->plan->slots.size()) return ST_ERR_ARGUMENT;
  for (size_t s = 0; s < r->plan->slots.size(); s++) {
    const int64_t slot = int64_t(s);
    sizes[4 * s] = st_example_result_values_length(r, slot);
    sizes[4 * s + 1] = st_example_result_values_bytes(r, slot);
    sizes[4 * s + 2] = st_example_result_splits_length(r, slot, 0);
    sizes[4 * s + 3] = st_example_result_splits_length(r, slot, 1);
  }
  return ST_OK;
}

int32_t st_example_result_copy_into(const st_example_result* r, void* block, size_t block_bytes, const int64_t* at,
                                    size_t at_len, int32_t threads) {
  if (!r || !at || at_len / 4 < r->plan->slots.size()) return ST_ERR_ARGUMENT;
  uint8_t* const base = static_cast<uint8_t*>(block);
  std::vector<CopyPiece> pieces;
  try {
    for (size_t s = 0; s < r->plan->slots.size(); s++) {
      for (int kind = kOutValues; kind <= kOutSplits1; kind++) {
        const int64_t off = at[4 * s + size_t(kind)];
        if (off < 0) continue;
        const int64_t slot = int64_t(s);
        int64_t bytes;
        switch (kind) {
          case kOutValues: bytes = st_example_result_values_bytes(r, slot); break;
          case kOutOffsets:
            if (r->plan->slots[s].dtype != ST_STRING) return ST_ERR_ARGUMENT;
            bytes = 8 * (st_example_result_values_length(r, slot) + 1);
            break;
          default:
            bytes = 8 * st_example_result_splits_length(r, slot, kind - kOutSplits0);
            if (bytes == 0) return ST_ERR_ARGUMENT;  // no such level
        }
        if (bytes > 0 && (!base || uint64_t(off) > block_bytes || uint64_t(bytes) > block_bytes - uint64_t(off))) {
          return ST_ERR_ARGUMENT;
        }
        if (bytes > 0) output_pieces(r, slot, kind, base + off, [&](const CopyPiece& pc) { pieces.push_back(pc); });
      }
    }
    copy_pieces(pieces, threads);
  } catch (...) {
    return ST_ERR_INTERNAL;
  }
  return ST_OK;
}

int64_t st_test_example_shared_copies(void) { return shared_copies.load(std::memory_order_relaxed); }

void st_test_example_stream_bytes(int64_t bytes) {
  stream_bytes.store(bytes > 0 ? bytes : kStreamBytes);
  into_min_bytes.store(bytes > 0 ? bytes : kIntoMinBytes);
}

int64_t st_test_example_stream_fallbacks(void) { return stream_fallbacks.load(std::memory_order_relaxed); }

void st_test_example_claim_delay(int32_t us) { claim_delay_us.store(std::max(us, 0), std::memory_order_relaxed); }

}  // extern "C"
