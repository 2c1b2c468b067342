// example_op.cc: the StructTensorDecodeExample op and its CPU kernel:
// tf.Example / tf.SequenceExample records decoded by a feature plan (the
// engine's feature decoder, native/example.cc) into the components of the
// plan's StructSpec, as tf.io.parse_example shapes them: a dense tensor per
// FixedLen feature, row splits and values per VarLen, Ragged and
// FixedLenSequence feature. Written against TensorFlow's C op and kernel
// API, compiled into the Go package cops and into
// build/libstructtensor_ops.so beside decode_op.cc, which registers it.
//
// Buffer ownership: the records are read in place (the input tensor's
// TF_TStrings) during the engine call only. Every output is allocated by
// TensorFlow (TF_AllocateOutput) and filled by copying out of the engine's
// result, which is freed before the kernel returns: no output refers to the
// input or to engine memory, so each may outlive the input, the kernel, the
// session and the graph, and TensorFlow may copy or forward it freely.
//
// The kernel never calls Go: TensorFlow runs kernels on its own threads.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "decode_op.h"
#include "kernel_common.h"
#include "structtensor_example.h"
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

constexpr const char* kOpName = STRUCTTENSOR_DECODE_EXAMPLE_OP_NAME;

// Attribute names; cops.DecodeExampleGraph (Go) sets the same ones.
constexpr const char* kAttrPlan = "plan";
constexpr const char* kAttrLayout = "layout";
constexpr const char* kAttrDTypes = "component_dtypes";
constexpr const char* kAttrNumThreads = "num_threads";

// Field layouts and partition kinds of the layout byte form
// (decode.ExamplePlan.MarshalLayout).
enum : uint64_t { L_DENSE = 0, L_RAGGED = 1, L_LISTS = 2, L_STRIDE = 3, L_STEPS = 4 };
enum : uint64_t { P_ROW_SPLITS = 1, P_ROW_LENGTHS = 2, P_UNIFORM = 3, P_VALUE_ROWIDS = 4, P_ROW_STARTS = 5, P_ROW_LIMITS = 6 };


struct Part {
  uint64_t kind = 0;
  int64_t slot = -1;   // row_splits, row_lengths: the slot of the key
  int64_t length = 0;  // uniform
};

struct Field {
  std::string name;
  uint64_t layout = 0;
  int64_t slot = 0;
  int64_t count = 0;  // values per record (dense) or per step
  std::vector<int64_t> dims;
  std::vector<Part> parts;
  int32_t dtype = 0;  // the value slot's engine dtype
};

struct Kernel {
  st_example_plan* plan = nullptr;
  std::vector<Field> fields;
  int32_t threads = 0;
  ~Kernel() { st_example_plan_free(plan); }
};

TF_DataType tfTypeOf(int32_t st) {
  switch (st) {
    case ST_INT64: return TF_INT64;
    case ST_FLOAT32: return TF_FLOAT;
    case ST_STRING: return TF_STRING;
  }
  return static_cast<TF_DataType>(0);
}

