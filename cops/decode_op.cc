// decode_op.cc: the StructTensorDecodeProto op and its CPU kernel, written
// against TensorFlow's ABI-stable C op and kernel API (tensorflow/c/ops.h,
// tensorflow/c/kernels.h) and the native engine's C ABI
// (native/include/structtensor_native.h). The same file is compiled into the
// Go package cops (registered in process by cops.Register) and into
// build/libstructtensor_ops.so (registered when tf.load_op_library loads it).
//
// The kernel never calls Go: TensorFlow runs kernels on its own threads.

#include "decode_op.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <vector>

#include "structtensor_native.h"
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/c/tf_tstring.h"

namespace {

constexpr const char* kOpName = STRUCTTENSOR_DECODE_OP_NAME;

// Attribute names; cops.DecodeGraph (Go) sets the same ones.
constexpr const char* kAttrPlan = "plan";
constexpr const char* kAttrNumPartitions = "num_partitions";
constexpr const char* kAttrValueDTypes = "value_dtypes";
constexpr const char* kAttrNumThreads = "num_threads";

// RAII holder for a TF_Status.
struct Status {
  TF_Status* s = TF_NewStatus();
  ~Status() { TF_DeleteStatus(s); }
  bool ok() const { return TF_GetCode(s) == TF_OK; }
};

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

void shapeFn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
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
// Kernel.

struct Kernel {
  st_plan* plan = nullptr;
  int64_t num_partitions = 0;
  std::vector<int32_t> column_types;  // engine types, one per value output
  int32_t threads = 0;
  ~Kernel() { st_plan_free(plan); }
};

void failConstruction(TF_OpKernelConstruction* ctx, TF_Code code, const std::string& msg) {
  Status st;
  TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
  TF_OpKernelConstruction_Failure(ctx, st.s);
}

// createKernel parses the plan once per kernel instance and checks that
// the node's output attributes agree with it.
void* createKernel(TF_OpKernelConstruction* ctx) {
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
  auto* k = new Kernel;
  st_error err{};
  k->plan = st_plan_new(reinterpret_cast<const uint8_t*>(planBytes.data()), static_cast<size_t>(total_size), &err);
  if (k->plan == nullptr) {
    failConstruction(ctx, TF_INVALID_ARGUMENT, std::string("attr plan: ") + err.message);
    delete k;
    return nullptr;
  }
  TF_OpKernelConstruction_GetAttrInt64(ctx, kAttrNumPartitions, &k->num_partitions, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    delete k;
    return nullptr;
  }
  int64_t threads = 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, kAttrNumThreads, &threads, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    delete k;
    return nullptr;
  }
  k->threads = static_cast<int32_t>(threads);
  TF_OpKernelConstruction_GetAttrSize(ctx, kAttrValueDTypes, &list_size, &total_size, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    delete k;
    return nullptr;
  }
  std::vector<TF_DataType> dtypes(list_size > 0 ? list_size : 0);
  if (list_size > 0) {
    TF_OpKernelConstruction_GetAttrTypeList(ctx, kAttrValueDTypes, dtypes.data(), list_size, st.s);
    if (!st.ok()) {
      TF_OpKernelConstruction_Failure(ctx, st.s);
      delete k;
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
    delete k;
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
      delete k;
      return nullptr;
    }
  }
  return k;
}

void deleteKernel(void* kernel) { delete static_cast<Kernel*>(kernel); }

void failCompute(TF_OpKernelContext* ctx, TF_Code code, const std::string& msg) {
  Status st;
  TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
  TF_OpKernelContext_Failure(ctx, st.s);
}

TF_Code codeOf(int32_t st) {
  switch (st) {
    case ST_ERR_CANCELLED: return TF_CANCELLED;
    case ST_ERR_INTERNAL: return TF_INTERNAL;
    default: return TF_INVALID_ARGUMENT;
  }
}

struct ResultHolder {
  st_result* r = nullptr;
  ~ResultHolder() { st_result_free(r); }
};

struct TensorHolder {
  TF_Tensor* t = nullptr;
  ~TensorHolder() {
    if (t != nullptr) TF_DeleteTensor(t);
  }
};

// allocate allocates output `index` as a vector of n elements of dtype.
TF_Tensor* allocate(TF_OpKernelContext* ctx, int index, TF_DataType dtype, int64_t n, size_t elem_size) {
  Status st;
  int64_t dims[1] = {n};
  TF_Tensor* t = TF_AllocateOutput(ctx, index, dtype, dims, 1, static_cast<size_t>(n) * elem_size, st.s);
  if (!st.ok()) {
    TF_OpKernelContext_Failure(ctx, st.s);
    return nullptr;
  }
  return t;
}

