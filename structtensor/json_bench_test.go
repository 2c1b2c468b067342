package structtensor

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recipeJSONLines generates n JSON lines shaped like the StructTensor RFC's
// recipe example: nested lists of structs, strings, float vectors, ints.
func recipeJSONLines(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("flour sugar butter egg milk salt cinnamon vanilla baking soda powder cream tartar whisk bake oven " +
		"preheat mix stir fold chill degrees minutes until golden brown together bowl large small cup teaspoon tablespoon")
	phrase := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	f := func() string { return strconv.FormatFloat(float64(r.IntN(10000))/100, 'f', -1, 64) }
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"title":%q,"est_time":%s,"user_embedding":[`, r.Int64N(1<<40), phrase(3), f())
		for j := 0; j < 6; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f())
		}
		b.WriteString(`],"ingredients":[`)
		for j, k := 0, 3+r.IntN(8); j < k; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"amount":%s,"unit":%q,"name":%q}`, f(), words[r.IntN(len(words))], phrase(1+r.IntN(2)))
		}
		b.WriteString(`],"steps":[`)
		for j, k := 0, 2+r.IntN(6); j < k; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"description":%q}`, phrase(6+r.IntN(12)))
		}
		b.WriteString(`],"tags":[`)
		for j, k := 0, r.IntN(4); j < k; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", words[r.IntN(len(words))])
		}
		b.WriteString(`],"user_rating":[`)
		for j, k := 0, r.IntN(4); j < k; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"user_embedding":[`)
			for e := 0; e < 6; e++ {
				if e > 0 {
					b.WriteByte(',')
				}
				b.WriteString(f())
			}
			fmt.Fprintf(&b, `],"score":%s}`, f())
		}
		b.WriteString("]}\n")
	}
	return []byte(b.String())
}

// BenchmarkFromJSONLines reads recipe-like JSON lines; b.SetBytes makes
// the reported MB/s the input throughput on one core.
func BenchmarkFromJSONLines(b *testing.B) {
	data := recipeJSONLines(5000, 1)
	v, err := FromJSONLines(data)
	if err != nil {
		b.Fatal(err)
	}
	spec := v.Spec()
	for _, bc := range []struct {
		name string
		spec []Spec
	}{{"infer", nil}, {"spec", []Spec{spec}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu := cpuTime()
			n := 0
			for b.Loop() {
				if _, err := FromJSONLines(data, bc.spec...); err != nil {
					b.Fatal(err)
				}
				n++
			}
			reportCPUThroughput(b, cpu, n*len(data))
		})
	}
}

// cpuTime returns the CPU time the process has used, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPUThroughput reports MB per CPU second (every thread, the
// garbage collector's included) next to the wall-clock MB/s: on a busy
// machine wall time measures the neighbours, CPU time measures the code.
func reportCPUThroughput(b *testing.B, since time.Duration, nbytes int) {
	if d := cpuTime() - since; d > 0 {
		b.ReportMetric(float64(nbytes)/1e6/d.Seconds(), "MB/cpu-s")
	}
}

func BenchmarkToJSONLines(b *testing.B) {
	data := recipeJSONLines(5000, 1)
	v, err := FromJSONLines(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	cpu := cpuTime()
	n := 0
	for b.Loop() {
		if _, err := ToJSONLines(v); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportCPUThroughput(b, cpu, n*len(data))
}
