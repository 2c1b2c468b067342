package decode

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/structtensor/structtensor-go/internal/optarg"
	"github.com/structtensor/structtensor-go/internal/unchecked"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// DecodeOptions configure one decode call. The zero value is the default:
// every core, output identical to a serial decode.
//
// Like every configurable call of this module, a decode takes its options
// as one struct whose zero value means the defaults; where most calls need
// none it is a trailing variadic parameter, and at most one may be passed.
type DecodeOptions struct {
	// Threads is the number of threads a decode may use: 1 decodes
	// serially on the calling thread, 0 (or less) uses every core. Small batches are
	// decoded serially whatever the setting; the output is the same either
	// way.
	Threads int
}

// engineOptions returns the engine's options for the at most one opts.
func engineOptions(opts []DecodeOptions) (native.Options, error) {
	o, err := optarg.One(opts, ErrInput)
	return native.Options{Threads: o.Threads}, err
}

// Decode decodes a batch of serialized records into a rank-1 StructTensor
// of shape [len(records)].
func (p *Plan) Decode(records [][]byte, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	return p.DecodeContext(context.Background(), records, opts...)
}

// DecodeContext is Decode with a context: when ctx is done the engine
// stops within a few records and the context's error is returned.
func (p *Plan) DecodeContext(ctx context.Context, records [][]byte, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	o, err := engineOptions(opts)
	if err != nil {
		return nil, err
	}
	res, err := p.native.Decode(ctx, records, o)
	if err != nil {
		return nil, p.wrap(ctx, err)
	}
	defer res.Free()
	return p.build(res)
}

// DecodeContiguous decodes the records data[offsets[i]:offsets[i+1]] for i
// in [0, len(offsets)-1): the layout of an Arrow binary array or of a
// buffer of TFRecord payloads, read in place without copying.
func (p *Plan) DecodeContiguous(data []byte, offsets []int64, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	return p.DecodeContiguousContext(context.Background(), data, offsets, opts...)
}

// DecodeContiguousContext is DecodeContiguous with a context.
func (p *Plan) DecodeContiguousContext(ctx context.Context, data []byte, offsets []int64, opts ...DecodeOptions) (*structtensor.StructTensor, error) {
	if len(offsets) == 0 {
		return nil, fmt.Errorf("%w: offsets are empty (want one more than the number of records)", ErrInput)
	}
	o, err := engineOptions(opts)
	if err != nil {
		return nil, err
	}
	res, err := p.native.DecodeContiguous(ctx, data, offsets, o)
	if err != nil {
		return nil, p.wrap(ctx, err)
	}
	defer res.Free()
	return p.build(res)
}

// wrap turns an engine error into this package's errors, naming a field
// outside the projection from the descriptor.
func (p *Plan) wrap(ctx context.Context, err error) error {
	return engineError(ctx, err, p.message, p.nameUnprojected)
}

// recordSentinels maps the engine's record faults, of both decoders, to
// this package's sentinel errors.
var recordSentinels = map[int]error{
	native.CodeMalformed:      ErrMalformed,
	native.CodeWireType:       ErrWireType,
	native.CodeDepth:          ErrDepth,
	native.CodeUTF8:           ErrUTF8,
	native.CodeRequired:       ErrRequired,
	native.CodeFeatureMissing: ErrFeatureMissing,
	native.CodeFeatureType:    ErrFeatureType,
	native.CodeFeatureShape:   ErrFeatureShape,
}

// engineError turns an error of the engine into this package's errors: a
// record fault becomes a *RecordError whose detail is the engine's message
// (rewritten by detail) and the type of record it was decoded as.
func engineError(ctx context.Context, err error, what string, detail func(string) string) error {
	var ne *native.Error
	if !errors.As(err, &ne) {
		return err
	}
	if sentinel, ok := recordSentinels[ne.Code]; ok {
		return &RecordError{Record: ne.Record, Offset: ne.Offset, Detail: detail(ne.Message) + " of " + what, Err: sentinel}
	}
	switch ne.Code {
	case native.CodeCancelled:
		if ctx.Err() != nil {
			return fmt.Errorf("decode: cancelled at record %d: %w", ne.Record, ctx.Err())
		}
		return fmt.Errorf("decode: cancelled at record %d: %w", ne.Record, context.Canceled)
	case native.CodeArgument:
		return fmt.Errorf("%w: %s", ErrInput, ne.Message)
	case native.CodePlan:
		return fmt.Errorf("%w: %s", ErrPlan, ne.Message)
	default:
		return fmt.Errorf("decode: %s", ne.Message)
	}
}

// unprojectedField matches the engine's name for a field outside the
// projection: the message's path and the field's number.
var unprojectedField = regexp.MustCompile(`at field "([^"#]*)#(\d+)"`)

// nameUnprojected replaces the engine's path#number for a field outside
// the projection (the engine knows only projected fields) by its name,
// from the descriptor the plan was compiled from.
func (p *Plan) nameUnprojected(msg string) string {
	named := false
	out := unprojectedField.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unprojectedField.FindStringSubmatch(m)
		num, err := strconv.Atoi(sub[2])
		if err != nil {
			return m
		}
		for _, n := range p.nodes {
			if n.path != sub[1] || n.desc == nil {
				continue
			}
			fd := n.desc.Fields().ByNumber(protoreflect.FieldNumber(num))
			if fd == nil {
				return fmt.Sprintf("at field number %d of %q (not in the schema)", num, sub[1])
			}
			name := string(fd.Name())
			if sub[1] != "" {
				name = sub[1] + "." + name
			}
			named = true
			return fmt.Sprintf("at field %q (number %d, not projected)", name, num)
		}
		return m
	})
	if named {
		// The engine calls every field it skips unknown.
		out = strings.Replace(out, " in unknown ", " in skipped ", 1)
	}
	return out
}

