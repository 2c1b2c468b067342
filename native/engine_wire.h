// Wire decoding: varints (scalar, unrolled, AVX-512 packed runs) and the
// varint conversions.
//
// Part of the engine (engine.cc), which includes it once after the
// standard headers it relies on: the engine is one translation unit, so
// that the record walker and the wire decoders inline into each other.
// Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_WIRE_H_
#define STRUCTTENSOR_NATIVE_ENGINE_WIRE_H_

namespace {

// ---------------------------------------------------------------------
// Wire decoding.

// read_varint decodes a varint from [p, end). It returns the position after
// it, or nullptr when it is truncated or longer than 10 bytes (or its 10th
// byte overflows 64 bits, as protobuf-go rejects).
__attribute__((noinline)) const uint8_t* read_varint_slow(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int i = 0; p + i < end; i++) {
    uint64_t b = p[i];
    v |= (b & 0x7f) << (7 * i);
    if (b < 0x80) {
      if (i == 9 && b > 1) return nullptr;
      *out = v;
      return p + i + 1;
    }
    if (i == 9) return nullptr;
  }
  return nullptr;
}

// read_varint_unrolled decodes a varint from p, which must have at least
// 10 readable bytes: no bounds checks. The compiler unrolls the loop (the
// pragma), so there is no counter at run time.
__attribute__((always_inline)) inline const uint8_t* read_varint_unrolled(const uint8_t* p, uint64_t* out) {
  // Each step adds the next byte shifted into place minus its continuation bit (the (b - 1) trick: the
  // previous byte's 0x80 was added one step earlier at this position).
  uint64_t res = p[0];
  if (res < 0x80) {
    *out = res;
    return p + 1;
  }
#pragma GCC unroll 8
  for (int i = 1; i < 9; i++) {
    uint64_t b = p[i];
    res += (b - 1) << (7 * i);
    if (b < 0x80) {
      *out = res;
      return p + i + 1;
    }
  }
  uint64_t b = p[9];
  if (b > 1) return nullptr;  // overflow, or more than 10 bytes
  res += (b - 1) << 63;
  *out = res;
  return p + 10;
}

__attribute__((always_inline)) inline const uint8_t* read_varint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  if (end - p < 10) {
    if (p < end && *p < 0x80) {
      *out = *p;
      return p + 1;
    }
    return read_varint_slow(p, end, out);
  }
  return read_varint_unrolled(p, out);
}

// read_varint_lim is read_varint for a varint that must end by end while
// the bytes up to limit (the end of the record) may be read: near the end
// of a small message the unrolled decoder still applies, and a varint
// running past end is truncated.
__attribute__((always_inline)) inline const uint8_t* read_varint_lim(const uint8_t* p, const uint8_t* end, const uint8_t* limit,
                                                                     uint64_t* out) {
  if (p < end && *p < 0x80) {
    *out = *p;
    return p + 1;
  }
  if (limit - p >= 10) {
    const uint8_t* r = read_varint_unrolled(p, out);
    return r && r <= end ? r : nullptr;
  }
  return read_varint_slow(p, end, out);
}

// varint_failure says why a varint at p did not decode before end: with
// ten bytes there it is too long (or overflows 64 bits); else the input
// ends inside it.
inline const char* varint_failure(const uint8_t* p, const uint8_t* end, bool tag) {
  if (end - p >= 10) return tag ? "overlong tag varint (more than 10 bytes or over 64 bits)" : "overlong varint (more than 10 bytes or over 64 bits)";
  return tag ? "truncated tag" : "truncated varint";
}

// squeeze7 drops the continuation bits of a varint of up to 8 bytes held
// little-endian in x (nothing above its last byte): 7 bits per byte, packed.
inline uint64_t squeeze7(uint64_t x) {
  x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
  x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
  return ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
}

// count_terminators counts the bytes of [p, q) with the top bit clear:
// the varints that end there. Eight bytes a step, the eight top bits
// summed by one multiply: a packed run is counted so whenever the worst
// case (a value a byte) does not fit its column's buffer, which on a
// caller's buffers sized exactly is every run of a batch's last records
// (a byte a step, this was a fifth of a 3-record batch of flat records).
inline size_t count_terminators(const uint8_t* p, const uint8_t* q) {
  size_t m = 0;
  for (; q - p >= 8; p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    m += size_t((((~w >> 7) & 0x0101010101010101ull) * 0x0101010101010101ull) >> 56);
  }
  for (; p < q; p++) m += *p < 0x80;
  return m;
}

// read_varint_value is read_varint_lim for a scalar field's value, whose
// length varies from value to value where a tag's or a length's rarely
// does: one of up to eight bytes, with eight readable, is decoded from
// one load by its first terminator, with no branch on its length (the
// unrolled decoder's branch per byte mispredicts on every mix of lengths).
__attribute__((always_inline)) inline const uint8_t* read_varint_value(const uint8_t* p, const uint8_t* end, const uint8_t* limit,
                                                                       uint64_t* out) {
  if (limit - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    const uint64_t stop = ~w & 0x8080808080808080ull;
    if (__builtin_expect(stop != 0, 1)) {
      const unsigned bits = unsigned(__builtin_ctzll(stop)) + 1;  // 8 * the varint's length
      *out = squeeze7(w & (~uint64_t(0) >> (64 - bits)));
      const uint8_t* r = p + bits / 8;
      return r <= end ? r : nullptr;
    }
  }
  return read_varint_lim(p, end, limit, out);
}

// The varint conversions, shared by single values and packed runs:
// zigzag for sint32/sint64, 64-bit as is, 32-bit truncated (as protobuf
// parses an int32 written as a 64-bit varint), bool as nonzero. Lambdas,
// so that each is a type of its own and inlines into the templates.
constexpr auto zigzag32 = [](uint64_t v) {
  uint32_t u = uint32_t(v);
  return int32_t((u >> 1) ^ (~(u & 1) + 1));
};
constexpr auto zigzag64 = [](uint64_t v) { return int64_t((v >> 1) ^ (~(v & 1) + 1)); };
constexpr auto as_u64 = [](uint64_t v) { return v; };
constexpr auto as_u32 = [](uint64_t v) { return uint32_t(v); };
constexpr auto as_bool = [](uint64_t v) { return uint8_t(v != 0); };

