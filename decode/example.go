package decode

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/structtensor/structtensor-go/internal/unchecked"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Sections of a feature plan slot (part of the byte form).
const (
	sectionFeatures     = 0 // an Example's features, a SequenceExample's context
	sectionFeatureLists = 1 // a SequenceExample's feature_lists
)

// Slot modes (part of the byte form).
const (
	slotList   = 0
	slotFixed  = 1
	slotStride = 2
)

// Slot flags (part of the byte form).
const (
	slotDefault      = 1
	slotRequiredList = 2
)

// ExamplePlan decodes tf.Example or tf.SequenceExample records by a
// feature spec. It is immutable and safe for concurrent use.
type ExamplePlan struct {
	sequence bool
	outputs  []exampleOutput
	slots    []exampleSlot
	dtypes   []uint8
	bytes    []byte
	native   *native.ExamplePlan
	// recent remembers the memory of the last outputs, for Recycle.
	recent *recentOutputs
	// index maps each output's name to its place among the outputs, the
	// field index of every batch's StructTensor (the names are checked
	// valid and distinct when the plan is compiled).
	index map[string]int
	// slabCounts size each batch's slab (finish).
	slabCounts slabCounts
}

// exampleSlot is one key the engine decodes into a column of its own.
type exampleSlot struct {
	section int
	key     string
	dtype   structtensor.DType
	mode    int
	count   int // values per record (fixed) or per step; the stride
	flags   int
	def     any // []int64, []float32 or [][]byte
}

// exampleOutput is one output field and the slots it is made of.
type exampleOutput struct {
	name    string
	feature Feature
	section int
	slot    int   // the value slot
	parts   []int // Ragged: the slot of each partition, -1 for a uniform one
}

// CompileExample compiles a spec for tf.Example records (only
// spec.Features is used; SequenceFeatures must be empty).
func CompileExample(spec *ExampleSpec) (*ExamplePlan, error) {
	if len(spec.SequenceFeatures) > 0 {
		return nil, fmt.Errorf("%w: a tf.Example has no sequence features (compile with CompileSequenceExample)", ErrFeatureSpec)
	}
	return compileExample(spec, false)
}

// CompileSequenceExample compiles a spec for tf.SequenceExample records:
// spec.Features are read from the context, spec.SequenceFeatures from the
// feature lists, into one StructTensor (so their names must differ).
func CompileSequenceExample(spec *ExampleSpec) (*ExamplePlan, error) {
	return compileExample(spec, true)
}

func compileExample(spec *ExampleSpec, sequence bool) (*ExamplePlan, error) {
	p := &ExamplePlan{sequence: sequence, recent: new(recentOutputs)}
	shared := map[string]int{} // list slots shared by partitions
	addSlot := func(s exampleSlot) int {
		if s.mode == slotList && s.flags == 0 {
			k := fmt.Sprintf("%d/%d/%s", s.section, s.dtype, s.key)
			if i, ok := shared[k]; ok {
				return i
			}
			shared[k] = len(p.slots)
		}
		p.slots = append(p.slots, s)
		return len(p.slots) - 1
	}
	seen := map[string]bool{}
	for _, sec := range []struct {
		features map[string]Feature
		section  int
	}{{spec.Features, sectionFeatures}, {spec.SequenceFeatures, sectionFeatureLists}} {
		for _, name := range sortedNames(sec.features) {
			f := sec.features[name]
			if err := p.compileFeature(name, f, sec.section, addSlot); err != nil {
				return nil, fmt.Errorf("feature %q: %w", name, err)
			}
			if seen[name] {
				return nil, fmt.Errorf("%w: %q is both a context and a sequence feature", ErrFeatureSpec, name)
			}
			seen[name] = true
		}
	}
	p.index = make(map[string]int, len(p.outputs))
	for i, o := range p.outputs {
		p.index[o.name] = i
		p.slabCounts.add(o)
	}
	p.dtypes = make([]uint8, len(p.slots))
	for i, s := range p.slots {
		p.dtypes[i] = uint8(s.dtype)
	}
	p.bytes = p.marshal()
	np, err := native.NewExamplePlan(p.bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlan, err)
	}
	p.native = np
	return p, nil
}

