// The plan: its in-memory form (FieldPlan, NodePlan, st_plan) and the
// parser of its byte form (parse_plan), with the error helpers.
//
// Part of the engine (engine.cc), which includes it once after the
// standard headers it relies on: the engine is one translation unit, so
// that the record walker and the wire decoders inline into each other.
// Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_PLAN_H_
#define STRUCTTENSOR_NATIVE_ENGINE_PLAN_H_

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
constexpr uint32_t kTwoByteTagLimit = 2048;  // field numbers whose tags fit in two bytes

struct FieldPlan {
  // What the walk reads often lies in the node's FieldKey (below); this,
  // on cold paths (defaults, oneofs, errors) and outside the walk.
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
    bool def_utf8 = true;  // def_str is valid UTF-8
    std::string path;  // for errors: the projection path from the root
  };
  std::unique_ptr<Cold> cold{new Cold};
};

// FieldKey is what the walk reads of a field at each of its occurrences,
// in 16 bytes, held by the node's tag tables themselves (TagTable) rather
// than found through them: a table of field indexes, then the FieldPlan,
// were two cache lines a field occurrence, and on records that touch
// hundreds of fields across dozens of nodes (sparse nested ones) both
// missed the first-level cache about as often as the outputs did. The
// FieldPlan stays for what is read rarely (defaults, oneofs, errors).
// A key holds nothing of its node's place in the plan (the child is
// counted from the node, the outputs are the node's slots, from
// NodePlan::slot_base, in field order), so that nodes of one message type
// share one table (below).
struct alignas(16) FieldKey {
  int32_t field = -1;        // index in NodePlan::fields; -1: none
  int32_t child_offset = 0;  // message fields: the child node's index less the node's
  uint8_t type = 0;
  uint8_t mode = 0;
  uint8_t wire = 0;
  // kKeyMessage, kKeyUTF8, kKeyOneof; of a message field, whether its
  // child node has singular slots (kKeyChildSingular) and lies deeper than
  // the plan's limit (kKeyTooDeep).
  uint8_t bits = 0;
  // Of a message field, the shape of its child's common encoding that the
  // walk takes without walking the child's fields (Decoder::inline_child):
  // kShapeEntry, a map entry (key, then value message); kShapeList, a
  // wrapper of one packed list; kShapeNone, any other.
  uint8_t child_shape = 0;
  enum : uint8_t { kShapeNone = 0, kShapeEntry = 1, kShapeList = 2 };
  enum : uint8_t { kKeyMessage = 1, kKeyUTF8 = 2, kKeyOneof = 4, kKeyChildSingular = 8, kKeyTooDeep = 16 };

  bool message() const { return bits & kKeyMessage; }
  bool validate_utf8() const { return bits & kKeyUTF8; }
  bool oneof() const { return bits & kKeyOneof; }
  bool child_singular() const { return bits & kKeyChildSingular; }
  bool too_deep() const { return bits & kKeyTooDeep; }
  // kPacked marks, in type, the key of a repeated scalar's packed form
  // (wire type W_LEN) in the tag tables: the walk's switch on type tells
  // it apart with no test of the wire type.
  static constexpr uint8_t kPacked = 0x20;
  // kShaped marks, in type, the key of a message field whose child has a
  // common form the walk may take without walking it (child_shape).
  static constexpr uint8_t kShaped = 0x40;
  bool packable() const { return mode == M_REPEATED && !message() && type != T_STRING && type != T_BYTES; }
  FieldKey as_packed() const {
    FieldKey k = *this;
    k.type |= kPacked;
    return k;
  }

  static FieldKey of(const FieldPlan& f, int32_t index, int32_t node, bool child_singular, bool too_deep) {
    FieldKey k;
    k.field = index;
    k.child_offset = f.message ? f.child - node : 0;
    k.type = f.type;
    k.mode = f.mode;
    k.wire = f.wire;
    k.bits = uint8_t((f.message ? kKeyMessage : 0) | (f.validate_utf8 ? kKeyUTF8 : 0) | (f.oneof ? kKeyOneof : 0) |
                     (child_singular ? kKeyChildSingular : 0) | (too_deep ? kKeyTooDeep : 0));
    return k;
  }
  bool operator==(const FieldKey& o) const {
    return field == o.field && child_offset == o.child_offset && type == o.type && mode == o.mode && wire == o.wire &&
           bits == o.bits && child_shape == o.child_shape;
  }
};
static_assert(sizeof(FieldKey) == 16, "a FieldKey is 16 bytes, four to a cache line");

