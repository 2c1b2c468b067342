// runner drives the engine from C++ alone, for two uses that Go cannot
// serve: running it under AddressSanitizer/UBSan (native's
// TestEngineUnderSanitizers builds it with -fsanitize=address,undefined and
// feeds it plans and records), and measuring the engine without cgo and
// the Go-side copy.
//
//	g++ -std=c++17 -O2 -pthread -I native native/engine.cc native/internal/runner/runner.cc -o runner
//	runner PLAN RECORDS [iterations|each] [threads]
//
// PLAN holds a plan's byte form; RECORDS holds varint-length-delimited
// records. Every column and partition is copied out after each decode. It
// prints one line: "ok" with a checksum and the throughput, or "error"
// with the engine's error (a bad record is not a failure of the runner).
// With "each", every record is decoded as a batch of its own and the
// line counts the records that decoded and those that failed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "include/structtensor_native.h"

// Packed runs each packed-varint decoder took (engine.cc, built with
// -DST_COUNT_DECODERS): the last line of the output names them (avx2 and
// pext count the portable runs that took the AVX2 and the pext decoder).
extern "C" void st_count_packed_runs(int64_t* vector, int64_t* portable, int64_t* avx2, int64_t* pext);

static void print_decoders() {
  int64_t vector = 0, portable = 0, avx2 = 0, pext = 0;
  st_count_packed_runs(&vector, &portable, &avx2, &pext);
  printf("decoders packed_vector=%lld packed_portable=%lld packed_avx2=%lld packed_pext=%lld\n", (long long)vector,
         (long long)portable, (long long)avx2, (long long)pext);
}

static std::vector<uint8_t> read_file(const char* path) {
  std::vector<uint8_t> b;
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
  fclose(f);
  return b;
}


// outputs copies every column (values, string offsets) and partition of a
// result out, in that order.
static std::vector<std::vector<uint8_t>> outputs(const st_plan* plan, const st_result* r) {
  std::vector<std::vector<uint8_t>> out;
  for (int64_t c = 0; c < st_plan_num_columns(plan); c++) {
    std::vector<uint8_t> v(size_t(st_result_column_bytes(r, c)));
    if (st_result_copy_column(r, c, v.data(), v.size()) != ST_OK) exit(3);
    out.push_back(v);
    if (st_plan_column_dtype(plan, c) == ST_STRING) {
      std::vector<int64_t> o(size_t(st_result_column_length(r, c) + 1));
      if (st_result_copy_string_offsets(r, c, o.data(), o.size()) != ST_OK) exit(3);
      out.emplace_back(reinterpret_cast<uint8_t*>(o.data()), reinterpret_cast<uint8_t*>(o.data() + o.size()));
    }
  }
  for (int64_t p = 0; p < st_plan_num_partitions(plan); p++) {
    std::vector<int64_t> s(size_t(st_result_partition_length(r, p)));
    if (st_result_copy_partition(r, p, s.data(), s.size()) != ST_OK) exit(3);
    out.emplace_back(reinterpret_cast<uint8_t*>(s.data()), reinterpret_cast<uint8_t*>(s.data() + s.size()));
  }
  return out;
}

// check_into decodes the records again with st_decode_contiguous_into
// (contiguous) or st_decode_into (the records in place),
// into buffers of num/den times the sizes of want's outputs (each a malloc
// of its own, so that the sanitizer catches a write past one; too small
// ones make the engine move to its own memory), and exits with status 4
// unless the outputs equal want's.
// Capacities of the buffers to lend, in st_output's units.
struct Caps {
  std::vector<size_t> col, off, part;
};

static void check_into_caps(const st_plan* plan, const st_result* want, const std::vector<const uint8_t*>& ptrs,
                            const std::vector<size_t>& lens, size_t from, size_t to, const Caps& caps, bool contiguous,
                            int threads, const char* what);