func (p *ExamplePlan) compileFeature(name string, f Feature, section int, addSlot func(exampleSlot) int) error {
	if !structtensor.ValidFieldName(name) {
		return fmt.Errorf("%w: %q is not a valid field name (set key to read a feature of another name)", ErrFeatureSpec, name)
	}
	if f.DType != structtensor.Int64 && f.DType != structtensor.Float32 && f.DType != structtensor.String {
		return fmt.Errorf("%w: dtype %v (want int64, float32 or string)", ErrFeatureSpec, f.DType)
	}
	key := f.Key
	if key == "" {
		key = name
	}
	n, err := numElements(f.Shape)
	if err != nil {
		return err
	}
	if f.Kind != FixedLen && f.Default != nil {
		return fmt.Errorf("%w: only a fixed_len feature takes a default", ErrFeatureSpec)
	}
	if f.Kind != Ragged && len(f.Partitions) > 0 {
		return fmt.Errorf("%w: only a ragged feature takes partitions", ErrFeatureSpec)
	}
	if (f.Kind == VarLen || f.Kind == Ragged) && len(f.Shape) > 0 {
		return fmt.Errorf("%w: a %v feature has no shape", ErrFeatureSpec, f.Kind)
	}
	if f.AllowMissing && (f.Kind != FixedLenSequence || section != sectionFeatureLists) {
		return fmt.Errorf("%w: allow_missing applies to fixed_len_sequence features of a SequenceExample", ErrFeatureSpec)
	}
	out := exampleOutput{name: name, feature: f, section: section}
	s := exampleSlot{section: section, key: key, dtype: f.DType, count: n}
	switch {
	case f.Kind == FixedLen && section == sectionFeatures:
		s.mode = slotFixed
		def, err := f.defaultValues(n)
		if err != nil {
			return err
		}
		// An empty default makes a tf.Example feature required, as in
		// TensorFlow (whose ParseExample reads an empty default tensor as
		// "none"; its ParseSequenceExample does not).
		if def != nil && (n > 0 || p.sequence) {
			s.flags, s.def = slotDefault, def
		}
	case f.Kind == VarLen:
		s.mode = slotList
	case f.Kind == Ragged:
		s.mode = slotList
		if section == sectionFeatureLists && len(f.Partitions) > 0 {
			return fmt.Errorf("%w: partitions of a sequence feature are not supported", ErrFeatureSpec)
		}
		for _, part := range f.Partitions {
			switch part.Kind {
			case RowSplits, RowLengths, ValueRowIds, RowStarts, RowLimits:
				if part.Key == "" {
					return fmt.Errorf("%w: a %v partition needs a key", ErrFeatureSpec, part.Kind)
				}
				out.parts = append(out.parts, addSlot(exampleSlot{section: section, key: part.Key, dtype: structtensor.Int64, mode: slotList}))
			case UniformRowLength:
				if part.Length <= 0 {
					return fmt.Errorf("%w: uniform_row_length needs a length > 0", ErrFeatureSpec)
				}
				out.parts = append(out.parts, -1)
			default:
				return fmt.Errorf("%w: unknown partition kind %d", ErrFeatureSpec, part.Kind)
			}
		}
	case f.Kind == FixedLenSequence && n == 0:
		return fmt.Errorf("%w: a fixed_len_sequence shape must hold values", ErrFeatureSpec)
	case f.Kind == FixedLenSequence && section == sectionFeatures:
		s.mode = slotStride
	case f.Kind == FixedLenSequence && section == sectionFeatureLists:
		s.mode = slotFixed
		if !f.AllowMissing {
			s.flags = slotRequiredList
		}
	case f.Kind == FixedLen:
		return fmt.Errorf("%w: a sequence feature is fixed_len_sequence, var_len or ragged", ErrFeatureSpec)
	default:
		return fmt.Errorf("%w: unknown feature kind %d", ErrFeatureSpec, f.Kind)
	}
	out.slot = addSlot(s)
	p.outputs = append(p.outputs, out)
	return nil
}

