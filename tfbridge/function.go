package tfbridge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"fmt"
	"unsafe"

	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	"google.golang.org/protobuf/proto"
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

// AddFunction adds the serialized tensorflow.FunctionDef def to the
// graph's function library, so that operations can call it by name
// (StatelessIf's branches, a PartitionedCall's f). The graph keeps its
// own copy. Adding a function that is already there, identical, does
// nothing; a different function of the same name is an ErrAlreadyExists
// error (TensorFlow itself would keep the old one silently).
func (g *Graph) AddFunction(def []byte) error {
	fd := &fnpb.FunctionDef{}
	if err := proto.Unmarshal(def, fd); err != nil {
		return fmt.Errorf("%w: FunctionDef does not parse: %v", ErrInvalidArgument, err)
	}
	name := fd.GetSignature().GetName()
	have, err := g.FunctionDefs()
	if err != nil {
		return err
	}
	if old, ok := have[name]; ok {
		prev := &fnpb.FunctionDef{}
		if err := proto.Unmarshal(old, prev); err != nil {
			return fmt.Errorf("%w: function %s of the graph does not parse: %v", ErrDataLoss, name, err)
		}
		if proto.Equal(prev, fd) {
			return nil
		}
		return fmt.Errorf("%w: the graph already has a different function %s", ErrAlreadyExists, name)
	}
	if err := g.lock(); err != nil {
		return err
	}
	defer g.unlock()
	st := newStatus()
	defer st.free()
	// TF_FunctionImportFunctionDef reads def for the call only.
	var p unsafe.Pointer
	if len(def) > 0 {
		p = C.CBytes(def)
		defer C.free(p)
	}
	fn := C.TF_FunctionImportFunctionDef(p, C.size_t(len(def)), st.c)
	if err := st.err(); err != nil {
		return fmt.Errorf("function %s: %w", name, err)
	}
	defer C.TF_DeleteFunction(fn)
	C.TF_GraphCopyFunction(g.c, fn, nil, st.c)
	if err := st.err(); err != nil {
		return fmt.Errorf("function %s: %w", name, err)
	}
	return nil
}

// FunctionDefs returns the graph's function library: every function as
// a serialized tensorflow.FunctionDef, by name. The bytes are the
// caller's.
func (g *Graph) FunctionDefs() (map[string][]byte, error) {
	if err := g.lock(); err != nil {
		return nil, err
	}
	defer g.unlock()
	n := int(C.TF_GraphNumFunctions(g.c))
	out := make(map[string][]byte, n)
	if n == 0 {
		return out, nil
	}
	st := newStatus()
	defer st.free()
	// TF_GraphGetFunctions fills a C array; each function it returns is
	// a copy ours to delete.
	arr := (**C.TF_Function)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.TF_Function)(nil)))))
	defer C.free(unsafe.Pointer(arr))
	got := int(C.TF_GraphGetFunctions(g.c, arr, C.int(n), st.c))
	if err := st.err(); err != nil {
		return nil, fmt.Errorf("graph functions: %w", err)
	}
	fns := unsafe.Slice(arr, got)
	defer func() {
		for _, fn := range fns {
			C.TF_DeleteFunction(fn)
		}
	}()
	for _, fn := range fns {
		// A TF_Buffer takes one message: a new one per function.
		buf := C.TF_NewBuffer()
		C.TF_FunctionToFunctionDef(fn, buf, st.c)
		if err := st.err(); err != nil {
			C.TF_DeleteBuffer(buf)
			return nil, fmt.Errorf("graph functions: %w", err)
		}
		out[C.GoString(C.TF_FunctionName(fn))] = C.GoBytes(buf.data, C.int(buf.length))
		C.TF_DeleteBuffer(buf)
	}
	return out, nil
}
