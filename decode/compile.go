package decode

import (
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Field modes: how a field's values map to the output (the mapping table
// of decode's package doc). The numbers are part of the plan's byte form.
const (
	modeRequired = 0 // scalar per message; missing is an error (or the default)
	modeImplicit = 1 // scalar per message; missing is the default
	modeOptional = 2 // list of 0 or 1 values
	modeRepeated = 3 // list
)

// DefaultMaxDepth is the default limit on message nesting in a record.
const DefaultMaxDepth = 100

// CompileOptions configure Compile. The zero value is the default.
type CompileOptions struct {
	// MaxDepth limits how deeply messages may nest in a record (the root
	// is depth 0); deeper records are rejected with ErrDepth. 0 means
	// DefaultMaxDepth; at most 10000.
	MaxDepth int
	// MaxProjectionDepth limits how many message levels the default
	// projection (every field) descends below the root or below a path
	// that ends at a message; 0 means no limit beyond cutting recursion.
	MaxProjectionDepth int
	// FillRequired makes a missing proto2 required field decode as its
	// default value instead of failing with ErrRequired.
	FillRequired bool
	// AcceptInvalidUTF8 turns off the UTF-8 check of proto3 string fields.
	AcceptInvalidUTF8 bool
}

// Compile compiles a decoding plan for records of the named message with
// the default options. See CompileOptions.Compile.
func Compile(d *Descriptors, message string, paths ...string) (*Plan, error) {
	return CompileOptions{}.Compile(d, message, paths...)
}

// CompileMessage compiles a decoding plan for records of m's type (m may
// be a nil pointer of a generated message type, or a dynamicpb message)
// with the default options. See CompileOptions.CompileDescriptor.
func CompileMessage(m proto.Message, paths ...string) (*Plan, error) {
	return CompileOptions{}.CompileMessage(m, paths...)
}

// CompileDescriptor compiles a decoding plan for records of message type
// md with the default options. See CompileOptions.CompileDescriptor.
func CompileDescriptor(md protoreflect.MessageDescriptor, paths ...string) (*Plan, error) {
	return CompileOptions{}.CompileDescriptor(md, paths...)
}

// CompileMessage is CompileDescriptor for m's message type.
func (o CompileOptions) CompileMessage(m proto.Message, paths ...string) (*Plan, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil message", ErrInput)
	}
	return o.CompileDescriptor(m.ProtoReflect().Descriptor(), paths...)
}

// CompileDescriptor compiles a decoding plan for records of message type
// md, with the descriptors of md's file and its imports (FromMessage):
// Compile without building a Descriptors first. Extensions declared in
// files md's file does not import are not seen.
func (o CompileOptions) CompileDescriptor(md protoreflect.MessageDescriptor, paths ...string) (*Plan, error) {
	if md == nil {
		return nil, fmt.Errorf("%w: nil message descriptor", ErrInput)
	}
	d, err := FromMessage(md)
	if err != nil {
		return nil, err
	}
	return o.Compile(d, string(md.FullName()), paths...)
}

