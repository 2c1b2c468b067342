// decode_op.cc: the StructTensorDecodeProto op and its CPU kernel, written
// against TensorFlow's ABI-stable C op and kernel API (tensorflow/c/ops.h,
// tensorflow/c/kernels.h) and the native engine's C ABI
// (native/include/structtensor_native.h). The same file is compiled into the
// Go package cops (registered in process by cops.Register) and into
// build/libstructtensor_ops.so (registered when tf.load_op_library loads it).
//
// The kernel never calls Go: TensorFlow runs kernels on its own threads.

#include "decode_op.h"
#include "kernel_common.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "structtensor_native.h"
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/c/tf_tstring.h"

namespace {

using structtensor_cops::codeOf;
using structtensor_cops::opRegistered;
using structtensor_cops::Status;
using structtensor_cops::TensorHolder;

constexpr const char* kOpName = STRUCTTENSOR_DECODE_OP_NAME;

// Attribute names; cops.DecodeGraph (Go) sets the same ones.
constexpr const char* kAttrPlan = "plan";
constexpr const char* kAttrNumPartitions = "num_partitions";
constexpr const char* kAttrValueDTypes = "value_dtypes";
constexpr const char* kAttrNumThreads = "num_threads";

// RAII holder for a TF_Status.

// tfTypeOf maps the engine's column types to TensorFlow's.
TF_DataType tfTypeOf(int32_t st) {
  switch (st) {
    case ST_BOOL: return TF_BOOL;
    case ST_INT32: return TF_INT32;
    case ST_INT64: return TF_INT64;
    case ST_UINT32: return TF_UINT32;
    case ST_UINT64: return TF_UINT64;
    case ST_FLOAT32: return TF_FLOAT;
    case ST_FLOAT64: return TF_DOUBLE;
    case ST_STRING: return TF_STRING;
  }
  return static_cast<TF_DataType>(0);
}

// ---------------------------------------------------------------------------
// Shape function: one rank-1 string input; every output is a vector of
// unknown length (row_splits are rows+1 long, values as many as decoded).

void inferShapes(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* records = TF_NewShapeHandle();
  TF_ShapeHandle* checked = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, records, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextWithRank(ctx, records, 1, checked, status);
  }
  // An unset handle has unknown rank; asserting rank 1 yields [?].
  TF_ShapeHandle* unknown = TF_NewShapeHandle();
  TF_ShapeHandle* vec = TF_NewShapeHandle();
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextWithRank(ctx, unknown, 1, vec, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    // The C API has no output count; SetOutput reports the first index
    // past the end, which ends the loop.
    TF_Status* s = TF_NewStatus();
    for (int i = 0;; i++) {
      TF_ShapeInferenceContextSetOutput(ctx, i, vec, s);
      if (TF_GetCode(s) != TF_OK) break;
    }
    TF_DeleteStatus(s);
  }
  TF_DeleteShapeHandle(vec);
  TF_DeleteShapeHandle(unknown);
  TF_DeleteShapeHandle(checked);
  TF_DeleteShapeHandle(records);
}

// ---------------------------------------------------------------------------
// Output memory.
//
// The kernel lends the engine 64-byte-aligned blocks of the sizes the
// engine's sizing policy gives for the batch (st_plan_lend_sizes, the one
// the Go path uses too: scaled from the plan's last batch of 64 KiB or
// more, or from a sample of a first one) to decode into (st_decode_into),
// and the blocks the engine filled become
// the output tensors as they are (TF_NewTensor with a deallocator): no
// copy of the output exists beside the tensors. TF_NewTensor copies
// numeric data less aligned than EIGEN_MAX_ALIGN_BYTES, hence 64. A block
// goes back to its kernel's pool when TensorFlow drops the last tensor
// that holds it, so a stream of similar batches reuses the same, already
// faulted-in memory instead of mapping fresh pages for every output. The
// pool is shared (shared_ptr) by the kernel and every block still out, so
// a tensor may outlive its kernel, session and graph.

constexpr size_t kAlign = 64;

// Blocks on loan (out of their pool), for tests: once every tensor of a
// run is gone, and at once for a run that fails, they are all back.
std::atomic<int64_t> loanedBlocks{0};

// Outputs produced where the engine wrote them, and outputs that outgrew
// the block lent for them (tests check that both paths run).
std::atomic<int64_t> inPlaceOutputs{0};
std::atomic<int64_t> outgrownOutputs{0};

// Decodes whose outputs were lent in one arena (see Arena), for tests.
std::atomic<int64_t> arenaLoans{0};

