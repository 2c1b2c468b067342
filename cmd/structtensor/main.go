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
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
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
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see %s --help)", singleDashHint(cmd, err), cmd.CommandPath())
	})
	return root
}

// unknownShorthand matches pflag's error for a single-dash word whose
// first letter is no shorthand: "unknown shorthand flag: 'm' in -message".
var unknownShorthand = regexp.MustCompile(`^unknown shorthand flag: '(.)' in -([^=\s]+)`)

// singleDashHint rewrites pflag's error for a long flag of cmd written
// with one dash (Go's flag package, which the CLI once used, took both),
// so that it names the flag: "-message" reads as the shorthand cluster
// -m -e -s..., whose first letter is unknown.
func singleDashHint(cmd *cobra.Command, err error) error {
	m := unknownShorthand.FindStringSubmatch(err.Error())
	if m == nil || len(m[2]) < 2 || cmd.Flags().Lookup(m[2]) == nil {
		return err
	}
	return fmt.Errorf("unknown shorthand flag '%s' in -%s: long flags take two dashes: --%s", m[1], m[2], m[2])
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
	cmd, err := root.ExecuteC()
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
