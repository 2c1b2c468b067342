package beam

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	beamsdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/structtensor/structtensor-go/stats"
	"github.com/structtensor/structtensor-go/structtensor"
)

// leafValues collects every leaf's flat values by dotted path.
func leafValues(st *structtensor.StructTensor, prefix string, out map[string][]*structtensor.Tensor) {
	for _, f := range st.Fields() {
		p := prefix + f.Name
		switch v := f.Value.(type) {
		case *structtensor.Tensor:
			out[p] = append(out[p], v)
		case *structtensor.Ragged:
			out[p] = append(out[p], v.Values())
		case *structtensor.StructTensor:
			leafValues(v, p+".", out)
		}
	}
}

// withoutSketches drops the sketches' results from a JSON summary.
func withoutSketches(t *testing.T, js []byte) any {
	var v map[string]any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	for _, f := range v["features"].([]any) {
		f := f.(map[string]any)
		if n, ok := f["numbers"].(map[string]any); ok {
			delete(n, "quantiles")
			delete(n, "median")
			delete(n, "quantile_rank_error")
		}
		if s, ok := f["strings"].(map[string]any); ok {
			delete(s, "distinct")
			delete(s, "top")
			delete(s, "top_max_undercount")
		}
	}
	return v
}

// TestStatsEqualSingleProcess: statistics computed by the pipeline over
// many small split reads (many partial statistics, merged through their
// coder) have exactly the exact quantities of one process over the same
// records, and sketches within their bounds of the exact values; in
// process and in worker processes (Prism's PROCESS environment, one and
// two harness processes).
func TestStatsEqualSingleProcess(t *testing.T) {
	glob, opts := recipeFiles(t)
	// Small sketches, so that their bounds are exercised.
	sopts := stats.Options{QuantileK: 16, TopCounters: 8, TopK: 5, DistinctPrecision: 12}

	direct, err := stats.New(sopts)
	if err != nil {
		t.Fatal(err)
	}
	leaves := map[string][]*structtensor.Tensor{}
	decodeFiles(t, glob, opts, func(_ string, _ []int64, st *structtensor.StructTensor) {
		if err := direct.Add(st); err != nil {
			t.Fatal(err)
		}
		leafValues(st, "", leaves)
	})
	if direct.Records() < 3000 {
		t.Fatalf("only %d records", direct.Records())
	}
	var want bytes.Buffer
	if err := direct.Summary().WriteJSON(&want); err != nil {
		t.Fatal(err)
	}

	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			// Count the merges of two non-empty partials: there must be
			// some. The hook sees the merges of this process only, which
			// runs them in loopback mode.
			var merges atomic.Int64
			onStatsMerge = func(a, b uint64) {
				if a > 0 && b > 0 {
					merges.Add(1)
				}
			}
			defer func() { onStatsMerge = nil }()

			prefix := filepath.Join(t.TempDir(), "stats")
			p, s := beamsdk.NewPipelineWithRoot()
			batches, err := Read(s, glob, ReadOptions{SplitSize: 1009, BatchBytes: 3000})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := Decode(s, batches, opts)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Stats(s, rows, StatsOptions{Options: sopts, Shards: 7})
			if err != nil {
				t.Fatal(err)
			}
			written := WriteStats(s, st, prefix, WriteStatsOptions{DatasetName: "recipes"})
			passert.Equals(s, written, prefix+".json", prefix+".pb", prefix+".pbtxt")
			if err := mode.run(t, p, runOptions{}); err != nil {
				t.Fatal(err)
			}
			if mode == loopback {
				if merges.Load() < 2 {
					t.Fatalf("%d merges of non-empty partial statistics: the test does not test merging", merges.Load())
				}
				t.Logf("%d merges of non-empty partial statistics", merges.Load())
			}
			checkStats(t, prefix, want.Bytes(), leaves)
		})
	}
}