// stop_bits64 returns a bit per byte of the 64 at p, set where the byte
// ends a varint (its top bit is clear), byte i at bit i.
inline uint64_t stop_bits64(const uint8_t* p) {
#if ST_X86_64
  // SSE2's byte mask, which every x86-64 CPU has.
  uint64_t cont = 0;
  for (int i = 0; i < 4; i++) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    cont |= uint64_t(uint32_t(_mm_movemask_epi8(v))) << (16 * i);
  }
  return ~cont;
#else
  // Each word's top bits gathered into a byte by one multiply: byte i's
  // bit lands at bit 56 + i, with no carries between them.
  uint64_t stop = 0;
  for (int i = 0; i < 8; i++) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
    stop |= (((~w >> 7) & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56 << (8 * i);
  }
  return stop;
#endif
}

// varints_by_mask decodes the packed varints of [p, q) into out[*k...]
// for as long as they are at most eight bytes long and complete, reading
// no further than readable (at least q). It returns where it stopped: q,
// or the start of a value it leaves to the general decoder (longer than
// eight bytes, cut short by the end of the run, or too near readable).
//
// It is the decoder of CPUs without AVX-512. A loop that finds each
// value's end from the bytes it has just read waits, value after value,
// for a load and the scan of its result. Here one step takes the
// terminating bytes of the next 64 at once (a 64-bit mask); each value's
// start and end then come from the mask alone (count trailing zeros,
// clear the lowest bit), so the values of a step are independent and
// overlap in the pipeline: load eight bytes at the start, keep the
// value's own, squeeze out the continuation bits (Bits::value), store.
// The only branches are the end of a step's mask and a value longer than
// eight bytes, both rare, whatever the mix of lengths.
template <class Bits, class T, class Conv>
__attribute__((always_inline)) inline const uint8_t* varints_by_mask(const uint8_t* p, const uint8_t* q, const uint8_t* readable,
                                                                     T* out, size_t* k, Conv conv) {
  size_t n = *k;
  // A step reads 64 bytes, and a value starting in them 8 bytes from its
  // start.
  while (p < q && readable - p >= 72) {
    uint64_t stop = stop_bits64(p);
    size_t avail = size_t(q - p);
    if (avail < 64) stop &= (uint64_t(1) << avail) - 1;
    if (stop == 0) break;
    unsigned start = 0;
    do {
      unsigned end = unsigned(__builtin_ctzll(stop));
      unsigned len = end + 1 - start;
      if (__builtin_expect(len > 8, 0)) {
        *k = n;
        return p + start;
      }
      uint64_t w;
      memcpy(&w, p + start, 8);
      T t = conv(Bits::value(w, len));
      memcpy(out + n, &t, sizeof(T));
      n++;
      start = end + 1;
      stop &= stop - 1;
    } while (stop);
    p += start;
  }
  *k = n;
  return p;
}

// The value of a varint of len bytes (1 to 8) held little-endian in w,
// which may hold more bytes above it.
struct BitsSqueeze {
  static inline uint64_t value(uint64_t w, unsigned len) { return squeeze7(w & (~uint64_t(0) >> (64 - 8 * len))); }
};

template <class T, class Conv>
const uint8_t* varints_portable(const uint8_t* p, const uint8_t* q, const uint8_t* readable, T* out, size_t* k, Conv conv) {
  return varints_by_mask<BitsSqueeze>(p, q, readable, out, k, conv);
}

// prefetch_input asks for the input kInputAhead bytes past p, for
// reading. The records are read front to back, yet on an Intel Xeon
// (model 207, a virtual machine) the loads that first touch each 64-byte
// line of a 32 MB batch waited for it: a tenth of the AVX-512 decoder's
// samples on flat records fell on its first pass's load. Asked for once
// per 64 bytes by the packed decoders' first passes and once per field
// by the walk (parse_message), the lines are there when read. Measured
// with bench -run-one DATASET ours-1t, the builds alternating, four to
// six pairs: the AVX-512 first pass's alone, flat records 1.18-1.28x the
// mean MB per CPU-second (1024, 2048 and 4096 bytes ahead alike); the
// walk's on top of it, tf.Examples 1.07-1.11x and elwc 1.03-1.06x, flat
// the same; both against neither on the AVX2 path, flat 1.08-1.10x. A
// burst for a whole record at its start instead gained nothing.
// Prefetches never fault: past the batch's end they do nothing.
constexpr size_t kInputAhead = 1024;
__attribute__((always_inline)) inline void prefetch_input(const uint8_t* p) {
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + kInputAhead), 0);
}

#if ST_X86_64
#define ST_BMI2_TARGET __attribute__((target("bmi,bmi2")))
// With BMI2 the value is two instructions: the len bytes (bzhi), their
// low seven bits each, packed (pext).
struct BitsPext {
  ST_BMI2_TARGET static inline uint64_t value(uint64_t w, unsigned len) { return _pext_u64(_bzhi_u64(w, 8 * len), 0x7f7f7f7f7f7f7f7full); }
};
template <class T, class Conv>
ST_BMI2_TARGET __attribute__((flatten)) const uint8_t* varints_pext(const uint8_t* p, const uint8_t* q, const uint8_t* readable,
                                                                    T* out, size_t* k, Conv conv) {
  return varints_by_mask<BitsPext>(p, q, readable, out, k, conv);
}

// fast_pext tells whether the CPU has BMI2 with a fast pext, which every
// Intel CPU with BMI2 has and AMD's from Zen 3 (family 0x19) on; earlier
// AMD CPUs (Zen 1 and 2, family 0x17, and the 0x15 ones with BMI2) run it
// in microcode, tens to hundreds of cycles. Where it is slow, the packed
// decoders drop continuation bits with shifts and masks (squeeze7).
bool fast_pext() {
  static const bool on = [] {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("bmi2")) return false;
    if (__builtin_cpu_is("intel")) return true;
    unsigned a, b, c, d;
    if (!__builtin_cpu_is("amd") || !__get_cpuid(1, &a, &b, &c, &d)) return false;
    unsigned family = (a >> 8) & 0xf;
    if (family == 0xf) family += (a >> 20) & 0xff;
    return family >= 0x19;
  }();
  return on;
}

// packed_pext_off, set by a test (st_test_packed_tier), makes the packed
// decoders drop continuation bits as on CPUs with a slow pext, so that a
// CPU with a fast one runs that code too.
std::atomic<bool> packed_pext_off{false};

// packed_pext tells whether the packed decoders use pext.
inline bool packed_pext() { return fast_pext() && !packed_pext_off.load(std::memory_order_relaxed); }

