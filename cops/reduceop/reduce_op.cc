// reduce_op.cc: the StructTensorReduceRows op and its CPU kernel, against
// TensorFlow's C op and kernel API like the decode op (cops/decode_op.cc).
// The same file is compiled into the Go package reduceop (registered in
// process by reduceop.Register) and into build/libstructtensor_ops.so.
//
// It reduces the rows that row splits give of a values tensor in one pass,
// what graphst.ReduceRows needs: TensorFlow's own path (row ids from the
// splits, then a segment reduction) walks the values three times and its
// unsorted min and max are slow, so it ran at a fraction of the value
// plane's speed (package ops), which loops over the splits as this kernel
// does. Empty rows get TensorFlow's values (0, the dtype's extremes for
// min and max, NaN for a mean, false for any, true for all); the sums run
// in order, in the values' dtype, as package ops does, so the two planes
// give equal results.

#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>

#include "kernel_common.h"
#include "reduce_op.h"

#include <mutex>
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

namespace {

constexpr const char* kOpName = STRUCTTENSOR_REDUCE_ROWS_OP_NAME;

using structtensor_cops::opRegistered;
using structtensor_cops::Status;

enum Reduction { kSum, kMean, kMin, kMax, kAny, kAll };

struct Kernel {
  Reduction red;
};

void fail(TF_OpKernelContext* ctx, TF_Code code, const std::string& msg) {
  Status st;
  TF_SetStatus(st.s, code, (std::string(kOpName) + ": " + msg).c_str());
  TF_OpKernelContext_Failure(ctx, st.s);
}

// Output shape: [?] followed by the values' dimensions after the first.
void inferShapes(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* values = TF_NewShapeHandle();
  TF_ShapeHandle* atLeast1 = TF_NewShapeHandle();
  TF_ShapeHandle* inner = TF_NewShapeHandle();
  TF_ShapeHandle* unset = TF_NewShapeHandle();
  TF_ShapeHandle* rows = TF_NewShapeHandle();
  TF_ShapeHandle* out = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 1, values, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextWithRankAtLeast(ctx, values, 1, atLeast1, status);
  if (TF_GetCode(status) == TF_OK) {
    if (TF_ShapeInferenceContextRankKnown(ctx, atLeast1)) {
      TF_ShapeInferenceContextSubshape(ctx, atLeast1, 1, std::numeric_limits<int64_t>::max(), inner, status);
      if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextWithRank(ctx, unset, 1, rows, status);
      if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextConcatenateShapes(ctx, rows, inner, out, status);
      if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, out, status);
    } else {
      TF_ShapeInferenceContextSetUnknownShape(ctx, status);
    }
  }
  for (TF_ShapeHandle* h : {values, atLeast1, inner, unset, rows, out}) TF_DeleteShapeHandle(h);
}

void shapeFn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  try {
    inferShapes(ctx, status);
  } catch (...) {
    TF_SetStatus(status, TF_INTERNAL, (std::string(kOpName) + ": shape inference failed").c_str());
  }
}

void* newKernel(TF_OpKernelConstruction* ctx) {
  Status st;
  char name[16] = {0};
  TF_OpKernelConstruction_GetAttrString(ctx, "reduction", name, sizeof name - 1, st.s);
  if (!st.ok()) {
    TF_OpKernelConstruction_Failure(ctx, st.s);
    return nullptr;
  }
  static const struct {
    const char* name;
    Reduction red;
  } names[] = {{"sum", kSum}, {"mean", kMean}, {"min", kMin}, {"max", kMax}, {"any", kAny}, {"all", kAll}};
  for (const auto& n : names) {
    if (std::strcmp(name, n.name) == 0) return new Kernel{n.red};
  }
  TF_SetStatus(st.s, TF_INVALID_ARGUMENT, (std::string(kOpName) + ": unknown reduction \"" + name + "\"").c_str());
  TF_OpKernelConstruction_Failure(ctx, st.s);
  return nullptr;
}

void* createKernel(TF_OpKernelConstruction* ctx) {
  try {
    return newKernel(ctx);
  } catch (...) {
    Status st;
    TF_SetStatus(st.s, TF_RESOURCE_EXHAUSTED, "creating the kernel failed");
    TF_OpKernelConstruction_Failure(ctx, st.s);
  }
  return nullptr;
}

