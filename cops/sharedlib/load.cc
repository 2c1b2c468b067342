// load.cc: the load-time hook of build/libstructtensor_ops.so. Python's
// tf.load_op_library (and tfbridge.LoadLibrary) dlopen the library, which
// runs this initializer; TensorFlow collects the op it registers and
// generates the Python wrapper struct_tensor_decode_proto. When the op is
// already registered in the process (cops.Register ran, or the library is
// loaded twice under different paths) nothing is registered again.
#include <cstdio>

#include "decode_op.h"

namespace {

bool registerOnLoad() {
  char msg[512];
  if (structtensor_cops_register(msg, sizeof msg) == STRUCTTENSOR_COPS_ERROR) {
    std::fprintf(stderr, "libstructtensor_ops: %s\n", msg);
    return false;
  }
  return true;
}

[[maybe_unused]] const bool registered = registerOnLoad();

}  // namespace