// LayoutReader reads the layout byte form; any error leaves ok false.
struct LayoutReader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  uint64_t uvarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) break;
      const uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    ok = false;
    return 0;
  }
  // small reads a number that must be below limit.
  int64_t small(uint64_t limit) {
    const uint64_t v = uvarint();
    if (v >= limit) ok = false;
    return ok ? static_cast<int64_t>(v) : 0;
  }
  std::string str() {
    const uint64_t n = uvarint();
    if (!ok || n > static_cast<uint64_t>(end - p)) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

// parseLayout reads the layout and checks it against the plan: every
// slot exists, partition keys are int64, counts fit shapes. It returns an
// empty string or what is wrong.
std::string parseLayout(const std::vector<char>& bytes, const st_example_plan* plan, std::vector<Field>* out) {
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  LayoutReader r{b, b + bytes.size()};
  if (bytes.size() < 4 || std::memcmp(b, "STEL", 4) != 0) return "not a feature layout (no STEL header)";
  r.p += 4;
  if (r.uvarint() != 1 || !r.ok) return "unknown layout version";
  const int64_t slots = st_example_plan_num_slots(plan);
  const int64_t nfields = r.small(1 << 20);
  for (int64_t i = 0; r.ok && i < nfields; i++) {
    Field f;
    f.name = r.str();
    f.layout = r.uvarint();
    f.slot = r.small(static_cast<uint64_t>(slots));
    f.count = r.small(uint64_t(1) << 31);
    const int64_t rank = r.small(64);
    int64_t elems = 1;
    for (int64_t d = 0; r.ok && d < rank; d++) {
      f.dims.push_back(r.small(uint64_t(1) << 31));
      elems *= f.dims.back();
      if (elems >= (int64_t(1) << 31)) r.ok = false;
    }
    const int64_t nparts = r.small(64);
    for (int64_t j = 0; r.ok && j < nparts; j++) {
      Part p;
      p.kind = r.uvarint();
      if (p.kind == P_UNIFORM) {
        p.length = r.small(uint64_t(1) << 31);
        if (p.length == 0) r.ok = false;
      } else if (p.kind == P_ROW_SPLITS || p.kind == P_ROW_LENGTHS || p.kind == P_VALUE_ROWIDS || p.kind == P_ROW_STARTS ||
                 p.kind == P_ROW_LIMITS) {
        p.slot = r.small(static_cast<uint64_t>(slots));
        if (r.ok && st_example_plan_slot_dtype(plan, p.slot) != ST_INT64) return "field \"" + f.name + "\": a partition key is not int64";
      } else {
        r.ok = false;
      }
      f.parts.push_back(p);
    }
    if (!r.ok) break;
    f.dtype = st_example_plan_slot_dtype(plan, f.slot);
    if (tfTypeOf(f.dtype) == 0) return "field \"" + f.name + "\": bad value slot";
    switch (f.layout) {
      case L_DENSE:
      case L_STRIDE:
      case L_STEPS:
        if (elems != f.count || !f.parts.empty()) return "field \"" + f.name + "\": shape and count disagree";
        if (f.layout != L_DENSE && f.count == 0) return "field \"" + f.name + "\": a sequence of empty steps";
        break;
      case L_RAGGED:
      case L_LISTS:
        if (!f.dims.empty() || (f.layout == L_LISTS && !f.parts.empty())) return "field \"" + f.name + "\": bad ragged layout";
        break;
      default:
        return "field \"" + f.name + "\": unknown layout " + std::to_string(f.layout);
    }
    out->push_back(std::move(f));
  }
  if (!r.ok || r.p != r.end) return "malformed layout";
  return "";
}

// componentTypes lists the dtypes of the fields' components in
// tfbridge.Components order: row splits outermost first, then values.
std::vector<TF_DataType> componentTypes(const std::vector<Field>& fields) {
  std::vector<TF_DataType> t;
  for (const Field& f : fields) {
    size_t splits = 0;
    switch (f.layout) {
      case L_RAGGED: splits = 1 + f.parts.size(); break;
      case L_LISTS: splits = 2; break;
      case L_STRIDE:
      case L_STEPS: splits = 1; break;
    }
    t.insert(t.end(), splits, TF_INT64);
    t.push_back(tfTypeOf(f.dtype));
  }
  return t;
}

void failConstruction(TF_OpKernelConstruction* ctx, TF_Code code, const std::string& msg) {
  Status st;
  TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
  TF_OpKernelConstruction_Failure(ctx, st.s);
}

bool stringAttr(TF_OpKernelConstruction* ctx, const char* name, std::vector<char>* out) {
  Status st;
  int32_t list_size = 0, total_size = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, name, &list_size, &total_size, st.s);
  if (st.ok()) {
    out->resize(static_cast<size_t>(total_size) + 1);
    TF_OpKernelConstruction_GetAttrString(ctx, name, out->data(), out->size(), st.s);
    out->resize(static_cast<size_t>(total_size));
  }
  if (!st.ok()) TF_OpKernelConstruction_Failure(ctx, st.s);
  return st.ok();
}

