// Package tfruntime loads the TensorFlow C runtime when a program first
// uses it, not when the program starts.
//
// Packages that call the TensorFlow C API (tfbridge, cops) import this
// package. It defines every function of the C API headers (see
// gen_trampolines.go) as a trampoline with hidden visibility: the
// program's references to TF_* functions resolve to the trampolines when
// it links, so no TensorFlow library becomes a dependency of the
// executable, even when the pkg-config file names one (it lists them
// after -Wl,--as-needed). The first call of any trampoline loads the
// runtime with dlopen; each trampoline resolves its function with dlsym
// once and then jumps through the cached pointer. A program that imports
// tfbridge but never calls TensorFlow (a CLI's non-TensorFlow commands)
// therefore never maps libtensorflow, which is some 300 MB of resident
// memory once loaded.
//
// Which library: STRUCTTENSOR_TF_LIBRARY (a path or a file name) if set;
// else libtensorflow_cc.so.2 (the tensorflow wheel's C API), then
// libtensorflow.so.2 (a libtensorflow tarball's), searched through the
// executable's run path (scripts/setup-tf.sh's pkg-config file gives
// every binary one), LD_LIBRARY_PATH and the system's directories.
//
// Logging: unless STRUCTTENSOR_TF_LOG=1, TF_CPP_MIN_LOG_LEVEL is set to 1
// (no INFO; warnings and errors kept) before loading when the environment
// does not set it, and the lines TensorFlow logs while it loads (the
// oneDNN notice, absl's preamble: no log level silences them) are
// dropped: stderr is captured in an anonymous file during dlopen and
// everything else written meanwhile is written back once it returns (so
// a crash inside TensorFlow's initialisers loses its message: rerun with
// STRUCTTENSOR_TF_LOG=1). STRUCTTENSOR_TF_LOG=1 leaves TensorFlow's own
// logging as it is; TF_CPP_MIN_LOG_LEVEL (0: all, 2: errors only) chooses
// the level.
package tfruntime

// #cgo CXXFLAGS: -std=c++17 -O2
// #cgo pkg-config: tensorflow
// #cgo LDFLAGS: -ldl
// #include <stdlib.h>
// #include "runtime.h"
import "C"

import (
	"errors"
	"sync"
)

//go:generate go run gen_trampolines.go

var (
	loadOnce sync.Once
	loadErr  error
)

// Load loads the TensorFlow runtime if it is not loaded, and returns why
// it cannot be. A program calls it before its first use of TensorFlow to
// get an error instead of the abort a trampoline gives when the runtime
// is missing.
func Load() error {
	loadOnce.Do(func() {
		var msg [1024]C.char
		if C.structtensor_tf_load(&msg[0], C.size_t(len(msg))) == 0 {
			loadErr = errors.New(C.GoString(&msg[0]))
		}
	})
	return loadErr
}

// Loaded reports whether the runtime is loaded in this process.
func Loaded() bool { return C.structtensor_tf_loaded() != 0 }