// The AVX2 decoder needs AVX2 for its masks, BMI1/BMI2 (tzcnt, bzhi) and
// popcnt, which every CPU with AVX2 has: Intel from Haswell, AMD from Zen
// 1. Its prefetchw (prfchw) is a hint: Intel CPUs before Broadwell, which
// lack it, run it as a no-op.
#define ST_AVX2_TARGET __attribute__((target("avx2,bmi,bmi2,popcnt,prfchw")))

// prefetch_next_runs fetches for writing the bytes output lines after
// next (where a packed decoder's chunk ended): the next runs of the same
// field (a record later, after the other fields' runs) most likely write
// about as many values there each as this one. A record's fields write
// to as many columns, too many streams for the hardware prefetcher, and
// stores that miss fill the store buffer while each line comes from
// memory: the lines must be there before. (Prefetches never fault: past
// the column's buffer they do nothing useful, and no harm.) Inlined into
// the decoders, it prefetches for writing (prefetchw, their targets'
// prfchw). On flat records this took the AVX2 decoder from 1500 to 2000 MB
// per CPU-second on an AMD EPYC, and on an Intel Xeon (model 207) the
// AVX-512 one ran at half the speed without it (bench, ours-1t). The
// decoders ask for one run's bytes: the next run's, which each run then
// extends by its own. Twice that (each line asked for twice) was slower
// on the same Xeon: flat records, bench -run-one in alternating pairs,
// fastest calls 1-4% (AVX-512) and 4-10% (AVX2) fewer MB per CPU-second.
__attribute__((always_inline)) inline void prefetch_next_runs(const void* next, size_t bytes) {
  const uintptr_t at0 = reinterpret_cast<uintptr_t>(next);
  for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(reinterpret_cast<const void*>(at0 + at), 1);
}

// kEndsOfByte[b] lists the set bits of the byte b, each as its index plus
// one (where a value ending at that byte is followed by the next), in
// eight byte slots; the slots past popcount(b) hold zero, and what is
// stored from them is overwritten by the next byte's ends.
struct EndsOfByte {
  alignas(64) uint8_t at[256][8];
  constexpr EndsOfByte() : at() {
    for (int b = 0; b < 256; b++) {
      int n = 0;
      for (int i = 0; i < 8; i++) {
        if (b >> i & 1) at[b][n++] = uint8_t(i + 1);
      }
    }
  }
};
constexpr EndsOfByte kEndsOfByte;

// low32 packs the low 32 bits of each 64-bit lane into the low 128 bits.
ST_AVX2_TARGET __attribute__((always_inline)) inline __m128i low32(__m256i x) {
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0)));
}

// store4 converts four decoded varints (64-bit lanes, at most 56 bits
// used) as conv does and stores them at out: one store of 32, 16 or 4
// bytes.
template <class T, class Conv>
ST_AVX2_TARGET __attribute__((always_inline)) inline void store4(T* out, __m256i x, Conv conv) {
  using C = std::remove_const_t<Conv>;
  if constexpr (std::is_same_v<C, std::remove_const_t<decltype(as_u64)>>) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), x);
  } else if constexpr (std::is_same_v<C, std::remove_const_t<decltype(zigzag64)>>) {
    __m256i neg = _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_and_si256(x, _mm256_set1_epi64x(1)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_xor_si256(_mm256_srli_epi64(x, 1), neg));
  } else if constexpr (std::is_same_v<C, std::remove_const_t<decltype(as_u32)>>) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), low32(x));
  } else if constexpr (std::is_same_v<C, std::remove_const_t<decltype(zigzag32)>>) {
    __m128i u = low32(x);
    __m128i neg = _mm_sub_epi32(_mm_setzero_si128(), _mm_and_si128(u, _mm_set1_epi32(1)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_xor_si128(_mm_srli_epi32(u, 1), neg));
  } else {
    alignas(32) uint64_t v[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), x);
    T t[4] = {conv(v[0]), conv(v[1]), conv(v[2]), conv(v[3])};
    memcpy(out, t, sizeof(t));
  }
}

// decode4 decodes the four varints that start at p + at[0..3] (eight
// bytes readable from each) into four 64-bit lanes, and notes in
// *unended a lane with no terminator in its eight bytes: a value longer
// than eight bytes, whose lane holds garbage. Eight bytes from the start
// of each value, one per lane; each lane cut after its first terminator
// and its continuation bits dropped; two multiply-adds (pmaddubsw,
// pmaddwd) and a multiply close the gaps: 7 bits per byte -> 14 per 16 ->
// 28 per 32 -> 56 per 64.
//
// The step is bound by its count of instructions (27 for four values,
// the loop's own included), so each is spared where it can be: the lanes
// are loaded as a first and three broadcasts blended in (loads and
// blends, which run on any of three ports, where two inserts of two
// micro-ops each and a 128-bit insert queued on the one shuffle port); a
// lane is cut by s - 1 alone (s its terminators' top bits: every bit
// below the first terminator's, and above it only top bits, which the
// terminators have clear and the cut drops anyway); and the last gap is
// closed by one multiply-subtract (x - hi * (2^32 - 2^28), hi = x >> 32)
// where a mask, a shift, an add and a subtract were.
// Runs of one- to five-byte values in a harness of the decoder alone
// (Intel Xeon model 207, cache-resident, the two alternating twenty
// times): 1.085x the MB per CPU-second (the multiply 1.036x, the cut
// 1.036x more, the blends 1.01x more).
ST_AVX2_TARGET __attribute__((always_inline)) inline __m256i decode4(const uint8_t* p, const uint16_t* at, __m256i* unended) {
  const __m256i top1 = _mm256_set1_epi8(int8_t(0x80));
  const __m256i low7 = _mm256_set1_epi8(0x7f);
  const __m256i one64 = _mm256_set1_epi64x(1);
  const __m256i shift7 = _mm256_set1_epi16(int16_t(0x8001));  // bytes 1, 128: lo + 128 * hi
  const __m256i shift14 = _mm256_set1_epi32(0x40000001);      // words 1, 16384
  const __m256i close28 = _mm256_set1_epi64x(0xf0000000ll);    // 2^32 - 2^28
  uint64_t w0, w1, w2, w3;
  memcpy(&w0, p + at[0], 8);
  memcpy(&w1, p + at[1], 8);
  memcpy(&w2, p + at[2], 8);
  memcpy(&w3, p + at[3], 8);
  __m256i x = _mm256_castsi128_si256(_mm_cvtsi64_si128(int64_t(w0)));
  x = _mm256_blend_epi32(x, _mm256_set1_epi64x(int64_t(w1)), 0x0c);
  x = _mm256_blend_epi32(x, _mm256_set1_epi64x(int64_t(w2)), 0x30);
  x = _mm256_blend_epi32(x, _mm256_set1_epi64x(int64_t(w3)), 0xc0);
  // Each lane's bytes up to its first terminator (top bit clear).
  __m256i stop = _mm256_andnot_si256(x, top1);
  *unended = _mm256_or_si256(*unended, _mm256_cmpeq_epi64(stop, _mm256_setzero_si256()));
  x = _mm256_and_si256(_mm256_and_si256(x, low7), _mm256_sub_epi64(stop, one64));
  x = _mm256_maddubs_epi16(shift7, x);
  x = _mm256_madd_epi16(x, shift14);
  // lo + 2^28 * hi from lo + 2^32 * hi (lo and hi under 2^28).
  x = _mm256_sub_epi64(x, _mm256_mul_epu32(_mm256_srli_epi64(x, 32), close28));
  return x;
}

