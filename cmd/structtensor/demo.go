package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
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
	register("demo", newDemoCommand)
}

func newDemoCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "run the tour of structtensor on the bundled sample data",
		Long: `demo runs one section per part of the project on the data bundled in
testdata/ (found above the working directory or the executable): the value
model on the recipes, protobuf records decoded natively, struct2tensor's
path ops, Arrow and Parquet round trips, a DataView exported, loaded and
run inside TensorFlow, and a model built in Go (decode, features, a linear
scorer) exported as a SavedModel and served through TensorFlow's loader.`,
		Example: "  structtensor demo",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("demo takes no arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout := cmd.OutOrStdout()
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
	}
}

// bundledData returns the path of rel (e.g. "recipe/recipes.json") under
// the repository's testdata directory, which the demo reads. It looks in
// the working directory and its parents, then next to the executable and
// its parents (bin/structtensor finds ../testdata), so that the demo runs
// from the repository root, from a package directory under go test, and
// as an installed binary beside a checkout.
func bundledData(rel string) (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, "testdata", rel)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("bundled data testdata/%s not found above %v", rel, starts)
}

// readBundled returns the contents of the bundled file rel (see
// bundledData).
func readBundled(rel string) ([]byte, error) {
	path, err := bundledData(rel)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
