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
#include <atomic>
#include <condition_variable>
#include <cstdarg>
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
#include <vector>

#include "include/structtensor_native.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ST_X86_64 1
#include <immintrin.h>
#else
#define ST_X86_64 0
#endif

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the engine copies fixed-width wire values as little-endian");

// ---------------------------------------------------------------------
// Plan.

// Field types, numbered as google.protobuf.FieldDescriptorProto.Type.
enum : uint8_t {
  T_DOUBLE = 1, T_FLOAT = 2, T_INT64 = 3, T_UINT64 = 4, T_INT32 = 5,
  T_FIXED64 = 6, T_FIXED32 = 7, T_BOOL = 8, T_STRING = 9, T_GROUP = 10,
  T_MESSAGE = 11, T_BYTES = 12, T_UINT32 = 13, T_ENUM = 14,
  T_SFIXED32 = 15, T_SFIXED64 = 16, T_SINT32 = 17, T_SINT64 = 18,
};

// Field modes: how a field's values map to the output.
enum : uint8_t {
  M_REQUIRED = 0,  // one value per parent element; missing is an error
  M_IMPLICIT = 1,  // one value per parent element; missing is the default
  M_OPTIONAL = 2,  // a list of 0 or 1 values (presence)
  M_REPEATED = 3,  // a list
};

enum : uint32_t {
  PF_FILL_REQUIRED = 1,  // plan flag: fill missing required fields with defaults
  PF_ACCEPT_BAD_UTF8 = 2,  // plan flag: skip UTF-8 validation
};
enum : uint32_t { FF_UTF8 = 1 };  // field flag: validate UTF-8

enum : uint8_t { W_VARINT = 0, W_I64 = 1, W_LEN = 2, W_SGROUP = 3, W_EGROUP = 4, W_I32 = 5 };

constexpr uint64_t kMaxFieldNumber = (1u << 29) - 1;
constexpr uint32_t kDenseLimit = 4096;

struct FieldPlan {
  // Hot: read for every field occurrence.
  uint32_t number = 0;
  uint8_t type = 0;
  uint8_t mode = 0;
  uint8_t wire = 0;   // the wire type of one unpacked value
  uint8_t dtype = 0;  // output dtype for scalar fields
  uint8_t shift = 0;  // log2 of the element size (scalars)
  bool message = false;
  bool validate_utf8 = false;
  uint32_t oneof = 0;  // 0: none; k: the node's oneof k-1
  int32_t oneof_id = -1;  // the oneof's index among all of the plan's oneofs
  int32_t column = -1;
  int32_t child = -1;
  int32_t partition = -1;
  uint64_t def_bits = 0;
  // Cold, out of line so that the hot part stays within a cache line.
  struct Cold {
    std::string def_str;
    std::string path;  // for errors: the projection path from the root
  };
  std::unique_ptr<Cold> cold{new Cold};
};

struct NodePlan {
  std::string path;
  std::vector<FieldPlan> fields;
  std::vector<int32_t> dense;  // field number -> field index, -1 if none
  int32_t by_tag[128];         // one-byte tag -> field index when the wire type is the field's own, else -1
  std::vector<std::pair<uint32_t, int32_t>> sparse;  // sorted, numbers >= kDenseLimit
  // Absent fields cost nothing while an element is walked: a list field's
  // row splits and an implicit scalar's defaults are written when the
  // field next occurs (catch_up), for every element since it last did,
  // and at the end of the chunk (finish), in bulk. What that needs of
  // each list field, packed tight: the partition, and where the count of
  // its values comes from.
  struct ListSlot {
    int32_t partition;
    int32_t source;  // child node (message) or column
    bool message;
  };
  std::vector<ListSlot> list_slots;
  // The same for singular fields: end_element's common case (the field
  // was seen) reads only this.
  struct SingularSlot {
    int32_t source;  // child node (message) or column
    int32_t field;   // index in fields, for the default and errors
    bool message;
  };
  std::vector<SingularSlot> singular_slots;  // required fields and implicit messages: checked at element end
  std::vector<int32_t> implicit_scalars;     // fields: defaults filled in bulk
  std::vector<std::vector<int32_t>> oneofs;
  int32_t parent = -1;

  int32_t lookup(uint64_t num) const {
    if (num < dense.size()) return dense[num];
    if (num < kDenseLimit) return -1;
    auto it = std::lower_bound(sparse.begin(), sparse.end(), std::make_pair(uint32_t(num), int32_t(-1)));
    if (it != sparse.end() && it->first == num) return it->second;
    return -1;
  }
};

}  // namespace

namespace {
struct Decoder;
}

struct st_plan {
  // Decoders of finished results, kept with their buffers' capacity so
  // that the next batch neither reallocates nor page-faults.
  mutable std::mutex pool_mu;
  mutable std::vector<Decoder*> pool;
  mutable size_t pool_bytes = 0;  // capacity of the pooled decoders
  mutable bool closed = false;    // st_plan_close: pool nothing more
  std::string message;  // full name of the root message, for errors
  uint32_t flags = 0;
  uint32_t max_depth = 100;
  std::vector<uint8_t> col_dtype;
  int64_t nparts = 0;
  int32_t noneofs = 0;
  std::vector<NodePlan> nodes;
};

namespace {

void set_error(st_error* err, int32_t code, int64_t record, int64_t offset, const char* fmt, ...) {
  if (!err) return;
  err->code = code;
  err->record = record;
  err->offset = offset;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

void clear_error(st_error* err) {
  if (!err) return;
  err->code = ST_OK;
  err->record = -1;
  err->offset = -1;
  err->message[0] = 0;
}

// PlanReader parses the plan's byte form with bounds checks throughout.
struct PlanReader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  uint64_t uvarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) break;
      uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    ok = false;
    return 0;
  }
  std::string str() {
    uint64_t n = uvarint();
    if (!ok || n > uint64_t(end - p)) {
      ok = false;
      return std::string();
    }
    std::string s(reinterpret_cast<const char*>(p), size_t(n));
    p += n;
    return s;
  }
};