void* newKernel(TF_OpKernelConstruction* ctx) {
  if (structtensor_cops_take_fault(1)) throw std::bad_alloc();
  std::vector<char> planBytes, layoutBytes;
  if (!stringAttr(ctx, kAttrPlan, &planBytes) || !stringAttr(ctx, kAttrLayout, &layoutBytes)) return nullptr;
  std::unique_ptr<Kernel> k(new Kernel);
  st_error err{};
  k->plan = st_example_plan_new(reinterpret_cast<const uint8_t*>(planBytes.data()), planBytes.size(), &err);
  if (k->plan == nullptr) {
    failConstruction(ctx, TF_INVALID_ARGUMENT, std::string("attr plan: ") + err.message);
    return nullptr;
  }
  const std::string bad = parseLayout(layoutBytes, k->plan, &k->fields);
  if (!bad.empty()) {
    failConstruction(ctx, TF_INVALID_ARGUMENT, "attr layout: " + bad);
    return nullptr;
  }
  Status st;
  int64_t threads = 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, kAttrNumThreads, &threads, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  k->threads = static_cast<int32_t>(threads);
  int32_t list_size = 0, total_size = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, kAttrDTypes, &list_size, &total_size, st.s);
  std::vector<TF_DataType> dtypes(list_size > 0 ? list_size : 0);
  if (st.ok() && list_size > 0) TF_OpKernelConstruction_GetAttrTypeList(ctx, kAttrDTypes, dtypes.data(), list_size, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  if (componentTypes(k->fields) != dtypes) {
    failConstruction(ctx, TF_INVALID_ARGUMENT, "attr component_dtypes does not match the plan's layout");
    return nullptr;
  }
  return k.release();
}

void deleteKernel(void* kernel) { delete static_cast<Kernel*>(kernel); }

struct ResultHolder {
  st_example_result* r = nullptr;
  ~ResultHolder() { st_example_result_free(r); }
};


// Run assembles one run's outputs from the engine's result, in component
// order; the first failure sets the context's status and ends it.
struct Run {
  const Kernel& k;
  TF_OpKernelContext* ctx;
  const st_example_result* r;
  int64_t nrows;
  int index = 0;  // the next output

  void fail(TF_Code code, const std::string& msg) {
    Status st;
    TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
    TF_OpKernelContext_Failure(ctx, st.s);
  }

