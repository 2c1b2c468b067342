package ops_test

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/structtensor/structtensor-go/ops"
	st "github.com/structtensor/structtensor-go/structtensor"
)

// The benchmarks run each op over 10M int64 leaf values (80 MB) and
// report throughput as bytes of output per second (b.SetBytes), beside the
// throughput of a plain Go copy of the same number of bytes measured in
// the same run: ratio_vs_copy is op throughput / copy throughput (1.0
// means as fast as copying the output once). Run with
//
//	go test -run '^$' -bench . ./ops/
//
// BenchmarkCopyBaseline is the anchor: make + copy of 80 MB.

const benchLeaves = 10_000_000

func benchValues(n int) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]int64, n)
	for i := range v {
		v[i] = r.Int64N(1 << 40)
	}
	return v
}

// cpuTime returns the CPU time (user + system) used by the process so
// far. The benchmarks divide bytes by CPU time as well as by wall time:
// on a shared machine wall time counts other processes' turns, and the
// target is a throughput per core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	sinkInt64 []int64
	sinkValue st.Value
)

// measure runs op n times and returns its CPU time per run.
func measure(n int, op func()) time.Duration {
	start := cpuTime()
	for range n {
		op()
	}
	return (cpuTime() - start) / time.Duration(n)
}

// report times the op again by CPU time, interleaved with make + copy of
// the same number of output bytes, three rounds of max(b.N, 3) runs each,
// keeping each side's fastest round (the least disturbed by other
// processes on a shared machine). It reports the op's CPU throughput
// (cpu_MB/s), the copy's (copy_cpu_MB/s) and their ratio (ratio_vs_copy:
// 1.0 is as fast as copying the output once).
func report(b *testing.B, outBytes int, op func()) {
	b.StopTimer()
	n := max(b.N, 3)
	src := benchValues(outBytes / 8)
	copyOnce := func() {
		dst := make([]int64, len(src))
		copy(dst, src)
		sinkInt64 = dst
	}
	opCPU, copyCPU := time.Duration(1<<62), time.Duration(1<<62)
	for range 3 {
		opCPU = min(opCPU, measure(n, op))
		copyCPU = min(copyCPU, measure(n, copyOnce))
	}
	b.ReportMetric(float64(outBytes)/opCPU.Seconds()/1e6, "cpu_MB/s")
	b.ReportMetric(float64(outBytes)/copyCPU.Seconds()/1e6, "copy_cpu_MB/s")
	b.ReportMetric(copyCPU.Seconds()/opCPU.Seconds(), "ratio_vs_copy")
}

func BenchmarkCopyBaseline(b *testing.B) {
	src := benchValues(benchLeaves)
	b.SetBytes(int64(len(src) * 8))
	for b.Loop() {
		dst := make([]int64, len(src))
		copy(dst, src)
		sinkInt64 = dst
	}
}

