package starrow

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	st "github.com/structtensor/structtensor-go/structtensor"
)

// recipeLines generates n recipe records shaped like
// testdata/recipe/recipes.json (nested lists of structs, fixed-size float
// embeddings, strings), deterministically.
func recipeLines(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("flour sugar butter egg milk salt oil water lemon cinnamon oven bowl whisk stir bake fry rest mix add heat")
	word := func() string { return words[rng.IntN(len(words))] }
	f := func() string { return fmt.Sprintf("%.2f", rng.Float64()*10) }
	emb := func(b *strings.Builder) {
		b.WriteByte('[')
		for e := 0; e < 6; e++ {
			if e > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f())
		}
		b.WriteByte(']')
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(`{"user_embedding": `)
		emb(&b)
		fmt.Fprintf(&b, `, "recipe": {"title": "%s %s %d", "est_time": %s, "ingredients": [`, word(), word(), i, f())
		for k, m := 0, 1+rng.IntN(8); k < m; k++ {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"amount": %s, "unit": "%s", "name": "%s %s"}`, f(), word(), word(), word())
		}
		b.WriteString(`], "step": [`)
		for k, m := 0, 1+rng.IntN(5); k < m; k++ {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"description": "%s the %s, then %s the %s until done."}`, word(), word(), word(), word())
		}
		b.WriteString(`], "user_rating": [`)
		for k, m := 0, rng.IntN(4); k < m; k++ {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`{"user_embedding": `)
			emb(&b)
			fmt.Fprintf(&b, `, "score": %s}`, f())
		}
		b.WriteString("]}}\n")
	}
	return []byte(b.String())
}

func recipeSpec(b *testing.B) st.Spec {
	raw, err := os.ReadFile("../testdata/recipe/recipes.spec.json")
	if err != nil {
		b.Fatal(err)
	}
	spec, err := st.UnmarshalSpec(raw)
	if err != nil {
		b.Fatal(err)
	}
	return spec
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// jsonCPU holds the CPU seconds per input MB of each reader, measured by
// the sub-benchmarks, for the ratio.
var jsonCPU = map[string]float64{}

// BenchmarkJSONLines reads the same recipe-like JSON lines (about 10 MB)
// with structtensor.FromJSONLines (given the recipe spec) and with
// arrow-go's JSON reader into the equivalent Arrow schema (the schema
// ToArrow gives the result), one goroutine each. MB/s is wall-clock input
// throughput; MB/cpu-s counts CPU time of every thread (garbage collector
// included), which a busy machine does not distort. The ratio
// sub-benchmark reports structtensor's CPU throughput over arrow-go's.
func BenchmarkJSONLines(b *testing.B) {
	data := recipeLines(20000)
	spec := recipeSpec(b)
	v, err := st.FromJSONLines(data, spec)
	if err != nil {
		b.Fatal(err)
	}
	rec, err := ToArrow(v.(*st.StructTensor))
	if err != nil {
		b.Fatal(err)
	}
	schema := rec.Schema()
	readers := []struct {
		name string
		read func() error
	}{
		{"structtensor", func() error {
			_, err := st.FromJSONLines(data, spec)
			return err
		}},
		{"arrow-go", func() error {
			r := array.NewJSONReader(bytes.NewReader(data), schema, array.WithChunk(-1), array.WithAllocator(memory.NewGoAllocator()))
			defer r.Release()
			rows := 0
			for r.Next() {
				rows += int(r.RecordBatch().NumRows())
			}
			if err := r.Err(); err != nil {
				return err
			}
			if rows != v.NumRows() {
				return fmt.Errorf("arrow-go read %d rows, want %d", rows, v.NumRows())
			}
			return nil
		}},
	}
	for _, rd := range readers {
		b.Run(rd.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu := cpuTime()
			n := 0
			for b.Loop() {
				if err := rd.read(); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if d := cpuTime() - cpu; d > 0 {
				mbps := float64(n*len(data)) / 1e6 / d.Seconds()
				b.ReportMetric(mbps, "MB/cpu-s")
				jsonCPU[rd.name] = mbps
			}
		})
	}
	b.Run("ratio", func(b *testing.B) {
		ours, theirs := jsonCPU["structtensor"], jsonCPU["arrow-go"]
		if ours == 0 || theirs == 0 {
			b.Skip("run with the structtensor and arrow-go sub-benchmarks")
		}
		for b.Loop() {
		}
		b.ReportMetric(ours/theirs, "x-arrow-go")
		b.ReportMetric(ours, "MB/cpu-s")
	})
}
