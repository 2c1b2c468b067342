// Package reduceop holds the StructTensorReduceRows op of the project's
// op library: a CPU kernel that reduces the rows row splits give of a
// values tensor in one pass (sum, mean, min, max, any, all), which
// graphst.ReduceRows builds on. It is a package of its own, next to the
// decode op of package cops, because graphst (which cops' DecodeGraph
// returns) needs it; build/libstructtensor_ops.so carries both ops.
package reduceop

/*
#cgo pkg-config: tensorflow
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/.. -I${SRCDIR}/../../native/include
#include <stdlib.h>
#include "reduce_op.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"

	// The TensorFlow C API the kernel calls, loaded on first use.
	_ "github.com/structtensor/structtensor-go/internal/tfruntime"
)

// OpName is the type of the op in TensorFlow graphs (op.StructTensorReduceRows
// builds it). Python sees it as struct_tensor_reduce_rows once
// libstructtensor_ops.so is loaded.
const OpName = C.STRUCTTENSOR_REDUCE_ROWS_OP_NAME

// ErrRegister reports that TensorFlow refused the op or its kernel.
var ErrRegister = errors.New("reduceop: op registration failed")

var (
	registerOnce sync.Once
	registerErr  error
)

// Register registers the op and its CPU kernel with the TensorFlow runtime
// of this process, unless the op is already there (libstructtensor_ops.so
// loaded first): TensorFlow aborts the process on a duplicate. It is
// idempotent and safe for concurrent use.
func Register() error {
	registerOnce.Do(func() {
		var msg [512]C.char
		if C.structtensor_reduce_rows_register(&msg[0], C.size_t(len(msg))) == C.STRUCTTENSOR_REDUCE_ROWS_ERROR {
			registerErr = fmt.Errorf("%w: %s", ErrRegister, C.GoString(&msg[0]))
		}
	})
	return registerErr
}