  // alloc allocates the next output; TensorFlow owns it.
  void* alloc(TF_DataType dtype, const std::vector<int64_t>& dims, size_t elem) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    Status st;
    TensorHolder t;
    t.t = TF_AllocateOutput(ctx, index++, dtype, dims.data(), static_cast<int>(dims.size()), static_cast<size_t>(n) * elem, st.s);
    if (!st.ok() || t.t == nullptr) {
      if (!st.ok()) TF_OpKernelContext_Failure(ctx, st.s);
      else fail(TF_RESOURCE_EXHAUSTED, "cannot allocate output " + std::to_string(index - 1));
      return nullptr;
    }
    // An empty tensor may have no data pointer; callers write nothing to
    // it, so any non-null pointer stands for success.
    void* data = TF_TensorData(t.t);
    if (data == nullptr && n == 0) return &empty;
    if (data == nullptr) fail(TF_INTERNAL, "output " + std::to_string(index - 1) + " has no memory");
    return data;
  }
  int64_t empty = 0;

  // splits outputs a vector of row splits.
  bool splits(const std::vector<int64_t>& s) {
    auto* d = static_cast<int64_t*>(alloc(TF_INT64, {static_cast<int64_t>(s.size())}, sizeof(int64_t)));
    if (d == nullptr) return false;
    if (!s.empty()) std::memcpy(d, s.data(), s.size() * sizeof(int64_t));
    return true;
  }

  // slotSplits reads a slot's row splits at level 0 or 1.
  bool slotSplits(const Field& f, int64_t slot, int level, int64_t want_rows, std::vector<int64_t>* out) {
    const int64_t n = st_example_result_splits_length(r, slot, level);
    if (n < 1 || (want_rows >= 0 && n != want_rows + 1)) {
      fail(TF_INTERNAL, "field \"" + f.name + "\": the plan's slot has no row splits at level " + std::to_string(level));
      return false;
    }
    out->resize(static_cast<size_t>(n));
    if (st_example_result_copy_splits(r, slot, level, out->data(), out->size()) != ST_OK) {
      fail(TF_INTERNAL, "field \"" + f.name + "\": copying row splits");
      return false;
    }
    return true;
  }

  // int64s copies an int64 slot's values.
  bool int64s(const Field& f, int64_t slot, std::vector<int64_t>* out) {
    const int64_t n = st_example_result_values_length(r, slot);
    out->resize(static_cast<size_t>(n));
    if (n < 0 || st_example_result_copy_values(r, slot, out->data(), out->size() * sizeof(int64_t)) != ST_OK) {
      fail(TF_INTERNAL, "field \"" + f.name + "\": copying partition values");
      return false;
    }
    return true;
  }

  // values outputs a field's values with dims [rows, inner...]; rows must
  // account for every value.
  bool values(const Field& f, int64_t rows, const std::vector<int64_t>& inner) {
    std::vector<int64_t> dims{rows};
    dims.insert(dims.end(), inner.begin(), inner.end());
    int64_t per = 1;
    for (int64_t d : inner) per *= d;
    const int64_t n = st_example_result_values_length(r, f.slot);
    const int64_t bytes = st_example_result_values_bytes(r, f.slot);
    if (n != rows * per) {
      fail(TF_INTERNAL, "field \"" + f.name + "\": " + std::to_string(n) + " values for " + std::to_string(rows) + " rows");
      return false;
    }
    if (f.dtype != ST_STRING) {
      const size_t elem = f.dtype == ST_INT64 ? 8 : 4;
      if (bytes != n * static_cast<int64_t>(elem)) {
        fail(TF_INTERNAL, "field \"" + f.name + "\": value size");
        return false;
      }
      void* d = alloc(tfTypeOf(f.dtype), dims, elem);
      if (d == nullptr) return false;
      if (n > 0 && st_example_result_copy_values(r, f.slot, d, static_cast<size_t>(bytes)) != ST_OK) {
        fail(TF_INTERNAL, "field \"" + f.name + "\": copying values");
        return false;
      }
      return true;
    }
    // Strings: the bytes and offsets out of the engine, then one
    // TF_TString each, owning its bytes (inline up to 22, else allocated
    // by TF_TString_Copy), in the tensor TensorFlow allocated.
    std::unique_ptr<char[]> data(new char[static_cast<size_t>(bytes) + 1]);
    std::unique_ptr<int64_t[]> offs(new int64_t[static_cast<size_t>(n) + 1]);
    if (st_example_result_copy_values(r, f.slot, data.get(), static_cast<size_t>(bytes)) != ST_OK ||
        st_example_result_copy_string_offsets(r, f.slot, offs.get(), static_cast<size_t>(n) + 1) != ST_OK) {
      fail(TF_INTERNAL, "field \"" + f.name + "\": copying strings");
      return false;
    }
    auto* d = static_cast<TF_TString*>(alloc(TF_STRING, dims, sizeof(TF_TString)));
    if (d == nullptr) return false;
    for (int64_t i = 0; i < n; i++) {
      TF_TString_Copy(&d[i], data.get() + offs[i], static_cast<size_t>(offs[i + 1] - offs[i]));
    }
    return true;
  }

  // A Ragged feature's partitions, computed before any output is made
  // (so that the error is the first bad record of any feature, as in the
  // Go decode): each level's row splits, outermost first.
  struct Partitioned {
    std::vector<std::vector<int64_t>> levels;
    int64_t bad_record = -1;
    std::string error;
  };

  // field makes a field's outputs; parted holds a Ragged feature's
  // partitions (partition).
  bool field(const Field& f, const Partitioned* parted) {
    std::vector<int64_t> s0, s1;
    switch (f.layout) {
      case L_DENSE:
        return values(f, nrows, f.dims);
      case L_STRIDE: {
        // The engine counts values per record; a step is count of them.
        if (!slotSplits(f, f.slot, 0, nrows, &s0)) return false;
        for (auto& x : s0) x /= f.count;
        return splits(s0) && values(f, s0.back(), f.dims);
      }
      case L_STEPS:
        if (!slotSplits(f, f.slot, 0, nrows, &s0)) return false;
        return splits(s0) && values(f, s0.back(), f.dims);
      case L_LISTS:
        if (!slotSplits(f, f.slot, 0, nrows, &s0) || !slotSplits(f, f.slot, 1, s0.back(), &s1)) return false;
        return splits(s0) && splits(s1) && values(f, s1.back(), {});
      default:
        if (!slotSplits(f, f.slot, 0, nrows, &s0)) return false;
        if (f.parts.empty()) return splits(s0) && values(f, s0.back(), {});
        for (const auto& l : parted->levels) {
          if (!splits(l)) return false;
        }
        return values(f, s0.back(), {});
    }
  }

  // partition applies a Ragged feature's partitions record by record,
  // innermost first (as tf.io.RaggedFeature does on each example), and
  // joins the records: each level's rows are the concatenation of the
  // records' rows there. in_bytes bounds the empty rows value row ids may
  // add (memory no input byte stands for), as decode's does.
  bool partition(const Field& f, const std::vector<int64_t>& vs, int64_t in_bytes, Partitioned* out) {
    const size_t nparts = f.parts.size();
    std::vector<std::vector<int64_t>> pv(nparts), ps(nparts);
    for (size_t j = 0; j < nparts; j++) {
      if (f.parts[j].kind == P_UNIFORM) continue;
      if (!int64s(f, f.parts[j].slot, &pv[j]) || !slotSplits(f, f.parts[j].slot, 0, nrows, &ps[j])) return false;
    }
    std::vector<std::vector<int64_t>> lengths(nparts + 1);  // each level's row lengths
    int64_t budget = in_bytes;
    for (int64_t r = 0; r < nrows; r++) {
      int64_t items = vs[r + 1] - vs[r];
      for (size_t jj = nparts; jj-- > 0;) {
        const Part& part = f.parts[jj];
        auto bad = [&](const std::string& what) {
          out->bad_record = r;
          out->error = "record " + std::to_string(r) + ": feature \"" + f.name + "\", partition " + std::to_string(jj) + ": " + what;
          return true;
        };
        std::vector<int64_t>& len = lengths[jj + 1];
        if (part.kind == P_UNIFORM) {
          if (items % part.length != 0) {
            return bad(std::to_string(items) + " items are not a multiple of " + std::to_string(part.length));
          }
          items /= part.length;
          len.insert(len.end(), static_cast<size_t>(items), part.length);
          continue;
        }
        const int64_t* l = pv[jj].data() + ps[jj][r];
        int64_t n = ps[jj][r + 1] - ps[jj][r];
        int64_t sum = 0, rows = 0;
        switch (part.kind) {
          case P_ROW_LENGTHS:
            for (int64_t x = 0; x < n; x++) {
              if (l[x] < 0) return bad("negative row length " + std::to_string(l[x]));
              sum += l[x];
              if (sum > items) break;  // an error below; no overflow
              len.push_back(l[x]);
            }
            rows = n;
            break;
          case P_ROW_SPLITS:
          case P_ROW_LIMITS: {
            if (part.kind == P_ROW_SPLITS) {
              if (n > 0 && l[0] != 0) return bad("row splits do not start at 0");
              if (n > 0) l++, n--;  // an absent or empty list: no rows
            }
            int64_t prev = 0;
            for (int64_t x = 0; x < n; x++) {
              if (l[x] < prev) return bad(part.kind == P_ROW_SPLITS ? "row splits decrease" : "row limits decrease");
              len.push_back(l[x] - prev);
              prev = l[x];
            }
            sum = prev, rows = n;
            break;
          }
          case P_ROW_STARTS:
            if (n == 0) break;  // no rows
            if (l[0] != 0) return bad("row starts do not start at 0");
            for (int64_t x = 1; x < n; x++) {
              if (l[x] < l[x - 1]) return bad("row starts decrease");
              len.push_back(l[x] - l[x - 1]);
            }
            if (l[n - 1] > items) {
              return bad("row start " + std::to_string(l[n - 1]) + " is past the record's " + std::to_string(items) + " items");
            }
            len.push_back(items - l[n - 1]);
            sum = items, rows = n;
            break;
          case P_VALUE_ROWIDS: {
            if (n > 0 && l[0] < 0) return bad("negative value row id " + std::to_string(l[0]));
            const size_t start = len.size();
            int64_t row = 0;  // the row the next id's items go to
            for (int64_t x = 0; x < n; x++) {
              if (x > 0 && l[x] < l[x - 1]) return bad("value row ids decrease");
              if (l[x] >= row) {
                if (l[x] - row + 1 > budget) {
                  return bad("value row id " + std::to_string(l[x]) + " makes more rows than the batch has bytes");
                }
                budget -= l[x] - row + 1;
                len.insert(len.end(), static_cast<size_t>(l[x] - row + 1), 0);
                row = l[x] + 1;
              }
              len[start + static_cast<size_t>(l[x])]++;
            }
            sum = n, rows = row;
            break;
          }
        }
        if (sum != items) {
          return bad("partitions " + std::to_string(sum) + " items, the record has " + std::to_string(items));
        }
        items = rows;
      }
      lengths[0].push_back(items);
    }
    out->levels.resize(nparts + 1);
    for (size_t j = 0; j <= nparts; j++) {
      std::vector<int64_t>& sp = out->levels[j];
      sp.reserve(lengths[j].size() + 1);
      sp.push_back(0);
      for (int64_t x : lengths[j]) sp.push_back(sp.back() + x);
    }
    return true;
  }
};


