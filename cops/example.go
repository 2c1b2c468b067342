package cops

// #include "decode_op.h"
import "C"

import (
	"fmt"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// ExampleOpName is the type of the tf.Example / SequenceExample decode op
// in TensorFlow graphs. Python sees it as struct_tensor_decode_example
// once libstructtensor_ops.so is loaded.
const ExampleOpName = C.STRUCTTENSOR_DECODE_EXAMPLE_OP_NAME

// ExampleComponentDTypes returns the dtypes of the example decode op's
// outputs for plan: the components of plan.Spec() in tfbridge order.
func ExampleComponentDTypes(plan *decode.ExamplePlan) ([]graphst.ComponentSpec, []structtensor.DType, error) {
	comps, err := graphst.Components(plan.Spec())
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrPlan, err)
	}
	dtypes := make([]structtensor.DType, len(comps))
	for i, c := range comps {
		dtypes[i] = c.DType
	}
	return comps, dtypes, nil
}

// DecodeExampleGraph adds an example decode op for plan to g, reading the
// serialized tf.Example (or SequenceExample, as the plan was compiled)
// records from records (a string vector), and returns its outputs as a
// symbolic StructTensor of spec plan.Spec(). Running it in a session
// yields the StructTensor plan.Decode returns for the same records; a bad
// record fails the run with InvalidArgument naming the record, the byte
// offset inside it and the feature. It registers the op first (Register).
//
// The op's outputs carry no static shape (TensorFlow's C shape-inference
// API cannot read the layout attribute), so each component goes through an
// EnsureShape op stating its shape: the graph, and a SavedModel signature
// built on it, know every rank.
func DecodeExampleGraph(g *tfbridge.Graph, records tfbridge.Output, plan *decode.ExamplePlan, opts ...Options) (*graphst.Struct, error) {
	comps, dtypes, err := ExampleComponentDTypes(plan)
	if err != nil {
		return nil, err
	}
	op, err := addDecodeOp(g, ExampleOpName, records, plan, map[string]any{
		"layout":           plan.MarshalLayout(),
		"component_dtypes": dtypes,
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("example decode graph: %w", err)
	}
	outs := make([]tfbridge.Output, len(comps))
	for i, c := range comps {
		dt, err := tfbridge.DTypeOf(c.DType)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPlan, err)
		}
		shaped, err := g.AddOperation(tfbridge.OpSpec{
			Type:  "EnsureShape",
			Name:  op.Name() + "/" + c.Name(),
			Input: []tfbridge.Input{op.Output(i)},
			Attrs: map[string]any{"shape": c.Shape, "T": dt},
		})
		if err != nil {
			return nil, fmt.Errorf("example decode graph: %w", err)
		}
		outs[i] = shaped.Output(0)
	}
	return graphst.NewStruct(plan.Spec(), outs)
}