// sizeClass rounds a request up so that batches whose outputs differ by a
// few percent ask for the same capacity and reuse each other's blocks:
// multiples of 4 KiB up to 64 KiB, then steps of an eighth of a power of two.
size_t sizeClass(size_t n) {
  if (n <= (size_t{64} << 10)) return n == 0 ? 4096 : (n + 4095) & ~size_t{4095};
  const size_t step = (size_t{1} << (63 - __builtin_clzll(n))) / 8;
  return (n + step - 1) / step * step;
}

// hugePageBytes is the size of the system's transparent huge pages, or 0
// when it has none (no such file, the setting "never") or they are larger
// than 2 MiB (arm64 with 64 KiB pages has 512 MiB ones: too much slack for
// a block).
size_t hugePageBytes() {
  static const size_t bytes = []() -> size_t {
#ifdef __linux__
    char enabled[128] = {0};
    FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == nullptr) return 0;
    const size_t n = std::fread(enabled, 1, sizeof enabled - 1, f);
    std::fclose(f);
    enabled[n] = 0;
    if (std::strstr(enabled, "[never]") != nullptr) return 0;
    f = std::fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    if (f == nullptr) return 0;
    unsigned long long size = 0;
    const int got = std::fscanf(f, "%llu", &size);
    std::fclose(f);
    if (got != 1 || size == 0 || (size & (size - 1)) != 0 || size > (size_t{2} << 20)) return 0;
    return static_cast<size_t>(size);
#else
    return 0;
#endif
  }();
  return bytes;
}

// freshBlock allocates pool memory of want bytes (a multiple of 4096) and
// returns it with its capacity. Memory of a huge page or more starts on
// one, its capacity whole huge pages, and its huge pages are advised
// (MADV_HUGEPAGE) before its first write, as the Go path's lent blocks
// are (native/hugepages_linux.go): the kernel backs them with huge pages
// as they are faulted in, where the system allows it. The advice is a
// hint: refused, the memory works as it is. Only the pool's own memory
// is advised.
void* freshBlock(size_t want, size_t* cap) {
  const size_t huge = hugePageBytes();
  if (huge == 0 || want < huge) {
    *cap = want;
    return std::aligned_alloc(kAlign, want);
  }
  const size_t size = (want + huge - 1) & ~(huge - 1);
  void* p = std::aligned_alloc(huge, size);
#ifdef __linux__
  if (p != nullptr) madvise(p, size, MADV_HUGEPAGE);
#endif
  *cap = size;
  return p;
}

class Pool {
 public:
  ~Pool() {
    for (auto& e : free_) std::free(e.second);
  }

  // get returns memory for at least n bytes and its capacity, or nullptr.
  void* get(size_t n, size_t* cap) {
    const size_t want = sizeClass(n);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.lower_bound(want);
      if (it != free_.end() && it->first <= 2 * want) {
        void* p = it->second;
        *cap = it->first;
        cached_ -= it->first;
        free_.erase(it);
        loanedBlocks.fetch_add(1, std::memory_order_relaxed);
        return p;
      }
    }
    void* p = freshBlock(want, cap);  // want is a multiple of 4096
    if (p == nullptr) return nullptr;
    loanedBlocks.fetch_add(1, std::memory_order_relaxed);
    return p;
  }

  // put takes memory back, or frees it when the pool holds its limit.
  void put(void* p, size_t cap) {
    loanedBlocks.fetch_sub(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ + cap <= limit_) {
        free_.emplace(cap, p);
        cached_ += cap;
        return;
      }
    }
    std::free(p);
  }

  // setLimit bounds the bytes the pool keeps, freeing its largest blocks
  // beyond it.
  void setLimit(size_t limit) {
    std::vector<void*> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      limit_ = limit;
      while (cached_ > limit_ && !free_.empty()) {
        auto it = std::prev(free_.end());
        cached_ -= it->first;
        drop.push_back(it->second);
        free_.erase(it);
      }
    }
    for (void* p : drop) std::free(p);
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> free_;  // capacity -> memory
  size_t cached_ = 0;
  size_t limit_ = 0;
};

// fromPool returns a new T (an Arena or a Block) over at least n bytes of
// pool memory, or nullptr.
template <class T>
T* fromPool(const std::shared_ptr<Pool>& pool, size_t n) {
  size_t cap = 0;
  void* p = pool->get(n, &cap);
  if (p == nullptr) return nullptr;
  auto* x = new (std::nothrow) T;
  if (x == nullptr) {
    pool->put(p, cap);
    return nullptr;
  }
  x->pool = pool;
  x->data = p;
  x->cap = cap;
  return x;
}