// examplePlanVersion is the version of the byte form written by marshal.
const examplePlanVersion = 1

// MarshalBinary returns the plan's byte form (documented in package
// native), which the TensorFlow op carries as an attribute.
func (p *ExamplePlan) MarshalBinary() ([]byte, error) { return append([]byte(nil), p.bytes...), nil }

func (p *ExamplePlan) marshal() []byte {
	b := []byte("STEX")
	b = binary.AppendUvarint(b, examplePlanVersion)
	kind := uint64(1)
	if p.sequence {
		kind = 2
	}
	b = binary.AppendUvarint(b, kind)
	b = binary.AppendUvarint(b, uint64(len(p.slots)))
	for _, s := range p.slots {
		b = binary.AppendUvarint(b, uint64(s.section))
		b = appendString(b, []byte(s.key))
		b = binary.AppendUvarint(b, uint64(s.dtype))
		b = binary.AppendUvarint(b, uint64(s.mode))
		b = binary.AppendUvarint(b, uint64(s.count))
		b = binary.AppendUvarint(b, uint64(s.flags))
		switch d := s.def.(type) {
		case []int64:
			for _, v := range d {
				b = binary.AppendUvarint(b, uint64(v))
			}
		case []float32:
			for _, v := range d {
				b = binary.AppendUvarint(b, uint64(math.Float32bits(v)))
			}
		case [][]byte:
			for _, v := range d {
				b = appendString(b, v)
			}
		}
	}
	return b
}

// Spec returns the type of the StructTensor that Decode returns.
func (p *ExamplePlan) Spec() *structtensor.StructSpec {
	fields := make([]structtensor.FieldSpec, 0, len(p.outputs))
	for _, o := range p.outputs {
		f := o.feature
		var s structtensor.Spec
		switch {
		case f.Kind == FixedLen:
			s = &structtensor.TensorSpec{DType: f.DType, Shape: append(structtensor.Shape{structtensor.Unknown}, f.Shape...)}
		case f.Kind == FixedLenSequence:
			s = &structtensor.RaggedSpec{DType: f.DType, RaggedRank: 1, Shape: append(structtensor.Shape{structtensor.Unknown, structtensor.Unknown}, f.Shape...)}
		case o.section == sectionFeatureLists:
			s = &structtensor.RaggedSpec{DType: f.DType, RaggedRank: 2, Shape: structtensor.Shape{structtensor.Unknown, structtensor.Unknown, structtensor.Unknown}}
		default:
			// [B, rows, d1, ..., dk]: partition j cuts the items below
			// it into the rows of dimension j+2, so a uniform one fixes
			// that dimension (as tf.io.RaggedFeature shapes it).
			shape := structtensor.Shape{structtensor.Unknown, structtensor.Unknown}
			for _, part := range f.Partitions {
				if part.Kind == UniformRowLength {
					shape = append(shape, part.Length)
				} else {
					shape = append(shape, structtensor.Unknown)
				}
			}
			s = &structtensor.RaggedSpec{DType: f.DType, RaggedRank: len(shape) - 1, Shape: shape}
		}
		fields = append(fields, structtensor.FieldSpec{Name: o.name, Spec: s})
	}
	return &structtensor.StructSpec{Shape: structtensor.Shape{structtensor.Unknown}, Fields: fields}
}

// Decode decodes a batch of serialized tf.Example (or SequenceExample)
// records into a rank-1 StructTensor of shape [len(records)], one field
// per feature.
func (p *ExamplePlan) Decode(records [][]byte, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	return p.DecodeContext(context.Background(), records, opts...)
}