// recordsWithList is a rank-1 StructTensor of n records, each with a
// ragged int64 field x of perRow values and an int64 id.
func recordsWithList(b *testing.B, n, perRow int) *st.StructTensor {
	vals, err := st.NewTensor(nil, benchValues(n*perRow))
	if err != nil {
		b.Fatal(err)
	}
	x, err := st.NewRaggedFromSplits(vals, evenSplits(n, perRow))
	if err != nil {
		b.Fatal(err)
	}
	id, err := st.NewTensor(nil, benchValues(n))
	if err != nil {
		b.Fatal(err)
	}
	s, err := st.NewStruct(n, st.Field{Name: "x", Value: x}, st.Field{Name: "id", Value: id})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// evenSplits returns the row splits of n rows of per values each.
func evenSplits(n, per int) []int64 {
	splits := make([]int64, n+1)
	for i := range splits {
		splits[i] = int64(i * per)
	}
	return splits
}

// outputBytes counts the bytes of the int64 buffers and row splits of v
// that are not in in: the bytes the op wrote.
func outputBytes(v st.Value) int {
	switch x := v.(type) {
	case *st.Tensor:
		return x.Len() * max(x.DType().Size(), 1)
	case *st.Ragged:
		n := outputBytes(x.Values())
		for _, p := range x.Partitions() {
			if !p.IsUniform() {
				n += 8 * (p.NumRows() + 1)
			}
		}
		return n
	case *st.StructTensor:
		n := 0
		for _, p := range x.Partitions() {
			if !p.IsUniform() {
				n += 8 * (p.NumRows() + 1)
			}
		}
		for _, f := range x.Fields() {
			n += outputBytes(f.Value)
		}
		return n
	}
	return 0
}

// BenchmarkGather shuffles 1M records of 10 values each (10M leaves).
func BenchmarkGather(b *testing.B) {
	const n = benchLeaves / 10
	s := recordsWithList(b, n, 10)
	perm := rand.New(rand.NewPCG(3, 4)).Perm(n)
	idx64 := make([]int64, n)
	for i, p := range perm {
		idx64[i] = int64(p)
	}
	idx, _ := st.NewTensor(nil, idx64)
	out, err := ops.Gather(s, idx, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	nb := outputBytes(out)
	b.SetBytes(int64(nb))
	b.ResetTimer()
	op := func() { sinkValue, _ = ops.Gather(s, idx, 0, 0) }
	for b.Loop() {
		op()
	}
	report(b, nb, op)
}

// BenchmarkGatherLeaf gathers 10M single int64 values by a random
// permutation: the per-element path of the kernel, where every value is a
// cache (and TLB) miss, so it measures the memory system more than the
// kernel.
func BenchmarkGatherLeaf(b *testing.B) {
	t, _ := st.NewTensor(nil, benchValues(benchLeaves))
	perm := rand.New(rand.NewPCG(5, 6)).Perm(benchLeaves)
	idx64 := make([]int64, benchLeaves)
	for i, p := range perm {
		idx64[i] = int64(p)
	}
	idx, _ := st.NewTensor(nil, idx64)
	b.SetBytes(benchLeaves * 8)
	op := func() { sinkValue, _ = ops.Gather(t, idx, 0, 0) }
	for b.Loop() {
		op()
	}
	report(b, benchLeaves*8, op)
}

// BenchmarkBooleanMask keeps a random half of 1M records of 10 values.
func BenchmarkBooleanMask(b *testing.B) {
	const n = benchLeaves / 10
	s := recordsWithList(b, n, 10)
	r := rand.New(rand.NewPCG(7, 8))
	bits := make([]bool, n)
	for i := range bits {
		bits[i] = r.IntN(2) == 0
	}
	mask, _ := st.NewTensor(nil, bits)
	out, err := ops.BooleanMask(s, mask, 0)
	if err != nil {
		b.Fatal(err)
	}
	nb := outputBytes(out)
	b.SetBytes(int64(nb))
	b.ResetTimer()
	op := func() { sinkValue, _ = ops.BooleanMask(s, mask, 0) }
	for b.Loop() {
		op()
	}
	report(b, nb, op)
}

// docsRoot is 500k records, each with 2 docs of 10 tokens (10M tokens).
func docsRoot(b *testing.B) *st.StructTensor {
	const n, docs, tokens = benchLeaves / 20, 2, 10
	vals, _ := st.NewTensor(nil, benchValues(n*docs*tokens))
	tok, err := st.NewRaggedFromSplits(vals, evenSplits(n*docs, tokens))
	if err != nil {
		b.Fatal(err)
	}
	dp, _ := st.NewRowSplits(evenSplits(n, docs))
	d, err := st.NewPartitionedStruct(n, []*st.RowPartition{dp}, st.Field{Name: "tokens", Value: tok})
	if err != nil {
		b.Fatal(err)
	}
	root, err := st.NewStruct(n, st.Field{Name: "docs", Value: d})
	if err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkPromote promotes docs.tokens (10M values) to the root. The
// values are shared, so only the composed row splits are written; the
// bytes reported are the promoted field's logical size (values + splits),
// and copied_bytes/op what was actually written.
func BenchmarkPromote(b *testing.B) {
	root := docsRoot(b)
	out, err := ops.Promote(root, "docs.tokens", "docs_tokens")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := out.Field("docs_tokens")
	nb := outputBytes(f)
	b.SetBytes(int64(nb))
	b.ResetTimer()
	op := func() { sinkValue, _ = ops.Promote(root, "docs.tokens", "docs_tokens") }
	for b.Loop() {
		op()
	}
	report(b, nb, op)
	b.ReportMetric(float64(8*(root.NumRows()+1)), "copied_bytes/op")
}

// BenchmarkBroadcast copies each record's 5 context values under each of
// its 2 items: 1M records, 10M values out.
func BenchmarkBroadcast(b *testing.B) {
	const n, items, ctx = benchLeaves / 10, 2, 5
	s := recordsWithList(b, n, ctx)
	ids, _ := st.NewTensor(nil, benchValues(n*items))
	p, _ := st.NewRowSplits(evenSplits(n, items))
	it, err := st.NewPartitionedStruct(n, []*st.RowPartition{p}, st.Field{Name: "item_id", Value: ids})
	if err != nil {
		b.Fatal(err)
	}
	x, _ := s.Field("x")
	root, err := st.NewStruct(n, st.Field{Name: "ctx", Value: x}, st.Field{Name: "items", Value: it})
	if err != nil {
		b.Fatal(err)
	}
	out, err := ops.Broadcast(root, "ctx", "items", "ctx_copy")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := out.FieldValue("items", "ctx_copy")
	nb := outputBytes(f)
	b.SetBytes(int64(nb))
	b.ResetTimer()
	op := func() { sinkValue, _ = ops.Broadcast(root, "ctx", "items", "ctx_copy") }
	for b.Loop() {
		op()
	}
	report(b, nb, op)
}
