package savedmodel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// DataView is a loaded DataView: a TensorFlow session over the saved
// decoder graph, with the spec and plan from its metadata. It is safe for
// concurrent use; Close releases the session.
type DataView struct {
	mu       sync.RWMutex
	model    *tfbridge.SavedModel
	meta     *Metadata
	plan     *decode.Plan
	example  *decode.ExamplePlan
	spec     *structtensor.StructSpec
	input    tfbridge.Output
	symbolic *graphst.Struct
	digest   string
}

// LoadDataView loads the DataView in dir into TensorFlow. Before
// anything of it runs it reads the files (regular files only, each at
// most LoadOptions.MaxFileBytes), checks the pinned digest (LoadOptions.Digest), the
// metadata and the fingerprint, and rebuilds what the metadata's plan
// exports to check the SavedModel and checkpoint against it: only the
// DataView's ops, no init or main op, the same plan, signatures and
// objects (ErrGraph otherwise). It then loads the SavedModel under the
// tag "serve" and binds the "decode" signature's outputs to the
// components of the plan's spec. A DataView of format version 1 is
// refused with ErrOldFormat.
func LoadDataView(dir string, opts ...LoadOptions) (*DataView, error) {
	if err := cops.Register(); err != nil {
		return nil, fmt.Errorf("load DataView %s: %w", dir, err)
	}
	o, err := loadOpts(opts)
	if err != nil {
		return nil, err
	}
	files, digest, err := readDir(dir, dataViewLayout, o)
	if err != nil {
		return nil, err
	}
	c, err := checkFiles(files, digest)
	if err != nil {
		return nil, fmt.Errorf("load DataView %s: %w", dir, err)
	}
	// TensorFlow loads a private copy of the bytes just checked, so that
	// a file swapped in dir after the check never runs. TensorFlow reads
	// every file during the load; the copy is removed after it.
	tmp, err := os.MkdirTemp("", "structtensor-dataview-")
	if err != nil {
		return nil, fmt.Errorf("load DataView: %w", err)
	}
	defer os.RemoveAll(tmp)
	copyDir := filepath.Join(tmp, "dataview")
	if err := objectgraph.WriteFiles(copyDir, files); err != nil {
		return nil, fmt.Errorf("load DataView: %w", err)
	}
	model, err := tfbridge.LoadSavedModel(copyDir, []string{Tag})
	if err != nil {
		return nil, fmt.Errorf("load DataView %s: %w", dir, err)
	}
	dv, err := bind(model, c.meta, c.plan, c.spec)
	if dv != nil {
		dv.example = c.example
	}
	if err != nil {
		model.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, dir, err)
	}
	dv.digest = c.digest
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
	comps, err := graphst.Components(spec)
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
	sym, err := graphst.NewStruct(spec, outs)
	if err != nil {
		return nil, err
	}
	if plan != nil {
		// Bytes fields stay binary, as Plan.Decode marks them.
		if err := sym.MarkBinary(plan.BinaryFields()...); err != nil {
			return nil, err
		}
	}
	return &DataView{model: model, meta: meta, plan: plan, spec: spec, input: in.Output, symbolic: sym}, nil
}

// Spec returns the StructSpec of a decoded batch.
func (dv *DataView) Spec() *structtensor.StructSpec { return dv.spec }

// Plan returns the decode plan the DataView was exported from, or nil
// for a DataView of tf.Example records (ExamplePlan).
func (dv *DataView) Plan() *decode.Plan { return dv.plan }

// ExamplePlan returns the feature plan a DataView of tf.Example or
// SequenceExample records was exported from (ExportExampleDataView), or
// nil for a DataView of a protobuf message (Plan).
func (dv *DataView) ExamplePlan() *decode.ExamplePlan { return dv.example }

// Digest returns the DataView's digest (see LoadOptions.Digest).
func (dv *DataView) Digest() string { return dv.digest }

// Metadata returns the DataView's metadata.
func (dv *DataView) Metadata() *Metadata { return dv.meta }

// Decode runs records through the saved graph in TensorFlow and returns
// the decoded batch, equal to Plan().Decode(records). A bad record fails
// with an InvalidArgument error (tfbridge.ErrInvalidArgument) naming the
// record, the byte offset and the field path.
func (dv *DataView) Decode(records [][]byte) (*structtensor.StructTensor, error) {
	return dv.DecodeContext(context.Background(), records)
}

// DecodeContext is Decode with a context: a done context stops the run
// before it starts and a deadline becomes its TensorFlow timeout
// (tfbridge.Session.RunContext).
func (dv *DataView) DecodeContext(ctx context.Context, records [][]byte) (*structtensor.StructTensor, error) {
	in, err := structtensor.NewTensor(structtensor.Shape{len(records)}, records)
	if err != nil {
		return nil, fmt.Errorf("DataView decode: %w", err)
	}
	return dv.DecodeTensorContext(ctx, in)
}

// DecodeTensor is Decode for records already held in a String tensor of
// shape [n].
func (dv *DataView) DecodeTensor(records *structtensor.Tensor) (*structtensor.StructTensor, error) {
	return dv.DecodeTensorContext(context.Background(), records)
}

// DecodeTensorContext is DecodeTensor with a context, as DecodeContext.
func (dv *DataView) DecodeTensorContext(ctx context.Context, records *structtensor.Tensor) (*structtensor.StructTensor, error) {
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
	v, err := graphst.Run(ctx, dv.model.Session, map[tfbridge.Output]*tfbridge.Tensor{dv.input: t}, dv.symbolic)
	if err != nil {
		return nil, fmt.Errorf("DataView decode: %w", err)
	}
	return v.(*structtensor.StructTensor), nil
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
