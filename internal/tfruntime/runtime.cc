// runtime.cc: loading the TensorFlow runtime on first use (runtime.h).
//
// Plain C library calls only: a C++ standard library symbol referenced
// here could bind, at link time, to the copy libtensorflow_framework
// exports, which would make that library a dependency of the executable
// again (the test in tfruntime_test.go checks that none is).
#include "runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {

pthread_once_t loadOnce = PTHREAD_ONCE_INIT;
void* handle = nullptr;
char loadError[2048];

// The libraries tried, in order, when STRUCTTENSOR_TF_LIBRARY is not set:
// the C API of the tensorflow wheel, then of a libtensorflow tarball.
// dlopen finds them through the executable's run path (the rpath that
// scripts/setup-tf.sh's pkg-config file gives every binary), then
// LD_LIBRARY_PATH and the system's library directories.
const char* const defaultLibraries[] = {"libtensorflow_cc.so.2", "libtensorflow.so.2"};

// Logging. TensorFlow logs INFO lines when it loads (oneDNN, CPU
// features) through absl before any log level applies:
// TF_CPP_MIN_LOG_LEVEL does not silence them, only TF_ENABLE_ONEDNN_OPTS=0
// would (and changes which kernels run). So unless STRUCTTENSOR_TF_LOG=1,
// stderr is captured while the runtime loads and written back without
// those lines, and TF_CPP_MIN_LOG_LEVEL is set to 1 (no INFO; warnings
// and errors kept) unless the environment sets it. Anything else written
// to stderr meanwhile (by any thread) comes out once loading ends.
bool quiet() {
  const char* log = getenv("STRUCTTENSOR_TF_LOG");
  return log == nullptr || strcmp(log, "1") != 0;
}

// stderrCapture holds stderr in an anonymous file while it is active.
struct stderrCapture {
  int saved = -1;
  int file = -1;

  void start() {
    fflush(stderr);
    file = memfd_create("structtensor-tf-load", MFD_CLOEXEC);
    if (file < 0) return;
    saved = dup(2);
    if (saved < 0 || dup2(file, 2) < 0) {
      if (saved >= 0) close(saved);
      close(file);
      saved = file = -1;
    }
  }

  // stop restores stderr and writes the captured text to it, less
  // TensorFlow's INFO lines ("I0000 00:00:..." and absl's note that
  // logging is not initialized).
  void stop() {
    if (file < 0) return;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t n = lseek(file, 0, SEEK_END);
    char* text = n > 0 ? static_cast<char*>(malloc(n)) : nullptr;
    if (text != nullptr && pread(file, text, n, 0) == n) {
      for (char* line = text; line < text + n;) {
        char* end = static_cast<char*>(memchr(line, '\n', text + n - line));
        end = end == nullptr ? text + n : end + 1;
        bool info = end - line > 5 && line[0] == 'I' && line[1] >= '0' && line[1] <= '9' && line[5] == ' ';
        bool absl = strncmp(line, "WARNING: All log messages before absl::InitializeLog()", 54) == 0;
        if (!info && !absl) {
          for (char* p = line; p < end;) {
            ssize_t w = write(2, p, end - p);
            if (w <= 0) break;
            p += w;
          }
        }
        line = end;
      }
    }
    free(text);
    close(file);
    file = -1;
  }
};

void* openRuntime(const char* lib) {
  stderrCapture capture;
  if (quiet()) capture.start();
  void* h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  capture.stop();
  return h;
}

void appendError(const char* s) {
  size_t n = strlen(loadError);
  snprintf(loadError + n, sizeof loadError - n, "%s", s);
}

void load() {
  if (quiet()) setenv("TF_CPP_MIN_LOG_LEVEL", "1", 0);
  const char* env = getenv("STRUCTTENSOR_TF_LIBRARY");
  if (env != nullptr && env[0] != '\0') {
    handle = openRuntime(env);
    if (handle == nullptr) {
      appendError("STRUCTTENSOR_TF_LIBRARY: ");
      appendError(dlerror());
    }
    return;
  }
  appendError("cannot load the TensorFlow C runtime (");
  for (const char* lib : defaultLibraries) {
    handle = openRuntime(lib);
    if (handle != nullptr) {
      loadError[0] = '\0';
      return;
    }
    if (lib != defaultLibraries[0]) appendError("; ");
    appendError(dlerror());
  }
  appendError(
      "): build with the pkg-config file of scripts/setup-tf.sh, or set "
      "STRUCTTENSOR_TF_LIBRARY to the path of libtensorflow_cc.so.2 or libtensorflow.so.2");
}

}  // namespace

extern "C" int structtensor_tf_load(char* msg, size_t msg_len) {
  pthread_once(&loadOnce, load);
  if (handle != nullptr) return 1;
  if (msg_len > 0) snprintf(msg, msg_len, "%s", loadError);
  return 0;
}

extern "C" int structtensor_tf_loaded(void) {
  return __atomic_load_n(&handle, __ATOMIC_ACQUIRE) != nullptr;
}

void* structtensor_tf_resolve(void** fns, const char* const* names, int i) {
  void* f = __atomic_load_n(&fns[i], __ATOMIC_ACQUIRE);
  if (f != nullptr) return f;
  pthread_once(&loadOnce, load);
  if (handle == nullptr) {
    fprintf(stderr, "structtensor: %s (calling %s)\n", loadError, names[i]);
    abort();
  }
  f = dlsym(handle, names[i]);
  if (f == nullptr) {
    fprintf(stderr, "structtensor: the TensorFlow runtime has no %s: %s\n", names[i], dlerror());
    abort();
  }
  __atomic_store_n(&fns[i], f, __ATOMIC_RELEASE);
  return f;
}
