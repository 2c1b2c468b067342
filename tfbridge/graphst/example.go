package graphst

import (
	"fmt"
	"maps"
	"slices"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

// featureLists names the list of tf.train.Feature that holds each dtype.
var featureLists = map[st.DType]string{st.Int64: "int64_list", st.Float32: "float_list", st.String: "bytes_list"}

// ExampleFeature selects the feature key of tf.Example records decoded
// generically (decode.Compile of tensorflow.Example, or a message wire
// compatible with it, projecting features.feature.key and
// features.feature.value.<list>.value, for instance through
// cops.DecodeGraph): for each element of examples, the values of the
// feature's list of dtype (Int64: int64_list, Float32: float_list,
// String: bytes_list), as a Ragged with one row per element (under
// examples' own partitions when it is nested, as an ELWC's examples are).
// A record without the key has an empty row; of entries with the same key
// the last counts, as protobuf reads a map. A feature whose list is of
// another kind projected in examples is an InvalidArgument error of the
// run, as in tf.io.parse_example.
//
// It is tf.io.parse_example with a tf.io.RaggedFeature(dtype, key) (and
// decode.ExamplePlan's Ragged feature) on the generic decode: the map's
// entries are matched against key, the last match per record is found
// with one segment max over the entries' record ids, and its list's row
// range, from the composed row splits, becomes one RaggedRange and one
// gather of the values.
func ExampleFeature(s *op.Scope, examples *Struct, key string, dtype st.DType) Ragged {
	s = s.SubScope("ExampleFeature")
	r, err := exampleFeature(s, examples, key, dtype)
	if err != nil {
		s.UpdateErr("ExampleFeature", err)
		return Ragged{}
	}
	return r
}

func exampleFeature(s *op.Scope, x *Struct, key string, dtype st.DType) (Ragged, error) {
	if x == nil {
		return Ragged{}, fmt.Errorf("%w: nil struct", ErrSpec)
	}
	list, ok := featureLists[dtype]
	if !ok {
		return Ragged{}, fmt.Errorf("%w: a feature list of %v (want int64, float32 or string)", ErrSpec, dtype)
	}
	if len(x.node.spec.Shape) == 0 {
		return Ragged{}, fmt.Errorf("%w: a scalar struct of examples", ErrRank)
	}
	sub := &Struct{outs: x.outs, specs: x.specs, node: x.node}
	_, features, err := pathNodes(sub, []string{"features"})
	if err != nil {
		return Ragged{}, err
	}
	path := []string{"features", "feature"}
	chain, keyField, err := pathNodes(sub, append(slices.Clone(path), "key"))
	if err != nil {
		return Ragged{}, err
	}
	entries := chain[len(chain)-1]
	_, valueField, err := pathNodes(sub, append(slices.Clone(path), "value"))
	if err != nil {
		return Ragged{}, err
	}
	chain, listValues, err := pathNodes(sub, append(slices.Clone(path), "value", list, "value"))
	if err != nil {
		return Ragged{}, err
	}
	listNode := chain[len(chain)-1]
	switch {
	case features.st == nil || keyField.leaf == nil || valueField.st == nil || listValues.leaf == nil:
		return Ragged{}, fmt.Errorf("%w: examples do not have the layout of tensorflow.Example (features.feature.key, features.feature.value.%s.value)", ErrSpec, list)
	case keyField.leaf.dtype != st.String || len(keyField.leaf.parts) != 0:
		return Ragged{}, fmt.Errorf("%w: features.feature.key is %v, not one string per entry", ErrSpec, keyField.leaf.spec)
	case listValues.leaf.dtype != dtype:
		return Ragged{}, fmt.Errorf("%w: %s values are %v, not %v", ErrSpec, list, listValues.leaf.dtype, dtype)
	}
	toEntries := pick(x.outs, append(slices.Clone(features.st.parts), entries.parts...))
	if len(toEntries) == 0 {
		return Ragged{}, fmt.Errorf("%w: features.feature is not a list", ErrSpec)
	}
	value := valueField.st
	toValues := pick(x.outs, slices.Concat(value.parts, listNode.parts, listValues.leaf.parts))
	if len(toValues) == 0 {
		return Ragged{}, fmt.Errorf("%w: features.feature.value.%s.value is not a list", ErrSpec, list)
	}
	zero := op.Constant(s, int32(0))
	one := op.Constant(s, int64(1))
	keys := x.outs[keyField.leaf.values]

	// ids[e] is the example of entry e; last[i] the last entry of example
	// i whose key matches, or -1.
	perExample := composeSplits(s, toEntries)
	numExamples := op.Sub(s, op.Size(s, perExample, op.SizeOutType(tfbridge.Int64)), one)
	ids := splitsRowIDs(s, perExample)
	numEntries := op.Size(s, keys, op.SizeOutType(tfbridge.Int64))
	entryIndex := op.Range(s, op.Constant(s, int64(0)), numEntries, one)
	match := op.Equal(s, keys, op.Constant(s, key))
	candidates := op.SelectV2(s, match, entryIndex, op.Constant(s, int64(-1)))
	last := op.Maximum(s, op.UnsortedSegmentMax(s, candidates, ids, numExamples), op.Constant(s, int64(-1)))
	has := op.GreaterEqual(s, last, op.Constant(s, int64(0)))
	entry := op.Maximum(s, last, op.Constant(s, int64(0)))

	// A matching feature holding another kind of list is an error, as in
	// tf.io.parse_example; a feature with no list set is empty.
	var checks []*tfbridge.Operation
	for _, f := range value.fields {
		if f.st == nil || f.name == list || !slices.Contains(slices.Collect(maps.Values(featureLists)), f.name) {
			continue
		}
		toOther := composeSplits(s, pick(x.outs, slices.Concat(value.parts, f.st.parts)))
		present := op.Greater(s, op.GatherV2(s, toOther, op.AddV2(s, entry, one), zero), op.GatherV2(s, toOther, entry, zero))
		bad := op.Any(s, op.LogicalAnd(s, has, present), zero)
		checks = append(checks, op.Assert(s, op.LogicalNot(s, bad), []tfbridge.Output{
			op.Constant(s, fmt.Sprintf("ExampleFeature: feature %q is a %s, not a %s", key, f.name, list))}))
	}

	toValue := composeSplits(s, toValues)
	if len(checks) > 0 {
		toValue = op.Identity(s.WithControlDependencies(checks...), toValue)
	}
	noRange := op.ZerosLike(s, entry)
	starts := op.SelectV2(s, has, op.GatherV2(s, toValue, entry, zero), noRange)
	limits := op.SelectV2(s, has, op.GatherV2(s, toValue, op.AddV2(s, entry, one), zero), noRange)
	splits, sel := op.RaggedRange(s, starts, limits, op.OnesLike(s, starts), op.RaggedRangeTsplits(tfbridge.Int64))
	values := op.GatherV2(s, x.outs[listValues.leaf.values], sel, zero)

	outer := append(slices.Clone(x.outer), x.node.parts...)
	dims := append(append(slices.Clone(x.outerDims), x.node.partDims...), st.Unknown)
	shape := append(st.Shape{x.node.spec.Shape[0]}, dims...)
	return newRagged(s, "ExampleFeature", values, append(identities(s, pick(x.outs, outer)), splits), shape), nil
}