void compute(void* kernel, TF_OpKernelContext* ctx) {
  const auto* k = static_cast<const Kernel*>(kernel);
  if (structtensor_cops_take_fault(2)) throw std::bad_alloc();
  Status st;
  TensorHolder input;
  TF_GetInput(ctx, 0, &input.t, st.s);
  if (!st.ok()) {
    TF_OpKernelContext_Failure(ctx, st.s);
    return;
  }
  Run run{*k, ctx, nullptr, 0};
  if (TF_TensorType(input.t) != TF_STRING || TF_NumDims(input.t) != 1) {
    run.fail(TF_INVALID_ARGUMENT, "records must be a vector of strings");
    return;
  }
  const int64_t n = TF_Dim(input.t, 0);
  const auto* records = static_cast<const TF_TString*>(TF_TensorData(input.t));
  std::vector<const uint8_t*> ptrs(static_cast<size_t>(n));
  std::vector<size_t> lens(static_cast<size_t>(n));
  int64_t in_bytes = 0;
  for (int64_t i = 0; i < n; i++) {
    ptrs[i] = reinterpret_cast<const uint8_t*>(TF_TString_GetDataPointer(&records[i]));
    lens[i] = TF_TString_GetSize(&records[i]);
    in_bytes += static_cast<int64_t>(lens[i]);
  }
  st_options opts{};
  opts.threads = k->threads;
  st_error err{};
  ResultHolder res;
  res.r = st_example_decode(k->plan, ptrs.data(), lens.data(), n, &opts, &err);
  if (res.r == nullptr) {
    char where[96] = "";
    if (err.record >= 0 && err.offset >= 0) {
      std::snprintf(where, sizeof where, "record %lld, byte offset %lld: ", static_cast<long long>(err.record),
                    static_cast<long long>(err.offset));
    } else if (err.record >= 0) {  // a feature missing: no byte to name
      std::snprintf(where, sizeof where, "record %lld: ", static_cast<long long>(err.record));
    }
    run.fail(codeOf(err.code), std::string(where) + err.message);
    return;
  }
  run.r = res.r;
  run.nrows = n;
  // Partitions first: the error is the first record any feature's
  // partitions do not fit, and no output is made before it is found.
  std::vector<Run::Partitioned> parted(k->fields.size());
  int64_t bad = -1;
  size_t bad_field = 0;
  for (size_t i = 0; i < k->fields.size(); i++) {
    const Field& f = k->fields[i];
    if (f.layout != L_RAGGED || f.parts.empty()) continue;
    std::vector<int64_t> vs;
    if (!run.slotSplits(f, f.slot, 0, n, &vs) || !run.partition(f, vs, in_bytes, &parted[i])) return;
    if (parted[i].bad_record >= 0 && (bad < 0 || parted[i].bad_record < bad)) bad = parted[i].bad_record, bad_field = i;
  }
  if (bad >= 0) {
    run.fail(TF_INVALID_ARGUMENT, parted[bad_field].error);
    return;
  }
  for (size_t i = 0; i < k->fields.size(); i++) {
    if (!run.field(k->fields[i], &parted[i])) return;
  }
}

