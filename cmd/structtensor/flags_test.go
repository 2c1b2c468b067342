package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Nonsensical numbers are refused by every command that takes them, with
// a message naming the flag, before any work.
func TestNumericFlagsRefused(t *testing.T) {
	schema := []string{"--descriptor-set", "../../testdata/proto/testdata.pb", "--message", "structtensor.testdata.recipe.Recipe"}
	commands := map[string][]string{
		"decode":          append([]string{"decode"}, schema...),
		"dataview run":    {"dataview", "run", "/nonexistent-dataview"},
		"dataview export": append([]string{"dataview", "export", "-o", t.TempDir() + "/dv"}, schema...),
	}
	bad := map[string][]string{
		"threads":         {"-5"},
		"batch":           {"0", "-1"},
		"max-depth":       {"0", "-3"},
		"max-record-size": {"0", "-2"},
	}
	takes := map[string][]string{
		"decode":          {"threads", "batch", "max-depth", "max-record-size"},
		"dataview run":    {"batch", "max-record-size"},
		"dataview export": {"threads", "max-depth"},
	}
	for name, args := range commands {
		for _, flag := range takes[name] {
			for _, v := range bad[flag] {
				var out, errb bytes.Buffer
				code := run(append(append([]string(nil), args...), "--"+flag, v), failReader{t}, &out, &errb)
				if code == 0 || !strings.Contains(errb.String(), "--"+flag) || !strings.Contains(errb.String(), v) {
					t.Errorf("%s --%s %s: exit %d, %q", name, flag, v, code, errb.String())
				}
			}
		}
	}
}

// A long flag written with one dash (as Go's flag package allowed) is
// refused with a message naming the flag, whether or not its first letter
// is a shorthand ("-output" is no "-o utput"); a word that is no flag
// keeps pflag's own message, and values and words after "--" are not
// flags.
func TestSingleDashLongFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "-message", "X", "/dev/null"}, "structtensor decode: -message: long flags take two dashes: --message (see structtensor decode --help)\n"},
		{[]string{"decode", "-max-depth=3", "/dev/null"}, "structtensor decode: -max-depth=3: long flags take two dashes: --max-depth (see structtensor decode --help)\n"},
		{[]string{"convert", "/dev/null", "-from", "jsonl"}, "-from: long flags take two dashes: --from"},
		{[]string{"convert", "/dev/null", "-output", "out.parquet"}, "structtensor convert: -output: long flags take two dashes: --output (see structtensor convert --help)\n"},
		{[]string{"convert", "-output=out.parquet", "/dev/null"}, "-output=out.parquet: long flags take two dashes: --output"},
		{[]string{"dataview", "inspect", "-digest", "sha256:00", "/nonexistent"}, "long flags take two dashes: --digest"},
		{[]string{"decode", "-zzz", "/dev/null"}, "structtensor decode: unknown shorthand flag: 'z' in -zzz (see structtensor decode --help)\n"},
		// A value that looks like a single-dash flag is a value: the
		// file "-output" and the word after "--" are read as files.
		{[]string{"convert", "--from", "jsonl", "--", "-output"}, "open -output: no such file"},
		{[]string{"convert", "--output", "-output", "/nonexistent/in.jsonl"}, "open /nonexistent/in.jsonl: no such file"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, failReader{t}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errb.String(), c.want)
		}
	}
}

// Every long flag of every command (the whole cobra tree, inherited and
// help flags included), written with one dash, in both forms, is refused
// with the message naming it, before the command runs.
func TestSingleDashLongFlagEveryCommand(t *testing.T) {
	root := newRootCommand()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(*cobra.Command)
	checked := 0
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if cmd.DisableFlagParsing {
			return
		}
		cmd.InitDefaultHelpFlag()
		path := strings.Fields(cmd.CommandPath())[1:]
		visit := func(f *pflag.Flag) {
			for _, word := range []string{"-" + f.Name, "-" + f.Name + "=x"} {
				var out, errb bytes.Buffer
				args := append(append([]string(nil), path...), word)
				code := run(args, failReader{t}, &out, &errb)
				want := cmd.CommandPath() + ": " + word + ": long flags take two dashes: --" + f.Name + " (see " + cmd.CommandPath() + " --help)\n"
				if code != 1 || errb.String() != want || out.Len() != 0 {
					t.Errorf("%v: exit %d, stdout %q, stderr %q, want exit 1 and %q", args, code, out.String(), errb.String(), want)
				}
				checked++
			}
		}
		cmd.Flags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(visit)
	}
	walk(root)
	// Every command has --help; convert, decode and dataview export
	// have a shorthand -o beside --output.
	if checked < 2*len(commandBuilders) {
		t.Errorf("only %d words checked", checked)
	}
}