// varints_by_ends decodes the packed varints of [p, q) into out[*k...] as
// varints_by_mask does (the same contract: values complete in the run,
// reading no further than readable; it also decodes values of nine and
// ten bytes), in chunks of up to 512 bytes and two passes over each. The
// decoder by mask walks a step's mask value after value and leaves its
// loop at a different value in every step, a mispredicted branch every
// twenty values or so. Here the first pass only lists where the values
// end: 32 bytes' terminators at a time (vpmovmskb), each byte of the mask
// turned into the ends it holds by one table load (kEndsOfByte) and
// stored, eight slots at a time whatever their count, the count (popcnt)
// moving the next store on: no branch on the data. The second pass takes
// four values a step (decode4, store4), with no branch on their lengths
// and one store of the four. A step whose values are not all at most
// eight bytes says so, and in such a chunk (negative int64s are ten
// bytes) those values are decoded again, one at a time. The last values
// of a chunk (fewer than four) take a load and Bits::value each.
//
// The second pass reads the list back one slot at a time, never in wider
// loads: a load that spans several of the first pass's stores cannot
// take its data from them in flight and waits until they and every
// older store reach the cache, output stores included. Those wait for
// their lines from memory (a record's fields write to as many columns,
// too many streams for the hardware prefetcher), so each such load
// stalled the decoder on the previous run's output. On flat records
// (bench, ours-1t) the second pass in four-value steps and these loads
// together took this decoder from 0.78 to 0.87 of the AVX-512 one's MB
// per CPU-second; what is left is mostly the store width (the AVX-512
// decoder's 64-byte stores, against 32 here: with two 32-byte stores
// instead, it lost 7%).
template <class Bits, class T, class Conv>
ST_AVX2_TARGET __attribute__((always_inline)) inline const uint8_t* varints_by_ends(const uint8_t* p, const uint8_t* q,
                                                                                     const uint8_t* readable, T* out, size_t* k,
                                                                                     Conv conv) {
  constexpr size_t kChunk = 512;
  // ends[0] is the start of the chunk's first value; ends[i + 1] the
  // offset after value i. Eight slack slots take the unconditional
  // stores of the last mask byte.
  alignas(32) uint16_t ends[kChunk + 16];
  ends[0] = 0;
  size_t n = *k;
  // A pass reads whole 32-byte blocks and, from the start of each value,
  // eight bytes: the chunk ends 32 bytes before readable.
  while (p < q && readable - p > 64) {
    size_t lim = size_t(q - p);
    if (lim > kChunk) lim = kChunk;
    if (lim > size_t(readable - p) - 32) lim = size_t(readable - p) - 32;
    size_t m = 0;
    __m128i base = _mm_setzero_si128();
    const __m128i eight = _mm_set1_epi16(8);
    for (size_t at = 0; at < lim; at += 32) {
      if (at % 64 == 0) prefetch_input(p + at);
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + at));
      uint32_t stop = ~uint32_t(_mm256_movemask_epi8(v));
      if (lim - at < 32) stop = _bzhi_u32(stop, unsigned(lim - at));
#pragma GCC unroll 4
      for (int i = 0; i < 4; i++) {
        unsigned b = (stop >> (8 * i)) & 0xff;
        __m128i e = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kEndsOfByte.at[b])));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ends + 1 + m), _mm_add_epi16(e, base));
        m += unsigned(_mm_popcnt_u32(b));
        base = _mm_add_epi16(base, eight);
      }
    }
    if (m == 0) break;
    T* o = out + n;
    prefetch_next_runs(o + m, m * sizeof(T));
    __m256i unended = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 4 <= m; i += 4) store4(o + i, decode4(p, ends + i, &unended), conv);
    bool longer = !_mm256_testz_si256(unended, unended);
    for (; i < m && !longer; i++) {
      // (A longer value's store is garbage, redone below; len & 15 keeps
      // its shift count in range.)
      const uint32_t len = ends[i + 1] - ends[i];
      longer = len > 8;
      uint64_t w;
      memcpy(&w, p + ends[i], 8);
      T t = conv(Bits::value(w, 8 * (len & 15)));
      memcpy(o + i, &t, sizeof(T));
    }
    if (__builtin_expect(longer, 0)) {
      // Values of nine or ten bytes (negative int64s are ten) decode
      // here, one at a time, rather than end the chunk (its first pass
      // would be redone for each): a step's lanes are loaded apart, so
      // such a value spoils only its own, and those before i are found
      // sixteen at a time from the list; then every value from i, where
      // the steps or the loop above stopped. A longer one, or one
      // overflowing 64 bits, stops the decoder at its start, for the
      // caller to report. Decoding the whole chunk again instead cost
      // runs of one- to ten-byte values (a tenth of them ten) 1.5x the
      // time: 860-970 MB per CPU-second against 1390-1420 in a harness of
      // the decoder alone, cache-resident (Intel Xeon model 207); with one
      // ten-byte value in sixty the two are the same.
      auto again = [&](size_t v) ST_AVX2_TARGET __attribute__((always_inline)) {
        uint64_t value;
        const uint32_t len = ends[v + 1] - ends[v];
        if (len <= 8) {
          uint64_t w;
          memcpy(&w, p + ends[v], 8);
          value = Bits::value(w, 8 * len);
        } else if (!read_varint_unrolled(p + ends[v], &value)) {
          return false;
        }
        T t = conv(value);
        memcpy(o + v, &t, sizeof(T));
        return true;
      };
      const __m256i eight16 = _mm256_set1_epi16(8);
      for (size_t j = 0; j < i; j += 16) {
        const __m256i len = _mm256_sub_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ends + j + 1)),
                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ends + j)));
        uint32_t over = uint32_t(_mm256_movemask_epi8(_mm256_cmpgt_epi16(len, eight16)));  // two bits a value
        if (i - j < 16) over &= (1u << (2 * (i - j))) - 1;
        for (; over != 0; over &= over - 1, over &= over - 1) {
          const size_t v = j + size_t(__builtin_ctz(over)) / 2;
          if (!again(v)) {
            *k = n + v;
            return p + ends[v];
          }
        }
      }
      for (size_t v = i; v < m; v++) {
        if (!again(v)) {
          *k = n + v;
          return p + ends[v];
        }
      }
    }
    n += m;
    p += ends[m];
  }
  *k = n;
  return p;
}

