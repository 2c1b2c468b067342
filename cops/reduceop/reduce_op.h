// reduce_op.h: registration of the StructTensorReduceRows op and its CPU
// kernel with TensorFlow, through TensorFlow's C op and kernel API.
#ifndef STRUCTTENSOR_COPS_REDUCE_OP_H_
#define STRUCTTENSOR_COPS_REDUCE_OP_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The name of the op in graphs (Python: struct_tensor_reduce_rows).
#define STRUCTTENSOR_REDUCE_ROWS_OP_NAME "StructTensorReduceRows"

// Outcomes of structtensor_reduce_rows_register.
enum {
  STRUCTTENSOR_REDUCE_ROWS_REGISTERED = 0,  // registered by this call
  STRUCTTENSOR_REDUCE_ROWS_ALREADY = 1,     // already in TensorFlow's registry
  STRUCTTENSOR_REDUCE_ROWS_ERROR = -1       // registration failed; msg says why
};

// structtensor_reduce_rows_register registers the op and its CPU kernel
// unless TensorFlow's op registry already holds the op (TensorFlow aborts
// the process on a duplicate registration; the registry, shared by every
// copy of this code in a process, is the guard). On error it writes a
// NUL-terminated message into msg.
int structtensor_reduce_rows_register(char* msg, size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif  // STRUCTTENSOR_COPS_REDUCE_OP_H_
