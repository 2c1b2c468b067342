package graphst

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	st "github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
	"github.com/structtensor/structtensor-go/tfbridge/op"
	fnpb "github.com/wamuir/graft/tensorflow/core/framework/function_go_proto"
	"google.golang.org/protobuf/proto"
)

// Branch is one branch of Cond, or the body of While: a graph function of
// values, built when Cond or While is called. It adds operations through
// s, a root scope of a graph of its own, and must compute its results
// from in alone: an Output of the enclosing graph used inside it is an
// error (pass it as one more input instead), as are results from another
// graph.
type Branch func(s *op.Scope, in []Value) []Value

// Predicate is the condition of While: a bool scalar computed from the
// loop variables, under the same rules as Branch.
type Predicate func(s *op.Scope, vars []Value) tfbridge.Output

// slot is one value crossing a function boundary: what rebuilds it from
// its components (a struct's spec, or a ragged value's number of row
// splits), and each component's dtype and shape.
type slot struct {
	spec   *st.StructSpec // a struct; nil for a Ragged
	splits int            // a Ragged's row splits
	dtypes []tfbridge.DType
	shapes []st.Shape // nil: unknown rank (never for a struct)
}

func (sl slot) kind() string {
	if sl.spec != nil {
		return "struct " + sl.spec.String()
	}
	if sl.splits == 0 {
		return "dense tensor"
	}
	return fmt.Sprintf("ragged tensor of %d row splits", sl.splits)
}

// flatten returns the components of vals, one after the other, and the
// slot of each value.
func flatten(vals []Value) ([]tfbridge.Output, []slot, error) {
	var comps []tfbridge.Output
	slots := make([]slot, len(vals))
	for i, v := range vals {
		sl, c, err := valueSlot(v)
		if err != nil {
			return nil, nil, fmt.Errorf("value %d: %w", i, err)
		}
		comps = append(comps, c...)
		slots[i] = sl
	}
	return comps, slots, nil
}

// unflatten rebuilds values of slots from their components in order.
func unflatten(s *op.Scope, what string, slots []slot, comps []tfbridge.Output) []Value {
	if s.Err() != nil {
		return nil
	}
	vals := make([]Value, len(slots))
	for i, sl := range slots {
		n := len(sl.dtypes)
		vals[i] = sl.rebuild(s, what, comps[:n])
		comps = comps[n:]
	}
	if s.Err() != nil {
		return nil
	}
	return vals
}

func allComponents(slots []slot) (dtypes []tfbridge.DType, shapes []st.Shape) {
	for _, sl := range slots {
		dtypes = append(dtypes, sl.dtypes...)
		shapes = append(shapes, sl.shapes...)
	}
	return dtypes, shapes
}

func shapeAttrs(shapes []st.Shape) []op.ShapeAttr {
	out := make([]op.ShapeAttr, len(shapes))
	for i, sh := range shapes {
		if sh == nil {
			out[i] = op.UnknownShape()
			continue
		}
		dims := make([]int64, len(sh))
		for j, d := range sh {
			dims[j] = int64(d)
		}
		out[i] = op.ShapeOf(dims...)
	}
	return out
}

// outputShape is what the graph knows of o's shape (nil: unknown rank).
func outputShape(o tfbridge.Output) (st.Shape, error) {
	sh, known, err := o.Shape()
	if err != nil || !known {
		return nil, err
	}
	return sh, nil
}

// mergeShapes is the most specific shape compatible with a and b (which
// must have one rank): a dimension they disagree on becomes unknown.
func mergeShapes(a, b st.Shape) st.Shape {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	out := make(st.Shape, len(a))
	for i := range a {
		out[i] = a[i]
		if a[i] != b[i] {
			out[i] = st.Unknown
		}
	}
	return out
}

// fits says whether shape sh is as specific as inv: the same rank, and
// each dimension inv knows is sh's.
func fits(sh, inv st.Shape) bool {
	if inv == nil {
		return true
	}
	if sh == nil || len(sh) != len(inv) {
		return false
	}
	for i, d := range inv {
		if d >= 0 && sh[i] != d {
			return false
		}
	}
	return true
}

