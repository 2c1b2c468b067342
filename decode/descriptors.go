package decode

import (
	"context"
	"fmt"
	"sort"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Descriptors is a set of protobuf file descriptors: the schemas a Plan is
// compiled from, with an index of the extensions of every message.
type Descriptors struct {
	files      *protoregistry.Files
	extensions map[protoreflect.FullName][]protoreflect.ExtensionDescriptor
}

// LoadDescriptorSet reads a serialized google.protobuf.FileDescriptorSet
// (protoc --descriptor_set_out --include_imports, buf build -o).
func LoadDescriptorSet(b []byte) (*Descriptors, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%w: FileDescriptorSet: %v", ErrDescriptor, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDescriptor, err)
	}
	return newDescriptors(files), nil
}

// ParseProtoFiles parses .proto source files at run time. Each file name
// is resolved against importPaths (like protoc -I), and so are its
// imports; the well-known types are always available.
func ParseProtoFiles(importPaths []string, files ...string) (*Descriptors, error) {
	if len(importPaths) == 0 {
		importPaths = []string{"."}
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths}),
	}
	compiled, err := c.Compile(context.Background(), files...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDescriptor, err)
	}
	reg := new(protoregistry.Files)
	for _, f := range compiled {
		if err := registerWithImports(reg, f); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDescriptor, err)
		}
	}
	return newDescriptors(reg), nil
}

// FromMessage returns the descriptors of md's file and everything it
// imports, for a message compiled into the program (or built with
// dynamicpb). Extensions declared in files md's file does not import are
// not seen; use a FileDescriptorSet that contains them instead.
func FromMessage(md protoreflect.MessageDescriptor) (*Descriptors, error) {
	reg := new(protoregistry.Files)
	if err := registerWithImports(reg, md.ParentFile()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDescriptor, err)
	}
	return newDescriptors(reg), nil
}

// registerWithImports registers f in reg together with every file it
// imports, directly or not, so that reg holds every descriptor f refers
// to. Imports go first; a file already in reg is skipped, so one imported
// by several files is registered once.
func registerWithImports(reg *protoregistry.Files, f protoreflect.FileDescriptor) error {
	if _, err := reg.FindFileByPath(f.Path()); err == nil {
		return nil
	}
	imps := f.Imports()
	for i := 0; i < imps.Len(); i++ {
		if err := registerWithImports(reg, imps.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return reg.RegisterFile(f)
}

func newDescriptors(files *protoregistry.Files) *Descriptors {
	d := &Descriptors{files: files, extensions: map[protoreflect.FullName][]protoreflect.ExtensionDescriptor{}}
	var addExts func(exts protoreflect.ExtensionDescriptors)
	var walk func(msgs protoreflect.MessageDescriptors)
	addExts = func(exts protoreflect.ExtensionDescriptors) {
		for i := 0; i < exts.Len(); i++ {
			x := exts.Get(i)
			d.extensions[x.ContainingMessage().FullName()] = append(d.extensions[x.ContainingMessage().FullName()], x)
		}
	}
	walk = func(msgs protoreflect.MessageDescriptors) {
		for i := 0; i < msgs.Len(); i++ {
			addExts(msgs.Get(i).Extensions())
			walk(msgs.Get(i).Messages())
		}
	}
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		addExts(f.Extensions())
		walk(f.Messages())
		return true
	})
	for _, xs := range d.extensions {
		sort.Slice(xs, func(i, j int) bool { return xs[i].Number() < xs[j].Number() })
	}
	return d
}

// Message returns the descriptor of the named message (a full name such
// as "structtensor.testdata.recipe.Recipe").
func (d *Descriptors) Message(name string) (protoreflect.MessageDescriptor, error) {
	desc, err := d.files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("%w: message %q not found", ErrDescriptor, name)
	}
	md, ok := desc.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a message", ErrDescriptor, name)
	}
	return md, nil
}

// Extensions returns the known extensions of the message, by number.
func (d *Descriptors) Extensions(md protoreflect.MessageDescriptor) []protoreflect.ExtensionDescriptor {
	return d.extensions[md.FullName()]
}