// Arena is one piece of pool memory carved into the blocks lent to one
// decode (Loans::lend), back in the pool when the last of them is
// released. A decode writes every output at once, a hundred and more
// streams on wide records; in blocks of their own, each under a huge page,
// they were backed by 4 KiB pages and nearly every store needed a
// translation the first-level TLB had dropped: flat records (100 columns
// of 0.85 MB each) in 32 MB batches spent 30% more time in the packed
// decoder per call in the op than in the Go path, whose outputs share one
// block (Intel Xeon model 207). In one arena of huge pages the op decoded
// them 27% faster (bench tf-op, alternating builds, mean of six), wide
// sparse records 17%, and its calls alternating with the Go path's went
// from 78-84% of its MB per CPU-second to 94%. The cost is retention: a
// tensor that outlives its batch's others holds the whole arena.
struct Arena {
  std::shared_ptr<Pool> pool;
  void* data = nullptr;
  size_t cap = 0;
  std::atomic<int64_t> refs{1};

  void unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    pool->put(data, cap);
    delete this;
  }
};

// Block is one piece of pool memory on loan, or one piece of an arena: to
// the engine, then to a tensor (the deallocator argument). A block of
// string bytes is also the owner that TF_TString views into it reference
// count (TStringOwnerCApi, the mechanism tstring uses for shared views):
// TensorFlow refs the owner whenever it copies such a string and unrefs it
// when the copy dies, so the bytes live exactly as long as some string
// points into them.
struct Block {
  std::shared_ptr<Pool> pool;
  Arena* arena = nullptr;  // the arena holding data, or none: data is the pool's
  void* data = nullptr;
  size_t cap = 0;
  std::atomic<int64_t> refs{1};
  TStringOwnerCApi owner{};
  // A block of TF_TStrings (a string output) records the block of bytes
  // its views point into and how many there are (strings, releaseStrings).
  Block* viewed = nullptr;
  int64_t views = 0;

  static Block* get(const std::shared_ptr<Pool>& pool, size_t n) {
    Block* b = fromPool<Block>(pool, n);
    if (b != nullptr) b->init();
    return b;
  }

  // carve returns a block of the cap bytes at offset of arena a, holding a
  // reference to it, or nullptr.
  static Block* carve(Arena* a, size_t offset, size_t cap) {
    auto* b = new (std::nothrow) Block;
    if (b == nullptr) return nullptr;
    a->refs.fetch_add(1, std::memory_order_relaxed);
    b->pool = a->pool;
    b->arena = a;
    b->data = static_cast<char*>(a->data) + offset;
    b->cap = cap;
    b->init();
    return b;
  }

  void init() {
    owner.ref = ownerRef;
    owner.unref = ownerUnref;
    owner.obj = this;
  }

  // unref drops n references; the last returns the memory to the pool (or
  // the block's share of its arena).
  bool unref(int64_t n = 1) {
    if (refs.fetch_sub(n, std::memory_order_acq_rel) != n) return false;
    if (arena != nullptr) {
      arena->unref();
    } else {
      pool->put(data, cap);
    }
    delete this;
    return true;
  }

  static void ownerRef(TStringOwnerCApi* o) { static_cast<Block*>(o->obj)->refs.fetch_add(1, std::memory_order_relaxed); }
  static bool ownerUnref(TStringOwnerCApi* o) { return static_cast<Block*>(o->obj)->unref(); }
};

// Deallocators of the tensors built over blocks.
void releaseBlock(void*, size_t, void* arg) { static_cast<Block*>(arg)->unref(); }

// releaseStrings drops the references its views hold on the block of
// string bytes, all at once and without reading a string: every element
// is one strings wrote, inline or a view of that block, because
// TensorFlow never writes into a tensor built by TF_NewTensor over memory
// it does not own (such a buffer is never forwarded to an op's output nor
// taken over by a variable: Tensor::RefCountIsOne asks OwnsMemory, which
// is false for it). A copy TensorFlow makes of a view refs the block by
// itself and unrefs it when the copy dies. Scanning the strings instead
// cost 2.7 ms of a 32 MB batch of tf.Examples (1.6 million strings).
void releaseStrings(void*, size_t, void* arg) {
  auto* strs = static_cast<Block*>(arg);
  if (strs->viewed != nullptr) strs->viewed->unref(strs->views);
  strs->unref();
}

// ---------------------------------------------------------------------------
// Kernel.

struct Kernel {
  st_plan* plan = nullptr;
  int64_t num_partitions = 0;
  std::vector<int32_t> column_types;  // engine types, one per value output
  int32_t threads = 0;
  std::shared_ptr<Pool> pool = std::make_shared<Pool>();
  ~Kernel() {
    st_plan_free(plan);
    pool->setLimit(0);  // blocks still out free themselves when returned
  }
};

