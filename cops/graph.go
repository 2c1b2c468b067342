package cops

import (
	"encoding"
	"fmt"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// Layout relates the decode op's outputs to the components of the plan's
// StructSpec (graphst.Components order).
type Layout struct {
	// Spec is the StructSpec the op decodes to (plan.Spec()).
	Spec *structtensor.StructSpec
	// Components are the spec's components in tfbridge order.
	Components []graphst.ComponentSpec
	// NumPartitions is the number of row_splits outputs.
	NumPartitions int
	// ValueDTypes are the dtypes of the values outputs, in order.
	ValueDTypes []structtensor.DType
	// Output[i] is the index among the op's flat outputs (row_splits
	// first, then values) of component i.
	Output []int
}

// LayoutOf returns the output layout of the decode op for plan.
//
// The engine numbers partitions and value columns in pre-order of the
// plan's fields (decode.Compile assigns a list field's partition before
// descending into it, and columns as leaves are reached), which is the
// order in which graphst.Components visits row splits and values: the
// k-th row_splits component is engine partition k and the k-th values
// component engine column k. The op's kernel checks the counts and every
// column's dtype against the plan when it is created.
func LayoutOf(plan *decode.Plan) (*Layout, error) {
	spec := plan.Spec()
	comps, err := graphst.Components(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlan, err)
	}
	l := &Layout{Spec: spec, Components: comps, Output: make([]int, len(comps))}
	for _, c := range comps {
		if c.Kind == graphst.RowSplitsComponent {
			l.NumPartitions++
		}
	}
	for i, c := range comps {
		switch c.Kind {
		case graphst.RowSplitsComponent:
			l.Output[i] = countKind(comps[:i], graphst.RowSplitsComponent)
		case graphst.ValuesComponent:
			l.Output[i] = l.NumPartitions + len(l.ValueDTypes)
			l.ValueDTypes = append(l.ValueDTypes, c.DType)
		}
	}
	return l, nil
}

func countKind(comps []graphst.ComponentSpec, k graphst.ComponentKind) int {
	n := 0
	for _, c := range comps {
		if c.Kind == k {
			n++
		}
	}
	return n
}

// Options configure DecodeGraph.
type Options struct {
	// Name names the op in the graph; empty lets the graph choose.
	Name string
	// Threads bounds the threads one run of the kernel decodes on: 0 uses
	// every core, 1 decodes serially.
	Threads int
}

// DecodeGraph adds a decode op for plan to g, reading the serialized
// records from records (a string vector), and returns its outputs as a
// symbolic StructTensor of spec plan.Spec(). Running it in a session
// (graphst.Run) yields the StructTensor plan.Decode would
// return for the same records. It registers the op first (Register).
func DecodeGraph(g *tfbridge.Graph, records tfbridge.Output, plan *decode.Plan, opts ...Options) (*graphst.Struct, error) {
	l, err := LayoutOf(plan)
	if err != nil {
		return nil, err
	}
	op, err := addDecodeOp(g, OpName, records, plan, map[string]any{
		"num_partitions": int64(l.NumPartitions),
		"value_dtypes":   l.ValueDTypes,
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("decode graph for %s: %w", plan.Message(), err)
	}
	outs := make([]tfbridge.Output, len(l.Components))
	for i, k := range l.Output {
		outs[i] = op.Output(k)
	}
	sym, err := graphst.NewStruct(l.Spec, outs)
	if err != nil {
		return nil, err
	}
	// Bytes fields stay binary whatever their content, as Plan.Decode
	// marks them.
	if err := sym.MarkBinary(plan.BinaryFields()...); err != nil {
		return nil, fmt.Errorf("decode graph for %s: %w", plan.Message(), err)
	}
	return sym, nil
}

// addDecodeOp is what DecodeGraph and DecodeExampleGraph share: it takes
// their Options (at most one), registers the ops (Register) and adds an
// op of type typ reading records, with the plan's byte form, the thread
// bound and the op's own attrs.
func addDecodeOp(g *tfbridge.Graph, typ string, records tfbridge.Output, plan encoding.BinaryMarshaler, attrs map[string]any, opts []Options) (*tfbridge.Operation, error) {
	o, err := optarg.One(opts, decode.ErrInput)
	if err != nil {
		return nil, err
	}
	if err := Register(); err != nil {
		return nil, err
	}
	planBytes, err := plan.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlan, err)
	}
	attrs["plan"] = planBytes
	attrs["num_threads"] = int64(o.Threads)
	return g.AddOperation(tfbridge.OpSpec{Type: typ, Name: o.Name, Input: []tfbridge.Input{records}, Attrs: attrs})
}
