package decode

import (
	"encoding/binary"
)

// Output layouts of a feature plan's fields (part of the layout's byte
// form, read by the TensorFlow op's kernel in package cops).
const (
	layoutDense  = 0 // FixedLen: values [B, shape...]
	layoutRagged = 1 // VarLen or Ragged of a tf.Example or context: the slot's splits, then the partitions
	layoutLists  = 2 // VarLen or Ragged feature list: splits per record and per step
	layoutStride = 3 // FixedLenSequence of a tf.Example or context: values per record / count
	layoutSteps  = 4 // FixedLenSequence feature list: steps per record
)

// exampleLayoutVersion is the version of the byte form written by
// MarshalLayout.
const exampleLayoutVersion = 1

// MarshalLayout returns the byte form ("STEL") of how the plan's output
// fields are assembled from its slots, in Spec's field order. Package
// cops's decode op carries it as an attribute beside the plan
// (MarshalBinary), so that its kernel returns the components of Spec()
// (tfbridge's order) without calling back into Go:
//
//	"STEL" version fields (name layout slot count rank dims... partitions (kind slot|length)...)...
//
// every number a uvarint and every name a uvarint length and bytes. The
// layout is one of dense (FixedLen), ragged (a list of a tf.Example or a
// context, then the Ragged feature's partitions outermost first, each its
// PartitionKind and the row length of a UniformRowLength one, the slot of
// its key for the others), lists (a feature list of lists), stride
// (FixedLenSequence of a tf.Example or context: count values per step) or
// steps (a FixedLenSequence feature list); count is the number of values
// of one record (dense) or step, dims the shape of a record or step.
func (p *ExamplePlan) MarshalLayout() []byte {
	b := []byte("STEL")
	b = binary.AppendUvarint(b, exampleLayoutVersion)
	b = binary.AppendUvarint(b, uint64(len(p.outputs)))
	for _, o := range p.outputs {
		f := o.feature
		layout := layoutRagged
		switch {
		case f.Kind == FixedLen:
			layout = layoutDense
		case f.Kind == FixedLenSequence && o.section == sectionFeatures:
			layout = layoutStride
		case f.Kind == FixedLenSequence:
			layout = layoutSteps
		case o.section == sectionFeatureLists:
			layout = layoutLists
		}
		b = appendString(b, []byte(o.name))
		b = binary.AppendUvarint(b, uint64(layout))
		b = binary.AppendUvarint(b, uint64(o.slot))
		b = binary.AppendUvarint(b, uint64(p.slots[o.slot].count))
		b = binary.AppendUvarint(b, uint64(len(f.Shape)))
		for _, d := range f.Shape {
			b = binary.AppendUvarint(b, uint64(d))
		}
		b = binary.AppendUvarint(b, uint64(len(o.parts)))
		for j, part := range f.Partitions {
			b = binary.AppendUvarint(b, uint64(part.Kind))
			if part.Kind == UniformRowLength {
				b = binary.AppendUvarint(b, uint64(part.Length))
			} else {
				b = binary.AppendUvarint(b, uint64(o.parts[j]))
			}
		}
	}
	return b
}

// IsSequence reports whether the plan decodes tf.SequenceExample records.
func (p *ExamplePlan) IsSequence() bool { return p.sequence }

// ExampleSpec returns the spec the plan was compiled from (its features and
// sequence features), for an exporter that records it.
func (p *ExamplePlan) ExampleSpec() *ExampleSpec {
	s := &ExampleSpec{}
	for _, o := range p.outputs {
		m := &s.Features
		if o.section == sectionFeatureLists {
			m = &s.SequenceFeatures
		}
		if *m == nil {
			*m = map[string]Feature{}
		}
		(*m)[o.name] = o.feature
	}
	return s
}
