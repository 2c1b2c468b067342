package graphst

import (
	"fmt"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// valueSlot returns the slot and the components of v.
func valueSlot(v Value) (slot, []tfbridge.Output, error) {
	switch x := v.(type) {
	case *Struct:
		if x == nil {
			return slot{}, nil, fmt.Errorf("%w: a nil struct", ErrSpec)
		}
		if _, err := root(x); err != nil {
			return slot{}, nil, err
		}
		comps := x.Components()
		sl := slot{spec: x.StructSpec()}
		for i, c := range x.ComponentSpecs() {
			sh, err := outputShape(comps[i])
			if err != nil {
				return slot{}, nil, err
			}
			if sh == nil {
				sh = c.Shape
			}
			sl.dtypes = append(sl.dtypes, comps[i].DType())
			sl.shapes = append(sl.shapes, sh)
		}
		return sl, comps, nil
	case Ragged:
		if x.Values().Op == nil {
			return slot{}, nil, fmt.Errorf("%w: the zero Ragged (did a scope record an error?)", ErrSpec)
		}
		comps := x.Components()
		sl := slot{splits: x.RaggedRank()}
		for _, c := range comps {
			sh, err := outputShape(c)
			if err != nil {
				return slot{}, nil, err
			}
			sl.dtypes = append(sl.dtypes, c.DType())
			sl.shapes = append(sl.shapes, sh)
		}
		return sl, comps, nil
	case nil:
		return slot{}, nil, fmt.Errorf("%w: a nil value", ErrSpec)
	}
	return slot{}, nil, fmt.Errorf("%w: %T is not a value control flow carries", ErrSpec, v)
}

// rebuild makes the value of slot sl from its components, recording a
// failure in s.
func (sl slot) rebuild(s *op.Scope, what string, comps []tfbridge.Output) Value {
	if sl.spec != nil {
		if r := build(s, what, st.Spec(sl.spec), comps); r != nil {
			return r
		}
		return nil
	}
	return newRagged(s, what, comps[sl.splits], comps[:sl.splits], nil)
}
