// What the engine (engine.cc) shares with the feature decoder
// (example.cc), the library's other translation unit: the process's pool
// of worker threads and its thread limit, so that both decoders run on
// the same threads and a limit set once (st_set_thread_limit) bounds
// both; the rules of splitting a batch's chunks between threads
// (engine.cc, above SplitBatch), so that both split alike and under one
// test switch (st_test_steal); and UTF-8 validation, of a string field
// (engine.cc) and of a feature's strings (example.cc); and the allocator
// of whole cache lines for what each thread's decoder writes as it walks.
// Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_SHARED_H_
#define STRUCTTENSOR_NATIVE_ENGINE_SHARED_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace structtensor_engine {

// LineAllocator allocates whole cache lines. What a thread's decoder
// writes at every element or value (the engine's Decoder::counts,
// oneof_marks and deferred; the feature decoder's Chunk::out and state)
// must share no line with what another thread writes: the decoders of a
// batch's chunks are made one after the other, their small arrays then
// lay side by side in the heap, and when one line held both threads'
// the line went back and forth between the cores at every write. On
// tf.Examples in 32 MB batches on two threads (Intel Xeon model 167,
// KVM), about one call in eight took 2.5 times as long, both threads
// walking at 40% of their speed; with whole lines, none. (The decoders
// themselves are aligned to a line, alignas, for their own such fields:
// the record walked, at.)
template <class T>
struct LineAllocator {
  using value_type = T;
  static constexpr size_t kLine = 64;
  LineAllocator() = default;
  template <class U>
  LineAllocator(const LineAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n > (SIZE_MAX - kLine) / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = std::max<size_t>((n * sizeof(T) + kLine - 1) / kLine * kLine, kLine);
    void* p = aligned_alloc(kLine, bytes);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { free(p); }
  template <class U>
  bool operator==(const LineAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const LineAllocator<U>&) const { return false; }
};
template <class T>
using LineVector = std::vector<T, LineAllocator<T>>;

// valid_utf8 matches Go's utf8.Valid: no overlong forms, no surrogates,
// nothing past U+10FFFF.
__attribute__((always_inline)) inline bool valid_utf8(const uint8_t* s, size_t n) {
  // Most strings are ASCII: one pass decides, by words. The last bytes
  // come in two loads that may overlap (of 8, 4, 2 or 1 bytes, within the
  // string) rather than one at a time: most strings are short, and a
  // byte loop's exit mispredicts with every length.
  uint64_t acc = 0;
  if (n >= 8) {
    for (size_t k = 0; k + 8 < n; k += 8) {
      uint64_t w;
      memcpy(&w, s + k, 8);
      acc |= w;
    }
    uint64_t w;
    memcpy(&w, s + n - 8, 8);
    acc |= w;
  } else if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    acc = a | b;
  } else if (n >= 2) {
    uint16_t a, b;
    memcpy(&a, s, 2);
    memcpy(&b, s + n - 2, 2);
    acc = a | b;
  } else if (n == 1) {
    acc = s[0];
  }
  if ((acc & 0x8080808080808080ull) == 0) return true;
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    uint8_t c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return false;
    }
    if (n - i - 1 < need) return false;
    if (s[i + 1] < lo || s[i + 1] > hi) return false;
    for (size_t k = 2; k <= need; k++) {
      if (s[i + k] < 0x80 || s[i + k] > 0xbf) return false;
    }
    i += need + 1;
  }
  return true;
}

// valid_utf8_strings reports whether each of the count strings
// data[offsets[i]:offsets[i+1]] (offsets from 0, never decreasing, the
// last within data) is valid UTF-8 on its own, as Go's
// structtensor.ValidUTF8Strings does: the concatenation is valid and no
// string starts inside a character, which in valid UTF-8 is exactly a
// string starting at a continuation byte (10xxxxxx).
inline bool valid_utf8_strings(const uint8_t* data, const int64_t* offsets, size_t count) {
  if (count == 0) return true;
  const int64_t end = offsets[count];
  if (!valid_utf8(data, size_t(end))) return false;
  for (size_t i = 1; i < count; i++) {
    const int64_t o = offsets[i];
    if (o < end && (data[o] & 0xc0) == 0x80) return false;
  }
  return true;
}

// run_on_workers calls fn on the calling thread and on up to helpers
// pool threads, and returns once every call that started has returned.
// Helpers that are busy or cannot start are not waited for, so fn must
// share its work out (an atomic counter of items, say) rather than
// expect helpers + 1 calls.
void run_on_workers(int64_t helpers, const std::function<void()>& fn);

// BriefMutex guards what a decode's threads share and hold for a few
// microseconds at a time, at every stretch of records: lock spins a
// while before it sleeps. A glibc mutex sleeps in the kernel as soon as
// it finds the lock taken, and in a virtual machine the sleeper wakes
// tens of microseconds after the lock is let go: on tf.Examples by
// feature in 8 MB batches on two threads (Intel Xeon model 167, KVM),
// the feature decoder's threads met the lock of its stretches taken
// about once a batch and waited 41 us a batch for it (mean; the median
// 11), where the holder's section lasts a few.
class BriefMutex {
 public:
  void lock() {
    if (mu_.try_lock()) return;
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1;; i++) {
      __builtin_ia32_pause();
      if (mu_.try_lock()) return;
      if (i % 16 == 0 && std::chrono::steady_clock::now() >= until) break;
    }
    mu_.lock();
  }
  bool try_lock() { return mu_.try_lock(); }
  void unlock() { mu_.unlock(); }

 private:
  // Longer than any section it guards lasts, unless its thread is
  // preempted.
  static constexpr std::chrono::microseconds kSpin{20};
  std::mutex mu_;
};

