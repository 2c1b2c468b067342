package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/decode"
)

// descriptorSetPath is the test schemas' FileDescriptorSet, relative to
// the module root; go run ./decode/internal/gendesc writes it.
const descriptorSetPath = "testdata/proto/testdata.pb"

// schemas holds the parsed test schemas.
type schemas struct {
	set   *descriptorpb.FileDescriptorSet
	files *protoregistry.Files
	raw   []byte // the serialized FileDescriptorSet
}

func loadSchemas(path string) (*schemas, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the test schemas: %w (run from the module root or pass -descriptors)", err)
	}
	set := new(descriptorpb.FileDescriptorSet)
	if err := proto.Unmarshal(raw, set); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("building descriptors from %s: %w", path, err)
	}
	return &schemas{set: set, files: files, raw: raw}, nil
}

func (s *schemas) message(name string) (protoreflect.MessageDescriptor, error) {
	d, err := s.files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a message", name)
	}
	return md, nil
}

// findModuleRoot walks up from the working directory to the directory
// holding go.mod, so the harness and its test find testdata/ from anywhere
// inside the module.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// datasetSpec describes one benchmark dataset: the message type and a
// generator of one random record.
type datasetSpec struct {
	name    string
	message string
	about   string
	gen     func(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message
}

var datasetSpecs = []datasetSpec{
	{"flat", "structtensor.testdata.flat.Flat",
		"100 packed repeated int64 fields x 100 values (struct2tensor's benchmark shape); varints of 1-5 bytes",
		genFlat},
	{"recipe", "structtensor.testdata.recipe.Recipe",
		"Recipe -> Ingredient/UserRating/Step -> Tool: three levels of nested messages with strings",
		genRecipe},
	{"tfexample", "structtensor.testdata.example.Example",
		"tf.Example-compatible, 50 features (int64, float and bytes lists)",
		func(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message { return g.example(md, 50) }},
	{"elwc", "structtensor.testdata.example.ExampleListWithContext",
		"ExampleListWithContext-compatible: 20 examples of 10 features per list, plus a 10-feature context",
		genELWC},
	{"widesparse", "structtensor.testdata.wide.WideSparse",
		"proto3, 200 optional scalars (int64, double, string, bool), 5-15 set per record (about 90 bytes)",
		genWideSparse},
	{"widerepeated", "structtensor.testdata.wide.WideRepeated",
		"proto2, 200 repeated scalars (int64, double, string, bool, unpacked), 3-8 non-empty per record with 1-4 values",
		genWideRepeated},
	{"sparsenested", "structtensor.testdata.wide.SparseNested",
		"proto3, 30 optional submessages of 20 optional scalars and a repeated one: 1-3 set (0-2 items), 2-6 scalars each",
		genSparseNested},
}

func lookupDataset(name string) (datasetSpec, bool) {
	for _, d := range datasetSpecs {
		if d.name == name {
			return d, true
		}
	}
	return datasetSpec{}, false
}

// dataset is a generated dataset: its serialized records in one buffer
// (the layout decoders read) and what it needs to be decoded.
type dataset struct {
	name    string
	message protoreflect.MessageDescriptor
	paths   []string // every leaf path, struct2tensor syntax, declaration order (example datasets: output fields)
	data    []byte   // records, back to back
	offsets []int64  // len(records)+1

	// features is the feature spec of a dataset of tf.Examples (or
	// SequenceExamples, with sequence) decoded by feature, specJSON its
	// JSON form; nil for a protobuf dataset (then message is set).
	features *decode.ExampleSpec
	specJSON []byte
	sequence bool
}

func (d *dataset) numRecords() int { return len(d.offsets) - 1 }
func (d *dataset) bytes() int64    { return d.offsets[len(d.offsets)-1] }
func (d *dataset) records() [][]byte {
	out := make([][]byte, d.numRecords())
	for i := range out {
		out[i] = d.data[d.offsets[i]:d.offsets[i+1]:d.offsets[i+1]]
	}
	return out
}

// generate builds records of spec until they hold at least size bytes.
// The same seed always gives the same bytes: records are marshalled
// deterministically from a seeded PCG stream.
func generate(s *schemas, spec datasetSpec, size int64, seed uint64) (*dataset, error) {
	md, err := s.message(spec.message)
	if err != nil {
		return nil, err
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, hashName(spec.name)))}
	d := &dataset{name: spec.name, message: md, paths: leafPaths(md), offsets: []int64{0}}
	opts := proto.MarshalOptions{Deterministic: true}
	for int64(len(d.data)) < size {
		rec, err := opts.MarshalAppend(d.data, spec.gen(g, md).Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: marshalling record %d: %w", spec.name, d.numRecords(), err)
		}
		d.data = rec
		d.offsets = append(d.offsets, int64(len(d.data)))
	}
	return d, nil
}

