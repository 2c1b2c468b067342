package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/structtensor/structtensor-go/decode"
)

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// planFlags is the schema half that "decode" and "dataview export" share:
// where the descriptors come from, the record message, the projected paths
// and the compile options, so both commands compile a plan the same way.
type planFlags struct {
	descriptorSet           *string
	protos, includes, paths multiFlag
	message                 *string
	fillRequired            *bool
	acceptInvalidUTF8       *bool
	maxDepth                *int
}

func addPlanFlags(fs *flag.FlagSet) *planFlags {
	f := &planFlags{}
	f.descriptorSet = fs.String("descriptor-set", "", "serialized FileDescriptorSet holding the schema")
	fs.Var(&f.protos, "proto", ".proto file to parse (repeatable)")
	fs.Var(&f.includes, "I", "import path for --proto files (repeatable)")
	f.message = fs.String("message", "", "full name of the record message, e.g. pkg.Recipe")
	fs.Var(&f.paths, "path", "field path to project, struct2tensor syntax (repeatable; default every field)")
	f.fillRequired = fs.Bool("fill-required", false, "decode missing proto2 required fields as their defaults")
	f.acceptInvalidUTF8 = fs.Bool("accept-invalid-utf8", false, "accept invalid UTF-8 in proto3 strings")
	f.maxDepth = fs.Int("max-depth", decode.DefaultMaxDepth, "message nesting limit")
	return f
}

// compile loads the schema and compiles the plan of --message and --path.
// The caller checks that --message is given, as each command words it.
func (f *planFlags) compile() (*decode.Plan, error) {
	desc, err := f.loadDescriptors()
	if err != nil {
		return nil, err
	}
	opts := decode.CompileOptions{MaxDepth: *f.maxDepth, FillRequired: *f.fillRequired, AcceptInvalidUTF8: *f.acceptInvalidUTF8}
	return opts.Compile(desc, *f.message, f.paths...)
}

// loadDescriptors reads the schema from a FileDescriptorSet or .proto
// sources, whichever is given.
func (f *planFlags) loadDescriptors() (*decode.Descriptors, error) {
	switch {
	case *f.descriptorSet != "" && len(f.protos) > 0:
		return nil, errors.New("give --descriptor-set or --proto, not both")
	case *f.descriptorSet != "":
		b, err := os.ReadFile(*f.descriptorSet)
		if err != nil {
			return nil, err
		}
		return decode.LoadDescriptorSet(b)
	case len(f.protos) > 0:
		return decode.ParseProtoFiles(f.includes, f.protos...)
	}
	return nil, errors.New("--descriptor-set or --proto is required")
}