static void check_into(const st_plan* plan, const st_result* want, const std::vector<const uint8_t*>& ptrs,
                       const std::vector<size_t>& lens, size_t from, size_t to, size_t num, size_t den,
                       bool contiguous, int threads) {
  int64_t nc = st_plan_num_columns(plan), np = st_plan_num_partitions(plan);
  Caps caps{std::vector<size_t>(size_t(nc)), std::vector<size_t>(size_t(nc)), std::vector<size_t>(size_t(np))};
  for (int64_t c = 0; c < nc; c++) {
    caps.col[size_t(c)] = size_t(st_result_column_bytes(want, c)) * num / den;
    if (st_plan_column_dtype(plan, c) == ST_STRING) {
      caps.off[size_t(c)] = size_t(st_result_column_length(want, c) + 1) * num / den;
    }
  }
  for (int64_t p = 0; p < np; p++) caps.part[size_t(p)] = size_t(st_result_partition_length(want, p)) * num / den;
  char what[64];
  snprintf(what, sizeof what, "buffers x %zu/%zu", num, den);
  check_into_caps(plan, want, ptrs, lens, from, to, caps, contiguous, threads, what);
}

// check_sized decodes the records with a plan of their own (no history)
// twice, into buffers of the sizes st_plan_lend_sizes or
// st_plan_lend_sizes_contiguous gives: the first sized from a sample of
// the batch, the second from the first batch. It exits with status 5 when
// a size passes the policy's bounds (string bytes: the input; elements:
// input bytes + records + 1, plus the slack of 1/32 and 16) and with
// status 4 unless the outputs equal want's.
static void check_sized(const std::vector<uint8_t>& plan_bytes, const st_result* want,
                        const std::vector<const uint8_t*>& ptrs, const std::vector<size_t>& lens, bool contiguous,
                        int threads) {
  st_error err;
  st_plan* plan = st_plan_new(plan_bytes.data(), plan_bytes.size(), &err);
  if (!plan) exit(3);
  const int64_t n = int64_t(ptrs.size());
  std::vector<uint8_t> data;
  std::vector<int64_t> offsets{0};
  for (size_t i = 0; i < ptrs.size(); i++) {
    if (lens[i]) data.insert(data.end(), ptrs[i], ptrs[i] + lens[i]);
    offsets.push_back(int64_t(data.size()));
  }
  const int64_t nc = st_plan_num_columns(plan), np = st_plan_num_partitions(plan);
  const int64_t in = int64_t(data.size());
  for (int round = 0; round < 2; round++) {
    Caps caps{std::vector<size_t>(size_t(nc)), std::vector<size_t>(size_t(nc)), std::vector<size_t>(size_t(np))};
    st_lend_sizes sizes{caps.col.data(), caps.off.data(), caps.part.data()};
    st_options opts;
    memset(&opts, 0, sizeof opts);
    opts.threads = threads;
    int32_t lend = contiguous ? st_plan_lend_sizes_contiguous(plan, data.data(), data.size(), offsets.data(), n, &opts, &sizes)
                              : st_plan_lend_sizes(plan, ptrs.data(), lens.data(), n, &opts, &sizes);
    if (lend != 1) break;  // a batch too small to lend for, or to sample
    for (int64_t c = 0; c < nc; c++) {
      const bool str = st_plan_column_dtype(plan, c) == ST_STRING;
      if ((str && int64_t(caps.col[size_t(c)]) > std::max<int64_t>(in, 1)) || (!str && int64_t(caps.col[size_t(c)]) > 8 * (in + n + 1)) ||
          int64_t(caps.off[size_t(c)]) > in + n + 2) {
        printf("st_plan_lend_sizes: column %lld: %zu bytes, %zu offsets for %lld bytes in %lld records\n", (long long)c,
               caps.col[size_t(c)], caps.off[size_t(c)], (long long)in, (long long)n);
        exit(5);
      }
    }
    for (int64_t p = 0; p < np; p++) {
      if (int64_t(caps.part[size_t(p)]) > in + n + 1) {
        printf("st_plan_lend_sizes: partition %lld: %zu splits for %lld bytes in %lld records\n", (long long)p,
               caps.part[size_t(p)], (long long)in, (long long)n);
        exit(5);
      }
    }
    check_into_caps(plan, want, ptrs, lens, 0, ptrs.size(), caps, contiguous, threads,
                    round == 0 ? "sizes from a sample" : "sizes from the last batch");
  }
  st_plan_free(plan);
}

