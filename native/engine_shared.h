// What the engine (engine.cc) shares with the feature decoder
// (example.cc), the library's other translation unit: the process's pool
// of worker threads and its thread limit, so that both decoders run on
// the same threads and a limit set once (st_set_thread_limit) bounds
// both. Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_SHARED_H_
#define STRUCTTENSOR_NATIVE_ENGINE_SHARED_H_

#include <cstdint>
#include <functional>

namespace structtensor_engine {

// run_on_workers calls fn on the calling thread and on up to helpers
// pool threads, and returns once every call that started has returned.
// Helpers that are busy or cannot start are not waited for, so fn must
// share its work out (an atomic counter of items, say) rather than
// expect helpers + 1 calls.
void run_on_workers(int64_t helpers, const std::function<void()>& fn);

// thread_count is the number of threads a decode asked for no number
// (threads <= 0) uses: the limit set by st_set_thread_limit, else the
// CPUs the process may run on.
int32_t thread_count();

}  // namespace structtensor_engine

#endif  // STRUCTTENSOR_NATIVE_ENGINE_SHARED_H_