// BitsSqueezeAVX2 is BitsSqueeze compiled for the AVX2 target (an
// always-inline function cannot inline across targets).
struct BitsSqueezeAVX2 {
  ST_AVX2_TARGET static inline uint64_t value(uint64_t w, unsigned bits) { return squeeze7(_bzhi_u64(w, bits)); }
};
struct BitsPextAVX2 {
  ST_AVX2_TARGET static inline uint64_t value(uint64_t w, unsigned bits) { return _pext_u64(_bzhi_u64(w, bits), 0x7f7f7f7f7f7f7f7full); }
};

// varints_avx2 is varints_by_ends with pext where it is fast
// (packed_pext) and shifts and masks elsewhere (AMD Zen 1 and 2).
template <class T, class Conv>
ST_AVX2_TARGET __attribute__((flatten)) const uint8_t* varints_avx2(const uint8_t* p, const uint8_t* q, const uint8_t* readable,
                                                                   T* out, size_t* k, Conv conv) {
  if (packed_pext()) return varints_by_ends<BitsPextAVX2>(p, q, readable, out, k, conv);
  return varints_by_ends<BitsSqueezeAVX2>(p, q, readable, out, k, conv);
}
#endif

// valid_utf8 (engine_shared.h) checks a string field's bytes.
using structtensor_engine::valid_utf8;

#ifdef ST_COUNT_DECODERS
// Packed runs decoded by each decoder, in test builds (the sanitizer
// runner), so that a test knows which one ran: AVX-512, portable (of
// them, those that took the AVX2 decoder, packed_runs_avx2, and those
// that took the pext one, packed_runs_pext).
std::atomic<int64_t> packed_runs_vector{0}, packed_runs_portable{0}, packed_runs_avx2{0}, packed_runs_pext{0};
#endif

#if ST_X86_64
// The AVX-512 packed-varint decoder needs VBMI (byte permutes) and VBMI2
// (byte compress), with BMI2 for its masks: Ice Lake and later Intel
// server cores, AMD Zen 4 and later.
#define ST_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt,prfchw")))

// cpu_has_avx512_vbmi2 tells whether the CPU has every feature the
// AVX-512 packed-varint decoder needs.
bool cpu_has_avx512_vbmi2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("popcnt");
}

// cpu_has_avx2 tells whether the CPU has every feature the AVX2 decoder
// needs.
bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("popcnt");
}
#endif

// The packed-varint decoders, from the fastest: AVX-512 VBMI2
// (varints_avx512), AVX2 (varints_avx2), 64-byte masks with BMI2's pext
// where it is fast (varints_pext), and the same masks with shifts
// (varints_portable), which any CPU runs.
enum PackedTier : int { kPackedAVX512 = 0, kPackedAVX2 = 1, kPackedBMI2 = 2, kPackedScalar = 3 };

// packed_tier_forced, when not -1, is a tier a test forces
// (st_test_packed_tier); packed_tier never goes above the CPU's.
std::atomic<int> packed_tier_forced{-1};

// packed_tier_of_cpu returns the tier of the decoder packed varints take:
// the best the CPU has, unless STRUCTTENSOR_NATIVE_PORTABLE names a lower
// one (so that tests and benchmarks reach the code of other CPUs): "0" or
// unset, the best; "1" or "avx2", none with AVX-512; "bmi2", none with
// AVX2 either; "scalar", none with BMI2. Any other value counts as "1",
// as before the tiers had names.
int packed_tier_of_cpu() {
  static const int tier = [] {
    int best = kPackedScalar;
#if ST_X86_64
    if (cpu_has_avx512_vbmi2()) {
      best = kPackedAVX512;
    } else if (cpu_has_avx2()) {
      best = kPackedAVX2;
    } else if (fast_pext()) {
      best = kPackedBMI2;
    }
#endif
    int want = kPackedAVX512;
    const char* portable = getenv("STRUCTTENSOR_NATIVE_PORTABLE");
    if (portable && *portable && strcmp(portable, "0") != 0) {
      if (strcmp(portable, "scalar") == 0) {
        want = kPackedScalar;
      } else if (strcmp(portable, "bmi2") == 0) {
        want = kPackedBMI2;
      } else {
        want = kPackedAVX2;
      }
    }
    return want > best ? want : best;
  }();
  return tier;
}

// packed_tier is packed_tier_of_cpu, or the lower tier a test forces.
inline int packed_tier() {
  int forced = packed_tier_forced.load(std::memory_order_relaxed);
  int tier = packed_tier_of_cpu();
  return forced > tier ? forced : tier;
}

#if ST_X86_64
// The vector forms of the packed-varint conversions: each turns eight
// decoded varints (64-bit lanes, at most 56 bits used) into the column's
// type and stores the lanes that mask selects.
struct VecU64 {
  using T = uint64_t;
  ST_AVX512_TARGET static inline void store(T* out, __mmask8 m, __m512i x) { _mm512_mask_storeu_epi64(out, m, x); }
};
struct VecU32 {  // int32, uint32, enum: the low 32 bits, as protobuf truncates
  using T = uint32_t;
  ST_AVX512_TARGET static inline void store(T* out, __mmask8 m, __m512i x) { _mm512_mask_cvtepi64_storeu_epi32(out, m, x); }
};
struct VecZigzag64 {
  using T = int64_t;
  ST_AVX512_TARGET static inline void store(T* out, __mmask8 m, __m512i x) {
    __m512i neg = _mm512_sub_epi64(_mm512_setzero_si512(), _mm512_and_si512(x, _mm512_set1_epi64(1)));
    _mm512_mask_storeu_epi64(out, m, _mm512_xor_si512(_mm512_srli_epi64(x, 1), neg));
  }
};
struct VecZigzag32 {
  using T = int32_t;
  ST_AVX512_TARGET static inline void store(T* out, __mmask8 m, __m512i x) {
    x = _mm512_and_si512(x, _mm512_set1_epi64(0xffffffff));
    __m512i neg = _mm512_sub_epi64(_mm512_setzero_si512(), _mm512_and_si512(x, _mm512_set1_epi64(1)));
    _mm512_mask_cvtepi64_storeu_epi32(out, m, _mm512_xor_si512(_mm512_srli_epi64(x, 1), neg));
  }
};
struct VecBool {
  using T = uint8_t;
  ST_AVX512_TARGET static inline void store(T* out, __mmask8 m, __m512i x) {
    __m512i b = _mm512_maskz_mov_epi64(_mm512_test_epi64_mask(x, x), _mm512_set1_epi64(1));
    _mm512_mask_cvtepi64_storeu_epi8(out, m, b);
  }
};