void deleteKernel(void* kernel) { delete static_cast<Kernel*>(kernel); }

// reduceNumeric reduces rows of inner elements each; hi and lo start min
// and max.
template <typename T>
bool reduceNumeric(Reduction red, const int64_t* splits, int64_t rows, int64_t inner, const T* src, T* out) {
  switch (red) {
    case kSum:
    case kMean:
      if (red == kMean && std::numeric_limits<T>::is_integer) return false;
      for (int64_t i = 0; i < rows; i++) {
        T* acc = out + i * inner;
        const int64_t b = splits[i], e = splits[i + 1];
        if (inner == 1) {
          T sum = 0;
          for (int64_t j = b; j < e; j++) sum += src[j];
          acc[0] = sum;
        } else {
          for (int64_t k = 0; k < inner; k++) acc[k] = 0;
          for (int64_t j = b; j < e; j++) {
            const T* row = src + j * inner;
            for (int64_t k = 0; k < inner; k++) acc[k] += row[k];
          }
        }
        if (red == kMean) {
          const T n = static_cast<T>(e - b);
          for (int64_t k = 0; k < inner; k++) acc[k] /= n;  // 0/0 is NaN, as in TensorFlow
        }
      }
      return true;
    case kMin:
    case kMax: {
      const T init = red == kMin ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
      for (int64_t i = 0; i < rows; i++) {
        T* acc = out + i * inner;
        for (int64_t k = 0; k < inner; k++) acc[k] = init;
        for (int64_t j = splits[i]; j < splits[i + 1]; j++) {
          const T* row = src + j * inner;
          for (int64_t k = 0; k < inner; k++) {
            if (red == kMin ? row[k] < acc[k] : row[k] > acc[k]) acc[k] = row[k];
          }
        }
      }
      return true;
    }
    default:
      return false;
  }
}

bool reduceBool(Reduction red, const int64_t* splits, int64_t rows, int64_t inner, const bool* src, bool* out) {
  if (red != kAny && red != kAll) return false;
  const bool all = red == kAll;
  for (int64_t i = 0; i < rows; i++) {
    bool* acc = out + i * inner;
    for (int64_t k = 0; k < inner; k++) acc[k] = all;
    for (int64_t j = splits[i]; j < splits[i + 1]; j++) {
      const bool* row = src + j * inner;
      for (int64_t k = 0; k < inner; k++) acc[k] = all ? (acc[k] && row[k]) : (acc[k] || row[k]);
    }
  }
  return true;
}

struct Input {
  TF_Tensor* t = nullptr;
  ~Input() {
    if (t != nullptr) TF_DeleteTensor(t);
  }
};