// mergeSpecs is the most specific spec compatible with a and b, which
// must lay out the same components: the same kinds, dtypes, ranks,
// ragged ranks and fields. path names the value in errors.
func mergeSpecs(a, b st.Spec, path string) (st.Spec, error) {
	differ := func() error {
		return fmt.Errorf("%w: %s is %v in one and %v in the other", ErrBranch, path, a, b)
	}
	switch x := a.(type) {
	case *st.TensorSpec:
		y, ok := b.(*st.TensorSpec)
		if !ok || x.DType != y.DType || len(x.Shape) != len(y.Shape) {
			return nil, differ()
		}
		return &st.TensorSpec{DType: x.DType, Shape: mergeShapes(x.Shape, y.Shape)}, nil
	case *st.RaggedSpec:
		y, ok := b.(*st.RaggedSpec)
		if !ok || x.DType != y.DType || len(x.Shape) != len(y.Shape) || x.RaggedRank != y.RaggedRank {
			return nil, differ()
		}
		return &st.RaggedSpec{DType: x.DType, Shape: mergeShapes(x.Shape, y.Shape), RaggedRank: x.RaggedRank}, nil
	case *st.StructSpec:
		y, ok := b.(*st.StructSpec)
		if !ok || len(x.Shape) != len(y.Shape) || len(x.Fields) != len(y.Fields) {
			return nil, differ()
		}
		out := &st.StructSpec{Shape: mergeShapes(x.Shape, y.Shape), Fields: make([]st.FieldSpec, len(x.Fields))}
		for i, f := range x.Fields {
			if y.Fields[i].Name != f.Name {
				return nil, differ()
			}
			m, err := mergeSpecs(f.Spec, y.Fields[i].Spec, joinPath(path, f.Name))
			if err != nil {
				return nil, err
			}
			out.Fields[i] = st.FieldSpec{Name: f.Name, Spec: m}
		}
		return out, nil
	}
	return nil, differ()
}

// mergeSlots returns the slots of Cond's results from those of its two
// branches, which must agree value by value.
func mergeSlots(a, b []slot) ([]slot, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("%w: the then branch returns %d values, the else branch %d", ErrBranch, len(a), len(b))
	}
	out := make([]slot, len(a))
	for i := range a {
		x, y := a[i], b[i]
		name := fmt.Sprintf("result %d", i)
		if (x.spec == nil) != (y.spec == nil) || x.splits != y.splits || len(x.dtypes) != len(y.dtypes) {
			return nil, fmt.Errorf("%w: %s is a %s in the then branch, a %s in the else branch", ErrBranch, name, x.kind(), y.kind())
		}
		m := slot{splits: x.splits, dtypes: x.dtypes, shapes: make([]st.Shape, len(x.shapes))}
		if x.spec != nil {
			spec, err := mergeSpecs(x.spec, y.spec, name)
			if err != nil {
				return nil, err
			}
			m.spec = spec.(*st.StructSpec)
		}
		for j := range x.dtypes {
			if x.dtypes[j] != y.dtypes[j] || (x.shapes[j] != nil && y.shapes[j] != nil && len(x.shapes[j]) != len(y.shapes[j])) {
				return nil, fmt.Errorf("%w: %s, component %d: %v %v in the then branch, %v %v in the else branch", ErrBranch, name, j, x.dtypes[j], x.shapes[j], y.dtypes[j], y.shapes[j])
			}
			m.shapes[j] = mergeShapes(x.shapes[j], y.shapes[j])
		}
		out[i] = m
	}
	return out, nil
}

// function is a graph function traced from Go code.
type function struct {
	name     string
	def      []byte
	library  [][]byte // the functions it calls (nested control flow)
	stateful bool
}