// TagTable finds a node's fields by tag. Nodes whose tables are equal (a
// message type used by many fields, as in records with dozens of
// sections of one type) share one: what the walk reads of the plan for
// them stays one table's few cache lines, however many nodes use it.
struct TagTable {
  std::vector<FieldKey> keys;  // keys[i]: NodePlan::fields[i]'s
  // One-byte tag -> the key of the field when the wire type is the
  // field's own, or its packed form's (FieldKey::as_packed); else a key
  // with field -1.
  FieldKey by_tag[128];
  // The same for two-byte tags (fields 16..2047), indexed by the tag's
  // value, up to the node's highest such field: wide messages' fields are
  // mostly past 15, and the general path (a varint read, its checks and
  // lookup) costs several times the table load.
  std::vector<FieldKey> by_tag2;

  bool operator==(const TagTable& o) const {
    return keys == o.keys && by_tag2 == o.by_tag2 && std::equal(std::begin(by_tag), std::end(by_tag), std::begin(o.by_tag));
  }
  uint64_t hash() const {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (const FieldKey& k : keys) {
      mix(uint64_t(uint32_t(k.field)) | uint64_t(uint32_t(k.child_offset)) << 32);
      mix(uint64_t(k.type) | uint64_t(k.mode) << 8 | uint64_t(k.wire) << 16 | uint64_t(k.bits) << 24);
    }
    mix(by_tag2.size());
    return h;
  }
};

struct NodePlan {
  std::string path;
  std::vector<FieldPlan> fields;
  const TagTable* tags = nullptr;  // st_plan::tag_tables'
  int32_t slot_base = 0;           // fields[i]'s outputs: Decoder::slots[slot_base + i]
  std::vector<int32_t> dense;      // field number -> field index, -1 if none
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
    int32_t source;  // child node (message) or the field's slot (Decoder::slots)
    int32_t field;   // index in fields, for the default and errors
    bool message;
  };
  std::vector<SingularSlot> singular_slots;  // required fields and implicit messages: checked at element end
  std::vector<int32_t> implicit_scalars;     // fields: defaults filled in bulk
  std::vector<std::vector<int32_t>> oneofs;
  int32_t parent = -1;
  int32_t depth = 0;  // nesting: the root 0, a child one more than its parent (kKeyTooDeep)

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

// st_plan holds types of the engine's anonymous namespace, which GCC
// flags when the definition sits in a header; the engine is one
// translation unit, so no other ever sees them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif
struct BatchSizes;  // engine_sizing.h