// Real shorthands keep working, alone and grouped: the walk skips a value
// (in the same word or the next) and clusters of bool shorthands.
func TestSingleDashShorthands(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().BoolP("all", "a", false, "")
	cmd.Flags().BoolP("brief", "b", false, "")
	cmd.Flags().StringP("output", "o", "", "")
	cmd.Flags().String("name", "", "")
	for _, c := range []struct {
		args []string
		want string // the error, or "" for none
	}{
		{[]string{"-a", "-b", "-o", "f"}, ""},
		{[]string{"-ab", "-ofile"}, ""},
		{[]string{"-abo", "-all"}, ""},      // -all is -o's value
		{[]string{"-o", "-name", "in"}, ""}, // -name is -o's value
		{[]string{"--name", "-all"}, ""},    // and --name's
		{[]string{"--name=v", "-all"}, "-all: long flags take two dashes: --all"},
		{[]string{"--all", "-brief"}, "-brief: long flags take two dashes: --brief"},
		{[]string{"-ab", "-output=f"}, "-output=f: long flags take two dashes: --output"},
		{[]string{"-o=f", "-name"}, "-name: long flags take two dashes: --name"},
		{[]string{"--", "-name"}, ""},
		{[]string{"-", "-zz"}, ""}, // not flags of the command: pflag's to report
	} {
		err := singleDashLongFlag(cmd, c.args)
		if got := fmt.Sprint(err); (err == nil) != (c.want == "") || err != nil && got != c.want {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// Flags are accepted after the positional arguments as before them.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte("{\"id\": 1, \"tags\": [\"a\"]}\n{\"id\": 2, \"tags\": []}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.parquet")
	if code, stdout, errs := convert(t, "", in, "-o", out, "--from", "jsonl", "--to", "parquet"); code != 0 || stdout != "" || errs != "" {
		t.Fatalf("convert FILE -o OUT --from --to: exit %d, %q, %q", code, stdout, errs)
	}
	if code, stdout, errs := convert(t, "", "--to", "jsonl", out, "--from", "parquet"); code != 0 || errs != "" ||
		stdout != "{\"id\":1,\"tags\":[\"a\"]}\n{\"id\":2,\"tags\":[]}\n" {
		t.Fatalf("convert back: exit %d, %q, %q", code, stdout, errs)
	}
	// "--" ends the flags: a file named like a flag is an argument.
	if code, _, errs := convert(t, "", "--", "--to"); code == 0 || !strings.Contains(errs, "open --to: no such file") {
		t.Errorf("convert -- --to: exit %d, %q", code, errs)
	}
}

// Every command has help with examples, and completion scripts are
// written for bash, zsh and fish.
func TestHelpAndCompletion(t *testing.T) {
	for _, cmd := range [][]string{{"convert"}, {"decode"}, {"demo"}, {"dataview", "export"}, {"dataview", "run"}, {"dataview", "inspect"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"help"}, cmd...), nil, &out, &errb); code != 0 ||
			!strings.Contains(out.String(), "Examples:") || !strings.Contains(out.String(), "structtensor "+strings.Join(cmd, " ")) {
			t.Errorf("help %v: exit %d, %q, %q", cmd, code, out.String(), errb.String())
		}
	}
	for shell, want := range map[string]string{"bash": "__start_structtensor", "zsh": "#compdef structtensor", "fish": "complete -c structtensor"} {
		var out, errb bytes.Buffer
		if code := run([]string{"completion", shell}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("completion %s: exit %d, lacks %q; stderr %q", shell, code, want, errb.String())
		}
	}
	// Formats complete from the same list the command accepts.
	var out bytes.Buffer
	if code := run([]string{cobra.ShellCompRequestCmd, "convert", "--to", ""}, nil, &out, &bytes.Buffer{}); code != 0 ||
		!strings.Contains(out.String(), "parquet\n") || !strings.Contains(out.String(), "spec\n") {
		t.Errorf("completing convert --to: exit %d, %q", code, out.String())
	}
	// No command: the usage, exit 2; an unknown one: exit 2.
	if code := run(nil, nil, &bytes.Buffer{}, &out); code != 2 {
		t.Errorf("no command: exit %d", code)
	}
	if code := run([]string{"nope"}, nil, &bytes.Buffer{}, &out); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
}
