package decode

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/decode/internal/tfmd"
	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/structtensor"
)

// SchemaOptions are options of ExampleSpecFromSchema.
type SchemaOptions struct {
	// Environment keeps the features of one environment of the schema
	// ("SERVING", "TRAINING"...): a feature with in_environment is in
	// those only; one without is in the default_environment ones (every
	// one when there are none) but for its not_in_environment ones. Empty
	// keeps every feature.
	Environment string
}

// ExampleSpecFromSchema makes the feature spec of a tensorflow_metadata
// Schema in its text form (the schema.pbtxt that TFDV's infer_schema and
// TFX's SchemaGen write), by the rules tfx-bsl applies when it infers
// tensor representations from a schema:
//
//   - a feature with a shape is FixedLen of that shape, required (its
//     presence.min_fraction must be 1, as tfx-bsl demands);
//   - any other feature is VarLen;
//   - the features of a STRUCT feature's struct_domain (TFDV's form of a
//     SequenceExample's feature lists) are VarLen sequence features;
//   - deprecated features, and those of a lifecycle stage tfx-bsl leaves
//     out (PLANNED, ALPHA, DEPRECATED, DEBUG_ONLY, DISABLED,
//     VALIDATION_DERIVED), are left out.
//
// Types map INT to Int64, FLOAT to Float32 and BYTES to String. Each
// output field is named after its feature, with characters a field name
// cannot hold replaced by '_' (Key keeps the feature's name). A
// sparse_feature is an error (SparseFeature has no counterpart in
// ExampleSpec), and so is a feature without a type. Fields of Schema that
// do not bear on decoding (domains, constraints, statistics) are skipped.
//
// A schema with a default tensor_representation_group (key "") decodes
// as TFXIO's TFExampleRecord decodes by it: a field per representation,
// named by its key, of the feature TFXIO parses it with (dense_tensor
// with its default, varlen_sparse_tensor, ragged_tensor with its
// feature_path and partitions; sparse_tensor is an error naming the
// representation); the other features as above, but for those a
// representation reads or is named after. Other groups are not read.
func ExampleSpecFromSchema(text []byte, opts ...SchemaOptions) (*ExampleSpec, error) {
	o, err := optarg.One(opts, ErrFeatureSpec)
	if err != nil {
		return nil, err
	}
	md, err := tfmd.Schema()
	if err != nil {
		return nil, fmt.Errorf("decode: internal: %w", err)
	}
	schema := dynamicpb.NewMessage(md)
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, schema); err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrFeatureSpec, err)
	}
	fields := md.Fields()
	defaultEnvs := stringList(schema, fields.ByName("default_environment"))
	ctx, seq := map[string]Feature{}, map[string]Feature{}
	ctxNames, seqNames := fieldNamer{}, fieldNamer{}
	if l := schema.Get(fields.ByName("sparse_feature")).List(); l.Len() > 0 {
		for i := 0; i < l.Len(); i++ {
			if included(l.Get(i).Message()) {
				name := l.Get(i).Message().Get(l.Get(i).Message().Descriptor().Fields().ByName("name")).String()
				return nil, fmt.Errorf("%w: sparse_feature %q: SparseFeature is not supported (declare its index and value features as features)", ErrFeatureSpec, name)
			}
		}
	}
	features := schema.Get(fields.ByName("feature")).List()
	reps, err := schemaRepresentations(schema)
	if err != nil {
		return nil, err
	}
	for _, r := range reps.outputs {
		// The field is named after the representation (TFXIO's tensor
		// name); its Key is the feature it reads.
		out, err := ctxNames.name(r.key)
		if err != nil {
			return nil, err
		}
		f := r.feature
		f.Key = keyIfRenamed(out, f.Key)
		ctx[out] = f
	}
	for i := 0; i < features.Len(); i++ {
		f := features.Get(i).Message()
		ff := f.Descriptor().Fields()
		name := f.Get(ff.ByName("name")).String()
		if !included(f) || !inEnvironment(f, o.Environment, defaultEnvs) {
			continue
		}
		if reps.sources[name] || reps.keys[name] {
			// A representation reads it, or takes its name (TFXIO's
			// representations of a schema then leave it out).
			continue
		}
		typ := int(f.Get(ff.ByName("type")).Enum())
		if typ == tfmd.TypeStruct {
			sd := f.Get(ff.ByName("struct_domain")).Message()
			sf := sd.Descriptor().Fields()
			if sd.Get(sf.ByName("sparse_feature")).List().Len() > 0 {
				return nil, fmt.Errorf("%w: feature %q: sparse features in a struct domain are not supported", ErrFeatureSpec, name)
			}
			children := sd.Get(sf.ByName("feature")).List()
			for j := 0; j < children.Len(); j++ {
				c := children.Get(j).Message()
				cname := c.Get(ff.ByName("name")).String()
				if !included(c) {
					continue
				}
				ctyp := int(c.Get(ff.ByName("type")).Enum())
				if ctyp == tfmd.TypeStruct {
					return nil, fmt.Errorf("%w: feature %q: STRUCT feature %q in its struct domain (one level of nesting is supported)", ErrFeatureSpec, name, cname)
				}
				dt, err := schemaDType(ctyp)
				if err != nil {
					return nil, fmt.Errorf("feature %q, %q: %w", name, cname, err)
				}
				out, err := seqNames.name(cname)
				if err != nil {
					return nil, err
				}
				seq[out] = Feature{Kind: VarLen, DType: dt, Key: keyIfRenamed(out, cname)}
			}
			continue
		}
		dt, err := schemaDType(typ)
		if err != nil {
			return nil, fmt.Errorf("feature %q: %w", name, err)
		}
		out, err := ctxNames.name(name)
		if err != nil {
			return nil, err
		}
		feat := Feature{Kind: VarLen, DType: dt, Key: keyIfRenamed(out, name)}
		if f.Has(ff.ByName("shape")) {
			presence := f.Get(ff.ByName("presence")).Message()
			if frac := presence.Get(presence.Descriptor().Fields().ByName("min_fraction")).Float(); frac != 1 {
				return nil, fmt.Errorf("%w: feature %q has a shape but presence.min_fraction %v, not 1 (a feature that may be absent takes value_count, not shape)", ErrFeatureSpec, name, frac)
			}
			shape := f.Get(ff.ByName("shape")).Message()
			dims := shape.Get(shape.Descriptor().Fields().ByName("dim")).List()
			feat.Kind = FixedLen
			feat.Shape = []int{}
			for k := 0; k < dims.Len(); k++ {
				d := dims.Get(k).Message()
				size := d.Get(d.Descriptor().Fields().ByName("size")).Int()
				if size < 0 || size > 1<<31 {
					return nil, fmt.Errorf("%w: feature %q: shape dimension %d", ErrFeatureSpec, name, size)
				}
				feat.Shape = append(feat.Shape, int(size))
			}
		}
		ctx[out] = feat
	}
	spec := &ExampleSpec{Features: ctx}
	if len(seq) > 0 {
		spec.SequenceFeatures = seq
		renameSequenceClashes(spec)
	}
	return spec, nil
}

