package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
// refused with a message naming the flag, on every command; a word that
// is no flag keeps pflag's own message.
func TestSingleDashLongFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "-message", "X", "/dev/null"}, "structtensor decode: unknown shorthand flag 'm' in -message: long flags take two dashes: --message (see structtensor decode --help)\n"},
		{[]string{"decode", "-max-depth=3", "/dev/null"}, "unknown shorthand flag 'm' in -max-depth: long flags take two dashes: --max-depth"},
		{[]string{"convert", "/dev/null", "-from", "jsonl"}, "unknown shorthand flag 'f' in -from: long flags take two dashes: --from"},
		{[]string{"dataview", "inspect", "-digest", "sha256:00", "/nonexistent"}, "long flags take two dashes: --digest"},
		{[]string{"decode", "-zzz", "/dev/null"}, "structtensor decode: unknown shorthand flag: 'z' in -zzz (see structtensor decode --help)\n"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, failReader{t}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errb.String(), c.want)
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