// DecodeContext is Decode with a context.
func (p *ExamplePlan) DecodeContext(ctx context.Context, records [][]byte, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	o, err := engineOptions(opts)
	if err != nil {
		return nil, err
	}
	out, block, err := p.native.Decode(ctx, records, p.dtypes, o)
	if err != nil {
		return nil, p.wrap(ctx, err)
	}
	var size int64
	for _, r := range records {
		size += int64(len(r))
	}
	return p.finish(out, block, len(records), size)
}

// DecodeContiguous decodes the records data[offsets[i]:offsets[i+1]].
func (p *ExamplePlan) DecodeContiguous(data []byte, offsets []int64, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	return p.DecodeContiguousContext(context.Background(), data, offsets, opts...)
}

// DecodeContiguousContext is DecodeContiguous with a context.
func (p *ExamplePlan) DecodeContiguousContext(ctx context.Context, data []byte, offsets []int64, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	if len(offsets) == 0 {
		return nil, fmt.Errorf("%w: offsets are empty (want one more than the number of records)", ErrInput)
	}
	o, err := engineOptions(opts)
	if err != nil {
		return nil, err
	}
	out, block, err := p.native.DecodeContiguous(ctx, data, offsets, p.dtypes, o)
	if err != nil {
		return nil, p.wrap(ctx, err)
	}
	return p.finish(out, block, len(offsets)-1, offsets[len(offsets)-1]-offsets[0])
}

// finish builds the StructTensor of a decode whose outputs are stretches
// of block, and remembers block for Recycle.
func (p *ExamplePlan) finish(out []native.SlotOutput, block []byte, nrows int, inputBytes int64) (*structtensor.StructTensor, error) {
	room := p.recent.room(func() *unchecked.Room {
		c := p.slabCounts
		return unchecked.Slab(c.ragged, c.vectors, c.strings, 1, len(p.outputs))
	})
	st, err := p.build(room, out, nrows, inputBytes)
	if err != nil {
		p.native.Recycle(block) // nothing holds it
		p.recent.spareRoom(room)
		return nil, err
	}
	p.recent.add(st, [][]byte{block}, room)
	return st, nil
}

// Recycle hands the memory of st, a StructTensor one of the plan's recent
// decodes returned, back to the plan, for a later decode to write its
// output into instead of allocating new memory, and its values for the
// next batch's; as Plan.Recycle, whose rules it follows: after the call
// st, every value and every slice taken from it must no longer be used.
// A StructTensor the plan did not return lately (it keeps the last few),
// or one already recycled, is ignored.
func (p *ExamplePlan) Recycle(st *structtensor.StructTensor) {
	if st == nil {
		return
	}
	blocks, room := p.recent.take(st)
	if len(blocks) == 1 {
		p.native.Recycle(blocks[0])
	}
	p.recent.spareRoom(room)
}

// wrap turns an engine error into this package's errors.
func (p *ExamplePlan) wrap(ctx context.Context, err error) error {
	what := "tensorflow.Example"
	if p.sequence {
		what = "tensorflow.SequenceExample"
	}
	return engineError(ctx, err, what, func(m string) string { return m })
}

// values returns a slot's values as a tensor of shape (nil: a vector),
// a vector placed in room.
func (p *ExamplePlan) values(room *unchecked.Room, o *native.SlotOutput, dtype structtensor.DType, shape structtensor.Shape) (*structtensor.Tensor, error) {
	if dtype == structtensor.String {
		// The engine writes offsets from 0, never decreasing, ending at
		// len(Bytes): no second pass over them (package unchecked says
		// why).
		if len(o.Offsets) == 0 || o.Offsets[0] != 0 || o.Offsets[len(o.Offsets)-1] != int64(len(o.Bytes)) {
			return nil, fmt.Errorf("%d string offsets do not span its %d bytes", len(o.Offsets), len(o.Bytes))
		}
		// The engine marked the strings' UTF-8 as it decoded them.
		t := unchecked.StringTensor(room, o.Bytes, o.Offsets, o.UTF8).(*structtensor.Tensor)
		if shape == nil {
			return t, nil
		}
		return t.Reshape(shape)
	}
	if shape == nil {
		return unchecked.Column(room, o.Values, nil).(*structtensor.Tensor), nil
	}
	return structtensor.NewTensor(shape, o.Values)
}

