package savedmodel

import (
	"fmt"
	"sync"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

// DataView is a loaded DataView: a TensorFlow session over the saved
// decoder graph, with the spec and plan from its metadata. It is safe for
// concurrent use; Close releases the session.
type DataView struct {
	mu       sync.RWMutex
	model    *tfbridge.SavedModel
	meta     *Metadata
	plan     *decode.Plan
	spec     *structtensor.StructSpec
	input    tfbridge.Output
	symbolic *tfbridge.SymbolicStruct
}

// LoadDataView loads the DataView in dir into TensorFlow: it registers the
// decode op (cops.Register), checks the metadata and fingerprint, loads
// the SavedModel under the tag "serve", and binds the "decode" signature's
// outputs to the components of the recorded spec.
func LoadDataView(dir string) (*DataView, error) {
	if err := cops.Register(); err != nil {
		return nil, fmt.Errorf("load DataView %s: %w", dir, err)
	}
	meta, err := ReadMetadata(dir)
	if err != nil {
		return nil, err
	}
	s, err := structtensor.UnmarshalSpec(meta.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: spec: %v", ErrFormat, dir, err)
	}
	spec, ok := s.(*structtensor.StructSpec)
	if !ok {
		return nil, fmt.Errorf("%w: %s: spec is a %T, want a StructSpec", ErrFormat, dir, s)
	}
	plan, err := decode.UnmarshalPlan(meta.Plan)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: plan: %v", ErrFormat, dir, err)
	}
	if !plan.Spec().Equal(spec) {
		return nil, fmt.Errorf("%w: %s: the plan decodes to %v, the metadata says %v", ErrFormat, dir, plan.Spec(), spec)
	}
	model, err := tfbridge.LoadSavedModel(dir, []string{Tag}, nil)
	if err != nil {
		return nil, fmt.Errorf("load DataView: %w", err)
	}
	dv, err := bind(model, meta, plan, spec)
	if err != nil {
		model.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, dir, err)
	}
	return dv, nil
}

func bind(model *tfbridge.SavedModel, meta *Metadata, plan *decode.Plan, spec *structtensor.StructSpec) (*DataView, error) {
	sig, err := model.Signature(SignatureDecode)
	if err != nil {
		return nil, err
	}
	in, ok := sig.Inputs[InputRecords]
	if !ok || len(sig.Inputs) != 1 || in.DType != tfbridge.String {
		return nil, fmt.Errorf("signature %q must have one string input %q", SignatureDecode, InputRecords)
	}
	comps, err := tfbridge.Components(spec)
	if err != nil {
		return nil, err
	}
	if len(sig.Outputs) != len(comps) {
		return nil, fmt.Errorf("signature %q has %d outputs, the spec %d components", SignatureDecode, len(sig.Outputs), len(comps))
	}
	outs := make([]tfbridge.Output, len(comps))
	for i, c := range comps {
		o, ok := sig.Outputs[c.Name()]
		if !ok {
			return nil, fmt.Errorf("signature %q has no output %q", SignatureDecode, c.Name())
		}
		outs[i] = o.Output
	}
	sym, err := tfbridge.NewSymbolicStruct(spec, outs)
	if err != nil {
		return nil, err
	}
	return &DataView{model: model, meta: meta, plan: plan, spec: spec, input: in.Output, symbolic: sym}, nil
}

// Spec returns the StructSpec of a decoded batch.
func (dv *DataView) Spec() *structtensor.StructSpec { return dv.spec }

// Plan returns the decode plan the DataView was exported from.
func (dv *DataView) Plan() *decode.Plan { return dv.plan }

// Metadata returns the DataView's metadata.
func (dv *DataView) Metadata() *Metadata { return dv.meta }

// Decode runs records through the saved graph in TensorFlow and returns
// the decoded batch, equal to Plan().Decode(records). A bad record fails
// with an InvalidArgument error (tfbridge.ErrInvalidArgument) naming the
// record, the byte offset and the field path.
func (dv *DataView) Decode(records [][]byte) (*structtensor.StructTensor, error) {
	in, err := structtensor.NewTensor(structtensor.Shape{len(records)}, records)
	if err != nil {
		return nil, fmt.Errorf("DataView decode: %w", err)
	}
	return dv.DecodeTensor(in)
}

// DecodeTensor is Decode for records already held in a String tensor of
// shape [n].
func (dv *DataView) DecodeTensor(records *structtensor.Tensor) (*structtensor.StructTensor, error) {
	t, err := tfbridge.NewTensor(records)
	if err != nil {
		return nil, fmt.Errorf("DataView decode: %w", err)
	}
	defer t.Close()
	dv.mu.RLock()
	defer dv.mu.RUnlock()
	if dv.model == nil {
		return nil, ErrClosed
	}
	st, err := dv.model.Session.RunStruct(map[tfbridge.Output]*tfbridge.Tensor{dv.input: t}, dv.symbolic)
	if err != nil {
		return nil, fmt.Errorf("DataView decode: %w", err)
	}
	return st, nil
}

// Close releases the TensorFlow session and graph.
func (dv *DataView) Close() error {
	dv.mu.Lock()
	defer dv.mu.Unlock()
	if dv.model == nil {
		return nil
	}
	err := dv.model.Close()
	dv.model = nil
	return err
}
