package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// readmeCommands returns the command lines of the README's CLI section
// (the indented block after "## CLI"), continuation lines joined.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## CLI\n")
	if !ok {
		t.Fatal(`README.md has no "## CLI" section`)
	}
	var lines []string
	inBlock := false
	for _, l := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(l, "    structtensor "):
			inBlock = true
			lines = append(lines, strings.TrimSpace(l))
		case inBlock && strings.HasPrefix(l, "    ") && len(lines) > 0:
			lines[len(lines)-1] += " " + strings.TrimSpace(l)
		case inBlock:
			return lines
		}
	}
	return lines
}

// The README's CLI section and the command tree agree: every command the
// README shows exists with every flag and every format it lists, and
// every command and flag of the tree is in the README. A flag that takes
// one of a set of values (formats, framings) lists exactly that set.
func TestREADMEDocumentsEveryCommandAndFlag(t *testing.T) {
	root := newRootCommand()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	documented := map[*cobra.Command]map[string]bool{}
	for _, line := range readmeCommands(t) {
		words := strings.Fields(line)[1:]
		if i := slices.Index(words, "#"); i >= 0 {
			words = words[:i]
		}
		// The command path: leading words naming subcommands; "a|b" names
		// several, each documented with the same flags.
		cmds := []*cobra.Command{root}
		for len(words) > 0 {
			var next []*cobra.Command
			for _, name := range strings.Split(words[0], "|") {
				for _, c := range cmds {
					if sub := subcommand(c, name); sub != nil {
						next = append(next, sub)
					}
				}
			}
			if len(next) == 0 {
				break
			}
			cmds, words = next, words[1:]
		}
		if cmds[0] == root {
			t.Errorf("README: %q names no command", line)
			continue
		}
		for _, cmd := range cmds {
			if documented[cmd] == nil {
				documented[cmd] = map[string]bool{}
			}
			for i, w := range words {
				w = strings.Trim(w, "[]()")
				if !strings.HasPrefix(w, "-") || w == "-" || strings.HasPrefix(w, "FILE") {
					continue
				}
				f := lookupFlag(cmd, w)
				if f == nil {
					t.Errorf("README: %s has no flag %s", cmd.CommandPath(), w)
					continue
				}
				documented[cmd][f.Name] = true
				choices := f.Annotations[choicesAnnotation]
				if len(choices) == 0 {
					continue
				}
				var listed []string
				if i+1 < len(words) {
					listed = strings.Split(strings.Trim(words[i+1], "[]()."), "|")
				}
				if !sameSet(listed, choices) {
					t.Errorf("README: %s %s lists %q, the command takes %q", cmd.CommandPath(), w, listed, choices)
				}
			}
		}
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden {
				continue
			}
			if sub.Runnable() && !sub.HasSubCommands() && documented[sub] == nil {
				t.Errorf("README does not show %q", sub.CommandPath())
			}
			sub.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if f.Name != "help" && !f.Hidden && documented[sub] != nil && !documented[sub][f.Name] {
					t.Errorf("README does not show %s --%s", sub.CommandPath(), f.Name)
				}
			})
			walk(sub)
		}
	}
	walk(root)
}

func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name {
			return sub
		}
	}
	return nil
}

// lookupFlag finds "--name" or "-x" (a shorthand) among cmd's flags.
func lookupFlag(cmd *cobra.Command, w string) *pflag.Flag {
	if name, ok := strings.CutPrefix(w, "--"); ok {
		return cmd.Flags().Lookup(name)
	}
	if len(w) == 2 {
		return cmd.Flags().ShorthandLookup(w[1:])
	}
	return nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
