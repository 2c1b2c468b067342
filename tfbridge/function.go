package tfbridge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// ToFunctionDef returns the graph as a serialized tensorflow.FunctionDef
// named name (TF_GraphToFunction): every operation of the graph becomes
// part of the body, inputs (Placeholders) become the arguments, named
// after their operations, and outputs the results, named by outputNames
// (each matching [a-z][a-z0-9_]*). The graph is not changed; the
// FunctionDef is a copy the caller owns.
func (g *Graph) ToFunctionDef(name string, inputs, outputs []Output, outputNames []string) ([]byte, error) {
	return g.toFunctionDef(name, nil, true, inputs, outputs, outputNames)
}

// SubgraphToFunctionDef is ToFunctionDef with body as the function's
// operations instead of the whole graph: typically the operations
// between inputs and outputs (Subgraph), so that one graph holds several
// functions. Inputs may be outputs of operations outside body (a
// variable's handle, another function's placeholder).
func (g *Graph) SubgraphToFunctionDef(name string, body []*Operation, inputs, outputs []Output, outputNames []string) ([]byte, error) {
	return g.toFunctionDef(name, body, false, inputs, outputs, outputNames)
}

func (g *Graph) toFunctionDef(name string, body []*Operation, all bool, inputs, outputs []Output, outputNames []string) ([]byte, error) {
	if len(outputNames) != len(outputs) {
		return nil, fmt.Errorf("%w: function %s: %d output names for %d outputs", ErrGraph, name, len(outputNames), len(outputs))
	}
	if err := g.lock(); err != nil {
		return nil, err
	}
	defer g.unlock()
	for _, o := range append(append([]Output(nil), inputs...), outputs...) {
		if o.Op == nil || o.Op.g != g {
			return nil, fmt.Errorf("%w: function %s: an input or output is not of this graph", ErrGraph, name)
		}
	}
	// The C arrays live in C memory for the call: cgo forbids passing Go
	// memory holding Go pointers, and TF_GraphToFunction copies them.
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	cIns := cOutputs(inputs)
	defer C.free(unsafe.Pointer(cIns))
	cOuts := cOutputs(outputs)
	defer C.free(unsafe.Pointer(cOuts))
	var cNames **C.char
	if len(outputNames) > 0 {
		cNames = (**C.char)(C.malloc(C.size_t(len(outputNames)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		defer C.free(unsafe.Pointer(cNames))
		names := unsafe.Slice(cNames, len(outputNames))
		for i, n := range outputNames {
			names[i] = C.CString(n)
			defer C.free(unsafe.Pointer(names[i]))
		}
	}
	for _, op := range body {
		if op == nil || op.g != g {
			return nil, fmt.Errorf("%w: function %s: a body operation is not of this graph", ErrGraph, name)
		}
	}
	nOpers := C.int(-1)
	var cOpers **C.TF_Operation
	if !all {
		nOpers = C.int(len(body))
		if len(body) > 0 {
			cOpers = (**C.TF_Operation)(C.malloc(C.size_t(len(body)) * C.size_t(unsafe.Sizeof((*C.TF_Operation)(nil)))))
			defer C.free(unsafe.Pointer(cOpers))
			ops := unsafe.Slice(cOpers, len(body))
			for i, op := range body {
				ops[i] = op.c
			}
		}
	}
	st := newStatus()
	defer st.free()
	fn := C.TF_GraphToFunction(g.c, cName, 0, nOpers, cOpers,
		C.int(len(inputs)), cIns, C.int(len(outputs)), cOuts, cNames, nil, nil, st.c)
	if err := st.err(); err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	defer C.TF_DeleteFunction(fn)
	buf := C.TF_NewBuffer()
	defer C.TF_DeleteBuffer(buf)
	C.TF_FunctionToFunctionDef(fn, buf, st.c)
	if err := st.err(); err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	return C.GoBytes(buf.data, C.int(buf.length)), nil
}

// cOutputs copies outs into a malloc'ed TF_Output array (nil when empty)
// the caller frees.
func cOutputs(outs []Output) *C.TF_Output {
	if len(outs) == 0 {
		return nil
	}
	p := (*C.TF_Output)(C.malloc(C.size_t(len(outs)) * C.size_t(unsafe.Sizeof(C.TF_Output{}))))
	s := unsafe.Slice(p, len(outs))
	for i, o := range outs {
		s[i] = o.c()
	}
	return p
}