// traceFunction builds a graph function from build, run on placeholders
// for the components of in, in a graph of its own. build returns the
// function's results. The function's name is base plus a hash of its
// definition: the same function traced twice has one name (and is added
// once), two different ones never share it.
func traceFunction(base string, in []slot, build func(s *op.Scope, in []Value) []tfbridge.Output) (*function, error) {
	g := tfbridge.NewGraph()
	defer g.Close()
	s := op.NewScopeWithGraph(g)
	dtypes, shapes := allComponents(in)
	args := make([]tfbridge.Output, len(dtypes))
	for i, dt := range dtypes {
		opts := []op.PlaceholderOption{}
		if shapes[i] != nil {
			opts = append(opts, op.PlaceholderShape(shapeAttrs(shapes[i : i+1])[0]))
		}
		args[i] = op.Placeholder(s.SubScope(fmt.Sprintf("arg_%d", i)), dt, opts...)
	}
	vals := unflatten(s, "arguments", in, args)
	if err := s.Err(); err != nil {
		return nil, err
	}
	results := build(s, vals)
	if err := s.Err(); err != nil {
		return nil, err
	}
	for i, r := range results {
		if r.Op == nil {
			return nil, fmt.Errorf("%w: result component %d has no operation", ErrBranch, i)
		}
		if r.Op.Graph() != g {
			return nil, fmt.Errorf("%w: result component %d (%s) is not computed in the function (an Output of the enclosing graph? pass it as an input)", ErrBranch, i, r.Name())
		}
	}
	names := make([]string, len(results))
	for i := range names {
		names[i] = fmt.Sprintf("out_%d", i)
	}
	raw, err := g.ToFunctionDef(base, args, results, names)
	if err != nil {
		return nil, err
	}
	fd := &fnpb.FunctionDef{}
	if err := proto.Unmarshal(raw, fd); err != nil {
		return nil, fmt.Errorf("FunctionDef: %w", err)
	}
	fd.Signature.Name = ""
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
	if err != nil {
		return nil, fmt.Errorf("FunctionDef: %w", err)
	}
	sum := sha256.Sum256(body)
	f := &function{name: base + "_" + hex.EncodeToString(sum[:8]), stateful: fd.GetSignature().GetIsStateful()}
	fd.Signature.Name = f.name
	if f.def, err = proto.Marshal(fd); err != nil {
		return nil, fmt.Errorf("FunctionDef: %w", err)
	}
	lib, err := g.FunctionDefs()
	if err != nil {
		return nil, err
	}
	for _, d := range lib {
		f.library = append(f.library, d)
	}
	return f, nil
}

// addFunctions adds fs and the functions they call to g's library.
func addFunctions(g *tfbridge.Graph, fs ...*function) error {
	for _, f := range fs {
		for _, d := range f.library {
			if err := g.AddFunction(d); err != nil {
				return err
			}
		}
		if err := g.AddFunction(f.def); err != nil {
			return err
		}
	}
	return nil
}

