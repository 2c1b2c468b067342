package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// planFlags is the schema half that "decode" and "dataview export" share:
// where the descriptors come from, the record message, the projected paths
// and the compile options, so both commands compile a plan the same way.
type planFlags struct {
	descriptorSet           string
	protos, includes, paths []string
	message                 string
	fillRequired            bool
	acceptInvalidUTF8       bool
	maxDepth                int
}

func addPlanFlags(cmd *cobra.Command) *planFlags {
	f := &planFlags{}
	fs := cmd.Flags()
	fs.StringVar(&f.descriptorSet, "descriptor-set", "", "serialized FileDescriptorSet holding the schema (`FILE`)")
	fs.StringArrayVar(&f.protos, "proto", nil, ".proto `FILE` to parse (repeatable)")
	fs.StringArrayVarP(&f.includes, "include", "I", nil, "import path for --proto files (`DIR`, repeatable)")
	fs.StringVar(&f.message, "message", "", "full `NAME` of the record message, e.g. pkg.Recipe")
	fs.StringArrayVar(&f.paths, "path", nil, "field path `P` to project, struct2tensor syntax (repeatable; default every field)")
	fs.BoolVar(&f.fillRequired, "fill-required", false, "decode missing proto2 required fields as their defaults")
	fs.BoolVar(&f.acceptInvalidUTF8, "accept-invalid-utf8", false, "accept invalid UTF-8 in proto3 strings")
	countFlag(cmd, &f.maxDepth, "max-depth", decode.DefaultMaxDepth, 1, "message nesting limit")
	cmd.MarkFlagFilename("descriptor-set", "pb", "binpb", "desc")
	cmd.MarkFlagFilename("proto", "proto")
	cmd.MarkFlagDirname("include")
	return f
}

// compile loads the schema and compiles the plan of --message and --path.
// The caller checks that --message is given, as each command words it.
func (f *planFlags) compile() (*decode.Plan, error) {
	desc, err := f.loadDescriptors()
	if err != nil {
		return nil, err
	}
	opts := decode.CompileOptions{MaxDepth: f.maxDepth, FillRequired: f.fillRequired, AcceptInvalidUTF8: f.acceptInvalidUTF8}
	return opts.Compile(desc, f.message, f.paths...)
}

// loadDescriptors reads the schema from a FileDescriptorSet or .proto
// sources, whichever is given.
func (f *planFlags) loadDescriptors() (*decode.Descriptors, error) {
	switch {
	case f.descriptorSet != "" && len(f.protos) > 0:
		return nil, errors.New("give --descriptor-set or --proto, not both")
	case f.descriptorSet != "":
		b, err := os.ReadFile(f.descriptorSet)
		if err != nil {
			return nil, err
		}
		return decode.LoadDescriptorSet(b)
	case len(f.protos) > 0:
		return decode.ParseProtoFiles(f.includes, f.protos...)
	}
	return nil, errors.New("--descriptor-set or --proto is required")
}

// countValue is an integer flag that refuses values below smallest when
// it is parsed, so "--threads -5" or "--batch 0" is an error naming the
// flag before any work, whichever command takes it.
type countValue struct {
	p        *int
	smallest int
}

func countFlag(cmd *cobra.Command, p *int, name string, value, smallest int, usage string) {
	*p = value
	cmd.Flags().Var(&countValue{p, smallest}, name, fmt.Sprintf("%s (at least %d)", usage, smallest))
}

func (c *countValue) String() string { return strconv.Itoa(*c.p) }
func (c *countValue) Type() string   { return "int" }
func (c *countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	if n < c.smallest {
		return fmt.Errorf("must be at least %d", c.smallest)
	}
	*c.p = n
	return nil
}

// maxRecordSizeValue is --max-record-size, the longest input record
// accepted (tfrecord.DefaultMaxRecordSize by default; -1 for no limit):
// 0 and values below -1 are refused.
type maxRecordSizeValue struct{ p *int64 }

func addMaxRecordSizeFlag(cmd *cobra.Command) *int64 {
	n := int64(tfrecord.DefaultMaxRecordSize)
	cmd.Flags().Var(maxRecordSizeValue{&n}, "max-record-size", "longest input record accepted, in `BYTES` (-1: no limit)")
	return &n
}

func (m maxRecordSizeValue) String() string { return strconv.FormatInt(*m.p, 10) }
func (m maxRecordSizeValue) Type() string   { return "int" }
func (m maxRecordSizeValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	if n == 0 || n < -1 {
		return fmt.Errorf("must be a positive number of bytes or -1 (no limit)")
	}
	*m.p = n
	return nil
}

// choicesAnnotation holds, on a flag that takes one of a fixed set of
// values (formats, framings, compressions), that set: the flag's help
// text, its shell completion and the README test (readme_test.go) all
// read it from the same place.
const choicesAnnotation = "structtensor_choices"

// choiceFlag defines a string flag whose value is one of choices; the
// command checks the value itself, with an error that lists them.
func choiceFlag(cmd *cobra.Command, p *string, name, shorthand, value, usage string, choices []string) {
	cmd.Flags().StringVarP(p, name, shorthand, value, fmt.Sprintf("%s, one of `%s`", usage, strings.Join(choices, "|")))
	cmd.Flags().SetAnnotation(name, choicesAnnotation, choices)
	cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return choices, cobra.ShellCompDirectiveNoFileComp
	})
}

// outputFlag is -o/--output, where a command writes its result.
func outputFlag(cmd *cobra.Command, p *string, what string) {
	cmd.Flags().StringVarP(p, "output", "o", "", what)
}

// recordInputFlags are the input flags of the commands that read
// serialized records: the framing and the compression.
type recordInputFlags struct {
	framing, compression string
	maxRecordSize        *int64
}

func addRecordInputFlags(cmd *cobra.Command) *recordInputFlags {
	f := &recordInputFlags{}
	choiceFlag(cmd, &f.framing, "input-format", "", "tfrecord", "record framing", []string{"tfrecord", "delimited"})
	choiceFlag(cmd, &f.compression, "compression", "", "auto", "input compression", []string{"auto", "none", "gzip", "zlib"})
	f.maxRecordSize = addMaxRecordSizeFlag(cmd)
	return f
}

// reader returns the record reader of the framing, or an error naming
// the flag.
func (f *recordInputFlags) reader(r io.Reader) (tfrecord.RecordReader, error) {
	comp, err := tfrecord.ParseCompression(f.compression)
	if err != nil {
		return nil, err
	}
	opts := tfrecord.Options{Compression: comp, MaxRecordSize: *f.maxRecordSize}
	switch f.framing {
	case "tfrecord":
		return tfrecord.NewReader(r, opts), nil
	case "delimited":
		return tfrecord.NewDelimitedReader(r, opts), nil
	}
	return nil, fmt.Errorf("unknown --input-format %q (want tfrecord or delimited)", f.framing)
}

var (
	_ pflag.Value = (*countValue)(nil)
	_ pflag.Value = maxRecordSizeValue{}
)
