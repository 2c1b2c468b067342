package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/structtensor/structtensor-go/cops"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/ops"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
	"github.com/structtensor/structtensor-go/tfbridge/op"
)

func init() {
	registerDemoStep(demoStep{rank: 60, title: "serving: a Go-built model (decode -> features -> linear scorer) exported as a SavedModel and served", run: runServeDemo})
}

// The scorer's features, one per recipe, and its weights: what the demo
// model computes in the graph and scoreInGo on values.
var (
	scorerFeatures = []string{"servings", "sum(ingredients.amount)", "sum(steps.minutes)", "count(ratings)"}
	scorerKernel   = []float32{0.5, 0.01, -0.02, 0.25}
	scorerBias     = float32(1)
	scorerPaths    = []string{"servings", "ingredients.amount", "steps.minutes", "ratings.rating"}
)

// scorerModel is the demo's graph and what Export needs of it.
type scorerModel struct {
	model    *savedmodel.Model
	records  tfbridge.Output
	features tfbridge.Output
	scores   tfbridge.Output
}

// buildScorer builds records (a string vector of serialized Recipes) ->
// decode op -> per-recipe features (graph-plane ops on the decoded
// StructTensor) -> features·kernel + bias, the weights variables
// initialised from Go tensors.
func buildScorer(plan *decode.Plan) (*scorerModel, error) {
	s := op.NewScope()
	m := &scorerModel{records: op.Placeholder(s.SubScope("records"), tfbridge.String, op.PlaceholderShape(op.ShapeOf(-1)))}
	if err := s.Err(); err != nil {
		return nil, err
	}
	recipes, err := cops.DecodeGraph(s.Graph(), m.records, plan, cops.Options{Name: "decode"})
	if err != nil {
		return nil, err
	}
	fs := s.SubScope("features")
	leaf := func(path ...string) graphst.Ragged {
		f, err := recipes.Field(path...)
		if err != nil {
			fs.UpdateErr("field", err)
			return graphst.Ragged{}
		}
		return f.(graphst.Ragged)
	}
	asFloat := func(o tfbridge.Output) tfbridge.Output { return op.Cast(fs, o, tfbridge.Float) }
	m.features = op.Pack(fs, []tfbridge.Output{
		asFloat(leaf("servings").Values()),
		graphst.ReduceRows(fs, leaf("ingredients", "amount"), ops.ReduceSum).Values(),
		asFloat(graphst.ReduceRows(fs, leaf("steps", "minutes"), ops.ReduceSum).Values()),
		asFloat(graphst.ReduceRows(fs, leaf("ratings", "rating"), ops.ReduceCount).Values()),
	}, op.PackAxis(1))
	kt, err := structtensor.NewTensor(structtensor.Shape{len(scorerKernel), 1}, scorerKernel)
	if err != nil {
		return nil, err
	}
	bt, err := structtensor.NewTensor(structtensor.Shape{1}, []float32{scorerBias})
	if err != nil {
		return nil, err
	}
	kernel := savedmodel.NewVariable(s, "scorer/kernel", kt)
	bias := savedmodel.NewVariable(s, "scorer/bias", bt)
	ls := s.SubScope("scores")
	m.scores = op.Reshape(ls, op.AddV2(ls, op.MatMul(ls, m.features, kernel.Read(ls)), bias.Read(ls)), op.Constant(ls, []int64{-1}))
	g, err := s.Finalize()
	if err != nil {
		return nil, err
	}
	m.model = &savedmodel.Model{
		Graph: g,
		Signatures: map[string]*savedmodel.Signature{"serving_default": {
			Inputs:  map[string]savedmodel.Value{"records": savedmodel.Tensor(m.records)},
			Outputs: map[string]savedmodel.Value{"scores": savedmodel.Tensor(m.scores), "features": savedmodel.Tensor(m.features)},
		}},
		Variables: []*savedmodel.Variable{kernel, bias},
	}
	return m, nil
}

