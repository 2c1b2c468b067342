package graphst_test

import (
	"context"
	"fmt"
	"log"

	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// Choose between two computations on a batch of records by a value the
// batch holds: keep the records with a positive x when any record has
// one, else keep the batch as it is.
func ExampleCond() {
	v, err := structtensor.FromValue([]any{
		map[string]any{"id": int64(1), "x": []any{1.5, -2.0}},
		map[string]any{"id": int64(2), "x": []any{-1.0}},
		map[string]any{"id": int64(3), "x": []any{}},
	})
	if err != nil {
		log.Fatal(err)
	}
	batch := v.(*structtensor.StructTensor)
	s := op.NewScope()
	records, err := graphst.Placeholders(s.Graph(), structtensor.AnyRows(batch.Spec()).(*structtensor.StructSpec), "records")
	if err != nil {
		log.Fatal(err)
	}
	positive := func(s *op.Scope, r *graphst.Struct) tfbridge.Output {
		x, _ := r.Field("x")
		maxes := graphst.ReduceRows(s, x.(graphst.Ragged), ops.ReduceMax)
		return op.Greater(s, maxes.Values(), op.Constant(s, 0.0))
	}
	out := graphst.Cond(s, op.Any(s, positive(s, records), op.Constant(s, int32(0))), []graphst.Value{records},
		func(s *op.Scope, in []graphst.Value) []graphst.Value {
			r := in[0].(*graphst.Struct)
			return []graphst.Value{graphst.BooleanMask(s, r, positive(s, r))}
		},
		func(s *op.Scope, in []graphst.Value) []graphst.Value { return in })
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	sess, err := tfbridge.NewSession(s.Graph())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	feeds, err := graphst.Feed(records, batch)
	if err != nil {
		log.Fatal(err)
	}
	got, err := graphst.Run(context.Background(), sess, feeds, out[0])
	if err != nil {
		log.Fatal(err)
	}
	// BooleanMask checks the mask's length with an Assert, a stateful
	// operation: the Cond is an If, not a StatelessIf.
	fmt.Println(out[0].(*graphst.Struct).Components()[0].Op.Type(), structtensor.ToValue(got))
	// Output: If [map[id:1 x:[1.5 -2]]]
}

// Loop with a StructTensor as a loop variable: double every value of a
// ragged field until the largest exceeds 10.
func ExampleWhile() {
	v, err := structtensor.FromValue([]any{
		map[string]any{"x": []any{int64(1), int64(2)}},
		map[string]any{"x": []any{int64(3)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	batch := v.(*structtensor.StructTensor)
	spec := structtensor.AnyRows(batch.Spec()).(*structtensor.StructSpec)
	s := op.NewScope()
	records, err := graphst.Placeholders(s.Graph(), spec, "records")
	if err != nil {
		log.Fatal(err)
	}
	xOf := func(vars []graphst.Value) graphst.Ragged {
		x, _ := vars[0].(*graphst.Struct).Field("x")
		return x.(graphst.Ragged)
	}
	out := graphst.While(s, []graphst.Value{records},
		func(s *op.Scope, vars []graphst.Value) tfbridge.Output {
			return op.LessEqual(s, op.Max(s, xOf(vars).Values(), op.Constant(s, int32(0))), op.Constant(s, int64(10)))
		},
		func(s *op.Scope, vars []graphst.Value) []graphst.Value {
			x := xOf(vars)
			doubled := op.Mul(s, x.Values(), op.Constant(s, int64(2)))
			next, err := graphst.NewStruct(spec, []tfbridge.Output{op.Identity(s, x.RowSplits()[0]), doubled})
			if err != nil {
				s.UpdateErr("next", err)
				return nil
			}
			return []graphst.Value{next}
		})
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	sess, err := tfbridge.NewSession(s.Graph())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	feeds, err := graphst.Feed(records, batch)
	if err != nil {
		log.Fatal(err)
	}
	got, err := graphst.Run(context.Background(), sess, feeds, out[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(structtensor.ToValue(got))
	// Output: [map[x:[4 8]] map[x:[12]]]
}
