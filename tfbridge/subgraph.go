package tfbridge

// #include "bridge.h"
import "C"

import "unsafe"

// Inputs returns the operation's data inputs, in order: the outputs of
// other operations it consumes.
func (op *Operation) Inputs() []Output {
	if op.g.lock() != nil {
		return nil
	}
	n := int(C.TF_OperationNumInputs(op.c))
	if n == 0 {
		op.g.unlock()
		return nil
	}
	// TF_OperationAllInputs writes into C memory: the array holds
	// TF_Operation pointers, which cgo forbids in Go memory passed to C.
	p := (*C.TF_Output)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.TF_Output{}))))
	defer C.free(unsafe.Pointer(p))
	C.TF_OperationAllInputs(op.c, p, C.int(n))
	cs := unsafe.Slice(p, n)
	ops := make([]*C.TF_Operation, n)
	idx := make([]int, n)
	for i, c := range cs {
		ops[i], idx[i] = c.oper, int(c.index)
	}
	op.g.unlock()
	ins := make([]Output, n)
	for i := range ins {
		ins[i] = Output{Op: op.g.op(ops[i]), Index: idx[i]}
	}
	return ins
}

// ControlInputs returns the operations that must run before op.
func (op *Operation) ControlInputs() []*Operation {
	if op.g.lock() != nil {
		return nil
	}
	n := int(C.TF_OperationNumControlInputs(op.c))
	if n == 0 {
		op.g.unlock()
		return nil
	}
	p := (**C.TF_Operation)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.TF_Operation)(nil)))))
	defer C.free(unsafe.Pointer(p))
	n = int(C.TF_OperationGetControlInputs(op.c, p, C.int(n)))
	cs := append([]*C.TF_Operation(nil), unsafe.Slice(p, n)...)
	op.g.unlock()
	out := make([]*Operation, n)
	for i, c := range cs {
		out[i] = op.g.op(c)
	}
	return out
}

// Subgraph returns the operations that compute outputs from inputs: every
// operation outputs depend on (data and control inputs), stopping at the
// operations of inputs, which are not included. They are in the order
// the walk first reached them, outputs first.
func Subgraph(inputs, outputs []Output) []*Operation {
	stop := map[*Operation]bool{}
	for _, in := range inputs {
		stop[in.Op] = true
	}
	seen := map[*Operation]bool{}
	var body []*Operation
	var stack []*Operation
	push := func(op *Operation) {
		if op != nil && !stop[op] && !seen[op] {
			seen[op] = true
			body = append(body, op)
			stack = append(stack, op)
		}
	}
	for _, o := range outputs {
		push(o.Op)
	}
	for len(stack) > 0 {
		op := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, in := range op.Inputs() {
			push(in.Op)
		}
		for _, c := range op.ControlInputs() {
			push(c)
		}
	}
	return body
}
