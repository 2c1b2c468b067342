// decode_op.h: registration of the StructTensorDecodeProto op and its CPU
// kernel with TensorFlow, through TensorFlow's C op and kernel API.
#ifndef STRUCTTENSOR_COPS_DECODE_OP_H_
#define STRUCTTENSOR_COPS_DECODE_OP_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The name of the op in graphs (Python: struct_tensor_decode_proto).
#define STRUCTTENSOR_DECODE_OP_NAME "StructTensorDecodeProto"

// The name of the tf.Example / SequenceExample decode op in graphs
// (Python: struct_tensor_decode_example); example_op.cc.
#define STRUCTTENSOR_DECODE_EXAMPLE_OP_NAME "StructTensorDecodeExample"

// Outcomes of structtensor_cops_register.
enum {
  STRUCTTENSOR_COPS_REGISTERED = 0,       // registered by this call
  STRUCTTENSOR_COPS_ALREADY = 1,          // the op was already in TensorFlow's registry
  STRUCTTENSOR_COPS_ERROR = -1            // registration failed; msg says why
};

// structtensor_cops_register registers the op definition and the CPU kernel
// unless TensorFlow's op registry already holds an op of that name (put there
// by an earlier call, or by libstructtensor_ops.so loaded into the same
// process): TensorFlow aborts the process on a duplicate registration, so
// the registry, shared by every copy of this code in a process, is the
// guard. On error it writes a NUL-terminated message into msg.
int structtensor_cops_register(char* msg, size_t msg_len);

// structtensor_cops_register_example registers the example decode op and
// its CPU kernel (example_op.cc) unless the registry has it;
// structtensor_cops_register calls it after the proto decode op.
int structtensor_cops_register_example(char* msg, size_t msg_len);

// structtensor_cops_take_fault reports whether a fault was injected
// (structtensor_cops_inject_fault) for where, and clears it: the kernels of
// both ops then throw std::bad_alloc.
int structtensor_cops_take_fault(int where);

// structtensor_cops_loaned_blocks returns the number of output memory
// blocks the kernels of this copy of the code have lent out (to the engine
// or to tensors) and not had back. Tests use it: once every tensor of a
// run is released, or at once after a run fails, it returns to its value
// before the run.
long long structtensor_cops_loaned_blocks(void);

// structtensor_cops_inject_fault makes the next kernel creation (where 1)
// or computation (where 2) of this copy of the code throw std::bad_alloc
// inside the kernel, for tests: the op must fail with a status, not
// terminate the process. 0 cancels.
void structtensor_cops_inject_fault(int where);

// structtensor_cops_output_counts reports how many outputs the kernels of
// this copy of the code have produced in the buffers they lent the
// engine, and how many outgrew theirs (and were copied out of engine
// memory), for tests.
void structtensor_cops_output_counts(long long* in_place, long long* outgrown);

// structtensor_cops_arena_loans reports how many decodes of the kernels of
// this copy of the code had their outputs lent in one arena (one piece of
// memory of a huge page or more), and structtensor_cops_huge_page_bytes
// the huge page size the kernels advise theirs for (0: none), for tests.
long long structtensor_cops_arena_loans(void);
size_t structtensor_cops_huge_page_bytes(void);

#ifdef __cplusplus
}
#endif

#endif  // STRUCTTENSOR_COPS_DECODE_OP_H_