static void check_into_caps(const st_plan* plan, const st_result* want, const std::vector<const uint8_t*>& ptrs,
                            const std::vector<size_t>& lens, size_t from, size_t to, const Caps& caps, bool contiguous,
                            int threads, const char* what) {
  std::vector<uint8_t> data;
  std::vector<int64_t> offsets{0};
  for (size_t i = from; i < to; i++) {
    if (lens[i]) data.insert(data.end(), ptrs[i], ptrs[i] + lens[i]);
    offsets.push_back(int64_t(data.size()));
  }
  uint8_t* exact = static_cast<uint8_t*>(malloc(data.size() ? data.size() : 1));
  if (!data.empty()) memcpy(exact, data.data(), data.size());
  int64_t nc = st_plan_num_columns(plan), np = st_plan_num_partitions(plan);
  std::vector<void*> col(static_cast<size_t>(nc)), off(static_cast<size_t>(nc)), part(static_cast<size_t>(np));
  std::vector<size_t> col_cap = caps.col, off_cap = caps.off, part_cap = caps.part;
  for (int64_t c = 0; c < nc; c++) {
    col[size_t(c)] = malloc(col_cap[size_t(c)] ? col_cap[size_t(c)] : 1);
    if (st_plan_column_dtype(plan, c) == ST_STRING) off[size_t(c)] = malloc(off_cap[size_t(c)] ? off_cap[size_t(c)] * 8 : 1);
  }
  for (int64_t p = 0; p < np; p++) part[size_t(p)] = malloc(part_cap[size_t(p)] ? part_cap[size_t(p)] * 8 : 1);
  st_output out;
  out.column_data = col.data();
  out.column_bytes = col_cap.data();
  out.string_offsets = reinterpret_cast<int64_t* const*>(off.data());
  out.string_offsets_len = off_cap.data();
  out.partition_splits = reinterpret_cast<int64_t* const*>(part.data());
  out.partition_len = part_cap.data();
  st_options opts;
  memset(&opts, 0, sizeof opts);
  opts.threads = threads;
  st_error err;
  st_result* got = contiguous
                       ? st_decode_contiguous_into(plan, exact, data.size(), offsets.data(), int64_t(to - from), &opts, &out, &err)
                       : st_decode_into(plan, ptrs.data() + from, lens.data() + from, int64_t(to - from), &opts, &out, &err);
  std::vector<std::vector<uint8_t>> have;
  if (got) have = outputs(plan, got);
  if (!got || have != outputs(plan, want)) {
    printf("%s (%s) differs from st_decode\n", contiguous ? "st_decode_contiguous_into" : "st_decode_into", what);
    exit(4);
  }
  // What reads as in place must be in the caller's buffers.
  size_t k = 0;
  for (int64_t c = 0; c < nc; c++) {
    bool in_place = st_result_column_in_place(got, c) == 1;
    if (in_place && have[k].size() && memcmp(col[size_t(c)], have[k].data(), have[k].size()) != 0) exit(4);
    k++;
    if (st_plan_column_dtype(plan, c) == ST_STRING) {
      if (in_place && memcmp(off[size_t(c)], have[k].data(), have[k].size()) != 0) exit(4);
      k++;
    }
  }
  for (int64_t p = 0; p < np; p++, k++) {
    if (st_result_partition_in_place(got, p) == 1 && memcmp(part[size_t(p)], have[k].data(), have[k].size()) != 0) exit(4);
  }
  st_result_free(got);
  for (void* b : col) free(b);
  for (void* b : off) free(b);
  for (void* b : part) free(b);
  free(exact);
}

