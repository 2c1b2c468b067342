// Command structtensor converts structured data (JSON, protobuf records,
// Arrow, Parquet) to and from StructTensors, decodes protobuf and
// tf.Example records, exports and runs TensorFlow DataViews, and runs the
// bundled demo.
//
// Usage:
//
//	structtensor <command> [flags] [args]
//
// Flags may come before or after the arguments ("structtensor convert
// in.jsonl -o out.parquet --to parquet"); "--" ends the flags. Run
// "structtensor help" for the list of commands, "structtensor help
// <command>" for one command's flags and examples, and "structtensor
// completion bash|zsh|fish" for a shell completion script.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commandBuilders make the top-level commands. Each command lives in its
// own file and registers its builder from init, so that adding a command
// touches no shared code. The tree is built afresh for every command line
// (run), so that no flag value outlives one run.
var commandBuilders = map[string]func() *cobra.Command{}

func register(name string, build func() *cobra.Command) {
	if _, dup := commandBuilders[name]; dup {
		panic("structtensor: command registered twice: " + name)
	}
	commandBuilders[name] = build
}

// newRootCommand builds the command tree.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "structtensor",
		Short: "structured data as StructTensors: convert, decode protobuf records, TensorFlow DataViews",
		Long: `structtensor converts structured data (JSON, JSON lines, Arrow IPC, Parquet)
to and from StructTensors, decodes serialized protobuf and tf.Example records
into any of those formats, and exports or runs protobuf decoders as
TensorFlow SavedModel DataViews.

Flags may come before or after the arguments; "--" ends the flags. An input
FILE of "-" (or none) is standard input.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	names := make([]string, 0, len(commandBuilders))
	for n := range commandBuilders {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		root.AddCommand(commandBuilders[n]())
	}
	// Flag errors name the command; the usage is one "--help" away.
	root.SetFlagErrorFunc(flagError)
	return root
}

// flagError is how a flag error reads: it names the command and points
// to its usage.
func flagError(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
}

// singleDashLongFlag refuses a long flag of cmd written with one dash,
// as Go's flag package (which the CLI once used) took it. pflag reads
// such a word as a cluster of shorthands: "-message" fails on its first
// letter, which is no shorthand, but "-output" silently means
// "-o utput". So args (the command line after the command's name) are
// walked as pflag walks them, and a single-dash word whose name, up to
// an "=", is one of cmd's long flags is an error naming the flag. Values
// (the word after a flag that takes one) and everything after "--" are
// not flags, and clusters of real shorthands ("-o FILE", "-oFILE", bool
// shorthands grouped as "-ab") are left to pflag.
func singleDashLongFlag(cmd *cobra.Command, args []string) error {
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	shorthand := func(c byte) *pflag.Flag {
		if f := cmd.Flags().ShorthandLookup(string(c)); f != nil {
			return f
		}
		return cmd.InheritedFlags().ShorthandLookup(string(c))
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "--"):
			// --name=value holds its value; --name takes the next word
			// unless it needs none (a bool).
			name, _, hasValue := strings.Cut(a[2:], "=")
			if f := lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			if name, _, _ := strings.Cut(a[1:], "="); len(name) > 1 && lookup(name) != nil {
				return fmt.Errorf("%s: long flags take two dashes: --%s", a, name)
			}
			// A cluster: shorthands up to the first that takes a value,
			// which is the rest of the word or else the next word.
			for j := 1; j < len(a); j++ {
				f := shorthand(a[j])
				if f == nil {
					break // pflag reports it
				}
				if f.NoOptDefVal == "" {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 on
// success, 2 when no command or an unknown one is given, 1 for any other
// error, printed as one line "structtensor <command>: <error>".
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	quietTensorFlow()
	root := newRootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if len(args) == 0 {
		root.SetOut(stderr)
		root.Help()
		return 2
	}
	// Before cobra parses the flags, a long flag written with one dash is
	// refused (pflag would misread it); shell completion requests
	// (__complete) carry partial words and are cobra's to read.
	var cmd *cobra.Command
	var err error
	if args[0] != cobra.ShellCompRequestCmd && args[0] != cobra.ShellCompNoDescRequestCmd {
		root.InitDefaultHelpCmd()
		root.InitDefaultCompletionCmd()
		if found, rest, ferr := root.Find(args); ferr == nil && !found.DisableFlagParsing {
			found.InitDefaultHelpFlag()
			if err = singleDashLongFlag(found, rest); err != nil {
				cmd, err = found, flagError(found, err)
			}
		}
	}
	if err == nil {
		cmd, err = root.ExecuteC()
	}
	switch {
	case err == nil:
		return 0
	case cmd == root && strings.HasPrefix(err.Error(), "unknown command"):
		fmt.Fprintf(stderr, "structtensor: %v (see structtensor help)\n", err)
		return 2
	}
	name := strings.TrimPrefix(cmd.CommandPath(), "structtensor ")
	if cmd == root {
		name = ""
	}
	fmt.Fprintf(stderr, "%s: %v\n", strings.TrimSpace("structtensor "+name), err)
	return 1
}

// quietTensorFlow sets TensorFlow's log level to 2 (errors only) unless
// the environment chooses one or asks for TensorFlow's own logging
// (STRUCTTENSOR_TF_LOG=1): the CLI reports an error as one line, which
// TensorFlow's warnings for a failed run (a rendezvous aborting) would
// repeat. The runtime reads the level when it loads (package
// internal/tfruntime, which also keeps its start-up INFO lines off
// stderr), and it loads only when a TensorFlow command runs.
func quietTensorFlow() {
	if _, set := os.LookupEnv("TF_CPP_MIN_LOG_LEVEL"); !set && os.Getenv("STRUCTTENSOR_TF_LOG") != "1" {
		os.Setenv("TF_CPP_MIN_LOG_LEVEL", "2")
	}
}
