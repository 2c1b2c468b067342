package ops_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// The data-driven tests read testdata/*.txt. Each case is
//
//	# comment
//	<op> key=value ...
//	<input value, one JSON per line>
//	----
//	<expected JSON value, or "error: <text the error must contain>">
//
// and cases are separated by blank lines. Expected values are written by
// hand from the semantics of TensorFlow and struct2tensor; there is no
// -update flag because the code under test must not write its own
// expectations.

type ddCase struct {
	file   string
	line   int
	op     string
	args   map[string]string
	inputs []string
	want   string
}

func readCases(t *testing.T, path string) []ddCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []ddCase
	var cur *ddCase
	inWant := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
		case line == "":
			if cur != nil {
				cases = append(cases, *cur)
				cur, inWant = nil, false
			}
		case cur == nil:
			fields := strings.Fields(line)
			cur = &ddCase{file: filepath.Base(path), line: n, op: fields[0], args: map[string]string{}}
			for _, kv := range fields[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("%s:%d: argument %q is not key=value", path, n, kv)
				}
				cur.args[k] = v
			}
		case line == "----":
			inWant = true
		case inWant:
			cur.want += line
		default:
			cur.inputs = append(cur.inputs, line)
		}
	}
	if cur != nil {
		cases = append(cases, *cur)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, path := range files {
		for _, c := range readCases(t, path) {
			t.Run(fmt.Sprintf("%s:%d:%s", c.file, c.line, c.op), func(t *testing.T) {
				got, err := runCase(t, c)
				if want, ok := strings.CutPrefix(c.want, "error: "); ok {
					if err == nil {
						t.Fatalf("got %s, want an error containing %q", show(got), want)
					}
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("error %q does not contain %q", err, want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if w := canon(parseJSON(t, c.want)); !reflect.DeepEqual(canon(got), w) {
					t.Fatalf("got  %s\nwant %s", show(got), c.want)
				}
			})
		}
	}
}

func (c ddCase) int(t *testing.T, key string) int {
	v, ok := c.args[key]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%s: %v", key, v, err)
	}
	return n
}

func (c ddCase) value(t *testing.T, key string) st.Value {
	v, ok := c.args[key]
	if !ok {
		t.Fatalf("missing argument %s", key)
	}
	return value(t, v)
}

// runCase runs one case and returns its result in ToValue form.
func runCase(t *testing.T, c ddCase) (any, error) {
	in := make([]st.Value, len(c.inputs))
	for i, s := range c.inputs {
		in[i] = value(t, s)
	}
	root := func() *st.StructTensor {
		s, ok := in[0].(*st.StructTensor)
		if !ok {
			t.Fatalf("input is not a struct")
		}
		return s
	}
	var v st.Value
	var err error
	switch c.op {
	case "gather":
		v, err = ops.Gather(in[0], c.value(t, "indices"), c.int(t, "axis"), c.int(t, "batch_dims"))
	case "batch_gather":
		v, err = ops.BatchGather(in[0], c.value(t, "indices"))
	case "gather_nd":
		v, err = ops.GatherND(in[0], c.value(t, "indices"), c.int(t, "batch_dims"))
	case "boolean_mask":
		v, err = ops.BooleanMask(in[0], c.value(t, "mask"), c.int(t, "axis"))
	case "concat":
		v, err = ops.Concat(in, c.int(t, "axis"))
	case "stack":
		v, err = ops.Stack(in, c.int(t, "axis"))
	case "unstack":
		vs, err := ops.Unstack(in[0], c.int(t, "axis"))
		if err != nil {
			return nil, err
		}
		out := make([]any, len(vs))
		for i, x := range vs {
			out[i] = st.ToValue(x)
		}
		return out, nil
	case "expand_dims":
		v, err = ops.ExpandDims(in[0], c.int(t, "axis"))
	case "squeeze":
		v, err = ops.Squeeze(in[0], c.int(t, "axis"))
	case "tile":
		var m []int
		for _, s := range strings.Split(c.args["multiples"], ",") {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			m = append(m, n)
		}
		v, err = ops.Tile(in[0], m)
	case "where":
		v, err = ops.Where(c.value(t, "cond"), in[0], in[1])
	case "merge_dims":
		v, err = ops.MergeDims(in[0], c.int(t, "outer"), c.int(t, "inner"))
	case "partition_outer_dimension":
		var splits []int64
		for _, s := range strings.Split(c.args["splits"], ",") {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			splits = append(splits, n)
		}
		p, perr := st.NewRowSplits(splits)
		if perr != nil {
			return nil, perr
		}
		v, err = ops.PartitionOuterDimension(in[0], p)
	case "shape":
		return fmt.Sprint(ops.Shape(in[0])), nil
	case "size":
		return int64(ops.Size(in[0])), nil
	case "rank":
		return int64(ops.Rank(in[0])), nil
	case "promote":
		v, err = ops.Promote(root(), c.args["src"], c.args["new"])
	case "broadcast":
		v, err = ops.Broadcast(root(), c.args["src"], c.args["sibling"], c.args["new"])
	case "promote_and_broadcast":
		v, err = ops.PromoteAndBroadcast(root(), map[string]string{c.args["new"]: c.args["src"]}, c.args["dest"])
	case "reroot":
		v, err = ops.Reroot(root(), c.args["path"], c.args["index"])
	case "project":
		v, err = ops.Project(root(), strings.Split(c.args["paths"], ",")...)
	case "slice":
		end := ops.SliceEnd
		if _, ok := c.args["end"]; ok {
			end = c.int(t, "end")
		}
		v, err = ops.Slice(root(), c.args["path"], c.args["new"], c.int(t, "begin"), end)
	case "truncate":
		v, err = ops.Truncate(root(), c.args["path"], c.args["new"], c.int(t, "limit"))
	case "size_field":
		v, err = ops.SizeField(root(), c.args["path"], c.args["new"])
	case "has_field":
		v, err = ops.HasField(root(), c.args["path"], c.args["new"])
	case "positional_index":
		v, err = ops.PositionalIndex(root(), c.args["path"], c.args["new"])
	case "positional_index_from_end":
		v, err = ops.PositionalIndexFromEnd(root(), c.args["path"], c.args["new"])
	case "filter_by_child":
		v, err = ops.FilterByChild(root(), c.args["path"], c.args["child"], c.args["new"])
	case "filter_by_sibling":
		v, err = ops.FilterBySibling(root(), c.args["path"], c.args["sibling"], c.args["new"])
	default:
		t.Fatalf("unknown op %q", c.op)
	}
	if err != nil {
		return nil, err
	}
	return st.ToValue(v), nil
}
