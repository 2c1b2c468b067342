package cops

/*
#cgo pkg-config: tensorflow
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../native/include
#include <stdlib.h>
#include "decode_op.h"
*/
import "C"

import (
	"fmt"
	"sync"

	"github.com/structtensor/structtensor-go/cops/reduceop"
	// The kernel calls the engine's C ABI, which this package compiles.
	_ "github.com/structtensor/structtensor-go/native"
	// The TensorFlow C API the kernel calls, loaded on first use.
	_ "github.com/structtensor/structtensor-go/internal/tfruntime"
)

// OpName is the type of the decode op in TensorFlow graphs. Python sees it
// as struct_tensor_decode_proto once libstructtensor_ops.so is loaded.
const OpName = C.STRUCTTENSOR_DECODE_OP_NAME

var (
	registerOnce sync.Once
	registerErr  error
	registeredBy string
)

// Register registers the decode op and its CPU kernel with the TensorFlow
// runtime of this process, and the project's other ops (reduceop.Register).
// Call it before building a graph with the op or loading a SavedModel that
// uses it (DecodeGraph and package savedmodel do).
// It is idempotent and safe for concurrent use.
//
// TensorFlow aborts the process when an op is registered twice, so
// Register first asks TensorFlow's op registry whether the op exists: if
// libstructtensor_ops.so was loaded before (tfbridge.LoadLibrary), its
// registration is kept and Register does nothing. Loading the .so after
// Register is equally safe: its load hook makes the same check.
func Register() error {
	registerOnce.Do(func() {
		var msg [512]C.char
		switch C.structtensor_cops_register(&msg[0], C.size_t(len(msg))) {
		case C.STRUCTTENSOR_COPS_REGISTERED:
			registeredBy = "cops.Register"
		case C.STRUCTTENSOR_COPS_ALREADY:
			registeredBy = "already registered"
		default:
			registerErr = fmt.Errorf("%w: %s", ErrRegister, C.GoString(&msg[0]))
			return
		}
		registerErr = reduceop.Register()
	})
	return registerErr
}

// registration reports how the op got into the registry (for tests).
func registration() string { return registeredBy }