// Cond returns then(in) when pred (a bool scalar) is true and els(in)
// otherwise, as one StatelessIf operation (If when a branch holds a
// stateful operation) whose branches are graph functions. Each value
// crosses into the branches and back as its components, flattened as
// TensorFlow flattens composite tensors for its control flow: a Struct
// as its components in component order, a Ragged as its row splits and
// values. The branches must return as many values, of the same kinds,
// dtypes, ranks and fields; the results have the most specific spec
// both fit (a dimension they disagree on is unknown). A mismatch is
// ErrBranch, recorded in s with the branch's own errors; Cond then
// returns nil.
func Cond(s *op.Scope, pred tfbridge.Output, in []Value, then, els Branch) []Value {
	s = s.SubScope("Cond")
	if s.Err() != nil {
		return nil
	}
	fail := func(err error) []Value {
		s.UpdateErr("Cond", err)
		return nil
	}
	if then == nil || els == nil {
		return fail(fmt.Errorf("%w: a nil branch", ErrBranch))
	}
	if err := checkPredicate(pred); err != nil {
		return fail(err)
	}
	comps, slots, err := flatten(in)
	if err != nil {
		return fail(err)
	}
	var outSlots [2][]slot
	fns := make([]*function, 2)
	for i, b := range []Branch{then, els} {
		which := [2]string{"then", "else"}[i]
		fns[i], err = traceFunction("graphst_cond_branch", slots, func(bs *op.Scope, vals []Value) []tfbridge.Output {
			res := b(bs, vals)
			if bs.Err() != nil {
				return nil
			}
			outs, sl, err := flatten(res)
			if err != nil {
				bs.UpdateErr("results", err)
				return nil
			}
			outSlots[i] = sl
			return outs
		})
		if err != nil {
			return fail(fmt.Errorf("%s branch: %w", which, err))
		}
	}
	merged, err := mergeSlots(outSlots[0], outSlots[1])
	if err != nil {
		return fail(err)
	}
	if err := addFunctions(s.Graph(), fns...); err != nil {
		return fail(err)
	}
	tout, shapes := allComponents(merged)
	var outs []tfbridge.Output
	thenFn, elseFn := op.FuncAttr{Name: fns[0].name}, op.FuncAttr{Name: fns[1].name}
	if fns[0].stateful || fns[1].stateful {
		outs = op.If(s, pred, comps, tout, thenFn, elseFn, op.IfOutputShapes(shapeAttrs(shapes)))
	} else {
		outs = op.StatelessIf(s, pred, comps, tout, thenFn, elseFn, op.StatelessIfOutputShapes(shapeAttrs(shapes)))
	}
	if s.Err() != nil {
		return nil
	}
	if len(outs) != len(tout) {
		return fail(fmt.Errorf("%w: the If operation has %d outputs for %d result components", ErrBranch, len(outs), len(tout)))
	}
	return unflatten(s, "Cond", merged, outs)
}

func checkPredicate(pred tfbridge.Output) error {
	if pred.Op == nil {
		return fmt.Errorf("%w: the predicate has no operation", ErrBranch)
	}
	if pred.DType() != tfbridge.Bool {
		return fmt.Errorf("%w: the predicate %s is %v, want bool", ErrBranch, pred.Name(), pred.DType())
	}
	sh, err := outputShape(pred)
	if err != nil {
		return err
	}
	if sh != nil && len(sh) != 0 {
		return fmt.Errorf("%w: the predicate %s has shape %v, want a scalar", ErrBranch, pred.Name(), sh)
	}
	return nil
}

// WhileOptions tunes While. The zero value is the default.
type WhileOptions struct {
	// ShapeInvariants gives, per loop variable, the spec every iteration's
	// value must fit, for a variable whose shape changes from one
	// iteration to the next (a struct gaining rows: its outer dimension
	// unknown). A nil entry, or a missing one, is the default: a
	// struct's own spec, a ragged tensor's values with an unknown number
	// of rows, a dense tensor's shape as the graph knows it. A struct's
	// ragged fields may grow without one: their dimensions are unknown in
	// any spec.
	ShapeInvariants []st.Spec
	// ParallelIterations is how many iterations TensorFlow may run at
	// once; 0 is TensorFlow's default (10).
	ParallelIterations int
}