// build assembles the StructTensor from the engine's columns, which the
// value model's constructors share, and remembers the memory it is made
// of for Recycle.
func (p *Plan) build(res *native.Result) (*structtensor.StructTensor, error) {
	b := p.newBuilder()
	st, err := b.node(res, 0, res.NumRecords(), nil)
	if err != nil {
		p.recent.spareRoom(b.room) // nothing the caller holds is in it
		return nil, err
	}
	p.recent.add(st, res.LentBlocks(), b.room)
	return st, nil
}

// builder builds one batch's StructTensor: its values placed in one slab
// (unchecked.Slab) and every struct's fields in one slice of it.
type builder struct {
	p      *Plan
	room   *unchecked.Room
	fields []structtensor.Field
}

// newBuilder makes room for the values a batch's StructTensor is made
// of: the room of a recycled output (Recycle), or a new slab.
func (p *Plan) newBuilder() *builder {
	room := p.recent.room(p.newSlab)
	return &builder{p: p, room: room, fields: unchecked.SlabFields(room).([]structtensor.Field)}
}

// newSlab makes a slab of the plan's count of values (each node of the
// plan is one struct of the output).
func (p *Plan) newSlab() *unchecked.Room {
	var ragged, vectors, strings, fields int
	for _, n := range p.nodes {
		fields += len(n.fields)
		for _, f := range n.fields {
			if f.isMessage() {
				continue
			}
			if f.mode >= modeOptional {
				ragged++
			} else {
				vectors++
			}
			if p.columns[f.column] == structtensor.String {
				strings++
			}
		}
	}
	return unchecked.Slab(ragged, vectors, strings, len(p.nodes), fields)
}

// node builds node's struct of nrows rows, split by splits when they are
// not nil (its fields then have a row per value of the partition). Each
// value is made by package unchecked in the builder's slab, over the
// node's field index built once per plan: the checks left are the O(1)
// ones the engine's outputs could fail only by a bug.
func (b *builder) node(res *native.Result, node, nrows int, splits []int64) (*structtensor.StructTensor, error) {
	n := b.p.nodes[node]
	index, err := n.fieldIndex()
	if err != nil {
		return nil, err
	}
	rows := nrows
	if splits != nil {
		rows = int(splits[len(splits)-1])
	}
	fields := b.fields[:len(n.fields):len(n.fields)]
	b.fields = b.fields[len(n.fields):]
	for i, f := range n.fields {
		var fsplits []int64
		count := rows
		if f.mode >= modeOptional {
			fsplits, err = res.Splits(f.partition)
			if err != nil {
				return nil, err
			}
			if len(fsplits) != rows+1 {
				return nil, fmt.Errorf("decode: internal: field %q has %d splits for %d rows", f.name, len(fsplits), rows)
			}
			// The engine writes splits from 0, never decreasing: no second
			// pass over them (package unchecked says why).
			if fsplits[0] != 0 {
				return nil, fmt.Errorf("decode: internal: field %q: row splits start at %d", f.name, fsplits[0])
			}
			count = int(fsplits[rows])
		}
		var v structtensor.Value
		if f.isMessage() {
			v, err = b.node(res, f.child, rows, fsplits)
		} else {
			v, err = b.column(res, f, count, fsplits)
		}
		if err != nil {
			return nil, err
		}
		fields[i] = structtensor.Field{Name: f.name, Value: v}
	}
	return unchecked.Struct(b.room, nrows, splits, fields, index).(*structtensor.StructTensor), nil
}

// column builds field f's value: its column of count values, split by
// splits when they are not nil.
func (b *builder) column(res *native.Result, f *planField, count int, splits []int64) (structtensor.Value, error) {
	p := b.p
	dtype := p.columns[f.column]
	var vals any
	if dtype == structtensor.String {
		data, offsets, err := res.Strings(f.column)
		if err != nil {
			return nil, err
		}
		// The engine writes offsets from 0, never decreasing, ending at
		// len(data): no second pass over them.
		if len(offsets) == 0 || offsets[0] != 0 || offsets[len(offsets)-1] != int64(len(data)) {
			return nil, fmt.Errorf("decode: internal: field %q: %d string offsets do not span its %d bytes", f.name, len(offsets), len(data))
		}
		// A string field's strings are text when validated as decoded
		// (proto3), or marked so by the engine as it stored them; else
		// checked here, reading them again.
		text := false
		if f.kind == protoreflect.StringKind {
			valid, known := f.utf8 && p.flags&flagAcceptInvalidUTF8 == 0, true
			if !valid {
				valid, known = res.StringsUTF8(f.column)
			}
			text = valid || (!known && structtensor.ValidUTF8Strings(data, offsets))
		}
		vals = unchecked.StringTensor(b.room, data, offsets, text)
	} else {
		v, err := res.Column(f.column, uint8(dtype))
		if err != nil {
			return nil, err
		}
		vals = v
	}
	v := unchecked.Column(b.room, vals, splits).(structtensor.Value)
	flat, ok := v.(*structtensor.Tensor)
	if !ok {
		flat = v.(*structtensor.Ragged).Values()
	}
	if flat.Len() != count {
		return nil, fmt.Errorf("decode: internal: field %q has %d values, want %d", f.name, flat.Len(), count)
	}
	return v, nil
}