// engineRagged is values partitioned by the engine's row splits
// (outermost first), which start at 0 and never decrease as the engine
// writes them: no second pass over them (package unchecked says why).
func engineRagged(values *structtensor.Tensor, rowSplits ...[]int64) (*structtensor.Ragged, error) {
	parts := make([]*structtensor.RowPartition, len(rowSplits))
	for i, s := range rowSplits {
		if len(s) == 0 || s[0] != 0 {
			return nil, fmt.Errorf("partition %d: %d row splits, not starting at 0", i, len(s))
		}
		parts[i] = unchecked.RowSplits(s).(*structtensor.RowPartition)
	}
	return structtensor.NewRagged(values, parts...)
}

// build makes the StructTensor of a decode of nrows records, inputBytes
// long in all, from the engine's slot outputs, its values placed in room
// (finish).
func (p *ExamplePlan) build(room *unchecked.Room, outs []native.SlotOutput, nrows int, inputBytes int64) (*structtensor.StructTensor, error) {
	fields := unchecked.SlabFields(room).([]structtensor.Field)[:0]
	var first *RecordError // the error of the first record that fails
	for _, o := range p.outputs {
		v, err := p.buildOutput(room, outs, o, nrows, inputBytes)
		var re *RecordError
		if errors.As(err, &re) {
			if first == nil || re.Record < first.Record {
				first = re
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		fields = append(fields, structtensor.Field{Name: o.name, Value: v})
	}
	if first != nil {
		return nil, first
	}
	// Every output has nrows rows by construction: the struct is built
	// over the plan's index without checking them again (package
	// unchecked). Building the index and checking every field took a
	// tenth of a one-record batch of 37 features and a fifth of a batch
	// of 16 (28-29 against 31-33 us, 38-40 against 50; Intel Xeon model
	// 167).
	return unchecked.Struct(room, nrows, nil, fields, p.index).(*structtensor.StructTensor), nil
}

// slabCounts are the values of each kind a batch's StructTensor places in
// its slab (buildOutput's vectors and one-level ragged values).
type slabCounts struct{ ragged, vectors, strings int }

// add counts the values buildOutput places in the slab for o, taking
// its cases in its order.
func (c *slabCounts) add(o exampleOutput) {
	f := o.feature
	str := f.DType == structtensor.String
	vector := func() {
		if str {
			c.strings++
		} else {
			c.vectors++
		}
	}
	switch {
	case f.Kind == FixedLen && len(f.Shape) == 0:
		vector()
	case f.Kind == FixedLen, f.Kind == FixedLenSequence:
		if str { // reshaped, the numeric ones built alone
			c.strings++
		}
	case o.section == sectionFeatureLists, len(o.parts) > 0:
		vector()
	default:
		c.ragged++
		if str {
			c.strings++
		}
	}
}

func (p *ExamplePlan) buildOutput(room *unchecked.Room, outs []native.SlotOutput, o exampleOutput, nrows int, inputBytes int64) (structtensor.Value, error) {
	f := o.feature
	so := &outs[o.slot]
	internal := func(err error) error { return fmt.Errorf("decode: internal: feature %q: %w", o.name, err) }
	count := p.slots[o.slot].count
	nvals := so.Len()
	switch {
	case f.Kind == FixedLen:
		var shape structtensor.Shape // a vector of nrows
		if len(f.Shape) > 0 {
			shape = append(structtensor.Shape{nrows}, f.Shape...)
		}
		t, err := p.values(room, so, f.DType, shape)
		if err != nil {
			return nil, internal(err)
		}
		if t.NumRows() != nrows {
			return nil, internal(fmt.Errorf("%d rows for %d records", t.NumRows(), nrows))
		}
		return t, nil
	case f.Kind == FixedLenSequence:
		// Steps of count values: in a feature list the outer splits count
		// steps; in a tf.Example they count values, a multiple of count.
		splits := so.Splits0
		if o.section == sectionFeatures {
			splits = make([]int64, len(so.Splits0))
			for i, s := range so.Splits0 {
				splits[i] = s / int64(count)
			}
		}
		t, err := p.values(room, so, f.DType, append(structtensor.Shape{nvals / count}, f.Shape...))
		if err != nil {
			return nil, internal(err)
		}
		r, err := engineRagged(t, splits)
		if err != nil {
			return nil, internal(err)
		}
		return r, nil
	case o.section == sectionFeatureLists:
		t, err := p.values(room, so, f.DType, nil)
		if err != nil {
			return nil, internal(err)
		}
		r, err := engineRagged(t, so.Splits0, so.Splits1)
		if err != nil {
			return nil, internal(err)
		}
		return r, nil
	}
	if len(o.parts) == 0 {
		// A value per record of a list: its values and their one
		// partition in one place of the slab, the splits checked in O(1)
		// (the engine writes them from 0, never decreasing).
		splits := so.Splits0
		if len(splits) != nrows+1 || splits[0] != 0 || splits[nrows] != int64(nvals) {
			return nil, internal(fmt.Errorf("%d row splits for %d records of %d values", len(splits), nrows, nvals))
		}
		var vals any = so.Values
		if f.DType == structtensor.String {
			t, err := p.values(room, so, f.DType, nil)
			if err != nil {
				return nil, internal(err)
			}
			vals = t
		}
		return unchecked.Column(room, vals, splits).(structtensor.Value), nil
	}
	t, err := p.values(room, so, f.DType, nil)
	if err != nil {
		return nil, internal(err)
	}
	return p.buildRagged(outs, o, t, nrows, inputBytes)
}

// buildRagged applies a Ragged feature's partitions record by record,
// innermost first (as tf.io.RaggedFeature does on each example), and
// joins the records: the batch's partition at each level is the
// concatenation of the records' row lengths there. The first record
// that its partitions do not fit is the error.
func (p *ExamplePlan) buildRagged(outs []native.SlotOutput, o exampleOutput, values *structtensor.Tensor, nrows int, inputBytes int64) (structtensor.Value, error) {
	f := o.feature
	rowBudget := inputBytes
	vs := outs[o.slot].Splits0
	lengths := make([][]int64, len(f.Partitions)+1) // each level's row lengths
	lengths[0] = make([]int64, nrows)
	uniformRows := make([]int64, len(f.Partitions)+1)
	for r := range nrows {
		// items is the number of items record r has at the level being
		// partitioned (values first, then rows of the level below).
		items := vs[r+1] - vs[r]
		for j := len(f.Partitions) - 1; j >= 0; j-- {
			part := f.Partitions[j]
			bad := func(format string, args ...any) error {
				return &RecordError{Record: int64(r), Offset: -1, Err: ErrFeatureShape,
					Detail: fmt.Sprintf("feature %q, partition %d (%v %q): ", o.name, j, part.Kind, part.Key) + fmt.Sprintf(format, args...)}
			}
			if part.Kind == UniformRowLength {
				if items%int64(part.Length) != 0 {
					return nil, bad("%d items are not a multiple of %d", items, part.Length)
				}
				items /= int64(part.Length)
				uniformRows[j+1] += items
				continue
			}
			ps := &outs[o.parts[j]]
			pv := ps.Values.([]int64)
			rows, err := recordRowLengths(part.Kind, pv[ps.Splits0[r]:ps.Splits0[r+1]], items, &lengths[j+1], &rowBudget)
			if err != nil {
				return nil, bad("%s", err)
			}
			items = rows
		}
		lengths[0][r] = items
	}
	levels := make([]*structtensor.RowPartition, len(f.Partitions)+1)
	for j := range levels {
		var pt *structtensor.RowPartition
		var err error
		if j > 0 && f.Partitions[j-1].Kind == UniformRowLength {
			pt, err = structtensor.NewUniformPartition(int(uniformRows[j]), f.Partitions[j-1].Length)
		} else {
			pt, err = structtensor.NewRowLengths(lengths[j])
		}
		if err != nil {
			return nil, fmt.Errorf("decode: internal: feature %q: %w", o.name, err)
		}
		levels[j] = pt
	}
	r, err := structtensor.NewRagged(values, levels...)
	if err != nil {
		return nil, fmt.Errorf("decode: internal: feature %q: %w", o.name, err)
	}
	return r, nil
}

// recordRowLengths appends to lengths the row lengths one record's
// partition list l (of kind k) gives the record's items, and returns the
// number of rows. A list that does not partition exactly the items is an
// error, as tf.io.parse_example finds it on a batch of that record alone
// (on a larger batch TensorFlow checks only the batch's totals).
//
// Value row ids may skip rows (empty ones), which cost memory no input
// byte stands for: budget bounds the rows a batch's skips may add (by the
// batch's bytes), and is decreased by them.
func recordRowLengths(k PartitionKind, l []int64, items int64, lengths *[]int64, budget *int64) (rows int64, err error) {
	var sum int64
	switch k {
	case RowLengths:
		for _, x := range l {
			if x < 0 {
				return 0, fmt.Errorf("negative row length %d", x)
			}
			sum += x
		}
		*lengths = append(*lengths, l...)
		rows = int64(len(l))
	case RowSplits, RowLimits:
		if k == RowSplits {
			if len(l) == 0 {
				l = []int64{0} // an absent or empty list: no rows
			}
			if l[0] != 0 {
				return 0, fmt.Errorf("row splits %v do not start at 0", l)
			}
			l = l[1:]
		}
		var prev int64
		for _, x := range l {
			if x < prev {
				return 0, fmt.Errorf("%v %v decrease", k, l)
			}
			*lengths = append(*lengths, x-prev)
			prev = x
		}
		sum, rows = prev, int64(len(l))
	case RowStarts:
		if len(l) == 0 {
			break // no rows
		}
		if l[0] != 0 {
			return 0, fmt.Errorf("row starts %v do not start at 0", l)
		}
		for i := 1; i < len(l); i++ {
			if l[i] < l[i-1] {
				return 0, fmt.Errorf("row starts %v decrease", l)
			}
			*lengths = append(*lengths, l[i]-l[i-1])
		}
		last := l[len(l)-1]
		if last > items {
			return 0, fmt.Errorf("row start %d is past the record's %d items", last, items)
		}
		*lengths = append(*lengths, items-last)
		sum, rows = items, int64(len(l))
	case ValueRowIds:
		if len(l) > 0 && l[0] < 0 {
			return 0, fmt.Errorf("negative value row id %d", l[0])
		}
		var row int64 // the row the next id's items go to
		start := len(*lengths)
		for i, x := range l {
			if i > 0 && x < l[i-1] {
				return 0, fmt.Errorf("value row ids %v decrease", l)
			}
			if x >= row {
				if x-row+1 > *budget {
					return 0, fmt.Errorf("value row id %d makes more rows than the batch has bytes", x)
				}
				*budget -= x - row + 1
				*lengths = append(*lengths, make([]int64, x-row+1)...)
				row = x + 1
			}
			(*lengths)[start+int(x)]++
		}
		sum, rows = int64(len(l)), row
	}
	if sum != items {
		return 0, fmt.Errorf("partitions %d items, the record has %d", sum, items)
	}
	return rows, nil
}