// Compile compiles a decoding plan for records of the named message,
// projected on paths in struct2tensor's syntax: field names joined by dots
// ("steps.tools.name"), an extension as its parenthesised full name
// ("(pkg.ext)"), and a map field's "key" and "value" children. A path that
// ends at a message selects every field below it. No paths selects every
// field of the message, cutting recursion where a message type repeats on
// its own path.
func (o CompileOptions) Compile(d *Descriptors, message string, paths ...string) (*Plan, error) {
	md, err := d.Message(message)
	if err != nil {
		return nil, err
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxDepth < 1 || o.MaxDepth > 10000 {
		return nil, fmt.Errorf("%w: MaxDepth %d out of range 1..10000", ErrInput, o.MaxDepth)
	}
	root := &selection{}
	if len(paths) == 0 {
		root.all = true
	}
	for _, p := range paths {
		if err := root.add(d, md, p); err != nil {
			return nil, err
		}
	}
	c := &compiler{d: d, opts: o, plan: &Plan{message: string(md.FullName()), maxDepth: o.MaxDepth, descs: d, recent: new(recentOutputs)}}
	if o.FillRequired {
		c.plan.flags |= flagFillRequired
	}
	if o.AcceptInvalidUTF8 {
		c.plan.flags |= flagAcceptInvalidUTF8
	}
	if _, err := c.addNode(md, "", root, []protoreflect.FullName{md.FullName()}, 0); err != nil {
		return nil, err
	}
	return c.plan.finish()
}

// selection is the projection tree built from the paths.
type selection struct {
	all      bool // every field below (the default projection)
	children map[protoreflect.FieldDescriptor]*selection
}

func (s *selection) add(d *Descriptors, md protoreflect.MessageDescriptor, path string) error {
	steps, err := splitPath(path)
	if err != nil {
		return err
	}
	cur := s
	for i, step := range steps {
		if md == nil {
			return fmt.Errorf("%w: path %q: %q is not a message field, cannot select %q", ErrPath, path, strings.Join(steps[:i], "."), step)
		}
		fd := lookupStep(d, md, step)
		if fd == nil {
			return fmt.Errorf("%w: path %q: no field %q in %s (fields: %s)", ErrPath, path, step, md.FullName(), strings.Join(fieldNames(d, md), ", "))
		}
		if cur.children == nil {
			cur.children = map[protoreflect.FieldDescriptor]*selection{}
		}
		next := cur.children[fd]
		if next == nil {
			next = &selection{}
			cur.children[fd] = next
		}
		cur = next
		md = fd.Message()
	}
	cur.all = true
	return nil
}

// splitPath splits "a.(pkg.ext).b" into its steps.
func splitPath(path string) ([]string, error) {
	var steps []string
	for i := 0; i < len(path); {
		if path[i] == '(' {
			j := strings.IndexByte(path[i:], ')')
			if j < 0 {
				return nil, fmt.Errorf("%w: path %q: unclosed '('", ErrPath, path)
			}
			steps = append(steps, path[i:i+j+1])
			i += j + 1
		} else {
			j := strings.IndexByte(path[i:], '.')
			if j < 0 {
				j = len(path) - i
			}
			steps = append(steps, path[i:i+j])
			i += j
		}
		if i < len(path) {
			if path[i] != '.' {
				return nil, fmt.Errorf("%w: path %q: expected '.' at byte %d", ErrPath, path, i)
			}
			i++
			if i == len(path) {
				return nil, fmt.Errorf("%w: path %q ends with '.'", ErrPath, path)
			}
		}
	}
	for _, s := range steps {
		if s == "" || s == "()" {
			return nil, fmt.Errorf("%w: path %q has an empty step", ErrPath, path)
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("%w: empty path", ErrPath)
	}
	return steps, nil
}

func lookupStep(d *Descriptors, md protoreflect.MessageDescriptor, step string) protoreflect.FieldDescriptor {
	if strings.HasPrefix(step, "(") {
		name := protoreflect.FullName(strings.TrimSuffix(strings.TrimPrefix(step, "("), ")"))
		for _, x := range d.Extensions(md) {
			if x.FullName() == name {
				return x
			}
		}
		return nil
	}
	if fd := md.Fields().ByName(protoreflect.Name(step)); fd != nil {
		return fd
	}
	// Groups are also known by their type name (OptGroup for optgroup).
	if fd := md.Fields().ByTextName(step); fd != nil {
		return fd
	}
	return nil
}

func fieldNames(d *Descriptors, md protoreflect.MessageDescriptor) []string {
	var names []string
	fs := md.Fields()
	for i := 0; i < fs.Len(); i++ {
		names = append(names, string(fs.Get(i).Name()))
	}
	for _, x := range d.Extensions(md) {
		names = append(names, "("+string(x.FullName())+")")
	}
	return names
}

// OutputName returns the StructTensor field name of a protobuf field: its
// name, or for an extension its full name with dots as underscores (a
// field name may not contain dots or parentheses).
func OutputName(fd protoreflect.FieldDescriptor) string {
	if fd.IsExtension() {
		return strings.ReplaceAll(string(fd.FullName()), ".", "_")
	}
	return string(fd.Name())
}

// fieldMode applies the mapping table.
func fieldMode(fd protoreflect.FieldDescriptor) uint8 {
	switch {
	case fd.ContainingMessage().IsMapEntry():
		// A map entry always has its key and value (absent ones read as
		// defaults), so both are scalars of the entry.
		return modeImplicit
	case fd.Cardinality() == protoreflect.Required:
		return modeRequired
	case fd.IsList() || fd.IsMap():
		return modeRepeated
	case fd.HasPresence():
		return modeOptional
	}
	return modeImplicit
}

// enforceUTF8 reports whether protobuf requires valid UTF-8 in the string
// field fd: always in proto3, never in proto2, and in editions unless a
// utf8_validation feature on the field, its messages or its file says NONE.
func enforceUTF8(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.StringKind {
		return false
	}
	switch fd.ParentFile().Syntax() {
	case protoreflect.Proto3:
		return true
	case protoreflect.Proto2:
		return false
	}
	var feature func(d protoreflect.Descriptor) *descriptorpb.FeatureSet
	feature = func(d protoreflect.Descriptor) *descriptorpb.FeatureSet {
		switch o := d.Options().(type) {
		case *descriptorpb.FieldOptions:
			return o.GetFeatures()
		case *descriptorpb.MessageOptions:
			return o.GetFeatures()
		case *descriptorpb.FileOptions:
			return o.GetFeatures()
		}
		return nil
	}
	for d := protoreflect.Descriptor(fd); d != nil; d = d.Parent() {
		if fs := feature(d); fs != nil && fs.Utf8Validation != nil {
			return fs.GetUtf8Validation() != descriptorpb.FeatureSet_NONE
		}
	}
	return true
}

func defaultBits(fd protoreflect.FieldDescriptor) (uint64, []byte) {
	if fd.ContainingMessage().IsMapEntry() {
		if fd.Kind() == protoreflect.EnumKind {
			// A map value enum defaults to its first value, like any
			// absent enum field.
			return uint64(uint32(int32(fd.Enum().Values().Get(0).Number()))), nil
		}
		return 0, nil
	}
	v := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if v.Bool() {
			return 1, nil
		}
		return 0, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return uint64(uint32(int32(v.Int()))), nil
	case protoreflect.EnumKind:
		return uint64(uint32(int32(v.Enum()))), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return uint64(v.Int()), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return v.Uint(), nil
	case protoreflect.FloatKind:
		return uint64(math.Float32bits(float32(v.Float()))), nil
	case protoreflect.DoubleKind:
		return math.Float64bits(v.Float()), nil
	case protoreflect.StringKind:
		return 0, []byte(v.String())
	case protoreflect.BytesKind:
		return 0, append([]byte(nil), v.Bytes()...)
	}
	return 0, nil
}

type compiler struct {
	d    *Descriptors
	opts CompileOptions
	plan *Plan
}

// addNode adds the node for one message at path and returns its index.
// ancestors are the message types on the path (for cutting recursion);
// depth counts levels below the last explicitly selected message.
func (c *compiler) addNode(md protoreflect.MessageDescriptor, path string, sel *selection, ancestors []protoreflect.FullName, depth int) (int, error) {
	idx := len(c.plan.nodes)
	n := &planNode{path: path, message: string(md.FullName()), desc: md}
	c.plan.nodes = append(c.plan.nodes, n)

	var fds []protoreflect.FieldDescriptor
	fs := md.Fields()
	for i := 0; i < fs.Len(); i++ {
		fds = append(fds, fs.Get(i))
	}
	fds = append(fds, c.d.Extensions(md)...)
	oneofs := map[protoreflect.FullName]int{}
	names := map[string]bool{}
	for _, fd := range fds {
		var sub *selection
		explicit := false
		if sel.children != nil {
			sub = sel.children[fd]
			explicit = sub != nil
		}
		if !explicit && !sel.all {
			continue
		}
		childDepth := depth + 1
		if explicit {
			childDepth = 0 // the depth limit counts below explicit selections
		}
		if fd.Message() != nil && !explicit {
			// Default projection: cut recursion and honour the depth limit.
			if contains(ancestors, fd.Message().FullName()) {
				continue
			}
			if c.opts.MaxProjectionDepth > 0 && childDepth > c.opts.MaxProjectionDepth {
				continue
			}
		}
		if sub == nil {
			sub = &selection{all: true}
		}
		f := &planField{
			name:   OutputName(fd),
			number: int32(fd.Number()),
			kind:   fd.Kind(),
			mode:   fieldMode(fd),
			utf8:   enforceUTF8(fd),
		}
		if !structtensor.ValidFieldName(f.name) {
			return 0, fmt.Errorf("%w: field %s: %q is not a valid StructTensor field name", ErrPath, fd.FullName(), f.name)
		}
		if names[f.name] {
			return 0, fmt.Errorf("%w: field %s: output name %q used twice in %s", ErrPath, fd.FullName(), f.name, md.FullName())
		}
		names[f.name] = true
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			k, ok := oneofs[od.FullName()]
			if !ok {
				k = len(oneofs) + 1
				oneofs[od.FullName()] = k
			}
			f.oneof = k
		}
		if f.mode >= modeOptional {
			f.partition = c.plan.nparts
			c.plan.nparts++
		}
		n.fields = append(n.fields, f)
		childPath := f.name
		if path != "" {
			childPath = path + "." + f.name
		}
		if fd.Message() != nil {
			anc := append(append([]protoreflect.FullName(nil), ancestors...), fd.Message().FullName())
			child, err := c.addNode(fd.Message(), childPath, sub, anc, childDepth)
			if err != nil {
				return 0, err
			}
			f.child = child
		} else {
			f.column = len(c.plan.columns)
			c.plan.columns = append(c.plan.columns, kindDType(fd.Kind()))
			if f.mode <= modeImplicit {
				f.defBits, f.defStr = defaultBits(fd)
			}
		}
	}
	return idx, nil
}

func contains(names []protoreflect.FullName, n protoreflect.FullName) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// finish serialises the plan and hands it to the engine.
func (p *Plan) finish() (*Plan, error) {
	p.bytes = p.marshal()
	np, err := native.NewPlan(p.bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlan, err)
	}
	p.native = np
	if err := p.checkEngine(); err != nil {
		return nil, err
	}
	return p, nil
}