// checkStats compares the statistics a pipeline wrote under prefix with
// want, one process's over the same records: the exact quantities equal,
// and the sketches' results within their bounds of the exact values
// computed from leaves (every leaf's values by dotted path).
func checkStats(t *testing.T, prefix string, want []byte, leaves map[string][]*structtensor.Tensor) {
	got, err := os.ReadFile(prefix + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := withoutSketches(t, got), withoutSketches(t, want); !jsonEqual(g, w) {
		t.Fatalf("the pipeline's exact statistics differ from one process's:\n%s\nwant\n%s", got, want)
	}
	var sum struct {
		Features []struct {
			Path    []string
			Numbers *struct {
				Count             uint64
				Quantiles         []any
				QuantileRankError float64 `json:"quantile_rank_error"`
			}
			Strings *struct {
				Count                 uint64
				Distinct              uint64
				DistinctStandardError float64 `json:"distinct_standard_error"`
				Top                   []struct {
					Value string
					Count uint64
				}
				TopMaxUndercount uint64 `json:"top_max_undercount"`
			}
		}
	}
	if err := json.Unmarshal(got, &sum); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range sum.Features {
		key := strings.Join(f.Path, ".")
		switch {
		case f.Numbers != nil && f.Numbers.Count > 0:
			checkQuantiles(t, key, leaves[key], f.Numbers.Quantiles, f.Numbers.QuantileRankError)
			checked++
		case f.Strings != nil && f.Strings.Count > 0:
			counts := map[string]uint64{}
			for _, tn := range leaves[key] {
				for i := range tn.Len() {
					counts[string(tn.StringAt(i))]++
				}
			}
			d := float64(len(counts))
			if tol := 4*f.Strings.DistinctStandardError*d + 3; math.Abs(float64(f.Strings.Distinct)-d) > tol {
				t.Errorf("%s: %d distinct, want %v ± %v", key, f.Strings.Distinct, d, tol)
			}
			for _, tv := range f.Strings.Top {
				c := counts[tv.Value]
				if tv.Count > c || c-tv.Count > f.Strings.TopMaxUndercount {
					t.Errorf("%s: %q counted %d, true %d, bound %d", key, tv.Value, tv.Count, c, f.Strings.TopMaxUndercount)
				}
			}
			checked++
		}
	}
	if checked < 4 {
		t.Fatalf("only %d features with sketches checked", checked)
	}
	for _, ext := range []string{".pb", ".pbtxt"} {
		if fi, err := os.Stat(prefix + ext); err != nil || fi.Size() == 0 {
			t.Errorf("%s%s: %v", prefix, ext, err)
		}
	}
	if temps, _ := filepath.Glob(prefix + "*.temp-*"); len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// checkQuantiles: each reported quantile's true rank is within the
// reported bound of its target.
func checkQuantiles(t *testing.T, key string, tensors []*structtensor.Tensor, qs []any, eps float64) {
	var vals []float64
	for _, tn := range tensors {
		for i := range tn.Len() {
			var x float64
			switch v := tn.Elem(i).(type) {
			case bool:
				if v {
					x = 1
				}
			case int32:
				x = float64(v)
			case int64:
				x = float64(v)
			case uint32:
				x = float64(v)
			case uint64:
				x = float64(v)
			case float32:
				x = float64(v)
			case float64:
				x = v
			}
			if !math.IsNaN(x) {
				vals = append(vals, x)
			}
		}
	}
	slices.Sort(vals)
	n := float64(len(vals))
	for i, q := range qs {
		var x float64
		switch v := q.(type) {
		case float64:
			x = v
		case string:
			x = map[string]float64{"+Inf": math.Inf(1), "-Inf": math.Inf(-1)}[v]
		}
		target := float64(i) / float64(len(qs)-1) * n
		below := float64(sort.SearchFloat64s(vals, x))
		atOrBelow := float64(sort.Search(len(vals), func(j int) bool { return vals[j] > x }))
		if below > target+eps*n || atOrBelow < target-eps*n {
			t.Errorf("%s: quantile %d = %v has rank [%v, %v], want %v ± %v", key, i, x, below, atOrBelow, target, eps*n)
		}
	}
}
