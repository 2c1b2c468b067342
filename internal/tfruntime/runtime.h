// runtime.h: the TensorFlow C API, loaded on first use. The trampolines
// (trampolines.cc) define every C API function with hidden visibility, so
// that a program's references to TF_* resolve to them at link time and no
// TensorFlow library is a dependency of the executable; each calls the
// runtime's function through a pointer resolved on the first call.
#ifndef STRUCTTENSOR_TFRUNTIME_RUNTIME_H_
#define STRUCTTENSOR_TFRUNTIME_RUNTIME_H_

#include <stddef.h>

#ifdef __cplusplus
// The C API headers declare every function TF_CAPI_EXPORT: in this
// package that means hidden (defined here, never exported from the
// executable, so the runtime's own calls never bind to a trampoline).
#include "tensorflow/c/c_api_macros.h"
#undef TF_CAPI_EXPORT
#define TF_CAPI_EXPORT __attribute__((visibility("hidden")))

// structtensor_tf_resolve returns the runtime's function names[i],
// loading the runtime first if it is not loaded, and caches it in fns[i].
// If the runtime or the function cannot be found it prints why and
// aborts: callers that want an error call structtensor_tf_load first.
void* structtensor_tf_resolve(void** fns, const char* const* names, int i);
extern "C" {
#endif

// structtensor_tf_load loads the runtime (once per process; later calls
// return the first one's result). It returns 1 on success; on failure 0,
// with the reason in msg (NUL-terminated, at most msg_len bytes).
int structtensor_tf_load(char* msg, size_t msg_len);

// structtensor_tf_loaded reports whether the runtime is loaded.
int structtensor_tf_loaded(void);

#ifdef __cplusplus
}
#endif

#endif  // STRUCTTENSOR_TFRUNTIME_RUNTIME_H_