// included tells whether tfx-bsl keeps a Feature or SparseFeature: not
// deprecated, and in no lifecycle stage it leaves out.
func included(m protoreflect.Message) bool {
	ff := m.Descriptor().Fields()
	if m.Get(ff.ByName("deprecated")).Bool() {
		return false
	}
	switch m.Get(ff.ByName("lifecycle_stage")).Enum() {
	case tfmd.StagePlanned, tfmd.StageAlpha, tfmd.StageDeprecated, tfmd.StageDebugOnly, tfmd.StageDisabled, tfmd.StageValidationDerived:
		return false
	}
	return true
}

func inEnvironment(f protoreflect.Message, env string, defaults []string) bool {
	if env == "" {
		return true
	}
	ff := f.Descriptor().Fields()
	if in := stringList(f, ff.ByName("in_environment")); len(in) > 0 {
		return slices.Contains(in, env)
	}
	if slices.Contains(stringList(f, ff.ByName("not_in_environment")), env) {
		return false
	}
	return len(defaults) == 0 || slices.Contains(defaults, env)
}

func stringList(m protoreflect.Message, fd protoreflect.FieldDescriptor) []string {
	l := m.Get(fd).List()
	out := make([]string, l.Len())
	for i := range out {
		out[i] = l.Get(i).String()
	}
	return out
}