// scoreInGo computes the scorer on values: the plan's Go decoder, the
// features with package ops, the dot product in plain Go.
func scoreInGo(plan *decode.Plan, data []byte, offsets []int64) (features [][]float32, scores []float32, err error) {
	recipes, err := plan.DecodeContiguous(data, offsets)
	if err != nil {
		return nil, nil, err
	}
	field := func(path ...string) (structtensor.Value, error) {
		v := structtensor.Value(recipes)
		for _, p := range path {
			st, ok := v.(*structtensor.StructTensor)
			if !ok {
				return nil, fmt.Errorf("%s is not a struct", p)
			}
			if v, err = st.FieldValue(p); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
	columns := make([][]float32, len(scorerFeatures))
	for i, c := range []struct {
		path   []string
		reduce bool
		red    ops.Reduction
	}{{[]string{"servings"}, false, 0}, {[]string{"ingredients", "amount"}, true, ops.ReduceSum}, {[]string{"steps", "minutes"}, true, ops.ReduceSum}, {[]string{"ratings", "rating"}, true, ops.ReduceCount}} {
		v, err := field(c.path...)
		if err != nil {
			return nil, nil, err
		}
		if c.reduce {
			if v, err = ops.ReduceRows(v, c.red); err != nil {
				return nil, nil, err
			}
		}
		switch d := v.(*structtensor.Tensor).Data().(type) {
		case []int32:
			for _, x := range d {
				columns[i] = append(columns[i], float32(x))
			}
		case []int64:
			for _, x := range d {
				columns[i] = append(columns[i], float32(x))
			}
		case []float32:
			columns[i] = d
		default:
			return nil, nil, fmt.Errorf("feature %s: unexpected %T", scorerFeatures[i], d)
		}
	}
	for r := range recipes.NumRows() {
		row := make([]float32, len(columns))
		score := scorerBias
		for i := range columns {
			row[i] = columns[i][r]
			score += row[i] * scorerKernel[i]
		}
		features = append(features, row)
		scores = append(scores, score)
	}
	return features, scores, nil
}

// closeScores reports whether the graph's scores equal Go's up to float32
// rounding (MatMul may sum in another order).
func closeScores(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
			return false
		}
	}
	return true
}

// runServeDemo builds the scorer, exports it, loads it back through
// TensorFlow's C API loader (what TF Serving uses) and through
// savedmodel.Load, serves the bundled records through each, and checks
// the scores against the scorer computed in Go.
func runServeDemo(w io.Writer) error {
	desc, err := demoDescriptors()
	if err != nil {
		return err
	}
	plan, err := decode.Compile(desc, "structtensor.testdata.recipe.Recipe", scorerPaths...)
	if err != nil {
		return err
	}
	m, err := buildScorer(plan)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "structtensor-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "scorer")
	if err := savedmodel.Export(dir, m.model); err != nil {
		return err
	}
	fmt.Fprintf(w, "Built records -> decode -> features %q -> linear scorer (kernel %v, bias %v as variables)\n", scorerFeatures, scorerKernel, scorerBias)
	fmt.Fprintln(w, "with the op wrappers and graph-plane StructTensor ops, and exported it with savedmodel.Export.")

	batch, err := demoRecipeRecords()
	if err != nil {
		return err
	}
	wantFeatures, want, err := scoreInGo(plan, batch.Data, batch.Offsets)
	if err != nil {
		return err
	}
	records, err := structtensor.NewStringTensor(structtensor.Shape{batch.Len()}, batch.Data, batch.Offsets, false)
	if err != nil {
		return err
	}

	// TensorFlow's C API loader: the decode op is registered in this
	// process (DecodeGraph did); a serving binary loads
	// build/libstructtensor_ops.so first.
	sm, err := tfbridge.LoadSavedModel(dir, []string{savedmodel.Tag})
	if err != nil {
		return err
	}
	defer sm.Close()
	sig, err := sm.Signature("serving_default")
	if err != nil {
		return err
	}
	in, err := tfbridge.NewTensor(records)
	if err != nil {
		return err
	}
	defer in.Close()
	res, err := sm.Session.Run(map[tfbridge.Output]*tfbridge.Tensor{sig.Inputs["records"].Output: in}, []tfbridge.Output{sig.Outputs["scores"].Output}, nil)
	if err != nil {
		return err
	}
	capi, err := res[0].Value()
	res[0].Close()
	if err != nil {
		return err
	}

	lm, err := savedmodel.Load(dir)
	if err != nil {
		return err
	}
	defer lm.Close()
	out, err := lm.Run(context.Background(), "serving_default", map[string]structtensor.Value{"records": records})
	if err != nil {
		return err
	}
	ours := out["scores"].(*structtensor.Tensor)

	fmt.Fprintf(w, "\nServed the %d bundled records through the loaded SavedModel:\n", batch.Len())
	fmt.Fprintf(w, "  %-7s %-34s %-10s %-10s %s\n", "recipe", "features", "C API", "Load", "Go")
	for r := range want {
		fmt.Fprintf(w, "  %-7d %-34s %-10.4f %-10.4f %.4f\n", r, fmt.Sprint(wantFeatures[r]), capi.Float32s()[r], ours.Float32s()[r], want[r])
	}
	if !closeScores(capi.Float32s(), want) {
		return fmt.Errorf("the C API loader's scores %v differ from Go's %v", capi.Float32s(), want)
	}
	if !closeScores(ours.Float32s(), want) {
		return fmt.Errorf("savedmodel.Load's scores %v differ from Go's %v", ours.Float32s(), want)
	}
	fmt.Fprintln(w, "\nBoth loaders' scores equal the same scorer computed in Go on the Go decoder's values.")
	return nil
}
