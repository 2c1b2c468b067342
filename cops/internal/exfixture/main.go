// Command exfixture writes the Go side of python/tests/test_example_op.py:
// random feature specs and records (copstest.ExampleCases) with the
// attributes of the example decode op for each (the plan and layout byte
// forms, the component list), as JSON lines. The Python test runs the op
// from build/libstructtensor_ops.so and tf.io.parse_example (or
// parse_sequence_example) on the same records and compares them.
//
// Usage: go run ./cops/internal/exfixture -o FILE [-seed N -n N]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge/graphst"
)

// feature is a decode.Feature in a form Python reads without loss: float
// defaults as their bits (NaN and infinities have no JSON number), byte
// strings as lists of byte values.
type feature struct {
	Name         string      `json:"name"`
	Sequence     bool        `json:"sequence"`
	Kind         string      `json:"kind"`
	DType        string      `json:"dtype"`
	Key          string      `json:"key"`
	Shape        []int       `json:"shape"`
	Default      any         `json:"default"`
	AllowMissing bool        `json:"allow_missing"`
	Partitions   []partition `json:"partitions"`
}

type partition struct {
	Kind   string `json:"kind"`
	Key    string `json:"key,omitempty"`
	Length int    `json:"length,omitempty"`
}

type component struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"`
	Partition int    `json:"partition"`
	DType     string `json:"dtype"`
}

type exampleCase struct {
	Sequence   bool        `json:"sequence"`
	Features   []feature   `json:"features"`
	Plan       []byte      `json:"plan"`
	Layout     []byte      `json:"layout"`
	Components []component `json:"components"`
	Records    [][]byte    `json:"records"`
}

func convert(name string, seq bool, f decode.Feature) feature {
	key := f.Key
	if key == "" {
		key = name
	}
	out := feature{Name: name, Sequence: seq, Kind: f.Kind.String(), DType: f.DType.String(), Key: key,
		Shape: append([]int{}, f.Shape...), AllowMissing: f.AllowMissing, Partitions: []partition{}}
	switch d := f.Default.(type) {
	case []int64:
		out.Default = d
	case []float32:
		bits := make([]uint32, len(d))
		for i, v := range d {
			bits[i] = math.Float32bits(v)
		}
		out.Default = bits
	case [][]byte:
		s := make([][]int, len(d))
		for i, b := range d {
			s[i] = make([]int, len(b))
			for j, c := range b {
				s[i][j] = int(c)
			}
		}
		out.Default = s
	}
	for _, p := range f.Partitions {
		kind, _ := p.Kind.MarshalText()
		out.Partitions = append(out.Partitions, partition{Kind: string(kind), Key: p.Key, Length: p.Length})
	}
	return out
}

func sorted(m map[string]decode.Feature) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func write(path string, seed uint64, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, seq := range []bool{false, true} {
		for _, c := range copstest.ExampleCases(seed*2+uint64(btoi(seq)), n, copstest.ExampleOptions{Sequence: seq, MaxRecords: 12}) {
			compile := decode.CompileExample
			if seq {
				compile = decode.CompileSequenceExample
			}
			plan, err := compile(c.Spec)
			if err != nil {
				return err
			}
			planBytes, err := plan.MarshalBinary()
			if err != nil {
				return err
			}
			comps, err := graphst.Components(plan.Spec())
			if err != nil {
				return err
			}
			ec := exampleCase{Sequence: seq, Plan: planBytes, Layout: plan.MarshalLayout(), Records: c.Records}
			for _, name := range sorted(c.Spec.Features) {
				ec.Features = append(ec.Features, convert(name, false, c.Spec.Features[name]))
			}
			for _, name := range sorted(c.Spec.SequenceFeatures) {
				ec.Features = append(ec.Features, convert(name, true, c.Spec.SequenceFeatures[name]))
			}
			for _, cs := range comps {
				kind := "values"
				if cs.Kind == graphst.RowSplitsComponent {
					kind = "row_splits"
				}
				ec.Components = append(ec.Components, component{Path: cs.Path, Kind: kind, Partition: cs.Partition, DType: dtypeName(cs.DType)})
			}
			if err := enc.Encode(ec); err != nil {
				return err
			}
		}
	}
	return f.Close()
}

// dtypeName is the TensorFlow name of a dtype (tf.as_dtype reads it).
func dtypeName(d structtensor.DType) string {
	if d == structtensor.String {
		return "string"
	}
	return d.String()
}

func main() {
	out := flag.String("o", "", "output file (JSON lines, one case each)")
	seed := flag.Uint64("seed", 1, "random seed")
	n := flag.Int("n", 150, "cases of tf.Example, and as many of SequenceExample")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: exfixture -o FILE [-seed N -n N]")
		os.Exit(2)
	}
	if err := write(*out, *seed, *n); err != nil {
		fmt.Fprintln(os.Stderr, "exfixture:", err)
		os.Exit(1)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