void failConstruction(TF_OpKernelConstruction* ctx, TF_Code code, const std::string& msg) {
  Status st;
  TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
  TF_OpKernelConstruction_Failure(ctx, st.s);
}

// injectFault makes the next kernel creation (1) or computation (2) of
// this copy of the code throw std::bad_alloc, for the tests of the
// boundary below (structtensor_cops_inject_fault).
std::atomic<int> injectFault{0};

void maybeThrow(int where) {
  if (structtensor_cops_take_fault(where)) throw std::bad_alloc();
}

// newKernel parses the plan once per kernel instance and checks that
// the node's output attributes agree with it.
void* newKernel(TF_OpKernelConstruction* ctx) {
  Status st;
  int32_t list_size = 0, total_size = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, kAttrPlan, &list_size, &total_size, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  std::vector<char> planBytes(static_cast<size_t>(total_size) + 1);
  TF_OpKernelConstruction_GetAttrString(ctx, kAttrPlan, planBytes.data(), planBytes.size(), st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  std::unique_ptr<Kernel> k(new Kernel);
  maybeThrow(1);
  st_error err{};
  k->plan = st_plan_new(reinterpret_cast<const uint8_t*>(planBytes.data()), static_cast<size_t>(total_size), &err);
  if (k->plan == nullptr) {
    failConstruction(ctx, TF_INVALID_ARGUMENT, std::string("attr plan: ") + err.message);
    return nullptr;
  }
  TF_OpKernelConstruction_GetAttrInt64(ctx, kAttrNumPartitions, &k->num_partitions, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  int64_t threads = 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, kAttrNumThreads, &threads, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  k->threads = static_cast<int32_t>(threads);
  TF_OpKernelConstruction_GetAttrSize(ctx, kAttrValueDTypes, &list_size, &total_size, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  std::vector<TF_DataType> dtypes(list_size > 0 ? list_size : 0);
  if (list_size > 0) {
    TF_OpKernelConstruction_GetAttrTypeList(ctx, kAttrValueDTypes, dtypes.data(), list_size, st.s);
    if (!st.ok()) {
      TF_OpKernelConstruction_Failure(ctx, st.s);
        return nullptr;
    }
  }
  const int64_t P = st_plan_num_partitions(k->plan);
  const int64_t C = st_plan_num_columns(k->plan);
  if (k->num_partitions != P || static_cast<int64_t>(dtypes.size()) != C) {
    failConstruction(ctx, TF_INVALID_ARGUMENT,
                     "the plan has " + std::to_string(P) + " partitions and " + std::to_string(C) +
                         " value columns, the node declares " + std::to_string(k->num_partitions) +
                         " and " + std::to_string(dtypes.size()));
    return nullptr;
  }
  k->column_types.resize(C);
  for (int64_t c = 0; c < C; c++) {
    k->column_types[c] = st_plan_column_dtype(k->plan, c);
    if (tfTypeOf(k->column_types[c]) != dtypes[c]) {
      failConstruction(ctx, TF_INVALID_ARGUMENT,
                       "value output " + std::to_string(c) + " is declared as TF type " +
                           std::to_string(dtypes[c]) + " but the plan's column has TF type " +
                           std::to_string(tfTypeOf(k->column_types[c])));
        return nullptr;
    }
  }
  return k.release();
}

void deleteKernel(void* kernel) { delete static_cast<Kernel*>(kernel); }

void failCompute(TF_OpKernelContext* ctx, TF_Code code, const std::string& msg) {
  Status st;
  TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
  TF_OpKernelContext_Failure(ctx, st.s);
}


struct ResultHolder {
  st_result* r = nullptr;
  ~ResultHolder() { st_result_free(r); }
};



struct Unref {
  void operator()(Block* b) const { b->unref(); }
};
// BlockRef holds one reference to a block until it is handed on.
using BlockRef = std::unique_ptr<Block, Unref>;

// Loans are the blocks lent to one decode, each column's and partition's
// entry (nullptr: engine memory), and the st_output arrays over them.
struct Loans {
  std::vector<BlockRef> col, off, part;
  std::vector<void*> col_data;
  std::vector<size_t> col_bytes;
  std::vector<int64_t*> off_data;
  std::vector<size_t> off_len;
  std::vector<int64_t*> part_data;
  std::vector<size_t> part_len;
  st_output out{};

  explicit Loans(const Kernel& k) : col(k.column_types.size()), off(k.column_types.size()), part(static_cast<size_t>(k.num_partitions)) {}

  // lend asks the engine's sizing policy (st_plan_lend_sizes, shared with
  // the Go path) how much room each output of this batch gets, and takes
  // a block of at least that from the pool for each; it returns false
  // when nothing is to be lent. An output whose block the pool cannot
  // give gets engine memory.
  bool lend(const Kernel& k, const uint8_t* const* ptrs, const size_t* lens, int64_t n, const st_options& opts) {
    const size_t C = k.column_types.size(), P = static_cast<size_t>(k.num_partitions);
    col_bytes.assign(C, 0);
    off_len.assign(C, 0);
    part_len.assign(P, 0);
    const st_lend_sizes sizes{col_bytes.data(), off_len.data(), part_len.data()};
    if (st_plan_lend_sizes(k.plan, ptrs, lens, n, &opts, &sizes) != 1) return false;
    col_data.assign(C, nullptr);
    off_data.assign(C, nullptr);
    part_data.assign(P, nullptr);
    // Outputs of a huge page or more in all share one arena (see Arena),
    // each its room rounded up to 64 bytes; smaller ones take a block each.
    auto room = [](size_t n) { return (std::max(n, size_t{1}) + kAlign - 1) & ~(kAlign - 1); };
    size_t total = 0;
    for (size_t c = 0; c < C; c++) {
      total += room(col_bytes[c]);
      if (k.column_types[c] == ST_STRING) total += room(off_len[c] * sizeof(int64_t));
    }
    for (size_t p = 0; p < P; p++) total += room(part_len[p] * sizeof(int64_t));
    const size_t huge = hugePageBytes();
    Arena* arena = huge != 0 && total >= huge ? fromPool<Arena>(k.pool, total) : nullptr;
    size_t at = 0;
    auto take = [&](size_t bytes) -> Block* {
      if (arena == nullptr) return Block::get(k.pool, bytes);
      Block* b = Block::carve(arena, at, room(bytes));
      at += room(bytes);
      return b;
    };
    for (size_t c = 0; c < C; c++) {
      BlockRef data(take(col_bytes[c]));
      BlockRef offs;
      if (k.column_types[c] == ST_STRING) offs.reset(take(off_len[c] * sizeof(int64_t)));
      if (!data || (k.column_types[c] == ST_STRING && !offs)) {  // engine memory for this one
        col_bytes[c] = off_len[c] = 0;
        continue;
      }
      col_data[c] = data->data;
      col_bytes[c] = data->cap;
      col[c] = std::move(data);
      if (offs) {
        off_data[c] = static_cast<int64_t*>(offs->data);
        off_len[c] = offs->cap / sizeof(int64_t);
        off[c] = std::move(offs);
      }
    }
    for (size_t p = 0; p < P; p++) {
      BlockRef splits(take(part_len[p] * sizeof(int64_t)));
      if (!splits) {
        part_len[p] = 0;
        continue;
      }
      part_data[p] = static_cast<int64_t*>(splits->data);
      part_len[p] = splits->cap / sizeof(int64_t);
      part[p] = std::move(splits);
    }
    if (arena != nullptr) {
      arenaLoans.fetch_add(1, std::memory_order_relaxed);
      arena->unref();  // its blocks hold it now
    }
    out.column_data = col_data.data();
    out.column_bytes = col_bytes.data();
    out.string_offsets = off_data.data();
    out.string_offsets_len = off_len.data();
    out.partition_splits = part_data.data();
    out.partition_len = part_len.data();
    return true;
  }
};

// Output assembles the op's outputs from a decode's result.
struct Outputs {
  Kernel* k;
  TF_OpKernelContext* ctx;
  const st_result* r;
  size_t held = 0;  // pool bytes the outputs hold, for the pool's limit

  void fail(TF_Code code, const std::string& msg) { failCompute(ctx, code, msg); }

  // set makes output index a vector of n elements of dtype over block b
  // (bytes of it), or an empty one; b goes to the tensor.
  bool set(int index, TF_DataType dtype, int64_t n, size_t bytes, BlockRef b) {
    int64_t dims[1] = {n};
    Status st;
    if (n == 0 || !b) {
      b.reset();
      TF_Tensor* t = TF_AllocateOutput(ctx, index, dtype, dims, 1, 0, st.s);
      if (t != nullptr) TF_DeleteTensor(t);
      if (!st.ok()) {
        TF_OpKernelContext_Failure(ctx, st.s);
        return false;
      }
      return true;
    }
    held += b->cap;
    Block* raw = b.release();
    TF_Tensor* t = TF_NewTensor(dtype, dims, 1, raw->data, bytes, dtype == TF_STRING ? releaseStrings : releaseBlock, raw);
    if (t == nullptr) {  // the deallocator has run
      fail(TF_INTERNAL, "cannot wrap output " + std::to_string(index) + " in a tensor");
      return false;
    }
    TF_SetOutput(ctx, index, t, st.s);
    TF_DeleteTensor(t);
    if (!st.ok()) {
      TF_OpKernelContext_Failure(ctx, st.s);
      return false;
    }
    return true;
  }

  // copied returns a block holding bytes copied by copy(dst), for an
  // output that is not in a lent block.
  template <typename Copy>
  BlockRef copied(size_t bytes, const std::string& what, Copy copy) {
    BlockRef b(Block::get(k->pool, bytes));
    if (!b) {
      fail(TF_RESOURCE_EXHAUSTED, "cannot allocate " + std::to_string(bytes) + " bytes for " + what);
      return nullptr;
    }
    const int32_t rc = copy(b->data);
    if (rc != ST_OK) {
      fail(TF_INTERNAL, "copying " + what + " failed with code " + std::to_string(rc));
      return nullptr;
    }
    return b;
  }

  // fromLent moves the block lent for an output into b when the engine
  // completed the output there (in_place, from st_result_*_in_place). A
  // block the output outgrew stays with the loans: the engine may read it
  // until the result is freed.
  static bool fromLent(BlockRef& lent, int32_t in_place, BlockRef& b) {
    if (!lent) return false;
    if (in_place != 1) {
      outgrownOutputs.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    inPlaceOutputs.fetch_add(1, std::memory_order_relaxed);
    b = std::move(lent);
    return true;
  }

  // partition, column and strings make one output each, in the block lent
  // for it or else copied out of engine memory.
  bool partition(int index, int64_t p, BlockRef& lent) {
    const int64_t len = st_result_partition_length(r, p);
    BlockRef b;
    if (!fromLent(lent, st_result_partition_in_place(r, p), b) && len > 0) {
      b = copied(static_cast<size_t>(len) * sizeof(int64_t), "partition " + std::to_string(p), [&](void* dst) {
        return st_result_copy_partition(r, p, static_cast<int64_t*>(dst), static_cast<size_t>(len));
      });
      if (!b) return false;
    }
    return set(index, TF_INT64, len, static_cast<size_t>(len) * sizeof(int64_t), std::move(b));
  }

  bool column(int index, int64_t c, BlockRef& lent) {
    const int32_t type = k->column_types[static_cast<size_t>(c)];
    const int64_t len = st_result_column_length(r, c);
    const int64_t bytes = st_result_column_bytes(r, c);
    BlockRef b;
    if (!fromLent(lent, st_result_column_in_place(r, c), b) && len > 0) {
      b = copied(static_cast<size_t>(bytes), "column " + std::to_string(c), [&](void* dst) {
        return st_result_copy_column(r, c, dst, static_cast<size_t>(bytes));
      });
      if (!b) return false;
    }
    return set(index, tfTypeOf(type), len, static_cast<size_t>(bytes), std::move(b));
  }

  // strings builds a string output: one TF_TString per string, inline
  // when it fits (up to 22 bytes), else a view into the block of string
  // bytes that owns it (see Block).
  bool strings(int index, int64_t c, BlockRef& lent_data, BlockRef& lent_offsets) {
    const int64_t len = st_result_column_length(r, c);
    const int64_t bytes = st_result_column_bytes(r, c);
    BlockRef data, offsets;
    if (fromLent(lent_data, st_result_column_in_place(r, c), data)) {
      offsets = std::move(lent_offsets);
    } else if (len > 0) {
      const std::string what = "string column " + std::to_string(c);
      data = copied(static_cast<size_t>(bytes), what, [&](void* dst) {
        return st_result_copy_column(r, c, dst, static_cast<size_t>(bytes));
      });
      if (!data) return false;
      offsets = copied((static_cast<size_t>(len) + 1) * sizeof(int64_t), what, [&](void* dst) {
        return st_result_copy_string_offsets(r, c, static_cast<int64_t*>(dst), static_cast<size_t>(len) + 1);
      });
      if (!offsets) return false;
    }
    if (len == 0) return set(index, TF_STRING, 0, 0, nullptr);
    const size_t n = static_cast<size_t>(len);
    BlockRef strs(Block::get(k->pool, n * sizeof(TF_TString)));
    if (!strs) {
      fail(TF_RESOURCE_EXHAUSTED, "cannot allocate " + std::to_string(len) + " strings for string column " + std::to_string(c));
      return false;
    }
    const char* base = static_cast<const char*>(data->data);
    const int64_t* off = static_cast<const int64_t*>(offsets->data);
    auto* dst = static_cast<TF_TString*>(strs->data);
    TStringOwnerCApi* owner = &data->owner;
    int64_t views = 0;
    for (size_t i = 0; i < n; i++) {
      const char* p = base + off[i];
      const size_t size = static_cast<size_t>(off[i + 1] - off[i]);
      TF_TString* s = &dst[i];
      if (size <= TF_TString_SmallCapacity) {
        s->u.smll.size = static_cast<uint8_t>((size << 2) | TF_TSTR_SMALL);
        // A fixed-size copy (a few moves, no call) where the block has
        // the bytes to read; what lands past the terminator is unused.
        if (static_cast<size_t>(off[i]) + TF_TString_SmallCapacity <= data->cap) {
          std::memcpy(s->u.smll.str, p, TF_TString_SmallCapacity);
        } else {
          std::memcpy(s->u.smll.str, p, size);
        }
        s->u.smll.str[size] = '\0';
      } else {
        s->u.view.size = TF_TString_ToInternalSizeT(size, TF_TSTR_VIEW);
        s->u.view.ptr = p;
        s->u.view.owner_ref = owner;
        views++;
      }
    }
    // The views' references, which releaseStrings drops; ours (data)
    // drops when this returns.
    if (views > 0) {
      data->refs.fetch_add(views, std::memory_order_relaxed);
      strs->viewed = data.get();
      strs->views = views;
    }
    held += data->cap;
    return set(index, TF_STRING, len, n * sizeof(TF_TString), std::move(strs));
  }
};

void compute(void* kernel, TF_OpKernelContext* ctx) {
  auto* k = static_cast<Kernel*>(kernel);
  maybeThrow(2);
  Status st;
  TensorHolder input;
  TF_GetInput(ctx, 0, &input.t, st.s);
  if (!st.ok()) {
    TF_OpKernelContext_Failure(ctx, st.s);
    return;
  }
  if (TF_TensorType(input.t) != TF_STRING || TF_NumDims(input.t) != 1) {
    failCompute(ctx, TF_INVALID_ARGUMENT, "records must be a vector of strings");
    return;
  }
  const int64_t n = TF_Dim(input.t, 0);
  const auto* records = static_cast<const TF_TString*>(TF_TensorData(input.t));
  // Uninitialised scratch (new T[n], not std::vector): a value-initialised
  // buffer would cost a pass of zeroing per run.
  std::unique_ptr<const uint8_t*[]> ptrs(new (std::nothrow) const uint8_t*[static_cast<size_t>(n)]);
  std::unique_ptr<size_t[]> lens(new (std::nothrow) size_t[static_cast<size_t>(n)]);
  if (!ptrs || !lens) {
    failCompute(ctx, TF_RESOURCE_EXHAUSTED, "cannot allocate the record index of " + std::to_string(n) + " records");
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    ptrs[i] = reinterpret_cast<const uint8_t*>(TF_TString_GetDataPointer(&records[i]));
    lens[i] = TF_TString_GetSize(&records[i]);
  }
  st_options opts{};
  opts.threads = k->threads;
  Loans loans(*k);
  const bool lend = loans.lend(*k, ptrs.get(), lens.get(), n, opts);
  st_error err{};
  ResultHolder res;  // after loans: the result must go before its lent blocks
  res.r = st_decode_into(k->plan, ptrs.get(), lens.get(), n, &opts, lend ? &loans.out : nullptr, &err);
  if (res.r == nullptr) {
    char where[96] = "";
    if (err.record >= 0) {
      std::snprintf(where, sizeof where, "record %lld, byte offset %lld: ", static_cast<long long>(err.record),
                    static_cast<long long>(err.offset));
    }
    failCompute(ctx, codeOf(err.code), std::string(where) + err.message);
    return;
  }
  const size_t C = k->column_types.size(), P = static_cast<size_t>(k->num_partitions);
  Outputs o{k, ctx, res.r};
  int index = 0;
  for (size_t p = 0; p < P; p++, index++) {
    if (!o.partition(index, static_cast<int64_t>(p), loans.part[p])) return;
  }
  for (size_t c = 0; c < C; c++, index++) {
    const auto col = static_cast<int64_t>(c);
    bool ok;
    if (k->column_types[c] == ST_STRING) {
      ok = o.strings(index, col, loans.col[c], loans.off[c]);
    } else {
      ok = o.column(index, col, loans.col[c]);
    }
    if (!ok) return;
  }
  // Keep about two batches' worth: this one's blocks come back when its
  // tensors die, usually before the next batch needs them.
  k->pool->setLimit(2 * o.held + (size_t{1} << 20));
}

// The functions TensorFlow calls: no C++ exception may cross into it (it
// would terminate the process), so each catches all and reports a status.

void shapeFn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  try {
    inferShapes(ctx, status);
  } catch (const std::exception& e) {
    TF_SetStatus(status, TF_INTERNAL, (std::string(kOpName) + ": shape inference: " + e.what()).c_str());
  } catch (...) {
    TF_SetStatus(status, TF_INTERNAL, "shape inference failed");
  }
}

void* createKernel(TF_OpKernelConstruction* ctx) {
  try {
    return newKernel(ctx);
  } catch (const std::bad_alloc&) {
    failConstruction(ctx, TF_RESOURCE_EXHAUSTED, "out of memory creating the kernel");
  } catch (const std::exception& e) {
    failConstruction(ctx, TF_INTERNAL, std::string("creating the kernel: ") + e.what());
  } catch (...) {
    failConstruction(ctx, TF_INTERNAL, "creating the kernel failed");
  }
  return nullptr;
}

void computeKernel(void* kernel, TF_OpKernelContext* ctx) {
  try {
    compute(kernel, ctx);
  } catch (const std::bad_alloc&) {
    failCompute(ctx, TF_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    failCompute(ctx, TF_INTERNAL, e.what());
  } catch (...) {
    failCompute(ctx, TF_INTERNAL, "decoding failed");
  }
}

void setMsg(char* msg, size_t msg_len, const std::string& s) {
  if (msg == nullptr || msg_len == 0) return;
  std::snprintf(msg, msg_len, "%s", s.c_str());
}

}  // namespace

namespace {

int registerProtoOp(char* msg, size_t msg_len) {
  if (opRegistered(kOpName)) return STRUCTTENSOR_COPS_ALREADY;

  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(kOpName);
  TF_OpDefinitionBuilderAddInput(b, "records: string");
  TF_OpDefinitionBuilderAddAttr(b, "plan: string");
  TF_OpDefinitionBuilderAddAttr(b, "num_partitions: int >= 0");
  TF_OpDefinitionBuilderAddAttr(b, "value_dtypes: list({bool, int32, int64, uint32, uint64, float, double, string}) >= 0");
  TF_OpDefinitionBuilderAddAttr(b, "num_threads: int >= 0 = 0");
  TF_OpDefinitionBuilderAddOutput(b, "row_splits: num_partitions * int64");
  TF_OpDefinitionBuilderAddOutput(b, "values: value_dtypes");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shapeFn);
  Status st;
  TF_RegisterOpDefinition(b, st.s);  // frees b
  if (!st.ok()) {
    setMsg(msg, msg_len, std::string("registering op ") + kOpName + ": " + TF_Message(st.s));
    return STRUCTTENSOR_COPS_ERROR;
  }
  TF_KernelBuilder* kb = TF_NewKernelBuilder(kOpName, "CPU", createKernel, computeKernel, deleteKernel);
  TF_RegisterKernelBuilder((std::string(kOpName) + "_CPU").c_str(), kb, st.s);
  if (!st.ok()) {
    setMsg(msg, msg_len, std::string("registering the CPU kernel of ") + kOpName + ": " + TF_Message(st.s));
    return STRUCTTENSOR_COPS_ERROR;
  }
  return STRUCTTENSOR_COPS_REGISTERED;
}

}  // namespace

// structtensor_cops_register registers both ops: each is checked in the
// registry on its own, so a library of an older build that registered
// only the proto op leaves the example op to this call.
extern "C" int structtensor_cops_register(char* msg, size_t msg_len) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  setMsg(msg, msg_len, "");
  const int proto = registerProtoOp(msg, msg_len);
  if (proto == STRUCTTENSOR_COPS_ERROR) return proto;
  const int example = structtensor_cops_register_example(msg, msg_len);
  if (example == STRUCTTENSOR_COPS_ERROR) return example;
  return proto == STRUCTTENSOR_COPS_ALREADY && example == STRUCTTENSOR_COPS_ALREADY ? STRUCTTENSOR_COPS_ALREADY
                                                                                    : STRUCTTENSOR_COPS_REGISTERED;
}

extern "C" int structtensor_cops_take_fault(int where) {
  int want = where;
  return injectFault.compare_exchange_strong(want, 0) ? 1 : 0;
}

extern "C" long long structtensor_cops_loaned_blocks(void) { return loanedBlocks.load(); }
extern "C" long long structtensor_cops_arena_loans(void) { return arenaLoans.load(); }
extern "C" size_t structtensor_cops_huge_page_bytes(void) { return hugePageBytes(); }
extern "C" void structtensor_cops_inject_fault(int where) { injectFault.store(where); }
extern "C" void structtensor_cops_output_counts(long long* in_place, long long* outgrown) {
  *in_place = inPlaceOutputs.load();
  *outgrown = outgrownOutputs.load();
}