// While runs body on the loop variables vars while cond holds, as one
// StatelessWhile operation (While when the condition or the body holds a
// stateful operation) whose condition and body are graph functions, and
// returns the variables' final values. Values cross the function
// boundary as in Cond. body must return as many values as vars, each of
// the same kind and dtypes and fitting the variable's invariant
// (WhileOptions.ShapeInvariants); cond must return a bool scalar. A
// mismatch is ErrBranch, recorded in s; While then returns nil.
func While(s *op.Scope, vars []Value, cond Predicate, body Branch, opts ...WhileOptions) []Value {
	s = s.SubScope("While")
	if s.Err() != nil {
		return nil
	}
	fail := func(err error) []Value {
		s.UpdateErr("While", err)
		return nil
	}
	var o WhileOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if cond == nil || body == nil {
		return fail(fmt.Errorf("%w: a nil condition or body", ErrBranch))
	}
	if len(o.ShapeInvariants) > len(vars) {
		return fail(fmt.Errorf("%w: %d shape invariants for %d loop variables", ErrBranch, len(o.ShapeInvariants), len(vars)))
	}
	comps, slots, err := flatten(vars)
	if err != nil {
		return fail(err)
	}
	// The loop's slots: each variable's invariant, which its initial
	// value must fit.
	at := 0
	for i := range slots {
		var inv st.Spec
		if i < len(o.ShapeInvariants) {
			inv = o.ShapeInvariants[i]
		}
		loop, err := slots[i].invariant(inv)
		if err != nil {
			return fail(fmt.Errorf("loop variable %d: %w", i, err))
		}
		for j, c := range comps[at : at+len(loop.dtypes)] {
			sh, err := outputShape(c)
			if err != nil {
				return fail(err)
			}
			if !fits(sh, loop.shapes[j]) {
				return fail(fmt.Errorf("%w: loop variable %d, component %d: the initial value has shape %v, outside the invariant %v", ErrBranch, i, j, sh, loop.shapes[j]))
			}
		}
		at += len(loop.dtypes)
		slots[i] = loop
	}
	condFn, err := traceFunction("graphst_while_cond", slots, func(bs *op.Scope, vals []Value) []tfbridge.Output {
		p := cond(bs, vals)
		if bs.Err() != nil {
			return nil
		}
		if p.Op != nil && p.Op.Graph() == bs.Graph() {
			if err := checkPredicate(p); err != nil {
				bs.UpdateErr("condition", err)
				return nil
			}
		}
		return []tfbridge.Output{p}
	})
	if err != nil {
		return fail(fmt.Errorf("condition: %w", err))
	}
	bodyFn, err := traceFunction("graphst_while_body", slots, func(bs *op.Scope, vals []Value) []tfbridge.Output {
		res := body(bs, vals)
		if bs.Err() != nil {
			return nil
		}
		outs, got, err := flatten(res)
		if err != nil {
			bs.UpdateErr("results", err)
			return nil
		}
		if err := checkLoopResults(slots, got); err != nil {
			bs.UpdateErr("results", err)
			return nil
		}
		return outs
	})
	if err != nil {
		return fail(fmt.Errorf("body: %w", err))
	}
	if err := addFunctions(s.Graph(), condFn, bodyFn); err != nil {
		return fail(err)
	}
	_, shapes := allComponents(slots)
	var outs []tfbridge.Output
	c, b := op.FuncAttr{Name: condFn.name}, op.FuncAttr{Name: bodyFn.name}
	if condFn.stateful || bodyFn.stateful {
		wopts := []op.WhileOption{op.WhileOutputShapes(shapeAttrs(shapes))}
		if o.ParallelIterations > 0 {
			wopts = append(wopts, op.WhileParallelIterations(int64(o.ParallelIterations)))
		}
		outs = op.While(s, comps, c, b, wopts...)
	} else {
		wopts := []op.StatelessWhileOption{op.StatelessWhileOutputShapes(shapeAttrs(shapes))}
		if o.ParallelIterations > 0 {
			wopts = append(wopts, op.StatelessWhileParallelIterations(int64(o.ParallelIterations)))
		}
		outs = op.StatelessWhile(s, comps, c, b, wopts...)
	}
	if s.Err() != nil {
		return nil
	}
	if len(outs) != len(comps) {
		return fail(fmt.Errorf("%w: the While operation has %d outputs for %d loop components", ErrBranch, len(outs), len(comps)))
	}
	return unflatten(s, "While", slots, outs)
}