uint8_t dtype_of(uint8_t type) {
  switch (type) {
    case T_DOUBLE: return ST_FLOAT64;
    case T_FLOAT: return ST_FLOAT32;
    case T_INT64: case T_SFIXED64: case T_SINT64: return ST_INT64;
    case T_UINT64: case T_FIXED64: return ST_UINT64;
    case T_INT32: case T_SFIXED32: case T_SINT32: case T_ENUM: return ST_INT32;
    case T_UINT32: case T_FIXED32: return ST_UINT32;
    case T_BOOL: return ST_BOOL;
    case T_STRING: case T_BYTES: return ST_STRING;
  }
  return 0;
}

uint8_t wire_of(uint8_t type) {
  switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64: return W_I64;
    case T_FLOAT: case T_FIXED32: case T_SFIXED32: return W_I32;
    case T_STRING: case T_BYTES: case T_MESSAGE: return W_LEN;
    case T_GROUP: return W_SGROUP;
  }
  return W_VARINT;
}

uint8_t shift_of(uint8_t dtype) {
  switch (dtype) {
    case ST_BOOL: return 0;
    case ST_INT32: case ST_UINT32: case ST_FLOAT32: return 2;
    default: return 3;
  }
}

st_plan* parse_plan(const uint8_t* data, size_t len, st_error* err) {
#define PLAN_FAIL(...)                                 \
  do {                                                 \
    set_error(err, ST_ERR_PLAN, -1, -1, __VA_ARGS__); \
    return nullptr;                                    \
  } while (0)
  if (!data || len < 4 || memcmp(data, "STPL", 4) != 0) PLAN_FAIL("plan: bad magic (want \"STPL\")");
  PlanReader r{data + 4, data + len};
  uint64_t version = r.uvarint();
  if (!r.ok || version != 1) PLAN_FAIL("plan: unsupported version %llu (want 1)", (unsigned long long)version);
  std::unique_ptr<st_plan> plan(new st_plan);
  plan->message = r.str();
  plan->flags = uint32_t(r.uvarint());
  uint64_t depth = r.uvarint();
  if (!r.ok || depth == 0 || depth > 10000) PLAN_FAIL("plan: bad max depth (1..10000)");
  plan->max_depth = uint32_t(depth);
  uint64_t ncols = r.uvarint();
  if (!r.ok || ncols > uint64_t(r.end - r.p)) PLAN_FAIL("plan: bad column count");
  for (uint64_t i = 0; i < ncols; i++) {
    uint64_t d = r.uvarint();
    if (!r.ok || d < ST_BOOL || d > ST_STRING) PLAN_FAIL("plan: column %llu has bad dtype", (unsigned long long)i);
    plan->col_dtype.push_back(uint8_t(d));
  }
  uint64_t nparts = r.uvarint();
  if (!r.ok || nparts > (1u << 30)) PLAN_FAIL("plan: bad partition count");
  plan->nparts = int64_t(nparts);
  uint64_t nnodes = r.uvarint();
  if (!r.ok || nnodes == 0 || nnodes > uint64_t(r.end - r.p) + 1) PLAN_FAIL("plan: bad node count");
  plan->nodes.resize(size_t(nnodes));
  std::vector<uint8_t> col_used(static_cast<size_t>(ncols)), part_used(static_cast<size_t>(nparts));
  for (uint64_t ni = 0; ni < nnodes; ni++) {
    NodePlan& node = plan->nodes[size_t(ni)];
    node.path = r.str();
    uint64_t nf = r.uvarint();
    if (!r.ok || nf > uint64_t(r.end - r.p)) PLAN_FAIL("plan: node %llu: bad field count", (unsigned long long)ni);
    uint32_t max_dense = 0;
    for (uint64_t fi = 0; fi < nf; fi++) {
      FieldPlan f;
      uint64_t num = r.uvarint();
      std::string name = r.str();
      uint64_t type = r.uvarint();
      uint64_t mode = r.uvarint();
      uint64_t flags = r.uvarint();
      uint64_t oneof = r.uvarint();
      uint64_t target = r.uvarint();
      uint64_t part = r.uvarint();
      if (!r.ok) PLAN_FAIL("plan: node %llu: truncated field", (unsigned long long)ni);
      f.cold->path = node.path.empty() ? name : node.path + "." + name;
      if (num == 0 || num > kMaxFieldNumber) PLAN_FAIL("plan: field %s: bad number", f.cold->path.c_str());
      if (type < T_DOUBLE || type > T_SINT64) PLAN_FAIL("plan: field %s: bad type", f.cold->path.c_str());
      if (mode > M_REPEATED) PLAN_FAIL("plan: field %s: bad mode", f.cold->path.c_str());
      if (oneof > nf) PLAN_FAIL("plan: field %s: bad oneof", f.cold->path.c_str());
      f.number = uint32_t(num);
      f.type = uint8_t(type);
      f.mode = uint8_t(mode);
      f.wire = wire_of(f.type);
      f.oneof = uint32_t(oneof);
      f.message = type == T_MESSAGE || type == T_GROUP;
      f.validate_utf8 = type == T_STRING && (flags & FF_UTF8) && !(plan->flags & PF_ACCEPT_BAD_UTF8);
      if (f.message) {
        // Children come after their parent (pre-order), which rules out cycles.
        if (target <= ni || target >= nnodes) PLAN_FAIL("plan: field %s: bad child node", f.cold->path.c_str());
        NodePlan& child = plan->nodes[size_t(target)];
        if (child.parent >= 0) PLAN_FAIL("plan: field %s: child node used twice", f.cold->path.c_str());
        child.parent = int32_t(ni);
        f.child = int32_t(target);
      } else {
        if (target >= ncols || col_used[size_t(target)]) PLAN_FAIL("plan: field %s: bad or reused column", f.cold->path.c_str());
        col_used[size_t(target)] = 1;
        f.column = int32_t(target);
        f.dtype = dtype_of(f.type);
        if (plan->col_dtype[size_t(target)] != f.dtype) PLAN_FAIL("plan: field %s: column dtype does not match type", f.cold->path.c_str());
        f.shift = shift_of(f.dtype);
      }
      if (mode >= M_OPTIONAL) {
        if (part >= nparts || part_used[size_t(part)]) PLAN_FAIL("plan: field %s: bad or reused partition", f.cold->path.c_str());
        part_used[size_t(part)] = 1;
        f.partition = int32_t(part);
      } else if (!f.message) {
        if (f.dtype == ST_STRING) {
          f.cold->def_str = r.str();
        } else {
          f.def_bits = r.uvarint();
        }
        if (!r.ok) PLAN_FAIL("plan: field %s: truncated default", f.cold->path.c_str());
      }
      if (num < kDenseLimit) max_dense = std::max(max_dense, uint32_t(num));
      node.fields.push_back(std::move(f));
    }
    node.dense.assign(max_dense + 1, -1);
    for (int32_t& t : node.by_tag) t = -1;
    for (size_t i = 0; i < node.fields.size(); i++) {
      const FieldPlan& f = node.fields[i];
      if (f.number < kDenseLimit) {
        if (node.dense[f.number] >= 0) PLAN_FAIL("plan: field %s: duplicate number", f.cold->path.c_str());
        node.dense[f.number] = int32_t(i);
        if (f.number < 16) node.by_tag[(f.number << 3) | f.wire] = int32_t(i);
      } else {
        node.sparse.emplace_back(f.number, int32_t(i));
      }
      if (f.mode == M_IMPLICIT && !f.message) {
        node.implicit_scalars.push_back(int32_t(i));
      } else if (f.mode <= M_IMPLICIT) {
        node.singular_slots.push_back({f.message ? f.child : f.column, int32_t(i), f.message});
      } else {
        node.list_slots.push_back({f.partition, f.message ? f.child : f.column, f.message});
      }
      if (f.oneof) {
        if (f.mode != M_OPTIONAL) PLAN_FAIL("plan: field %s: oneof member without presence", f.cold->path.c_str());
        if (node.oneofs.size() < f.oneof) node.oneofs.resize(f.oneof);
        node.oneofs[f.oneof - 1].push_back(int32_t(i));
      }
    }
    int32_t base = plan->noneofs;
    for (FieldPlan& f : node.fields) {
      if (f.oneof) f.oneof_id = base + int32_t(f.oneof) - 1;
    }
    plan->noneofs += int32_t(node.oneofs.size());
    std::sort(node.sparse.begin(), node.sparse.end());
    for (size_t i = 1; i < node.sparse.size(); i++) {
      if (node.sparse[i].first == node.sparse[i - 1].first) PLAN_FAIL("plan: node %s: duplicate field number", node.path.c_str());
    }
  }
  if (r.p != r.end) PLAN_FAIL("plan: %lld trailing bytes", (long long)(r.end - r.p));
  for (size_t i = 1; i < plan->nodes.size(); i++) {
    if (plan->nodes[i].parent < 0) PLAN_FAIL("plan: node %zu is not used by any field", i);
  }
  for (size_t i = 0; i < col_used.size(); i++) {
    if (!col_used[i]) PLAN_FAIL("plan: column %zu is not used by any field", i);
  }
  for (size_t i = 0; i < part_used.size(); i++) {
    if (!part_used[i]) PLAN_FAIL("plan: partition %zu is not used by any field", i);
  }
  return plan.release();
#undef PLAN_FAIL
}