func schemaDType(t int) (structtensor.DType, error) {
	switch t {
	case tfmd.TypeInt:
		return structtensor.Int64, nil
	case tfmd.TypeFloat:
		return structtensor.Float32, nil
	case tfmd.TypeBytes:
		return structtensor.String, nil
	}
	return 0, fmt.Errorf("%w: feature type %d (want INT, FLOAT or BYTES)", ErrFeatureSpec, t)
}

// fieldNamer gives each feature key an output field name: the key, with
// the characters a field name cannot hold replaced by '_' (and "f"
// before one that does not start with a letter), made unique by a
// numeric suffix.
type fieldNamer map[string]string // field name -> key

func (n fieldNamer) name(key string) (string, error) {
	for _, k := range n {
		if k == key {
			return "", fmt.Errorf("%w: feature %q appears twice", ErrFeatureSpec, key)
		}
	}
	b := []byte(key)
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	base := string(b)
	if base == "" || !(base[0] >= 'A' && base[0] <= 'Z' || base[0] >= 'a' && base[0] <= 'z') {
		base = "f" + base
	}
	name := base
	for i := 2; ; i++ {
		if _, taken := n[name]; !taken {
			break
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
	n[name] = key
	return name, nil
}

func keyIfRenamed(name, key string) string {
	if name == key {
		return ""
	}
	return key
}

// InferExampleSpec infers a feature spec from a sample of serialized
// tf.Example records (tf.SequenceExample when sequence is set), as TFDV's
// schema inference (with infer_feature_shape) types features and gives
// them a shape:
//
//   - a feature's dtype is the kind of list it holds (int64_list: Int64,
//     float_list: Float32, bytes_list: String); a feature that holds
//     different kinds in different records is an error, and one that
//     never holds a list is left out;
//   - a feature present in every record with the same number n >= 1 of
//     values is FixedLen of shape [n], any other VarLen;
//   - a feature list whose every step, in every record, holds the same
//     number n >= 1 of values is FixedLenSequence of shape [n] (allowed
//     missing if some record lacks it), any other VarLen.
//
// Output fields are named as ExampleSpecFromSchema names them.
func InferExampleSpec(records [][]byte, sequence bool) (*ExampleSpec, error) {
	ctx := map[string]*featureStats{}
	seq := map[string]*featureStats{}
	for i, r := range records {
		var features map[string]*tfexample.Feature
		var lists map[string]*tfexample.FeatureList
		if sequence {
			var m tfexample.SequenceExample
			if err := proto.Unmarshal(r, &m); err != nil {
				return nil, &RecordError{Record: int64(i), Offset: -1, Err: ErrMalformed, Detail: "tensorflow.SequenceExample: " + err.Error()}
			}
			features = m.GetContext().GetFeature()
			lists = m.GetFeatureLists().GetFeatureList()
		} else {
			var m tfexample.Example
			if err := proto.Unmarshal(r, &m); err != nil {
				return nil, &RecordError{Record: int64(i), Offset: -1, Err: ErrMalformed, Detail: "tensorflow.Example: " + err.Error()}
			}
			features = m.GetFeatures().GetFeature()
		}
		for key, f := range features {
			s := ctx[key]
			if s == nil {
				s = &featureStats{}
				ctx[key] = s
			}
			if err := s.add(i, key, f); err != nil {
				return nil, err
			}
			s.records++
		}
		for key, l := range lists {
			s := seq[key]
			if s == nil {
				s = &featureStats{}
				seq[key] = s
			}
			for _, f := range l.GetFeature() {
				if err := s.add(i, key, f); err != nil {
					return nil, err
				}
			}
			s.records++
		}
	}
	spec := &ExampleSpec{Features: map[string]Feature{}}
	names := fieldNamer{}
	for _, key := range sortedNames(ctx) {
		s := ctx[key]
		if s.dtype == 0 {
			continue
		}
		name, err := names.name(key)
		if err != nil {
			return nil, err
		}
		f := Feature{Kind: VarLen, DType: s.dtype, Key: keyIfRenamed(name, key)}
		if s.records == len(records) && s.min == s.max && s.min >= 1 {
			f.Kind, f.Shape = FixedLen, []int{s.min}
		}
		spec.Features[name] = f
	}
	if sequence {
		spec.SequenceFeatures = map[string]Feature{}
		names := fieldNamer{}
		for _, key := range sortedNames(seq) {
			s := seq[key]
			if s.dtype == 0 {
				continue
			}
			name, err := names.name(key)
			if err != nil {
				return nil, err
			}
			f := Feature{Kind: VarLen, DType: s.dtype, Key: keyIfRenamed(name, key)}
			if s.min == s.max && s.min >= 1 {
				f.Kind, f.Shape, f.AllowMissing = FixedLenSequence, []int{s.min}, s.records < len(records)
			}
			spec.SequenceFeatures[name] = f
		}
		renameSequenceClashes(spec)
	}
	return spec, nil
}

// featureStats is what InferExampleSpec learns of one key: the kind of
// list, how many records hold it, and the least and most values one
// record (a feature) or one step (a feature list) holds.
type featureStats struct {
	dtype    structtensor.DType
	records  int
	min, max int
	seen     bool
}

func (s *featureStats) add(record int, key string, f *tfexample.Feature) error {
	var dt structtensor.DType
	n := 0
	switch k := f.GetKind().(type) {
	case *tfexample.Feature_Int64List:
		dt, n = structtensor.Int64, len(k.Int64List.GetValue())
	case *tfexample.Feature_FloatList:
		dt, n = structtensor.Float32, len(k.FloatList.GetValue())
	case *tfexample.Feature_BytesList:
		dt, n = structtensor.String, len(k.BytesList.GetValue())
	}
	if dt != 0 {
		if s.dtype != 0 && s.dtype != dt {
			return &RecordError{Record: int64(record), Offset: -1, Err: ErrFeatureType,
				Detail: fmt.Sprintf("feature %q holds %v values here, %v values in an earlier record", key, dt, s.dtype)}
		}
		s.dtype = dt
	}
	if !s.seen || n < s.min {
		s.min = n
	}
	if !s.seen || n > s.max {
		s.max = n
	}
	s.seen = true
	return nil
}

// renameSequenceClashes gives a feature list named like a context feature
// the field name name_list (a StructTensor holds both in one struct).
func renameSequenceClashes(spec *ExampleSpec) {
	renamed := make(map[string]Feature, len(spec.SequenceFeatures))
	for _, name := range sortedNames(spec.SequenceFeatures) {
		f := spec.SequenceFeatures[name]
		out := name
		for i := 1; ; i++ {
			_, inCtx := spec.Features[out]
			_, inSeq := renamed[out]
			if !inCtx && !inSeq {
				break
			}
			out = fmt.Sprintf("%s_list%d", name, i)
			if i == 1 {
				out = name + "_list"
			}
		}
		if out != name && f.Key == "" {
			f.Key = name
		}
		renamed[out] = f
	}
	spec.SequenceFeatures = renamed
}

// schemaRepresentation is the feature of one tensor representation of a
// schema's tensor_representation_group, named by its key.
type schemaRepresentation struct {
	key     string
	feature Feature // Key is the feature it reads (always set)
}

// schemaRepresentationSet is what a schema's default
// tensor_representation_group makes: a feature per representation, in
// key order, the feature columns they read and their keys.
type schemaRepresentationSet struct {
	outputs []schemaRepresentation
	sources map[string]bool
	keys    map[string]bool
}

// schemaRepresentations reads the default ("") tensor_representation_group
// of schema, the one TFXIO's TFExampleRecord decodes by, as TFXIO turns
// each representation into a tf.io feature:
//
//   - dense_tensor: FixedLen of its shape, of the column's type, with
//     default_value (of the column's type) filling the shape, or
//     required without one;
//   - varlen_sparse_tensor: VarLen (a SparseTensor in TensorFlow, ragged
//     here, as for a VarLen feature);
//   - ragged_tensor: Ragged over the one-step feature_path, its
//     partitions uniform_row_length (UniformRowLength) and row_length
//     (RowLengths of that INT feature), int64 row partitions;
//   - sparse_tensor has no counterpart in the decode op (tf.io's
//     SparseFeature scatters values by index columns): an error naming
//     the representation, as is an INT32 row_partition_dtype (the op's
//     row splits are int64).
//
// TFXIO keeps the schema's other features as it infers them, but for
// those a representation reads or takes the name of: sources and keys.
func schemaRepresentations(schema protoreflect.Message) (schemaRepresentationSet, error) {
	set := schemaRepresentationSet{sources: map[string]bool{}, keys: map[string]bool{}}
	fields := schema.Descriptor().Fields()
	group, ok := stringMap(schema, fields.ByName("tensor_representation_group"))[""]
	if !ok {
		return set, nil
	}
	types := map[string]int{}
	features := schema.Get(fields.ByName("feature")).List()
	for i := 0; i < features.Len(); i++ {
		f := features.Get(i).Message()
		ff := f.Descriptor().Fields()
		types[f.Get(ff.ByName("name")).String()] = int(f.Get(ff.ByName("type")).Enum())
	}
	reps := stringMap(group, group.Descriptor().Fields().ByName("tensor_representation"))
	keys := make([]string, 0, len(reps))
	for k := range reps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		f, sources, err := representationFeature(reps[key], types)
		if err != nil {
			return set, fmt.Errorf("%w: tensor representation %q: %v", ErrFeatureSpec, key, err)
		}
		set.outputs = append(set.outputs, schemaRepresentation{key: key, feature: f})
		set.keys[key] = true
		for _, s := range sources {
			set.sources[s] = true
		}
	}
	return set, nil
}

// representationFeature is the Feature of one TensorRepresentation and
// the feature columns it reads.
func representationFeature(rep protoreflect.Message, types map[string]int) (Feature, []string, error) {
	rf := rep.Descriptor().Fields()
	var kind protoreflect.FieldDescriptor
	for _, name := range []protoreflect.Name{"dense_tensor", "varlen_sparse_tensor", "sparse_tensor", "ragged_tensor"} {
		if fd := rf.ByName(name); rep.Has(fd) {
			if kind != nil {
				return Feature{}, nil, fmt.Errorf("both %s and %s", kind.Name(), name)
			}
			kind = fd
		}
	}
	if kind == nil {
		return Feature{}, nil, fmt.Errorf("no kind (dense_tensor, varlen_sparse_tensor, sparse_tensor or ragged_tensor)")
	}
	m := rep.Get(kind).Message()
	mf := m.Descriptor().Fields()
	column := func(name string) (structtensor.DType, error) {
		typ, ok := types[name]
		if !ok {
			return 0, fmt.Errorf("%s reads feature %q, which the schema does not have", kind.Name(), name)
		}
		if typ == tfmd.TypeStruct {
			return 0, fmt.Errorf("%s reads the STRUCT feature %q (representations of feature lists are not supported)", kind.Name(), name)
		}
		dt, err := schemaDType(typ)
		if err != nil {
			return 0, fmt.Errorf("feature %q: %v", name, err)
		}
		return dt, nil
	}
	switch kind.Name() {
	case "dense_tensor":
		col := m.Get(mf.ByName("column_name")).String()
		dt, err := column(col)
		if err != nil {
			return Feature{}, nil, err
		}
		f := Feature{Kind: FixedLen, DType: dt, Key: col, Shape: []int{}}
		size := 1
		dims := m.Get(mf.ByName("shape")).Message()
		dl := dims.Get(dims.Descriptor().Fields().ByName("dim")).List()
		for k := 0; k < dl.Len(); k++ {
			d := dl.Get(k).Message()
			n := d.Get(d.Descriptor().Fields().ByName("size")).Int()
			if n < 0 || n > 1<<31 || size*int(n) > 1<<31 {
				return Feature{}, nil, fmt.Errorf("dense_tensor shape dimension %d", n)
			}
			f.Shape = append(f.Shape, int(n))
			size *= int(n)
		}
		if fd := mf.ByName("default_value"); m.Has(fd) {
			d, err := representationDefault(m.Get(fd).Message(), dt, size)
			if err != nil {
				return Feature{}, nil, err
			}
			f.Default = d
		}
		return f, []string{col}, nil
	case "varlen_sparse_tensor":
		col := m.Get(mf.ByName("column_name")).String()
		dt, err := column(col)
		if err != nil {
			return Feature{}, nil, err
		}
		return Feature{Kind: VarLen, DType: dt, Key: col}, []string{col}, nil
	case "sparse_tensor":
		return Feature{}, nil, fmt.Errorf("sparse_tensor is not supported: the decode op has no form of tf.io.SparseFeature (values scattered by index features); represent the value feature as a varlen_sparse_tensor or ragged_tensor")
	}
	// ragged_tensor
	if dt := m.Get(mf.ByName("row_partition_dtype")).Enum(); dt == tfmd.RowPartitionInt32 {
		return Feature{}, nil, fmt.Errorf("ragged_tensor row_partition_dtype INT32: the decode op's row partitions are int64")
	}
	path := m.Get(mf.ByName("feature_path")).Message()
	steps := stringList(path, path.Descriptor().Fields().ByName("step"))
	if len(steps) != 1 {
		return Feature{}, nil, fmt.Errorf("ragged_tensor feature_path of %d steps %q, want one (a feature)", len(steps), steps)
	}
	dt, err := column(steps[0])
	if err != nil {
		return Feature{}, nil, err
	}
	f := Feature{Kind: Ragged, DType: dt, Key: steps[0]}
	sources := []string{steps[0]}
	parts := m.Get(mf.ByName("partition")).List()
	for k := 0; k < parts.Len(); k++ {
		p := parts.Get(k).Message()
		pf := p.Descriptor().Fields()
		switch {
		case p.Has(pf.ByName("uniform_row_length")):
			n := p.Get(pf.ByName("uniform_row_length")).Int()
			if n <= 0 || n > 1<<31 {
				return Feature{}, nil, fmt.Errorf("ragged_tensor partition %d: uniform_row_length %d", k, n)
			}
			f.Partitions = append(f.Partitions, Partition{Kind: UniformRowLength, Length: int(n)})
		case p.Has(pf.ByName("row_length")):
			col := p.Get(pf.ByName("row_length")).String()
			dt, err := column(col)
			if err != nil {
				return Feature{}, nil, fmt.Errorf("ragged_tensor partition %d: %v", k, err)
			}
			if dt != structtensor.Int64 {
				return Feature{}, nil, fmt.Errorf("ragged_tensor partition %d: row_length feature %q is %v, not INT", k, col, dt)
			}
			f.Partitions = append(f.Partitions, Partition{Kind: RowLengths, Key: col})
			sources = append(sources, col)
		default:
			return Feature{}, nil, fmt.Errorf("ragged_tensor partition %d has no kind (uniform_row_length or row_length)", k)
		}
	}
	return f, sources, nil
}

// representationDefault is a dense_tensor's default_value filling size
// values, of the column's dtype (TFXIO refuses another kind).
func representationDefault(d protoreflect.Message, dt structtensor.DType, size int) (any, error) {
	df := d.Descriptor().Fields()
	want := map[structtensor.DType]protoreflect.Name{structtensor.Int64: "int_value", structtensor.Float32: "float_value", structtensor.String: "bytes_value"}[dt]
	for _, name := range []protoreflect.Name{"float_value", "int_value", "bytes_value", "uint_value"} {
		if fd := df.ByName(name); d.Has(fd) && name != want {
			return nil, fmt.Errorf("dense_tensor default_value %s for a feature of type %v (want %s)", name, dt, want)
		}
	}
	if !d.Has(df.ByName(want)) {
		return nil, fmt.Errorf("dense_tensor default_value holds no value")
	}
	v := d.Get(df.ByName(want))
	switch dt {
	case structtensor.Int64:
		return slices.Repeat([]int64{v.Int()}, size), nil
	case structtensor.Float32:
		return slices.Repeat([]float32{float32(v.Float())}, size), nil
	}
	return slices.Repeat([][]byte{v.Bytes()}, size), nil
}

// stringMap reads a map<string, message> field.
func stringMap(m protoreflect.Message, fd protoreflect.FieldDescriptor) map[string]protoreflect.Message {
	out := map[string]protoreflect.Message{}
	m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		out[k.String()] = v.Message()
		return true
	})
	return out
}