// fold copies every column (values, string offsets) and partition of a
// result out (outputs), folding their bytes into *sum.
static void fold(const st_plan* plan, const st_result* r, uint64_t* sum) {
  for (const std::vector<uint8_t>& b : outputs(plan, r)) {
    for (uint8_t x : b) *sum = *sum * 31 + x;
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: runner PLAN RECORDS [iterations] [threads]\n");
    return 2;
  }
  std::vector<uint8_t> plan_bytes = read_file(argv[1]);
  std::vector<uint8_t> data = read_file(argv[2]);
  bool each = argc > 3 && strcmp(argv[3], "each") == 0;
  int iters = argc > 3 && !each ? atoi(argv[3]) : 1;
  int threads = argc > 4 ? atoi(argv[4]) : 1;
  // The records here are a few kilobytes: every thread asked for takes a
  // chunk however short its walk, so that the sanitizers see them all.
  st_test_min_thread_seconds(0);

  // Split the delimited records into pointer/length pairs (copying each
  // into its own allocation, so that the sanitizer sees every record's
  // exact bounds).
  std::vector<std::vector<uint8_t>> owned;
  size_t pos = 0;
  while (pos < data.size()) {
    uint64_t len = 0;
    int shift = 0;
    while (pos < data.size() && shift < 64) {
      uint8_t b = data[pos++];
      len |= uint64_t(b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) break;
    }
    if (len > data.size() - pos) {
      fprintf(stderr, "records file truncated\n");
      return 2;
    }
    owned.emplace_back(data.begin() + pos, data.begin() + pos + len);
    pos += len;
  }
  std::vector<const uint8_t*> ptrs;
  std::vector<size_t> lens;
  size_t total = 0;
  for (auto& r : owned) {
    ptrs.push_back(r.empty() ? nullptr : r.data());
    lens.push_back(r.size());
    total += r.size();
  }

  st_error err;
  st_plan* plan = st_plan_new(plan_bytes.data(), plan_bytes.size(), &err);
  if (!plan) {
    printf("error plan code=%d %s\n", err.code, err.message);
    return 0;
  }
  st_options opts;
  memset(&opts, 0, sizeof opts);
  opts.threads = threads;
  uint64_t checksum = 0;
  if (each) {
    int ok = 0, bad = 0;
    for (size_t i = 0; i < ptrs.size(); i++) {
      st_result* r = st_decode(plan, &ptrs[i], &lens[i], 1, &opts, &err);
      if (!r) {
        bad++;
        continue;
      }
      ok++;
      for (bool contiguous : {true, false}) {
        check_into(plan, r, ptrs, lens, i, i + 1, 1, 1, contiguous, 1);
        check_into(plan, r, ptrs, lens, i, i + 1, 1, 2, contiguous, 1);
      }
      fold(plan, r, &checksum);
      st_result_free(r);
    }
    printf("ok each decoded=%d failed=%d checksum=%016llx\n", ok, bad, (unsigned long long)checksum);
    print_decoders();
    st_plan_free(plan);
    return 0;
  }
  std::clock_t c0 = std::clock();
  for (int it = 0; it < iters; it++) {
    st_result* r = st_decode(plan, ptrs.data(), lens.data(), int64_t(ptrs.size()), &opts, &err);
    if (!r) {
      printf("error code=%d record=%lld offset=%lld %s\n", err.code, (long long)err.record, (long long)err.offset, err.message);
      print_decoders();
      st_plan_free(plan);
      return 0;
    }
    if (it == 0) {
      for (bool contiguous : {true, false}) {
        // Exact buffers, too small ones, and room to spare on several
        // threads (each writing its share, then closed up).
        check_into(plan, r, ptrs, lens, 0, ptrs.size(), 1, 1, contiguous, 1);
        check_into(plan, r, ptrs, lens, 0, ptrs.size(), 2, 3, contiguous, 1);
        check_into(plan, r, ptrs, lens, 0, ptrs.size(), 3, 2, contiguous, 3);
        check_into(plan, r, ptrs, lens, 0, ptrs.size(), 1, 1, contiguous, 2);
        // The sizing policy's sizes, from a sample and then from history.
        check_sized(plan_bytes, r, ptrs, lens, contiguous, threads);
      }
    }
    uint64_t sum = 0;
    fold(plan, r, &sum);
    if (it == 0) checksum = sum;
    st_result_free(r);
  }
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  printf("ok checksum=%016llx records=%zu bytes=%zu mb_per_cpu_s=%.1f\n", (unsigned long long)checksum, ptrs.size(), total,
         cpu > 0 ? double(total) * iters / 1e6 / cpu : 0.0);
  print_decoders();
  st_plan_free(plan);
  return 0;
}