// The functions TensorFlow calls: no C++ exception may cross into it.

void shapeFn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  // The C API cannot read the layout attribute here (of attributes it
  // reads only a type), so the ranks of the outputs are unknown to
  // TensorFlow's shape inference: the Go graph builder states each
  // component's shape with EnsureShape, and so does Python's
  // structtensor_tf.decode_example, reading the layout itself. The
  // input must be a vector.
  TF_ShapeHandle* records = TF_NewShapeHandle();
  TF_ShapeHandle* checked = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, records, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextWithRank(ctx, records, 1, checked, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetUnknownShape(ctx, status);
  TF_DeleteShapeHandle(checked);
  TF_DeleteShapeHandle(records);
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
  Run run{*static_cast<const Kernel*>(kernel), ctx, nullptr, 0};
  try {
    compute(kernel, ctx);
  } catch (const std::bad_alloc&) {
    run.fail(TF_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    run.fail(TF_INTERNAL, e.what());
  } catch (...) {
    run.fail(TF_INTERNAL, "decoding failed");
  }
}

}  // namespace

extern "C" int structtensor_cops_register_example(char* msg, size_t msg_len) {
  if (opRegistered(kOpName)) return STRUCTTENSOR_COPS_ALREADY;
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(kOpName);
  TF_OpDefinitionBuilderAddInput(b, "records: string");
  TF_OpDefinitionBuilderAddAttr(b, "plan: string");
  TF_OpDefinitionBuilderAddAttr(b, "layout: string");
  TF_OpDefinitionBuilderAddAttr(b, "component_dtypes: list({int64, float, string}) >= 0");
  TF_OpDefinitionBuilderAddAttr(b, "num_threads: int >= 0 = 0");
  TF_OpDefinitionBuilderAddOutput(b, "components: component_dtypes");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shapeFn);
  Status st;
  TF_RegisterOpDefinition(b, st.s);  // frees b
  if (!st.ok()) {
    std::snprintf(msg, msg_len, "registering op %s: %s", kOpName, TF_Message(st.s));
    return STRUCTTENSOR_COPS_ERROR;
  }
  TF_KernelBuilder* kb = TF_NewKernelBuilder(kOpName, "CPU", createKernel, computeKernel, deleteKernel);
  TF_RegisterKernelBuilder((std::string(kOpName) + "_CPU").c_str(), kb, st.s);
  if (!st.ok()) {
    std::snprintf(msg, msg_len, "registering the CPU kernel of %s: %s", kOpName, TF_Message(st.s));
    return STRUCTTENSOR_COPS_ERROR;
  }
  return STRUCTTENSOR_COPS_REGISTERED;
}