void compute(void* kernel, TF_OpKernelContext* ctx) {
  const Reduction red = static_cast<Kernel*>(kernel)->red;
  Status st;
  Input splitsIn, valuesIn;
  TF_GetInput(ctx, 0, &splitsIn.t, st.s);
  if (st.ok()) TF_GetInput(ctx, 1, &valuesIn.t, st.s);
  if (!st.ok()) {
    TF_OpKernelContext_Failure(ctx, st.s);
    return;
  }
  if (TF_NumDims(splitsIn.t) != 1 || TF_Dim(splitsIn.t, 0) < 1) {
    fail(ctx, TF_INVALID_ARGUMENT, "row_splits must be a vector of at least one element");
    return;
  }
  const int dims = TF_NumDims(valuesIn.t);
  if (dims < 1) {
    fail(ctx, TF_INVALID_ARGUMENT, "values must have rank >= 1");
    return;
  }
  const int64_t rows = TF_Dim(splitsIn.t, 0) - 1;
  const int64_t n = TF_Dim(valuesIn.t, 0);
  const auto* splits = static_cast<const int64_t*>(TF_TensorData(splitsIn.t));
  // Bad splits are an error naming where, never a read out of bounds.
  if (splits[0] != 0) {
    fail(ctx, TF_INVALID_ARGUMENT, "row_splits[0] is " + std::to_string(splits[0]) + ", not 0");
    return;
  }
  for (int64_t i = 0; i < rows; i++) {
    if (splits[i + 1] < splits[i]) {
      fail(ctx, TF_INVALID_ARGUMENT, "row_splits decrease at " + std::to_string(i + 1));
      return;
    }
  }
  if (splits[rows] != n) {
    fail(ctx, TF_INVALID_ARGUMENT, "row_splits end at " + std::to_string(splits[rows]) + ", the values have " + std::to_string(n) + " rows");
    return;
  }
  int64_t inner = 1;
  int64_t outDims[16];
  if (dims > 16) {
    fail(ctx, TF_INVALID_ARGUMENT, "values of rank " + std::to_string(dims) + " (at most 16)");
    return;
  }
  outDims[0] = rows;
  for (int d = 1; d < dims; d++) {
    outDims[d] = TF_Dim(valuesIn.t, d);
    inner *= outDims[d];
  }
  const TF_DataType dt = TF_TensorType(valuesIn.t);
  TF_Tensor* out = TF_AllocateOutput(ctx, 0, dt, outDims, dims, rows * inner * TF_DataTypeSize(dt), st.s);
  if (!st.ok()) {
    TF_OpKernelContext_Failure(ctx, st.s);
    return;
  }
  const void* src = TF_TensorData(valuesIn.t);
  void* dst = TF_TensorData(out);
  bool ok = false;
  switch (dt) {
    case TF_INT32: ok = reduceNumeric(red, splits, rows, inner, static_cast<const int32_t*>(src), static_cast<int32_t*>(dst)); break;
    case TF_INT64: ok = reduceNumeric(red, splits, rows, inner, static_cast<const int64_t*>(src), static_cast<int64_t*>(dst)); break;
    case TF_UINT32: ok = reduceNumeric(red, splits, rows, inner, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst)); break;
    case TF_UINT64: ok = reduceNumeric(red, splits, rows, inner, static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst)); break;
    case TF_FLOAT: ok = reduceNumeric(red, splits, rows, inner, static_cast<const float*>(src), static_cast<float*>(dst)); break;
    case TF_DOUBLE: ok = reduceNumeric(red, splits, rows, inner, static_cast<const double*>(src), static_cast<double*>(dst)); break;
    case TF_BOOL: ok = reduceBool(red, splits, rows, inner, static_cast<const bool*>(src), static_cast<bool*>(dst)); break;
    default: break;
  }
  TF_DeleteTensor(out);
  if (!ok) fail(ctx, TF_INVALID_ARGUMENT, "this reduction does not apply to the values' dtype");
}

void computeKernel(void* kernel, TF_OpKernelContext* ctx) {
  try {
    compute(kernel, ctx);
  } catch (...) {
    fail(ctx, TF_INTERNAL, "reduction failed");
  }
}

}  // namespace

extern "C" int structtensor_reduce_rows_register(char* msg, size_t msg_len) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (msg != nullptr && msg_len > 0) msg[0] = 0;
  if (opRegistered(kOpName)) return STRUCTTENSOR_REDUCE_ROWS_ALREADY;
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(kOpName);
  TF_OpDefinitionBuilderAddInput(b, "row_splits: int64");
  TF_OpDefinitionBuilderAddInput(b, "values: T");
  TF_OpDefinitionBuilderAddAttr(b, "T: {bool, int32, int64, uint32, uint64, float, double}");
  TF_OpDefinitionBuilderAddAttr(b, "reduction: {'sum', 'mean', 'min', 'max', 'any', 'all'}");
  TF_OpDefinitionBuilderAddOutput(b, "output: T");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shapeFn);
  Status st;
  TF_RegisterOpDefinition(b, st.s);
  if (st.ok()) {
    TF_KernelBuilder* kb = TF_NewKernelBuilder(kOpName, "CPU", createKernel, computeKernel, deleteKernel);
    TF_RegisterKernelBuilder((std::string(kOpName) + "_CPU").c_str(), kb, st.s);
  }
  if (!st.ok()) {
    std::string m = std::string("registering ") + kOpName + ": " + TF_Message(st.s);
    if (msg != nullptr && msg_len > 0) {
      std::strncpy(msg, m.c_str(), msg_len - 1);
      msg[msg_len - 1] = 0;
    }
    return STRUCTTENSOR_REDUCE_ROWS_ERROR;
  }
  return STRUCTTENSOR_REDUCE_ROWS_REGISTERED;
}