void computeKernel(void* kernel, TF_OpKernelContext* ctx) {
  auto* k = static_cast<Kernel*>(kernel);
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
  st_error err{};
  ResultHolder res;
  res.r = st_decode(k->plan, ptrs.get(), lens.get(), n, &opts, &err);
  if (res.r == nullptr) {
    char where[96] = "";
    if (err.record >= 0) {
      std::snprintf(where, sizeof where, "record %lld, byte offset %lld: ", static_cast<long long>(err.record),
                    static_cast<long long>(err.offset));
    }
    failCompute(ctx, codeOf(err.code), std::string(where) + err.message);
    return;
  }

  int out = 0;
  for (int64_t p = 0; p < k->num_partitions; p++, out++) {
    const int64_t len = st_result_partition_length(res.r, p);
    TensorHolder t;
    t.t = allocate(ctx, out, TF_INT64, len, sizeof(int64_t));
    if (t.t == nullptr) return;
    int32_t rc = st_result_copy_partition(res.r, p, static_cast<int64_t*>(TF_TensorData(t.t)), static_cast<size_t>(len));
    if (rc != ST_OK) {
      failCompute(ctx, TF_INTERNAL, "copying partition " + std::to_string(p) + " failed with code " + std::to_string(rc));
      return;
    }
  }
  std::unique_ptr<uint8_t[]> strData;
  std::unique_ptr<int64_t[]> strOffsets;
  size_t strDataCap = 0, strOffsetsCap = 0;
  for (size_t c = 0; c < k->column_types.size(); c++, out++) {
    const int32_t type = k->column_types[c];
    const int64_t len = st_result_column_length(res.r, static_cast<int64_t>(c));
    const int64_t bytes = st_result_column_bytes(res.r, static_cast<int64_t>(c));
    TensorHolder t;
    if (type != ST_STRING) {
      t.t = allocate(ctx, out, tfTypeOf(type), len, len > 0 ? static_cast<size_t>(bytes / len) : 0);
      if (t.t == nullptr) return;
      int32_t rc = st_result_copy_column(res.r, static_cast<int64_t>(c), TF_TensorData(t.t), static_cast<size_t>(bytes));
      if (rc != ST_OK) {
        failCompute(ctx, TF_INTERNAL, "copying column " + std::to_string(c) + " failed with code " + std::to_string(rc));
        return;
      }
      continue;
    }
    if (!strData || static_cast<size_t>(bytes) > strDataCap) {
      strDataCap = bytes > 0 ? static_cast<size_t>(bytes) : 1;
      strData.reset(new (std::nothrow) uint8_t[strDataCap]);
    }
    if (static_cast<size_t>(len) + 1 > strOffsetsCap) {
      strOffsetsCap = static_cast<size_t>(len) + 1;
      strOffsets.reset(new (std::nothrow) int64_t[strOffsetsCap]);
    }
    if (!strData || !strOffsets) {
      failCompute(ctx, TF_RESOURCE_EXHAUSTED, "cannot allocate string column " + std::to_string(c));
      return;
    }
    int32_t rc = st_result_copy_column(res.r, static_cast<int64_t>(c), strData.get(), static_cast<size_t>(bytes));
    if (rc == ST_OK) rc = st_result_copy_string_offsets(res.r, static_cast<int64_t>(c), strOffsets.get(), static_cast<size_t>(len) + 1);
    if (rc != ST_OK) {
      failCompute(ctx, TF_INTERNAL, "copying string column " + std::to_string(c) + " failed with code " + std::to_string(rc));
      return;
    }
    t.t = allocate(ctx, out, TF_STRING, len, sizeof(TF_TString));
    if (t.t == nullptr) return;
    auto* dst = static_cast<TF_TString*>(TF_TensorData(t.t));
    const char* base = reinterpret_cast<const char*>(strData.get());
    for (int64_t i = 0; i < len; i++) {
      TF_TString_Copy(&dst[i], base + strOffsets[i], static_cast<size_t>(strOffsets[i + 1] - strOffsets[i]));
    }
  }
}

// opRegistered reports whether TensorFlow's global op registry knows kOpName.
bool opRegistered() {
  TF_Graph* g = TF_NewGraph();
  TF_Buffer* buf = TF_NewBuffer();
  Status st;
  TF_GraphGetOpDef(g, kOpName, buf, st.s);
  bool found = st.ok();
  TF_DeleteBuffer(buf);
  TF_DeleteGraph(g);
  return found;
}

void setMsg(char* msg, size_t msg_len, const std::string& s) {
  if (msg == nullptr || msg_len == 0) return;
  std::snprintf(msg, msg_len, "%s", s.c_str());
}

}  // namespace

extern "C" int structtensor_cops_register(char* msg, size_t msg_len) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  setMsg(msg, msg_len, "");
  if (opRegistered()) return STRUCTTENSOR_COPS_ALREADY;

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