func hashName(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// leafPaths lists every scalar leaf under md in declaration order, depth
// first, in struct2tensor's dotted syntax, cutting recursion where a
// message type repeats on its own path (the engine's default projection).
// A map field is a repeated entry message with children key and value.
func leafPaths(md protoreflect.MessageDescriptor) []string {
	var out []string
	var walk func(md protoreflect.MessageDescriptor, prefix string, seen map[protoreflect.FullName]bool)
	walk = func(md protoreflect.MessageDescriptor, prefix string, seen map[protoreflect.FullName]bool) {
		seen[md.FullName()] = true
		defer delete(seen, md.FullName())
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			p := prefix + string(fd.Name())
			if m := fd.Message(); m != nil {
				if !seen[m.FullName()] {
					walk(m, p+".", seen)
				}
				continue
			}
			out = append(out, p)
		}
	}
	walk(md, "", map[protoreflect.FullName]bool{})
	return out
}

// gen draws random field values.
type gen struct{ r *rand.Rand }

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

const letters = "abcdefghijklmnopqrstuvwxyz      ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func (g *gen) text(lo, hi int) string {
	b := make([]byte, g.between(lo, hi))
	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}
	return string(b)
}

// varint returns a non-negative value whose varint takes 1 to 5 bytes,
// uniformly, so decoders meet every varint length.
func (g *gen) varint() int64 { return g.r.Int64N(int64(1) << (7 * g.between(1, 5))) }

func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("bench: %s has no field %q (the generator and testdata/proto disagree)", m.Descriptor().FullName(), name))
	}
	return fd
}

func set(m protoreflect.Message, name string, v any) {
	m.Set(field(m, name), protoreflect.ValueOf(v))
}

func list(m protoreflect.Message, name string) protoreflect.List {
	return m.Mutable(field(m, name)).List()
}

// addMessage appends a new element to a repeated message field.
func addMessage(m protoreflect.Message, name string) protoreflect.Message {
	l := list(m, name)
	e := l.NewElement()
	l.Append(e)
	return e.Message()
}

func genFlat(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	for i := 1; i <= 100; i++ {
		l := list(m, fmt.Sprintf("f%d", i))
		for range 100 {
			l.Append(protoreflect.ValueOfInt64(g.varint()))
		}
	}
	return m
}

var units = []string{"g", "kg", "ml", "l", "cup", "tbsp", "tsp", "pinch", ""}

func genRecipe(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	set(m, "title", g.text(15, 60))
	for range g.between(3, 12) {
		ing := addMessage(m, "ingredients")
		set(ing, "name", g.text(4, 20))
		set(ing, "amount", float32(g.r.IntN(1000))/4)
		set(ing, "unit", units[g.r.IntN(len(units))])
	}
	for range g.between(0, 10) {
		r := addMessage(m, "ratings")
		set(r, "user", g.text(6, 12))
		set(r, "rating", int32(g.between(1, 5)))
		emb := list(r, "user_embedding")
		for range 8 {
			emb.Append(protoreflect.ValueOfFloat32(g.r.Float32()*2 - 1))
		}
	}
	for range g.between(2, 10) {
		s := addMessage(m, "steps")
		set(s, "instruction", g.text(30, 120))
		set(s, "minutes", int32(g.between(0, 90)))
		for range g.between(0, 3) {
			t := addMessage(s, "tools")
			set(t, "name", g.text(3, 15))
			if g.r.IntN(2) == 0 {
				set(t, "electric", g.r.IntN(2) == 0)
			}
		}
	}
	set(m, "servings", int32(g.between(1, 12)))
	tags := list(m, "tags")
	for range g.between(0, 5) {
		tags.Append(protoreflect.ValueOfString(g.text(3, 10)))
	}
	return m
}