// thread_count is the number of threads a decode asked for no number
// (threads <= 0) uses: the limit set by st_set_thread_limit, else the
// CPUs the process may run on.
int32_t thread_count();

// Splitting. A chunk being walked is open to a split (kSplitOpen); a
// thread done with its own asks it (kSplitAsked), offering a fresh
// chunk, the tail; the walk answers between two records, in the tail
// (kSplitGiven, the tail to run, or kSplitDeclined), and opens again; it
// closes (kSplitClosed) when it ends, declining a split asked for then.
enum SplitState : int32_t { kSplitOpen = 0, kSplitAsked = 1, kSplitClosed = 2 };
enum SplitAnswer : int32_t { kSplitPending = 0, kSplitGiven = 1, kSplitDeclined = 2 };

// kMinSplitBytes is the least input a chunk must have left to be split:
// under it the tail costs more (its outputs, its pieces to move) than
// it saves.
constexpr int64_t kMinSplitBytes = int64_t(64) << 10;

// split_mode is st_test_steal's switch: -1 never split, 0 by the rules
// above, 1 split whatever is left (2 records or more), 2 the same, the
// first chunk's walk slowed down until the batch's first split
// (slow_walk), 3 the same with the last chunk's.
int32_t split_mode();

// lend_room is the room to lend an output whose last batch, scaled to
// this one, holds scaled things of unit size each (a string's bytes, on
// average; 1 for counted elements), on chunks chunks, at most bound: the
// policy engine_sizing.h explains (1/32, three square roots of the count
// per chunk, and 16 more), which the feature decoder's guesses
// (example.cc) share.
inline int64_t lend_room(double scaled, double unit, int64_t chunks, int64_t bound) {
  const double spread = 3 * std::sqrt(scaled * unit * double(std::max<int64_t>(chunks, 1)));
  return std::min(int64_t(scaled + scaled / 32 + spread) + 16, bound);
}

// split_point returns the record where a chunk at record i, ending at hi,
// splits (half its bytes left each side) in a batch whose records'
// bytes have the prefix sums prefix, or -1 when it is not to be split.
int64_t split_point(const int64_t* prefix, int64_t i, int64_t hi);

// count_split counts a split made (st_test_splits).
void count_split();

// wait_for_answer is one turn of a wait for another thread's walk to
// answer a request (a hand-over, a split) at its next record: soon,
// unless the record is a long one (or its thread is not running), when
// the wait sleeps rather than spin a core that the CPU time counts.
inline void wait_for_answer(int spins) {
  if (spins < 64) {
    __builtin_ia32_pause();
  } else if (spins < 256) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// preceded_by_failure tells whether a chunk that failed comes before c in
// order (record order; under the lock that guards it and each chunk's
// chunk_failed): c's output would be discarded, its error not the first.
// Only such a chunk may be skipped; one before the first failure must
// run, or a later record's error would be reported as the batch's.
template <class C>
bool preceded_by_failure(const std::vector<C*>& order, const C* c) {
  for (const C* e : order) {
    if (e == c) return false;
    if (e->chunk_failed) return true;
  }
  return false;
}

// ask_for_split is a thread's turn at splitting, done with its chunks:
// it asks the chunk of order (record order, guarded by mu) with the most
// input left (prefix: the records' bytes' prefix sums) to split, offering
// a fresh chunk from make_tail, and returns the tail given, for the
// calling thread to run, or null when no chunk is worth it (or failed is
// set). A chunk C has claimed (a thread runs it or will; guarded by mu),
// split, split_tail, split_answer, run_hi and at; the chunk split places
// the tail in order and takes ownership of it, so that a tail is owned
// once it is in order.
template <class C, class MakeTail>
C* ask_for_split(std::mutex& mu, const std::vector<C*>& order, const int64_t* prefix, const std::atomic<bool>& failed,
                 const MakeTail& make_tail) {
  std::unique_ptr<C> tail;
  for (int tries = 0; tries < 8; tries++) {
    if (failed.load(std::memory_order_relaxed) || split_mode() < 0) return nullptr;
    C* victim = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu);
      int64_t most = 0;
      for (C* c : order) {
        if (!c->claimed || c->split.load(std::memory_order_relaxed) != kSplitOpen) continue;
        const int64_t left = prefix[c->run_hi.load(std::memory_order_relaxed)] - prefix[c->at.load(std::memory_order_relaxed)];
        if (left > most) {
          most = left;
          victim = c;
        }
      }
      if (!victim || (most < kMinSplitBytes && split_mode() == 0)) return nullptr;
      if (!tail) {
        // The tail is made once a chunk is worth splitting (a decoder
        // for a plan of hundreds of outputs is as many allocations, for
        // nothing at a batch's end), outside the lock; then the choice
        // is made again.
        lock.unlock();
        tail = make_tail();
        continue;
      }
      victim->split_tail = tail.get();
      tail->split_answer.store(kSplitPending, std::memory_order_relaxed);
      int32_t s = kSplitOpen;
      if (!victim->split.compare_exchange_strong(s, kSplitAsked, std::memory_order_acq_rel)) continue;
    }
    // The victim answers at its next record, or declines at its end.
    int32_t s;
    for (int spins = 0; (s = tail->split_answer.load(std::memory_order_acquire)) == kSplitPending; spins++) {
      wait_for_answer(spins);
    }
    if (s == kSplitGiven) return tail.release();  // owned by the victim's batch
  }
  return nullptr;
}

}  // namespace structtensor_engine

#endif  // STRUCTTENSOR_NATIVE_ENGINE_SHARED_H_