// checkLoopResults checks the body's results (slots got) against the
// loop variables' slots.
func checkLoopResults(loop, got []slot) error {
	if len(got) != len(loop) {
		return fmt.Errorf("%w: the body returns %d values for %d loop variables", ErrBranch, len(got), len(loop))
	}
	for i, l := range loop {
		g := got[i]
		if (l.spec == nil) != (g.spec == nil) || l.splits != g.splits || len(l.dtypes) != len(g.dtypes) {
			return fmt.Errorf("%w: loop variable %d is a %s, the body returns a %s", ErrBranch, i, l.kind(), g.kind())
		}
		if l.spec != nil {
			if _, err := mergeSpecs(l.spec, g.spec, fmt.Sprintf("loop variable %d", i)); err != nil {
				return err
			}
			if !g.spec.IsCompatibleWith(l.spec) {
				return fmt.Errorf("%w: loop variable %d is %v, the body returns %v", ErrBranch, i, l.spec, g.spec)
			}
		}
		for j := range l.dtypes {
			if l.dtypes[j] != g.dtypes[j] {
				return fmt.Errorf("%w: loop variable %d, component %d: %v, the body returns %v", ErrBranch, i, j, l.dtypes[j], g.dtypes[j])
			}
			if !fits(g.shapes[j], l.shapes[j]) {
				return fmt.Errorf("%w: loop variable %d, component %d: the body returns shape %v, outside the invariant %v (WhileOptions.ShapeInvariants relaxes it)", ErrBranch, i, j, g.shapes[j], l.shapes[j])
			}
		}
	}
	return nil
}

// invariant returns the loop slot of a variable whose initial value has
// slot sl, for the invariant spec inv (nil: the default).
func (sl slot) invariant(inv st.Spec) (slot, error) {
	out := slot{spec: sl.spec, splits: sl.splits, dtypes: sl.dtypes, shapes: make([]st.Shape, len(sl.shapes))}
	if sl.spec != nil {
		spec := sl.spec
		if inv != nil {
			is, ok := inv.(*st.StructSpec)
			if !ok {
				return slot{}, fmt.Errorf("%w: the invariant %v of a struct is not a StructSpec", ErrBranch, inv)
			}
			if _, err := mergeSpecs(spec, is, "the invariant"); err != nil {
				return slot{}, err
			}
			if !spec.IsCompatibleWith(is) {
				return slot{}, fmt.Errorf("%w: the initial value %v does not fit the invariant %v", ErrBranch, spec, is)
			}
			spec = is
		}
		cs, err := Components(spec)
		if err != nil {
			return slot{}, err
		}
		out.spec = spec
		for j, c := range cs {
			out.shapes[j] = c.Shape
		}
		return out, nil
	}
	k := sl.splits
	for j := range k {
		out.shapes[j] = st.Shape{st.Unknown}
	}
	values := sl.shapes[k]
	if inv == nil {
		if values != nil && k > 0 {
			values = append(st.Shape{st.Unknown}, values[1:]...)
		}
		out.shapes[k] = values
		return out, nil
	}
	dt, err := sl.dtypes[k].StructDType()
	if err != nil {
		return slot{}, err
	}
	var full st.Shape
	switch x := inv.(type) {
	case *st.TensorSpec:
		if x.DType != dt {
			return slot{}, fmt.Errorf("%w: the invariant %v has another dtype than the value (%v)", ErrBranch, inv, dt)
		}
		full = x.Shape
	case *st.RaggedSpec:
		if x.DType != dt || x.RaggedRank != k {
			return slot{}, fmt.Errorf("%w: the invariant %v does not fit a %v value of %d row splits", ErrBranch, inv, dt, k)
		}
		full = x.Shape
	default:
		return slot{}, fmt.Errorf("%w: the invariant %v of a tensor is a struct's", ErrBranch, inv)
	}
	if k == 0 {
		out.shapes[0] = full
	} else {
		if len(full) < k+1 {
			return slot{}, fmt.Errorf("%w: the invariant %v has rank %d, a value of %d row splits at least %d", ErrBranch, inv, len(full), k, k+1)
		}
		out.shapes[k] = append(st.Shape{st.Unknown}, full[k+1:]...)
	}
	if values != nil && len(values) != len(out.shapes[k]) {
		return slot{}, fmt.Errorf("%w: the invariant %v has another rank than the value", ErrBranch, inv)
	}
	return out, nil
}
