package ops_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/testenv"
)

// venvPython returns the interpreter `make setup` installs the reference
// (TensorFlow or struct2tensor) into (venv at the repository root),
// skipping the test in -short mode or when it is absent: the ops package
// builds and tests without TensorFlow, and `make test` runs these
// comparisons after its set-up step.
func venvPython(t *testing.T, venv, reference string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipping %s comparison in -short mode", reference)
	}
	return testenv.Python(t, venv)
}

// tfCase is one op call sent to testdata/tf_reference.py.
type tfCase struct {
	Op     string            `json:"op"`
	Args   map[string]string `json:"args"`
	Inputs []any             `json:"inputs"`
}

type tfResult struct {
	Value       any    `json:"value"`
	Error       string `json:"error"`
	Unsupported string `json:"unsupported"`
}

// runPython sends cases as JSON to script and decodes its results.
func runPython(t *testing.T, python, script string, cases any, n int) []tfResult {
	t.Helper()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var res []tfResult
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("%s output: %v\n%s", script, err, out)
	}
	if len(res) != n {
		t.Fatalf("%s returned %d results for %d cases", script, len(res), n)
	}
	return res
}

// TestAgainstTensorFlow runs every data-driven array-op case that
// TensorFlow has an op for (StructuredTensor's dispatched gather,
// expand_dims, concat, size, rank, merge_dims, partition_outer_dimension;
// RaggedTensor's gather_nd, boolean_mask, stack, squeeze, tile, where)
// through TensorFlow 2.21 and compares its result with ours. A case we
// reject must be rejected by TensorFlow too.
func TestAgainstTensorFlow(t *testing.T) {
	python := venvPython(t, ".venv", "TensorFlow")
	var cases []ddCase
	var req []tfCase
	for _, c := range readCases(t, "testdata/array_ops.txt") {
		if c.op == "shape" || c.op == "unstack" || c.op == "batch_gather" {
			continue // no TensorFlow counterpart taking these arguments
		}
		if why, skip := c.args["tf"]; skip {
			t.Logf("%s:%d: not compared with TensorFlow: %s", c.file, c.line, strings.ReplaceAll(why, "_", " "))
			continue
		}
		tc := tfCase{Op: c.op, Args: c.args}
		for _, s := range c.inputs {
			tc.Inputs = append(tc.Inputs, parseJSON(t, s))
		}
		cases, req = append(cases, c), append(req, tc)
	}
	res := runPython(t, python, "testdata/tf_reference.py", req, len(req))
	compared := 0
	for i, c := range cases {
		r := res[i]
		name := c.file + ":" + strconv.Itoa(c.line) + ":" + c.op
		if r.Unsupported != "" {
			continue
		}
		got, err := runCase(t, c)
		sameAsTensorFlow(t, name, r, got, err)
		compared++
	}
	if compared < 20 {
		t.Fatalf("only %d cases compared with TensorFlow", compared)
	}
	t.Logf("%d cases compared with TensorFlow", compared)
}

// randomNested groups random records into a value of the given rank
// (rank 1: the records; rank 2 and 3: random ragged lists of them).
func randomNested(r *rand.Rand, rank int) any {
	if rank == 1 {
		return randomDocs(r)
	}
	n := 1 + r.IntN(3)
	out := make([]any, n)
	for i := range out {
		out[i] = randomNested(r, rank-1)
	}
	return out
}

// TestAgainstTensorFlowRandom compares TensorFlow's StructuredTensor ops
// with ours on random records of rank 1 to 3.
func TestAgainstTensorFlowRandom(t *testing.T) {
	python := venvPython(t, ".venv", "TensorFlow")
	r := rand.New(rand.NewPCG(21, 22))
	var cases []tfCase
	for range 20 {
		rank := 1 + r.IntN(3)
		x := randomNested(r, rank)
		n := len(x.([]any))
		idx := make([]string, r.IntN(4))
		for i := range idx {
			idx[i] = strconv.Itoa(r.IntN(n))
		}
		cases = append(cases,
			tfCase{Op: "gather", Args: map[string]string{"indices": "[" + strings.Join(idx, ",") + "]"}, Inputs: []any{x}},
			tfCase{Op: "expand_dims", Args: map[string]string{"axis": strconv.Itoa(r.IntN(rank + 1))}, Inputs: []any{x}},
			tfCase{Op: "size", Args: map[string]string{}, Inputs: []any{x}},
			tfCase{Op: "concat", Args: map[string]string{}, Inputs: []any{x, randomNested(r, rank)}},
		)
		if rank >= 2 {
			inner := strconv.Itoa(1 + r.IntN(rank-1))
			cases = append(cases, tfCase{Op: "merge_dims", Args: map[string]string{"outer": "0", "inner": inner}, Inputs: []any{x}})
			var b []string
			for _, row := range x.([]any) {
				b = append(b, strconv.Itoa(r.IntN(len(row.([]any)))))
			}
			cases = append(cases, tfCase{Op: "gather", Args: map[string]string{"indices": "[" + strings.Join(b, ",") + "]", "axis": "1", "batch_dims": "1"}, Inputs: []any{x}})
		}
	}
	res := runPython(t, python, "testdata/tf_reference.py", cases, len(cases))
	for i, c := range cases {
		in := make([]string, len(c.Inputs))
		for j, x := range c.Inputs {
			in[j] = show(x)
		}
		got, err := runCase(t, ddCase{op: c.Op, args: c.Args, inputs: in})
		r := res[i]
		name := fmt.Sprintf("case %d %s %v on %s", i, c.Op, c.Args, strings.Join(in, " "))
		if r.Unsupported != "" {
			t.Errorf("%s: %s", name, r.Unsupported)
			continue
		}
		sameAsTensorFlow(t, name, r, got, err)
	}
	t.Logf("%d random cases compared with TensorFlow", len(cases))
}

// sameAsTensorFlow fails t unless our result (got, err) matches
// TensorFlow's r: both reject the case, or both give equal values.
func sameAsTensorFlow(t *testing.T, name string, r tfResult, got any, err error) {
	t.Helper()
	switch {
	case r.Error != "" && err == nil:
		t.Errorf("%s: TensorFlow rejects it (%s), we give %s", name, r.Error, show(got))
	case r.Error == "" && err != nil:
		t.Errorf("%s: we reject it (%v), TensorFlow gives %s", name, err, show(r.Value))
	case r.Error == "" && !reflect.DeepEqual(canon(got), canon(r.Value)):
		t.Errorf("%s:\n ours %s\n   tf %s", name, show(got), show(r.Value))
	}
}