// kIota holds the bytes 0..63: a byte's place in a 64-byte load.
alignas(64) constexpr uint8_t kIota[64] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

// bytes_before masks the bytes of a 64-byte load that lie before the end
// of the run, avail bytes on: a masked load reads nothing past it.
ST_AVX512_TARGET __attribute__((always_inline)) inline __mmask64 bytes_before(size_t avail) {
  return avail >= 64 ? ~__mmask64(0) : _bzhi_u64(~uint64_t(0), unsigned(avail));
}

// varints_avx512_steps decodes the packed varints of [p, q) into
// out[*k...] as varints_avx512 does, for runs of up to 64 bytes, whose
// values one or two steps take: a step loads the next 64 bytes (masked at
// q), takes the mask of their terminating bytes, and keeps the first
// sixteen values that end before any run of eight continuation bytes
// (values of up to eight bytes); their ends, compressed into a vector,
// give each value's first and last byte, one byte permute gathers each
// into a 64-bit lane, zero past its last byte, and three shift-and-select
// steps squeeze out the continuation bits. It stops at a value longer
// than eight bytes, for the caller's scalar decoder. Each step starts
// where the one before ended, a chain the two passes of varints_avx512
// avoid on longer runs; on short ones (tf.Example's lists) this costs
// less than setting up the passes.
template <class V>
ST_AVX512_TARGET __attribute__((always_inline)) inline const uint8_t* varints_avx512_steps(const uint8_t* p, const uint8_t* q, typename V::T* out, size_t* k) {
  const __m512i iota = _mm512_load_si512(kIota);
  // Byte 8j+b of lane j: b (the byte's place in its value) and j (which
  // value of the group of eight it belongs to).
  const __m512i place = _mm512_and_si512(iota, _mm512_set1_epi8(7));
  const __m512i value0 = _mm512_and_si512(_mm512_srli_epi16(iota, 3), _mm512_set1_epi8(7));
  const __m512i value1 = _mm512_add_epi8(value0, _mm512_set1_epi8(8));
  const __m512i one = _mm512_set1_epi8(1);
  const __m512i previous = _mm512_sub_epi8(iota, one);
  const __m512i low7 = _mm512_set1_epi8(0x7f);
  const __m512i keep7 = _mm512_set1_epi16(0x007f);
  const __m512i keep14 = _mm512_set1_epi32(0x3fff);
  const __m512i keep28 = _mm512_set1_epi64(0x0fffffff);
  size_t n = *k;
  while (p < q) {
    __mmask64 valid = bytes_before(size_t(q - p));
    __m512i w = _mm512_maskz_loadu_epi8(valid, p);
    uint64_t cont = _mm512_movepi8_mask(w);  // zero past q: the load zeroed those bytes
    uint64_t stop = ~cont & valid;
    // run: where eight continuation bytes in a row start. A value that
    // ends before the first of them is at most eight bytes long.
    uint64_t run = cont & (cont >> 1);
    run &= run >> 2;
    run &= run >> 4;
    uint64_t ends = stop & (run - 1) & ~run;
    int m = __builtin_popcountll(ends);
    if (m == 0) break;
    if (m > 16) m = 16;
    uint64_t last = _pdep_u64(uint64_t(1) << (m - 1), ends);  // the m-th terminator
    ends &= last | (last - 1);
    __m512i end_at = _mm512_maskz_compress_epi8(ends, iota);
    // Value i starts after value i-1's last byte; value 0 at 0.
    __m512i start_at = _mm512_maskz_permutexvar_epi8(~__mmask64(1), previous, _mm512_add_epi8(end_at, one));
    for (int g = 0; g < 2; g++) {
      const __m512i value = g ? value1 : value0;
      __m512i idx = _mm512_add_epi8(_mm512_permutexvar_epi8(value, start_at), place);
      __mmask64 in = _mm512_cmple_epu8_mask(idx, _mm512_permutexvar_epi8(value, end_at));
      __m512i x = _mm512_and_si512(_mm512_maskz_permutexvar_epi8(in, idx, w), low7);
      // Seven bits per byte -> 14 per 16-bit unit -> 28 per 32 -> 56 per
      // 64: keep the low part, take the rest from one shift down (0xe4:
      // keep ? a : b). Bits above each part are zero by the end.
      x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 1), keep7, 0xe4);
      x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 2), keep14, 0xe4);
      x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 4), keep28, 0xe4);
      int lanes = m - 8 * g;
      V::store(out + n + 8 * g, __mmask8(lanes >= 8 ? 0xff : (1u << lanes) - 1), x);
      if (m <= 8) break;
    }
    n += size_t(m);
    p += __builtin_ctzll(last) + 1;
  }
  *k = n;
  return p;
}

