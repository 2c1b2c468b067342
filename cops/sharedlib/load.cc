// load.cc: the load-time hook of build/libstructtensor_ops.so. Python's
// tf.load_op_library (and tfbridge.LoadLibrary) dlopen the library, which
// runs this initializer; TensorFlow collects the ops it registers and
// generates the Python wrappers struct_tensor_decode_proto and
// struct_tensor_reduce_rows. When an op is
// already registered in the process (cops.Register ran, or the library is
// loaded twice under different paths) nothing is registered again.
#include <cstdio>

#include "decode_op.h"
#include "reduce_op.h"

namespace {

bool registerOnLoad() {
  char msg[512];
  if (structtensor_cops_register(msg, sizeof msg) == STRUCTTENSOR_COPS_ERROR) {
    std::fprintf(stderr, "libstructtensor_ops: %s\n", msg);
    return false;
  }
  if (structtensor_reduce_rows_register(msg, sizeof msg) == STRUCTTENSOR_REDUCE_ROWS_ERROR) {
    std::fprintf(stderr, "libstructtensor_ops: %s\n", msg);
    return false;
  }
  return true;
}

[[maybe_unused]] const bool registered = registerOnLoad();

}  // namespace
