// C++ pieces shared by the project's TensorFlow kernels (decode_op.cc,
// example_op.cc, reduceop/reduce_op.cc): RAII owners of TensorFlow C API objects and the engine's
// error codes in TensorFlow's terms. Internal to the op library; not part
// of cgo's C interface (decode_op.h is).
#ifndef STRUCTTENSOR_COPS_KERNEL_COMMON_H_
#define STRUCTTENSOR_COPS_KERNEL_COMMON_H_

#include <cstdint>

#include "structtensor_native.h"
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

namespace structtensor_cops {

// Status owns a TF_Status for the scope of one call.
struct Status {
  TF_Status* s = TF_NewStatus();
  ~Status() { TF_DeleteStatus(s); }
  bool ok() const { return TF_GetCode(s) == TF_OK; }
};

// TensorHolder deletes the tensor it holds (a kernel's input or output
// handle) when the scope ends, whichever way it ends.
struct TensorHolder {
  TF_Tensor* t = nullptr;
  ~TensorHolder() {
    if (t != nullptr) TF_DeleteTensor(t);
  }
};

// codeOf is the TensorFlow code of an engine error: a cancelled run stays
// cancelled, the engine's own faults are internal, the rest is the data's.
inline TF_Code codeOf(int32_t st) {
  switch (st) {
    case ST_ERR_CANCELLED: return TF_CANCELLED;
    case ST_ERR_INTERNAL: return TF_INTERNAL;
    default: return TF_INVALID_ARGUMENT;
  }
}

// opRegistered reports whether TensorFlow's global op registry knows the
// op type name: each op registers once per process, whichever of the Go
// package or the shared library comes first.
inline bool opRegistered(const char* name) {
  TF_Graph* g = TF_NewGraph();
  TF_Buffer* buf = TF_NewBuffer();
  Status st;
  TF_GraphGetOpDef(g, name, buf, st.s);
  const bool found = st.ok();
  TF_DeleteBuffer(buf);
  TF_DeleteGraph(g);
  return found;
}

}  // namespace structtensor_cops

#endif  // STRUCTTENSOR_COPS_KERNEL_COMMON_H_
