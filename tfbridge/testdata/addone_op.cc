// A custom-op library for tfbridge's LoadLibrary test, written against the
// C op/kernel API: TfbridgeTestAddOne(x: int64) -> x + 1, failing with
// InvalidArgument on a negative element. C++ because tensorflow/c/ops.h
// declares its handle types as bare structs, which only C++ accepts.
// Built by the test with
//   c++ -shared -fPIC addone_op.cc $(pkg-config --cflags --libs tensorflow)
#include <cstdio>
#include <cstdlib>
#include <tensorflow/c/c_api.h>
#include <tensorflow/c/kernels.h>
#include <tensorflow/c/ops.h>

static void add_one_shape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* h = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, h, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, h, status);
  TF_DeleteShapeHandle(h);
}

static void add_one_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* s = TF_NewStatus();
  TF_Tensor* in = NULL;
  TF_GetInput(ctx, 0, &in, s);
  if (TF_GetCode(s) != TF_OK) {
    TF_OpKernelContext_Failure(ctx, s);
    TF_DeleteStatus(s);
    return;
  }
  int nd = TF_NumDims(in);
  int64_t dims[8];
  for (int i = 0; i < nd && i < 8; i++) dims[i] = TF_Dim(in, i);
  int64_t n = TF_TensorElementCount(in);
  const int64_t* a = (const int64_t*)TF_TensorData(in);
  for (int64_t i = 0; i < n; i++) {
    if (a[i] < 0) {
      char msg[128];
      snprintf(msg, sizeof msg, "TfbridgeTestAddOne: negative value %lld at index %lld", (long long)a[i], (long long)i);
      TF_SetStatus(s, TF_INVALID_ARGUMENT, msg);
      TF_OpKernelContext_Failure(ctx, s);
      TF_DeleteTensor(in);
      TF_DeleteStatus(s);
      return;
    }
  }
  TF_Tensor* out = TF_AllocateOutput(ctx, 0, TF_INT64, dims, nd, (size_t)n * sizeof(int64_t), s);
  if (TF_GetCode(s) == TF_OK) {
    int64_t* b = (int64_t*)TF_TensorData(out);
    for (int64_t i = 0; i < n; i++) b[i] = a[i] + 1;
  } else {
    TF_OpKernelContext_Failure(ctx, s);
  }
  TF_DeleteTensor(out);
  TF_DeleteTensor(in);
  TF_DeleteStatus(s);
}

__attribute__((constructor)) static void register_add_one(void) {
  TF_Status* s = TF_NewStatus();
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("TfbridgeTestAddOne");
  TF_OpDefinitionBuilderAddInput(b, "x: int64");
  TF_OpDefinitionBuilderAddOutput(b, "y: int64");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, add_one_shape);
  TF_RegisterOpDefinition(b, s);
  if (TF_GetCode(s) == TF_OK) {
    TF_KernelBuilder* k = TF_NewKernelBuilder("TfbridgeTestAddOne", "CPU", NULL, add_one_compute, NULL);
    TF_RegisterKernelBuilder("TfbridgeTestAddOne", k, s);
  }
  if (TF_GetCode(s) != TF_OK) fprintf(stderr, "TfbridgeTestAddOne: %s\n", TF_Message(s));
  TF_DeleteStatus(s);
}
