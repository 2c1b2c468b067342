package tfbridge

// #include "bridge.h"
import "C"

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/structtensor/structtensor-go/structtensor"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

// SavedModel is a SavedModel loaded into a new graph and session.
type SavedModel struct {
	Session *Session
	Graph   *Graph
	// MetaGraphDef is the serialized tensorflow.MetaGraphDef that was
	// loaded (the one matching the tags).
	MetaGraphDef []byte
	meta         *metapb.MetaGraphDef
}

// LoadSavedModel loads the MetaGraphDef of the SavedModel in dir that
// carries tags (e.g. "serve"), restoring its variables, into a new graph
// with a new session. Custom ops the model uses must be registered first
// (LoadLibrary, or in-process registration).
func LoadSavedModel(dir string, tags []string, opts ...SessionOptions) (*SavedModel, error) {
	co, err := newCSessionOptions(opts)
	if err != nil {
		return nil, err
	}
	defer C.TF_DeleteSessionOptions(co)
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	ctags := make([]*C.char, len(tags))
	for i, t := range tags {
		ctags[i] = C.CString(t)
	}
	defer func() {
		for _, p := range ctags {
			C.free(unsafe.Pointer(p))
		}
	}()
	g := NewGraph()
	buf := C.TF_NewBuffer()
	defer C.TF_DeleteBuffer(buf)
	st := newStatus()
	defer st.free()
	if err := g.lock(); err != nil {
		return nil, err
	}
	c := C.TF_LoadSessionFromSavedModel(co, nil, cdir, ptrOr(ctags), C.int(len(ctags)), g.c, buf, st.c)
	g.unlock()
	if err := st.err(); err != nil {
		g.Close()
		return nil, fmt.Errorf("load SavedModel %s (tags %q): %w", dir, tags, err)
	}
	raw := C.GoBytes(buf.data, C.int(buf.length))
	m := &SavedModel{Session: wrapSession(c, g), Graph: g, MetaGraphDef: raw, meta: &metapb.MetaGraphDef{}}
	if err := proto.Unmarshal(raw, m.meta); err != nil {
		m.Close()
		return nil, fmt.Errorf("load SavedModel %s: %w: MetaGraphDef does not parse: %v", dir, ErrDataLoss, err)
	}
	return m, nil
}

// Close closes the session and the graph.
func (m *SavedModel) Close() error {
	err := m.Session.Close()
	m.Graph.Close()
	return err
}

// SignatureKeys returns the model's signature keys, sorted.
func (m *SavedModel) SignatureKeys() []string {
	keys := make([]string, 0, len(m.meta.GetSignatureDef()))
	for k := range m.meta.GetSignatureDef() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Signature is one SignatureDef of a SavedModel, resolved against its graph.
type Signature struct {
	Key        string
	MethodName string
	Inputs     map[string]SignatureTensor
	Outputs    map[string]SignatureTensor
}

// SignatureTensor is one named input or output of a signature.
type SignatureTensor struct {
	// Name is the graph tensor name ("serving_default_records:0").
	Name string
	// Output is that tensor in the loaded graph.
	Output Output
	// DType is the declared element type.
	DType DType
	// Shape is the declared shape with structtensor.Unknown dims; nil
	// when the rank is unknown.
	Shape structtensor.Shape
}

// Signature returns the signature called key (ErrNotFound names the keys
// there are). Only plain tensors are supported as signature arguments;
// sparse and composite encodings are reported as ErrUnimplemented.
func (m *SavedModel) Signature(key string) (*Signature, error) {
	def, ok := m.meta.GetSignatureDef()[key]
	if !ok {
		return nil, fmt.Errorf("%w: signature %q (the model has %q)", ErrNotFound, key, m.SignatureKeys())
	}
	sig := &Signature{Key: key, MethodName: def.GetMethodName()}
	var err error
	if sig.Inputs, err = m.signatureTensors(key, "input", def.GetInputs()); err != nil {
		return nil, err
	}
	if sig.Outputs, err = m.signatureTensors(key, "output", def.GetOutputs()); err != nil {
		return nil, err
	}
	return sig, nil
}

func (m *SavedModel) signatureTensors(key, kind string, infos map[string]*metapb.TensorInfo) (map[string]SignatureTensor, error) {
	out := make(map[string]SignatureTensor, len(infos))
	for name, info := range infos {
		if _, ok := info.GetEncoding().(*metapb.TensorInfo_Name); !ok {
			return nil, fmt.Errorf("%w: signature %q %s %q is not a plain tensor (%T)", ErrUnimplemented, key, kind, name, info.GetEncoding())
		}
		o, err := m.Graph.OutputByName(info.GetName())
		if err != nil {
			return nil, fmt.Errorf("signature %q %s %q: %w", key, kind, name, err)
		}
		t := SignatureTensor{Name: info.GetName(), Output: o, DType: DType(info.GetDtype())}
		if sp := info.GetTensorShape(); sp != nil && !sp.GetUnknownRank() {
			t.Shape = make(structtensor.Shape, len(sp.GetDim()))
			for i, d := range sp.GetDim() {
				t.Shape[i] = int(d.GetSize())
				if d.GetSize() < 0 {
					t.Shape[i] = structtensor.Unknown
				}
			}
		}
		out[name] = t
	}
	return out, nil
}
