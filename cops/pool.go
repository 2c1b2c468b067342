package cops

// #include "decode_op.h"
import "C"

// loanedBlocks is the number of output memory blocks the kernels have lent
// (to the engine or to tensors) and not had back; see decode_op.cc.
func loanedBlocks() int64 { return int64(C.structtensor_cops_loaned_blocks()) }

// inPlaceOutputs is the number of outputs the kernels have produced in the
// memory they lent the engine.
func inPlaceOutputs() int64 { return int64(C.structtensor_cops_in_place_outputs()) }
