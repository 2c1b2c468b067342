package main

import (
	"fmt"
	"io"
	"sort"
)

// demoStep is one section of "structtensor demo". Each part of the project
// adds its own section from init; steps run in order of their rank.
type demoStep struct {
	rank  int
	title string
	run   func(w io.Writer) error
}

var demoSteps []demoStep

func registerDemoStep(s demoStep) { demoSteps = append(demoSteps, s) }

func init() {
	register(command{
		name:    "demo",
		summary: "run the tour of structtensor on the bundled sample data",
		run: func(args []string, _ io.Reader, stdout, _ io.Writer) error {
			if len(args) > 0 {
				return fmt.Errorf("demo takes no arguments")
			}
			sort.SliceStable(demoSteps, func(i, j int) bool { return demoSteps[i].rank < demoSteps[j].rank })
			for _, s := range demoSteps {
				fmt.Fprintf(stdout, "== %s ==\n", s.title)
				if err := s.run(stdout); err != nil {
					return fmt.Errorf("%s: %w", s.title, err)
				}
				fmt.Fprintln(stdout)
			}
			return nil
		},
	})
}