// example builds an Example with n features named f00, f01, ...: every
// third an int64 list, a float list or a bytes list.
func (g *gen) example(md protoreflect.MessageDescriptor, n int) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	features := m.Mutable(field(m, "features")).Message()
	fmap := features.Mutable(field(features, "feature")).Map()
	for i := range n {
		feat := fmap.NewValue()
		fm := feat.Message()
		var kind string
		switch i % 3 {
		case 0:
			kind = "int64_list"
		case 1:
			kind = "float_list"
		default:
			kind = "bytes_list"
		}
		inner := fm.Mutable(field(fm, kind)).Message()
		vals := list(inner, "value")
		for range g.between(1, 10) {
			switch kind {
			case "int64_list":
				vals.Append(protoreflect.ValueOfInt64(g.varint()))
			case "float_list":
				vals.Append(protoreflect.ValueOfFloat32(g.r.Float32()))
			default:
				vals.Append(protoreflect.ValueOfBytes([]byte(g.text(4, 20))))
			}
			if kind == "bytes_list" && vals.Len() == 3 {
				break
			}
		}
		fmap.Set(protoreflect.ValueOfString(fmt.Sprintf("f%02d", i)).MapKey(), feat)
	}
	return m
}

func genELWC(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	exd := field(m, "context").Message()
	examples := list(m, "examples")
	for range 20 {
		examples.Append(protoreflect.ValueOfMessage(g.example(exd, 10)))
	}
	m.Set(field(m, "context"), protoreflect.ValueOfMessage(g.example(exd, 10)))
	return m
}

// scalarValue draws a value for a field of one of the wide schemas'
// types (int64, double, string, bool).
func (g *gen) scalarValue(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(g.varint())
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.r.Float64() * 100)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(g.text(3, 12))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.r.IntN(2) == 0)
	}
	panic(fmt.Sprintf("bench: no generator for %v", fd.Kind()))
}

// setSome sets between lo and hi distinct scalar fields of m, drawn
// uniformly among its fields numbered 1..n.
func (g *gen) setSome(m protoreflect.Message, lo, hi, n int) {
	fields := m.Descriptor().Fields()
	for _, i := range g.r.Perm(n)[:g.between(lo, hi)] {
		fd := fields.ByNumber(protoreflect.FieldNumber(i + 1))
		m.Set(fd, g.scalarValue(fd))
	}
}

func genWideSparse(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	g.setSome(m, 5, 15, 200)
	return m
}

func genWideRepeated(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	fields := md.Fields()
	for _, i := range g.r.Perm(200)[:g.between(3, 8)] {
		fd := fields.ByNumber(protoreflect.FieldNumber(i + 1))
		l := m.Mutable(fd).List()
		for range g.between(1, 4) {
			l.Append(g.scalarValue(fd))
		}
	}
	return m
}

func genSparseNested(g *gen, md protoreflect.MessageDescriptor) protoreflect.Message {
	m := dynamicpb.NewMessage(md)
	set(m, "id", g.varint())
	fields := md.Fields()
	for _, i := range g.r.Perm(30)[:g.between(1, 3)] {
		fd := fields.ByName(protoreflect.Name(fmt.Sprintf("s%d", i+1)))
		g.setSome(m.Mutable(fd).Message(), 2, 6, 20)
	}
	for range g.between(0, 2) {
		g.setSome(addMessage(m, "items"), 2, 6, 20)
	}
	return m
}

// datasetNames returns the names of every dataset, in order.
func datasetNames() string {
	var names []string
	for _, d := range datasetSpecs {
		names = append(names, d.name)
	}
	for _, d := range exampleDatasetSpecs {
		names = append(names, d.name)
	}
	return strings.Join(names, ",")
}

// generateNamed generates the dataset called name, of either kind.
func generateNamed(s *schemas, name string, size int64, seed uint64) (*dataset, error) {
	if spec, ok := lookupDataset(name); ok {
		return generate(s, spec, size, seed)
	}
	if spec, ok := lookupExampleDataset(name); ok {
		return generateExamples(spec, size, seed)
	}
	return nil, fmt.Errorf("unknown dataset %q (have %s)", name, datasetNames())
}