// varints_avx512 decodes the packed varints of [p, q) into out[*k...]
// and returns where it stopped: q, or the start of a value it leaves to
// the scalar decoder (one cut short by the end of the run, or longer than
// ten bytes or overflowing 64 bits, which the scalar decoder reports).
//
// A chunk of up to 1 KiB takes two passes, so that no step waits for the
// one before it. A decoder that steps from value to value
// (varints_avx512_steps) finds where its next step starts only at the end
// of the step before (load, terminator mask, mask move, count, select): on
// an Intel Xeon (model 207, Emerald Rapids) that chain held flat records
// to 0.81-0.90 of the AVX2 decoder's MB per CPU-second, and a profile put
// a quarter of the decoder's samples on the load that starts each step.
// Here the first pass loads 64 bytes at a fixed stride, takes the mask of
// their terminating bytes (top bit clear), compresses the positions after
// them (vpcompressb), widens them
// to 16 bits and stores them, 64 slots whatever their count, the count
// (popcnt) moving the next store on: the list of where each value ends.
// The second pass takes eight values a step: their starts and ends from
// the list, relative to the first start, spread over each 64-bit lane's
// bytes (two byte permutes), one 64-byte load from the first start (eight
// values of up to eight bytes fit) and one byte permute gathering each
// value into its lane, zero past its last byte; two multiply-adds
// (pmaddubsw, pmaddwd) and a shift-and-select squeeze out the
// continuation bits, and a store of the converted lanes finishes the
// step. There is no branch on the data. Every load stops at q: whole
// while 64 bytes remain, masked after.
//
// The steps are laid along the output, not the list: the first takes the
// values up to the first 64-byte boundary of the output (of 8 *
// sizeof(T) bytes for narrower types), so that every whole step writes
// one aligned line instead of two halves (flat records, cache-resident,
// Intel Xeon model 207: 3-4% more MB per CPU-second).
//
// A value longer than eight bytes (negative int64s are ten) does not fit
// a lane: its lane's eight bytes are all continuation bytes. Bytes past a
// value's end enter the lane as 0x80, so that the lane of a value of any
// length whose eight bytes are continuation bytes, or that has none
// within its end, is found by one minimum over the chunk (a lane of zero
// once the terminating bits are kept: vpminuq); the steps holding one
// are found again from the list of ends, exact in 16 bits, and decoded
// again after the pass, four values a step, one to a 128-bit lane
// (wide_step), a value over ten bytes or overflowing 64 bits left to the
// caller's scalar decoder. Runs of values of one to ten bytes (a tenth of
// them ten) decoded 2.9x faster when each value took one masked load and
// pext instead of the general varint reader, and 1.2-1.3x faster again
// four to a step (nine-byte values too). The decoder before kept each
// step's start in a list, a store at an index the step before's test
// moved: the same flat records decoded 5-6% faster with the minimum.
template <class V>
ST_AVX512_TARGET const uint8_t* varints_avx512(const uint8_t* p, const uint8_t* q, typename V::T* out, size_t* k) {
  if (q - p <= 64) return varints_avx512_steps<V>(p, q, out, k);
  using T = typename V::T;
  constexpr size_t kChunk = 1024;
  // ends[0] is 0, the chunk's first value's start; ends[i + 1] the offset
  // after value i. The first pass's last stores reach 64 slots past the
  // count; the second pass reads sixteen slots from each step's first.
  alignas(64) uint16_t ends[kChunk + 80];
  // Byte 8j+b of lane j takes byte 2j of a vector of 16-bit slots: slot
  // j's low byte (the offsets of eight values of up to eight bytes differ
  // by less than 256, so low bytes subtract exactly).
  alignas(64) static const uint8_t kSpread[64] = {
      0, 0, 0, 0, 0, 0, 0, 0, 2,  2,  2,  2,  2,  2,  2,  2,  4,  4,  4,  4,  4,  4,  4,  4,  6,  6,  6,  6,  6,  6,  6,  6,
      8, 8, 8, 8, 8, 8, 8, 8, 10, 10, 10, 10, 10, 10, 10, 10, 12, 12, 12, 12, 12, 12, 12, 12, 14, 14, 14, 14, 14, 14, 14, 14};
  const __m512i after = _mm512_add_epi8(_mm512_load_si512(kIota), _mm512_set1_epi8(1));  // the offset after each byte
  const __m512i spread_start = _mm512_load_si512(kSpread);
  const __m512i spread_end = _mm512_add_epi8(spread_start, _mm512_set1_epi8(2));  // slot j + 1
  const __m512i place = _mm512_set1_epi64(0x0706050403020100ll);
  const __m512i low7 = _mm512_set1_epi8(0x7f);
  const __m512i tops = _mm512_set1_epi8(char(0x80));
  const __m512i shift7 = _mm512_set1_epi16(int16_t(0x8001));  // bytes 1, 128: lo + 128 * hi
  const __m512i shift14 = _mm512_set1_epi32(0x40000001);      // words 1, 16384
  const __m512i keep28 = _mm512_set1_epi64(0x0fffffff);
  // For values of nine and ten bytes (wide_step), one to a 128-bit lane:
  // byte 16j+b takes slot j's low byte (start) or slot j+1's (end).
  alignas(64) static const uint8_t kSpread16[64] = {
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
      4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6};
  const __m512i spread16_start = _mm512_load_si512(kSpread16);
  const __m512i spread16_end = _mm512_add_epi8(spread16_start, _mm512_set1_epi8(2));
  const __m512i place16 = _mm512_set4_epi32(0x0f0e0d0c, 0x0b0a0908, 0x07060504, 0x03020100);
  const __m128i ten = _mm_set1_epi16(10);
  const __m512i over64 = _mm512_set1_epi64(~int64_t(0xff));  // a high half's bits past the value's 64
  size_t n = *k;
  ends[0] = 0;
  while (p < q) {
    size_t lim = size_t(q - p);
    if (lim > kChunk) lim = kChunk;
    size_t m = 0;
    for (size_t at = 0; at < lim; at += 64) {
      prefetch_input(p + at);
      __mmask64 valid = bytes_before(lim - at);
      __m512i w = _mm512_maskz_loadu_epi8(valid, p + at);
      uint64_t stop = ~uint64_t(_mm512_movepi8_mask(w)) & valid;
      __m512i e = _mm512_maskz_compress_epi8(stop, after);
      __m512i base = _mm512_set1_epi16(int16_t(at));
      _mm512_storeu_si512(ends + 1 + m, _mm512_add_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(e)), base));
      _mm512_storeu_si512(ends + 33 + m, _mm512_add_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(e, 1)), base));
      m += size_t(__builtin_popcountll(stop));
    }
    if (m == 0) break;  // no value ends in the chunk: the scalar decoder's error
    T* o = out + n;
    prefetch_next_runs(o + m, m * sizeof(T));
    // A step whose first value starts at or before whole loads 64 bytes
    // whole.
    const ptrdiff_t whole = (q - p) - 64;
    // Lane by lane, the least of each step's terminating bits (0x80 in
    // each byte that ends its value): zero in a lane of a longer value.
    __m512i ended = tops;
    // step decodes values i..i+count-1 (count <= 8).
    auto step = [&](size_t i, size_t count) ST_AVX512_TARGET __attribute__((always_inline)) {
      const unsigned first = ends[i];
      __m256i rel = _mm256_sub_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ends + i)), _mm256_set1_epi16(int16_t(first)));
      __m512i rel512 = _mm512_castsi256_si512(rel);
      __m512i idx = _mm512_add_epi8(_mm512_permutexvar_epi8(spread_start, rel512), place);
      __mmask64 in = _mm512_cmplt_epu8_mask(idx, _mm512_permutexvar_epi8(spread_end, rel512));
      const uint8_t* at = p + first;
      __m512i w = ptrdiff_t(first) <= whole ? _mm512_loadu_si512(at) : _mm512_maskz_loadu_epi8(bytes_before(size_t(q - at)), at);
      __m512i x = _mm512_mask_permutexvar_epi8(tops, in, idx, w);
      const __mmask8 lanes = __mmask8((1u << count) - 1);
      ended = _mm512_mask_min_epu64(ended, lanes, ended, _mm512_andnot_si512(x, tops));
      // Seven bits per byte -> 14 per 16-bit unit -> 28 per 32 -> 56 per
      // 64 (the last: keep the low 28, the rest from four bits down).
      x = _mm512_maddubs_epi16(shift7, _mm512_and_si512(x, low7));
      x = _mm512_madd_epi16(x, shift14);
      x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 4), keep28, 0xe4);
      V::store(o + i, lanes, x);
    };
    // wide_step decodes values i..i+count-1 (count <= 4) of up to ten
    // bytes each, one to a 128-bit lane: as step does, sixteen bytes from
    // each start, whose second eight (two bytes at most) squeeze into the
    // value's top eight bits. It returns false, storing nothing, when one
    // is longer than ten bytes or its tenth byte is over 1.
    auto wide_step = [&](size_t i, size_t count) ST_AVX512_TARGET __attribute__((always_inline)) {
      const __mmask8 lanes = __mmask8((1u << count) - 1);
      const __m128i len = _mm_sub_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ends + i + 1)),
                                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(ends + i)));
      if (_mm_mask_cmpgt_epu16_mask(lanes, len, ten) != 0) return false;
      const unsigned first = ends[i];
      __m512i rel = _mm512_castsi128_si512(_mm_sub_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ends + i)), _mm_set1_epi16(int16_t(first))));
      __m512i idx = _mm512_add_epi8(_mm512_permutexvar_epi8(spread16_start, rel), place16);
      __mmask64 in = _mm512_cmplt_epu8_mask(idx, _mm512_permutexvar_epi8(spread16_end, rel));
      const uint8_t* at = p + first;
      __m512i x = _mm512_maskz_permutexvar_epi8(in, idx, _mm512_maskz_loadu_epi8(bytes_before(size_t(q - at)), at));
      x = _mm512_maddubs_epi16(shift7, _mm512_and_si512(x, low7));
      x = _mm512_madd_epi16(x, shift14);
      x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 4), keep28, 0xe4);
      // Lane j: bits 0-55 in its low 64, bits 56-69 in its high 64.
      if (_mm512_mask_test_epi64_mask(__mmask8(_pdep_u32(lanes, 0xaa)), x, over64) != 0) return false;
      x = _mm512_or_si512(x, _mm512_bsrli_epi128(_mm512_slli_epi64(x, 56), 8));
      V::store(o + i, lanes, _mm512_maskz_compress_epi64(0x55, x));
      return true;
    };
    // The values before the output's next line, then whole lines.
    size_t lead = (8 - reinterpret_cast<uintptr_t>(o) / sizeof(T)) & 7;
    if (lead > m) lead = m;
    if (lead) step(0, lead);
    size_t i = lead;
    for (; i + 8 <= m; i += 8) step(i, 8);
    if (i < m) step(i, m - i);
    if (_mm512_test_epi64_mask(ended, ended) != 0xff) {
      // A value longer than eight bytes: the steps holding one, again.
      for (size_t j = 0; j < m;) {
        const size_t from = j < lead ? 0 : lead + ((j - lead) & ~size_t(7));
        const size_t to = std::min(j < lead ? lead : from + 8, m);
        bool longer = false;
        for (size_t v = from; v < to; v++) longer |= ends[v + 1] - ends[v] > 8;
        for (size_t v = from; longer && v < to; v += 4) {
          const size_t count = std::min(to - v, size_t(4));
          if (wide_step(v, count)) continue;
          // A value of more than ten bytes, or whose tenth byte is over 1
          // (protobuf-go's limits): the values before it by the general
          // reader, and an error at its start for the caller to report.
          for (size_t u = v; u < v + count; u++) {
            uint64_t value;
            if (!read_varint(p + ends[u], p + ends[u + 1], &value)) {
              *k = n + u;
              return p + ends[u];
            }
            V::store(o + u, 1, _mm512_set1_epi64(int64_t(value)));
          }
        }
        j = to;
      }
    }
    n += m;
    p += ends[m];
  }
  *k = n;
  return p;
}
#else
// Without x86-64 the conversions are scalar only: the element types.
struct VecU64 { using T = uint64_t; };
struct VecU32 { using T = uint32_t; };
struct VecZigzag64 { using T = int64_t; };
struct VecZigzag32 { using T = int32_t; };
struct VecBool { using T = uint8_t; };
#endif

// varints_by_tier runs the packed decoder of a tier below AVX-512 on
// [p, q) (see varints_by_mask for the contract; readable - p >= 72).
template <class T, class Conv>
__attribute__((always_inline)) inline const uint8_t* varints_by_tier(int tier, const uint8_t* p, const uint8_t* q,
                                                                     const uint8_t* readable, T* out, size_t* k, Conv conv) {
#if ST_X86_64
  if (tier == kPackedAVX2) return varints_avx2(p, q, readable, out, k, conv);
  if (tier == kPackedBMI2 && packed_pext()) return varints_pext(p, q, readable, out, k, conv);
#endif
  return varints_portable(p, q, readable, out, k, conv);
}

#ifdef ST_COUNT_DECODERS
// count_fast_run counts a packed run that the decoder of tier (below
// AVX-512) decoded at least in part.
inline void count_fast_run(int tier) {
#if ST_X86_64
  if (tier == kPackedAVX2) packed_runs_avx2.fetch_add(1, std::memory_order_relaxed);
  if (tier == kPackedBMI2 && packed_pext()) packed_runs_pext.fetch_add(1, std::memory_order_relaxed);
#else
  (void)tier;
#endif
}
#endif

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_WIRE_H_