struct st_plan {
  // Decoders of finished results, kept with their buffers' capacity so
  // that the next batch neither reallocates nor page-faults.
  mutable std::mutex pool_mu;
  mutable std::vector<Decoder*> pool;
  mutable size_t pool_bytes = 0;  // capacity of the pooled decoders
  mutable bool closed = false;    // st_plan_close: pool nothing more
  // The output sizes of the last decode of at least kLendMinBytes, from
  // which st_plan_lend_sizes sizes the next batch's lent buffers.
  mutable std::mutex sizes_mu;
  mutable std::shared_ptr<const BatchSizes> last_sizes;
  // What rebasing a byte of the records' own row splits took, as a share
  // of what decoding an input byte took, in this plan's last hand-overs
  // (Handovers); 0 until one has been measured.
  mutable std::atomic<double> rebase_cost{0};
  // How many times chunk 0's bytes a later chunk that defers its
  // records' own splits (Decoder::defer_splits) is given, so that the
  // threads finish together, as this plan's last such batches measured
  // it (note_defer_timing); 0 until one has.
  mutable std::atomic<double> defer_weight{0};
  // The seconds one thread's walk took an input byte in this plan's last
  // decodes into lent buffers (note_walk_rate), from which lend_chunks
  // judges how many threads a batch is worth; 0 until measured.
  mutable std::atomic<double> walk_s_per_byte{0};
  // The bytes the close-up of this plan's last decode on several threads
  // into lent buffers moved or rebased (assemble); -1 until one ran.
  mutable std::atomic<int64_t> closeup_bytes{-1};
  std::string message;  // full name of the root message, for errors
  uint32_t flags = 0;
  uint32_t max_depth = 100;
  std::vector<uint8_t> col_dtype;
  // col_text[c] is 1 where column c holds a string field's values (not a
  // bytes field's): the columns a decode marks UTF-8 (Column::utf8).
  std::vector<uint8_t> col_text;
  int64_t nparts = 0;
  int32_t noneofs = 0;
  std::vector<NodePlan> nodes;
  // A Decoder keeps each field's outputs in a slot of its own, numbered
  // in the order of the nodes and their fields; col_slot and part_slot
  // find a column's and a partition's.
  int32_t nslots = 0;
  std::vector<int32_t> col_slot, part_slot;
  std::vector<std::unique_ptr<TagTable>> tag_tables;  // the nodes' (NodePlan::tags), each once
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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

// child_shape returns the FieldKey::child_shape of a message field whose
// child node is c. (Neither shape can hold a oneof: its members have
// presence, M_OPTIONAL, which parse_plan checks.)
inline uint8_t child_shape(const NodePlan& c) {
  if (c.fields.size() == 2) {
    const FieldPlan& k = c.fields[0];
    const FieldPlan& v = c.fields[1];
    if (k.number == 1 && (k.type == T_STRING || k.type == T_BYTES) && k.mode <= M_IMPLICIT && v.number == 2 &&
        v.type == T_MESSAGE && v.mode <= M_IMPLICIT)
      return FieldKey::kShapeEntry;
  }
  if (c.fields.size() == 1) {
    const FieldPlan& f = c.fields[0];
    // A list's tag in one byte: the walk reads it as such (inline_list).
    if (f.mode == M_REPEATED && !f.message && f.type != T_STRING && f.type != T_BYTES && f.number < 16)
      return FieldKey::kShapeList;
  }
  return FieldKey::kShapeNone;
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
    plan->col_text.push_back(0);
  }
  uint64_t nparts = r.uvarint();
  if (!r.ok || nparts > (1u << 30)) PLAN_FAIL("plan: bad partition count");
  plan->nparts = int64_t(nparts);
  uint64_t nnodes = r.uvarint();
  if (!r.ok || nnodes == 0 || nnodes > uint64_t(r.end - r.p) + 1) PLAN_FAIL("plan: bad node count");
  plan->nodes.resize(size_t(nnodes));
  std::vector<uint8_t> col_used(static_cast<size_t>(ncols)), part_used(static_cast<size_t>(nparts));
  std::unordered_multimap<uint64_t, size_t> tag_index;  // TagTable::hash -> index in plan->tag_tables
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
        child.depth = node.depth + 1;
        f.child = int32_t(target);
      } else {
        if (target >= ncols || col_used[size_t(target)]) PLAN_FAIL("plan: field %s: bad or reused column", f.cold->path.c_str());
        col_used[size_t(target)] = 1;
        f.column = int32_t(target);
        f.dtype = dtype_of(f.type);
        if (plan->col_dtype[size_t(target)] != f.dtype) PLAN_FAIL("plan: field %s: column dtype does not match type", f.cold->path.c_str());
        f.shift = shift_of(f.dtype);
        if (f.type == T_STRING) plan->col_text[size_t(target)] = 1;
      }
      if (mode >= M_OPTIONAL) {
        if (part >= nparts || part_used[size_t(part)]) PLAN_FAIL("plan: field %s: bad or reused partition", f.cold->path.c_str());
        part_used[size_t(part)] = 1;
        f.partition = int32_t(part);
      } else if (!f.message) {
        if (f.dtype == ST_STRING) {
          f.cold->def_str = r.str();
          f.cold->def_utf8 = structtensor_engine::valid_utf8(reinterpret_cast<const uint8_t*>(f.cold->def_str.data()), f.cold->def_str.size());
        } else {
          f.def_bits = r.uvarint();
        }
        if (!r.ok) PLAN_FAIL("plan: field %s: truncated default", f.cold->path.c_str());
      }
      if (num < kDenseLimit) max_dense = std::max(max_dense, uint32_t(num));
      node.fields.push_back(std::move(f));
    }
    node.dense.assign(max_dense + 1, -1);
    node.slot_base = plan->nslots;
    plan->nslots += int32_t(node.fields.size());
    for (size_t i = 0; i < node.fields.size(); i++) {
      const FieldPlan& f = node.fields[i];
      if (f.mode == M_IMPLICIT && !f.message) {
        node.implicit_scalars.push_back(int32_t(i));
      } else if (f.mode <= M_IMPLICIT) {
        node.singular_slots.push_back({f.message ? f.child : node.slot_base + int32_t(i), int32_t(i), f.message});
      } else {
        node.list_slots.push_back({f.partition, f.message ? f.child : f.column, f.message});
      }
      if (f.oneof) {
        if (f.mode != M_OPTIONAL) PLAN_FAIL("plan: field %s: oneof member without presence", f.cold->path.c_str());
        if (node.oneofs.size() < f.oneof) node.oneofs.resize(f.oneof);
        node.oneofs[f.oneof - 1].push_back(int32_t(i));
      }
    }
  }
  if (r.p != r.end) PLAN_FAIL("plan: %lld trailing bytes", (long long)(r.end - r.p));
  // The tag tables, once every node is read: a message field's key says
  // whether its child (a later node) has singular slots (end_element).
  for (uint64_t ni = 0; ni < nnodes; ni++) {
    NodePlan& node = plan->nodes[size_t(ni)];
    std::unique_ptr<TagTable> tags(new TagTable);
    for (size_t i = 0; i < node.fields.size(); i++) {
      const FieldPlan& f = node.fields[i];
      FieldKey key = FieldKey::of(f, int32_t(i), int32_t(ni), f.message && !plan->nodes[size_t(f.child)].singular_slots.empty(),
                                     f.message && uint32_t(node.depth + 1) > plan->max_depth);
      if (f.type == T_MESSAGE) key.child_shape = child_shape(plan->nodes[size_t(f.child)]);
      if (key.child_shape != FieldKey::kShapeNone) key.type |= FieldKey::kShaped;
      tags->keys.push_back(key);
      if (f.number < kDenseLimit) {
        if (node.dense[f.number] >= 0) PLAN_FAIL("plan: field %s: duplicate number", f.cold->path.c_str());
        node.dense[f.number] = int32_t(i);
        // The tag tables hold a field's own wire type and, for a repeated
        // scalar, the packed form (W_LEN), which the walker tells apart.
        const bool packable = key.packable();
        if (f.number < 16) {
          tags->by_tag[(f.number << 3) | f.wire] = key;
          if (packable) tags->by_tag[(f.number << 3) | W_LEN] = key.as_packed();
        } else if (f.number < kTwoByteTagLimit) {
          const size_t t = size_t(f.number) << 3;
          if (tags->by_tag2.size() <= t) tags->by_tag2.resize(t + 8);
          tags->by_tag2[t | f.wire] = key;
          if (packable) tags->by_tag2[t | W_LEN] = key.as_packed();
        }
      } else {
        node.sparse.emplace_back(f.number, int32_t(i));
      }
    }
    // An equal table already made is shared (tag_index: by hash).
    const uint64_t h = tags->hash();
    for (auto range = tag_index.equal_range(h); range.first != range.second; ++range.first) {
      const TagTable* t = plan->tag_tables[range.first->second].get();
      if (*t == *tags) {
        node.tags = t;
        break;
      }
    }
    if (!node.tags) {
      tag_index.emplace(h, plan->tag_tables.size());
      node.tags = tags.get();
      plan->tag_tables.push_back(std::move(tags));
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
  for (size_t i = 1; i < plan->nodes.size(); i++) {
    if (plan->nodes[i].parent < 0) PLAN_FAIL("plan: node %zu is not used by any field", i);
  }
  for (size_t i = 0; i < col_used.size(); i++) {
    if (!col_used[i]) PLAN_FAIL("plan: column %zu is not used by any field", i);
  }
  for (size_t i = 0; i < part_used.size(); i++) {
    if (!part_used[i]) PLAN_FAIL("plan: partition %zu is not used by any field", i);
  }
  // Every column and partition is a field's (checked above), each of one.
  plan->col_slot.assign(size_t(ncols), -1);
  plan->part_slot.assign(size_t(nparts), -1);
  for (const NodePlan& node : plan->nodes) {
    for (size_t i = 0; i < node.fields.size(); i++) {
      const FieldPlan& f = node.fields[i];
      if (f.column >= 0) plan->col_slot[size_t(f.column)] = node.slot_base + int32_t(i);
      if (f.partition >= 0) plan->part_slot[size_t(f.partition)] = node.slot_base + int32_t(i);
    }
  }
  return plan.release();
#undef PLAN_FAIL
}


}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_PLAN_H_