// ---------------------------------------------------------------------
// Output buffers.

// Buf is a growable byte buffer (malloc-based, so a column can grow
// without zero-filling the way std::vector::resize would). It may instead
// write into a caller's buffer (st_decode_contiguous_into): such a buffer
// is never freed or reallocated here; outgrowing it moves the data to
// memory of the engine's own.
struct Buf {
  uint8_t* p = nullptr;
  size_t len = 0;
  size_t cap = 0;
  bool external = false;  // p belongs to the caller

  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf(Buf&& o) noexcept : p(o.p), len(o.len), cap(o.cap), external(o.external) {
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
    append(s, n);
  }
  int64_t i64(size_t i) const {
    int64_t v;
    memcpy(&v, p + i * 8, 8);
    return v;
  }
  int64_t last_i64() const { return i64(len / 8 - 1); }
};

struct Column {
  Buf vals;  // values, or string bytes
  Buf offs;  // strings only: int64 offsets, starting with 0
  uint8_t dtype = 0;
  uint8_t shift = 0;
  int64_t n = 0;  // number of values, kept beside the buffers for speed

  int64_t count() const {
    return n;
  }
  void truncate(int64_t m) {
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
  void push_string(const uint8_t* s, size_t len, const uint8_t* readable) {
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

// valid_utf8 matches Go's utf8.Valid: no overlong forms, no surrogates,
// nothing past U+10FFFF.
bool valid_utf8(const uint8_t* s, size_t n) {
  // Most strings are ASCII: one branch-free pass decides.
  uint64_t acc = 0;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    uint64_t w;
    memcpy(&w, s + k, 8);
    acc |= w;
  }
  for (; k < n; k++) acc |= s[k];
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

#ifdef ST_COUNT_DECODERS
// Packed runs decoded by each decoder, in test builds (the sanitizer
// runner), so that a test knows which one ran.
std::atomic<int64_t> packed_runs_vector{0}, packed_runs_portable{0};
#endif

#if ST_X86_64
// The AVX-512 packed-varint decoder needs VBMI (byte permutes) and VBMI2
// (byte compress), with BMI2 for its masks: Ice Lake and later Intel
// server cores, AMD Zen 4 and later.
#define ST_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")))

// packed_avx512 tells whether packed varints take the AVX-512 decoder.
// STRUCTTENSOR_NATIVE_PORTABLE=1 in the environment forces the portable
// decoder (the sanitizer test runs both and compares them).
bool packed_avx512() {
  static const bool on = [] {
    const char* portable = getenv("STRUCTTENSOR_NATIVE_PORTABLE");
    if (portable && *portable && strcmp(portable, "0") != 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
           __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
  }();
  return on;
}

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

// varints_avx512 decodes the packed varints of [p, q) into out[*k...],
// up to sixteen per step, for as long as they are at most eight bytes
// long and complete. It returns where it stopped: q, or the start of a
// value it leaves to the scalar decoder (longer than eight bytes, or cut
// short by the end of the run, which the scalar decoder reports).
//
// A step loads the next 64 bytes (a masked load: nothing past q is read),
// takes the mask of their terminating bytes (top bit clear), and keeps
// the first sixteen values that end before any run of eight continuation
// bytes. The terminators' positions, compressed into a vector, give each
// value's first and last byte; one byte permute gathers each value into
// a 64-bit lane, zero past its last byte; three shift-and-select steps
// squeeze out the continuation bits. There is no branch per value, so the
// mix of lengths costs no mispredictions.
template <class V>
ST_AVX512_TARGET const uint8_t* varints_avx512(const uint8_t* p, const uint8_t* q, typename V::T* out, size_t* k) {
  alignas(64) static const uint8_t kIota[64] = {
      0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
      44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
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
    size_t avail = size_t(q - p);
    __mmask64 valid = avail >= 64 ? ~__mmask64(0) : _bzhi_u64(~uint64_t(0), unsigned(avail));
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
#else
// Without x86-64 the conversions are scalar only: the element types.
struct VecU64 { using T = uint64_t; };
struct VecU32 { using T = uint32_t; };
struct VecZigzag64 { using T = int64_t; };
struct VecZigzag32 { using T = int32_t; };
struct VecBool { using T = uint8_t; };
#endif

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

// ---------------------------------------------------------------------
// Decoding state for one chunk of records.

struct Decoder {
  const st_plan* plan;
  std::vector<Column> cols;
  std::vector<Buf> parts;
  std::vector<int64_t> counts;
  // For each oneof, the element (of its node) and the member last set: a
  // oneof needs clearing only when another member was set in the same
  // element, which the mark tells without looking at the members.
  struct OneofMark {
    int64_t element;
    uint32_t member;
  };
  std::vector<OneofMark> oneof_marks;
  const volatile int32_t* cancel = nullptr;
  // Writes into caller's buffers (st_decode_contiguous_into): such a
  // decoder never goes back to the plan's pool.
  bool external = false;

  // The first error.
  int32_t code = ST_OK;
  int64_t err_record = -1;
  int64_t err_offset = -1;
  std::string err_msg;
  const uint8_t* rec_start = nullptr;
  const uint8_t* rec_end = nullptr;  // reads may look ahead up to here

  explicit Decoder(const st_plan* pl) : plan(pl), cols(pl->col_dtype.size()), parts(size_t(pl->nparts)), counts(pl->nodes.size()) {
    for (size_t i = 0; i < cols.size(); i++) {
      cols[i].dtype = pl->col_dtype[i];
      cols[i].shift = shift_of(cols[i].dtype);
    }
    reset();
  }

  // reset empties the outputs, keeping the buffers' capacity.
  void reset() {
    for (auto& c : cols) {
      c.vals.len = 0;
      c.n = 0;
      c.offs.len = 0;
      if (c.dtype == ST_STRING) c.offs.push<int64_t>(0);
    }
    for (auto& p : parts) {
      p.len = 0;
      p.push<int64_t>(0);
    }
    std::fill(counts.begin(), counts.end(), 0);
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
  // each write their own stretch, closed up by compact afterwards. Value
  // stretches start 8-byte aligned.
  void attach_part(const st_output& out, double lo, double hi) {
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
        size_t len = region(out.column_bytes[c], 8, &at);
        cols[c].vals.attach(static_cast<uint8_t*>(out.column_data[c]) + at, len);
      }
      if (cols[c].dtype == ST_STRING && out.string_offsets && out.string_offsets[c]) {
        size_t len = region(out.string_offsets_len[c], 1, &at);
        cols[c].offs.attach(out.string_offsets[c] + at, len * 8);
      }
    }
    for (size_t k = 0; k < parts.size(); k++) {
      if (out.partition_splits && out.partition_splits[k]) {
        size_t len = region(out.partition_len[k], 1, &at);
        parts[k].attach(out.partition_splits[k] + at, len * 8);
      }
    }
    reset();
  }

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

  // key_of returns the number of values a singular field's column or child
  // had before the current element: a value past it is this element's.
  int64_t singular_key(const FieldPlan& f, int32_t node) const {
    return f.mode <= M_IMPLICIT ? counts[size_t(node)] : parts[size_t(f.partition)].last_i64();
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
          m = sp.i64(size_t(n));
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
      int64_t start = parts[size_t(g.partition)].last_i64();
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

  __attribute__((always_inline)) inline bool end_element(int32_t node, const uint8_t* at) {
    const NodePlan& np = plan->nodes[size_t(node)];
    int64_t* const cnt = counts.data();
    Column* const cs = cols.data();
    const int64_t idx = cnt[node];
    for (const NodePlan::SingularSlot& ss : np.singular_slots) {
      int64_t have = ss.message ? cnt[ss.source] : cs[ss.source].count();
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
  __attribute__((always_inline)) inline void catch_up(const FieldPlan& f, int32_t node) {
    const int64_t idx = counts[size_t(node)];
    if (f.mode >= M_OPTIONAL) {
      Buf& sp = parts[size_t(f.partition)];
      if (__builtin_expect(sp.len != size_t(idx + 1) * 8, 1)) fill_splits(sp, idx + 1, f.message ? counts[size_t(f.child)] : cols[size_t(f.column)].count());
    } else if (f.mode == M_IMPLICIT && !f.message) {
      Column& c = cols[size_t(f.column)];
      if (c.count() < idx) fill_defaults(f, c, idx);
    }
  }

  // fill_splits appends copies of v until sp holds n splits.
  static void fill_splits(Buf& sp, int64_t n, int64_t v) {
    size_t have = sp.len / 8;
    if (size_t(n) <= have) return;
    size_t k = size_t(n) - have;
    sp.reserve_more(k * 8);
    int64_t* q = reinterpret_cast<int64_t*>(sp.p + sp.len);
    for (size_t i = 0; i < k; i++) memcpy(q + i, &v, 8);
    sp.len += k * 8;
  }

  // fill_defaults appends f's default to column c until it holds n values.
  void fill_defaults(const FieldPlan& f, Column& c, int64_t n) {
    size_t k = size_t(n - c.count());
    if (f.dtype == ST_STRING) {
      const std::string& d = f.cold->def_str;
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
        fill_splits(parts[size_t(ls.partition)], n + 1, ls.message ? counts[size_t(ls.source)] : cols[size_t(ls.source)].count());
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
      case ST_STRING: c.push_string(reinterpret_cast<const uint8_t*>(f.cold->def_str.data()), f.cold->def_str.size()); break;
      case ST_BOOL: c.push<uint8_t>(f.def_bits != 0); break;
      case ST_INT32: case ST_UINT32: case ST_FLOAT32: c.push<uint32_t>(uint32_t(f.def_bits)); break;
      default: c.push<uint64_t>(f.def_bits); break;
    }
    return true;
  }

  // put stores one decoded scalar of field f (of a node) honouring its mode.
  template <class T>
  inline void put(const FieldPlan& f, int32_t node, T v) {
    Column& c = cols[size_t(f.column)];
    if (f.mode != M_REPEATED && c.count() > singular_key(f, node)) c.drop_last();
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
  const uint8_t* packed_varints(const FieldPlan& f, const uint8_t* p, const uint8_t* q, const uint8_t* fs, Conv conv) {
    using T = typename V::T;
    Column& c = cols[size_t(f.column)];
    // Every value takes at least one byte: reserve for the worst case
    // rather than counting terminators first, while it fits.
    size_t n = size_t(q - p);
    if (c.vals.len + n * sizeof(T) > c.vals.cap) {
      // The worst case does not fit: count the values (their last bytes)
      // rather than grow, so that a buffer sized exactly (a caller's, see
      // st_decode_contiguous_into) is not abandoned for a few values.
      // Only terminated values are written, so the count bounds k.
      size_t m = 0;
      for (const uint8_t* r = p; r < q; r++) m += *r < 0x80;
      c.vals.reserve_more(m * sizeof(T));
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
#if ST_X86_64
    const bool vector = packed_avx512();
#else
    const bool vector = false;
#endif
#ifdef ST_COUNT_DECODERS
    (vector ? packed_runs_vector : packed_runs_portable).fetch_add(1, std::memory_order_relaxed);
#endif
    // k never passes the reserve: each value written ends in the run.
    // Eight bytes at a time, the first two values that end in the word
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
        if (p < q && !slow()) return fail(ST_ERR_MALFORMED, fs, "truncated varint in packed field", f.cold->path);
        continue;
      }
#endif
      uint64_t stop = 0, w = 0;
      if (rec_end - p >= 8) {
        memcpy(&w, p, 8);
        stop = ~w & 0x8080808080808080ull;
        size_t avail = size_t(q - p);
        if (avail < 8) stop &= (uint64_t(1) << (avail * 8)) - 1;
      }
      if (__builtin_expect(stop == 0, 0)) {
        if (!slow()) return fail(ST_ERR_MALFORMED, fs, "truncated varint in packed field", f.cold->path);
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
  const uint8_t* packed_fixed(const FieldPlan& f, const uint8_t* p, const uint8_t* q, const uint8_t* fs) {
    size_t n = size_t(q - p);
    if (n % sizeof(T)) return fail(ST_ERR_MALFORMED, fs, "packed fixed-width field length is not a multiple of the width", f.cold->path);
    Column& c = cols[size_t(f.column)];
    c.vals.append_short(p, n, rec_end);
    c.n += int64_t(n / sizeof(T));
    return q;
  }

  const uint8_t* packed(const FieldPlan& f, const uint8_t* p, const uint8_t* q, const uint8_t* fs) {
    switch (f.type) {
      case T_INT64: case T_UINT64: return packed_varints<VecU64>(f, p, q, fs, as_u64);
      case T_INT32: case T_UINT32: case T_ENUM: return packed_varints<VecU32>(f, p, q, fs, as_u32);
      case T_SINT32: return packed_varints<VecZigzag32>(f, p, q, fs, zigzag32);
      case T_SINT64: return packed_varints<VecZigzag64>(f, p, q, fs, zigzag64);
      case T_BOOL: return packed_varints<VecBool>(f, p, q, fs, as_bool);
      case T_DOUBLE: case T_FIXED64: case T_SFIXED64: return packed_fixed<uint64_t>(f, p, q, fs);
      case T_FLOAT: case T_FIXED32: case T_SFIXED32: return packed_fixed<uint32_t>(f, p, q, fs);
    }
    return fail(ST_ERR_WIRE_TYPE, fs, "packed encoding for a non-scalar field", f.cold->path);
  }

  // varint_field and fixed_field decode one scalar of field f (of an
  // element of node) at p, store it (put) and return the position after
  // it, or nullptr on error.
  template <class T, class Conv>
  __attribute__((always_inline)) inline const uint8_t* varint_field(const FieldPlan& f, int32_t node, const uint8_t* p,
                                                                    const uint8_t* end, const uint8_t* fs, Conv conv) {
    uint64_t v;
    const uint8_t* start = p;
    p = read_varint_lim(p, end, rec_end, &v);
    if (!p) return fail(ST_ERR_MALFORMED, fs, varint_failure(start, end, false), f.cold->path);
    put<T>(f, node, conv(v));
    return p;
  }
  template <class T>
  __attribute__((always_inline)) inline const uint8_t* fixed_field(const FieldPlan& f, int32_t node, const uint8_t* p,
                                                                   const uint8_t* end, const uint8_t* fs, const char* truncated) {
    if (size_t(end - p) < sizeof(T)) return fail(ST_ERR_MALFORMED, fs, truncated, f.cold->path);
    T x;
    memcpy(&x, p, sizeof(T));
    put<T>(f, node, x);
    return p + sizeof(T);
  }

  // parse_message decodes the fields of one element of node from [p, end).
  // group is the field number of the group being parsed, or 0 for a
  // length-delimited message. It returns the position after the message
  // (after the end-group tag for a group), or nullptr on error.
  const uint8_t* parse_message(int32_t node, const uint8_t* p, const uint8_t* end, int depth, uint64_t group) {
    const NodePlan& np = plan->nodes[size_t(node)];
    while (p < end) {
      const uint8_t* fs = p;
      int32_t fi;
      uint64_t num;
      uint32_t wt;
      // Fast path: a one-byte tag (fields 1..15) of a projected field with
      // its expected wire type, resolved by one table load.
      if (*p < 0x80 && (fi = np.by_tag[*p]) >= 0) {
        num = *p >> 3;
        wt = *p & 7;
        p++;
        goto field;
      }
      {
      uint64_t tag;
      const uint8_t* start = p;
      p = read_varint_lim(p, end, rec_end, &tag);
      if (!p) return fail(ST_ERR_MALFORMED, fs, varint_failure(start, end, true), np.path);
      if ((tag >> 3) == 0 || (tag >> 3) > kMaxFieldNumber) return fail(ST_ERR_MALFORMED, fs, "invalid field number", np.path);
      num = tag >> 3;
      wt = uint32_t(tag & 7);
      if (wt == W_EGROUP) {
        if (group == num) return p;
        return fail(ST_ERR_MALFORMED, fs, "unexpected end-group tag", np.path);
      }
      if (wt > W_I32) return fail(ST_ERR_MALFORMED, fs, "invalid wire type", np.path);
      fi = np.lookup(num);
      if (fi < 0) {
        p = skip_field(p, end, wt, num, depth, fs, np);
        if (!p) return nullptr;
        continue;
      }
      }
    field:
      const FieldPlan& f = np.fields[size_t(fi)];
      catch_up(f, node);
      if (f.oneof) {
        OneofMark& m = oneof_marks[size_t(f.oneof_id)];
        int64_t e = counts[size_t(node)];
        if (m.element == e && m.member != f.number) clear_oneof(node, np, f);
        m.element = e;
        m.member = f.number;
      }
      if (wt != f.wire) {
        if (wt == W_LEN && f.mode == M_REPEATED && !f.message && f.dtype != ST_STRING) {
          uint64_t len;
          p = read_varint_lim(p, end, rec_end, &len);
          if (!p || len > uint64_t(end - p)) return fail(ST_ERR_MALFORMED, fs, "length past the end", f.cold->path);
          p = packed(f, p, p + len, fs);
          if (!p) return nullptr;
          continue;
        }
        return fail(ST_ERR_WIRE_TYPE, fs, "wrong wire type", f.cold->path);
      }
      switch (f.type) {
        case T_INT64: case T_UINT64: p = varint_field<uint64_t>(f, node, p, end, fs, as_u64); break;
        case T_INT32: case T_UINT32: case T_ENUM: p = varint_field<uint32_t>(f, node, p, end, fs, as_u32); break;
        case T_SINT32: p = varint_field<int32_t>(f, node, p, end, fs, zigzag32); break;
        case T_SINT64: p = varint_field<int64_t>(f, node, p, end, fs, zigzag64); break;
        case T_BOOL: p = varint_field<uint8_t>(f, node, p, end, fs, as_bool); break;
        case T_DOUBLE: case T_FIXED64: case T_SFIXED64: p = fixed_field<uint64_t>(f, node, p, end, fs, "truncated fixed64"); break;
        case T_FLOAT: case T_FIXED32: case T_SFIXED32: p = fixed_field<uint32_t>(f, node, p, end, fs, "truncated fixed32"); break;
        case T_STRING: case T_BYTES: {
          uint64_t len;
          p = read_varint_lim(p, end, rec_end, &len);
          if (!p || len > uint64_t(end - p)) return fail(ST_ERR_MALFORMED, fs, "length past the end", f.cold->path);
          if (f.validate_utf8 && !valid_utf8(p, size_t(len))) return fail(ST_ERR_UTF8, fs, "invalid UTF-8 in string", f.cold->path);
          Column& c = cols[size_t(f.column)];
          if (f.mode != M_REPEATED && c.count() > singular_key(f, node)) c.drop_last();
          c.push_string(p, size_t(len), rec_end);
          p += len;
          break;
        }
        case T_MESSAGE: case T_GROUP: {
          if (uint32_t(depth + 1) > plan->max_depth) return fail(ST_ERR_DEPTH, fs, "nesting deeper than the limit", f.cold->path);
          if (f.mode != M_REPEATED && counts[size_t(f.child)] > singular_key(f, node)) reopen(f.child);
          if (f.type == T_GROUP) {
            p = parse_message(f.child, p, end, depth + 1, num);
            if (!p) return nullptr;
            if (!end_element(f.child, fs)) return nullptr;
          } else {
            uint64_t len;
            p = read_varint_lim(p, end, rec_end, &len);
            if (!p || len > uint64_t(end - p)) return fail(ST_ERR_MALFORMED, fs, "length past the end", f.cold->path);
            const uint8_t* q = p + len;
            if (!parse_message(f.child, p, q, depth + 1, 0)) return nullptr;
            if (!end_element(f.child, fs)) return nullptr;
            p = q;
          }
          break;
        }
      }
      if (!p) return nullptr;
    }
    if (group) return fail(ST_ERR_MALFORMED, end, "group not terminated", np.path);
    return p;
  }

  // run decodes records [lo, hi); get(i, &ptr, &len) returns record i.
  template <class Get>
  void run(int64_t lo, int64_t hi, const Get& get) {
    for (int64_t i = lo; i < hi; i++) {
      if (cancel && ((i - lo) & 63) == 0 && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
        code = ST_ERR_CANCELLED;
        err_record = i;
        err_msg = "decoding cancelled";
        return;
      }
      const uint8_t* rec;
      size_t len;
      get(i, &rec, &len);
      static const uint8_t empty[1] = {0};
      if (!rec) rec = empty;  // a zero-length record may come with a null pointer
      rec_start = rec;
      rec_end = rec + len;
      if (!parse_message(0, rec, rec + len, 0, 0) || !end_element(0, rec + len)) {
        err_record = i;
        return;
      }
    }
    finish();
  }
};

}  // namespace

struct st_result {
  const st_plan* plan;
  int64_t nrecords = 0;
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

// compact closes up the stretches of the caller's buffers that the chunks
// of a multi-threaded decode wrote, shifting string offsets and row
// splits, and leaves one chunk, so that the outputs read as in place. It
// does nothing when any output of any chunk moved to engine memory (the
// outputs are then copied out as usual).
void compact(st_result& res) {
  for (auto& ch : res.chunks) {
    if (!ch->all_external()) return;
  }
  Decoder& d = *res.chunks[0];
  for (size_t k = 1; k < res.chunks.size(); k++) {
    Decoder& s = *res.chunks[k];
    for (size_t c = 0; c < d.cols.size(); c++) {
      Column& dc = d.cols[c];
      Column& sc = s.cols[c];
      int64_t base = int64_t(dc.vals.len);
      // The source stretch lies after the destination's end: a forward
      // move (memmove, and the offsets loop) never overwrites unread data.
      if (sc.vals.len) memmove(dc.vals.p + dc.vals.len, sc.vals.p, sc.vals.len);
      dc.vals.cap = size_t(sc.vals.p - dc.vals.p) + sc.vals.cap;
      dc.vals.len += sc.vals.len;
      if (dc.dtype == ST_STRING) {
        size_t m = sc.offs.len / 8;
        dc.offs.cap = size_t(sc.offs.p - dc.offs.p) + sc.offs.cap;
        for (size_t i = 1; i < m; i++) {
          int64_t v = base + sc.offs.i64(i);
          memcpy(dc.offs.p + dc.offs.len, &v, 8);
          dc.offs.len += 8;
        }
      }
      dc.n += sc.n;
    }
    for (size_t p = 0; p < d.parts.size(); p++) {
      Buf& db = d.parts[p];
      Buf& sb = s.parts[p];
      int64_t base = db.last_i64();
      size_t m = sb.len / 8;
      db.cap = size_t(sb.p - db.p) + sb.cap;
      for (size_t i = 1; i < m; i++) {
        int64_t v = base + sb.i64(i);
        memcpy(db.p + db.len, &v, 8);
        db.len += 8;
      }
    }
  }
  res.chunks.resize(1);
}

// ---------------------------------------------------------------------
// Worker threads.

// thread_limit bounds the engine's worker threads in the process, all
// decodes together (st_set_thread_limit; Go sets it from GOMAXPROCS). Its
// default counts the CPUs the process may run on.
std::atomic<int32_t> thread_limit{0};

// fail_thread_starts makes spawn act as if no thread could start
// (st_test_fail_thread_starts).
std::atomic<bool> fail_thread_starts{false};

int32_t default_threads() {
  int32_t n = thread_limit.load(std::memory_order_relaxed);
  if (n > 0) return n;
  return int32_t(std::max(1u, std::thread::hardware_concurrency()));
}

// Workers is the process's pool of engine threads, started on demand up
// to default_threads() - 1 (the calling thread of a decode is the other
// worker) and kept for later decodes. A decode asks for helpers and
// works itself; helpers busy with other decodes are not waited for
// (their share is done by whoever is free), so a pool of any size,
// even none (a thread that cannot start), only changes the speed. It is
// never destroyed: its threads may outlive static destructors at exit.
class Workers {
 public:
  static Workers& get() {
    static Workers* w = new Workers;
    return *w;
  }

  // run calls fn on the calling thread and on up to helpers pool
  // threads, and returns once every call that started has returned.
  void run(int64_t helpers, const std::function<void()>& fn) {
    Job job{&fn};
    if (helpers > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      job.queued = helpers;
      queue_.push_back(&job);
      spawn(helpers);
    }
    if (helpers > 0) ready_.notify_all();
    fn();
    if (helpers <= 0) return;
    std::unique_lock<std::mutex> lock(mu_);
    if (job.queued > 0) {
      for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        if (*it == &job) {
          queue_.erase(it);
          break;
        }
      }
      job.queued = 0;
    }
    done_.wait(lock, [&] { return job.running == 0; });
  }

  // threads returns the number of pool threads started and not retired.
  int64_t threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  struct Job {
    const std::function<void()>* fn;
    int64_t queued = 0;   // helper calls not yet taken (guarded by mu_)
    int64_t running = 0;  // helper calls under way (guarded by mu_)
  };

  // spawn starts threads until idle ones cover want or the limit is
  // reached. A thread that cannot start (std::system_error) is not an
  // error: the decode goes on with the threads there are.
  void spawn(int64_t want) {
    const int64_t limit = int64_t(default_threads()) - 1;
    while (idle_ < want && started_ < limit) {
      if (fail_thread_starts.load(std::memory_order_relaxed)) return;
      try {
        std::thread(&Workers::loop, this).detach();
      } catch (const std::system_error&) {
        return;
      } catch (const std::bad_alloc&) {
        return;
      }
      started_++;
      idle_++;
    }
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ready_.wait(lock, [&] { return !queue_.empty() || started_ > int64_t(default_threads()) - 1; });
      if (queue_.empty()) {  // the limit went down: this thread retires
        started_--;
        idle_--;
        return;
      }
      Job* job = queue_.front();
      if (--job->queued == 0) queue_.pop_front();
      job->running++;
      idle_--;
      lock.unlock();
      (*job->fn)();
      lock.lock();
      idle_++;
      if (--job->running == 0) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_, done_;
  std::deque<Job*> queue_;
  int64_t started_ = 0, idle_ = 0;
};

template <class Get>
st_result* decode_batch(const st_plan* plan, int64_t n, const int64_t* sizes_prefix, const st_options* opts,
                        const st_output* out, st_error* err, const Get& get) {
  clear_error(err);
  try {
    std::unique_ptr<st_result> res(new st_result);
    res->plan = plan;
    res->nrecords = n;
    int threads = opts ? opts->threads : 1;
    if (threads <= 0) threads = default_threads();
    const volatile int32_t* cancel = opts ? opts->cancel : nullptr;
    // Split by bytes into chunks of about kChunkBytes, decoded in order by
    // up to `threads` workers. Chunks bound each decoder's buffers (which
    // the plan's pool then reuses without reallocating or faulting pages
    // in) and keep the output being written near the cache.
    constexpr int64_t kChunkBytes = int64_t(1) << 20;
    int64_t total = sizes_prefix[n];
    // With the caller's buffers, one chunk per thread, each writing its
    // share of the buffers (by bytes), closed up afterwards (compact).
    int64_t nchunks = out ? std::max<int64_t>(1, std::min<int64_t>(n, threads))
                          : std::max<int64_t>(1, std::min<int64_t>(n, (total + kChunkBytes - 1) / kChunkBytes));
    std::vector<int64_t> bounds(static_cast<size_t>(nchunks + 1));
    bounds[0] = 0;
    for (int64_t k = 1; k < nchunks; k++) {
      int64_t target = total / nchunks * k;
      bounds[size_t(k)] = std::max(bounds[size_t(k - 1)], int64_t(std::lower_bound(sizes_prefix, sizes_prefix + n + 1, target) - sizes_prefix));
    }
    bounds[size_t(nchunks)] = n;
    if (out) {
      auto frac = [&](int64_t k) {
        return total > 0 ? double(sizes_prefix[bounds[size_t(k)]]) / double(total) : double(bounds[size_t(k)]) / double(n);
      };
      for (int64_t k = 0; k < nchunks; k++) {
        res->chunks.push_back(std::unique_ptr<Decoder>(new Decoder(plan)));
        res->chunks.back()->attach_part(*out, k == 0 ? 0.0 : frac(k), k + 1 == nchunks ? 1.0 : frac(k + 1));
        res->chunks.back()->cancel = cancel;
      }
    } else {
      for (int64_t k = 0; k < nchunks; k++) {
        res->chunks.push_back(get_decoder(plan));
        res->chunks.back()->cancel = cancel;
      }
    }
    // A chunk that fails stops the chunks after it (their output would be
    // discarded) but not those before: the error reported is the first in
    // batch order, as in a serial run.
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> stop{nchunks};
    std::atomic<bool> oom{false};
    auto work = [&] {
      try {
        for (;;) {
          int64_t k = next.fetch_add(1);
          if (k >= nchunks || k > stop.load()) return;
          Decoder& d = *res->chunks[size_t(k)];
          d.run(bounds[size_t(k)], bounds[size_t(k + 1)], get);
          if (d.code != ST_OK) {
            int64_t cur = stop.load();
            while (k < cur && !stop.compare_exchange_weak(cur, k)) {
            }
          }
        }
      } catch (...) {
        oom = true;
        stop = -1;
      }
    };
    int64_t nworkers = std::min<int64_t>(threads, nchunks);
    if (nworkers <= 1) {
      work();
    } else {
      Workers::get().run(nworkers - 1, work);
    }
    if (oom) throw std::bad_alloc();
    for (auto& c : res->chunks) {
      if (c->code != ST_OK) {
        set_error(err, c->code, c->err_record, c->err_offset, "%s", c->err_msg.c_str());
        return nullptr;
      }
    }
    if (out && res->chunks.size() > 1) compact(*res);
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
void st_count_packed_runs(int64_t* vector, int64_t* portable) {
  *vector = packed_runs_vector.load();
  *portable = packed_runs_portable.load();
}
#endif

void st_set_thread_limit(int32_t n) { thread_limit.store(n > 0 ? n : 0, std::memory_order_relaxed); }

int32_t st_worker_threads(void) { return int32_t(Workers::get().threads()); }

void st_test_fail_thread_starts(int32_t fail) { fail_thread_starts.store(fail != 0, std::memory_order_relaxed); }

int64_t st_plan_num_columns(const st_plan* plan) { return plan ? int64_t(plan->col_dtype.size()) : -1; }
int64_t st_plan_num_partitions(const st_plan* plan) { return plan ? plan->nparts : -1; }
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
  if (r->chunks.size() != 1) return 0;
  const Column& col = r->chunks[0]->cols[size_t(c)];
  return col.vals.external && (col.dtype != ST_STRING || col.offs.external) ? 1 : 0;
}

int32_t st_result_partition_in_place(const st_result* r, int64_t p) {
  if (!part_ok(r, p)) return -1;
  if (r->chunks.size() != 1) return 0;
  return r->chunks[0]->parts[size_t(p)].external ? 1 : 0;
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

}  // extern "C"
