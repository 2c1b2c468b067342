package decode

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Benchmark datasets, deterministic, shaped like the bench/ harness's:
// flat (100 packed int64 fields x 100 values), recipe (three levels of
// nested messages with strings), tfexample (50 features), elwc (20
// examples per list).

type benchBuilder struct {
	t   testing.TB
	d   *Descriptors
	rng *rand.Rand
}

func (b *benchBuilder) msg(name string) *dynamicpb.Message {
	md, err := b.d.Message(name)
	if err != nil {
		b.t.Fatal(err)
	}
	return dynamicpb.NewMessage(md)
}

func set(m *dynamicpb.Message, field string, v any) {
	m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(field)), protoreflect.ValueOf(v))
}

func add(m *dynamicpb.Message, field string, v any) {
	l := m.Mutable(m.Descriptor().Fields().ByName(protoreflect.Name(field))).List()
	l.Append(protoreflect.ValueOf(v))
}

func (b *benchBuilder) word() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	n := 3 + b.rng.IntN(10)
	w := make([]byte, n)
	for i := range w {
		w[i] = letters[b.rng.IntN(len(letters))]
	}
	return string(w)
}

func (b *benchBuilder) flat() *dynamicpb.Message {
	m := b.msg("structtensor.testdata.flat.Flat")
	for f := 1; f <= 100; f++ {
		for i := 0; i < 100; i++ {
			add(m, fmt.Sprintf("f%d", f), b.rng.Int64N(int64(1)<<(7*(1+b.rng.IntN(5)))))
		}
	}
	return m
}

func (b *benchBuilder) recipe() *dynamicpb.Message {
	m := b.msg("structtensor.testdata.recipe.Recipe")
	set(m, "title", b.word()+" "+b.word())
	set(m, "servings", int32(1+b.rng.IntN(8)))
	for i := 0; i < 6; i++ {
		in := b.msg("structtensor.testdata.recipe.Ingredient")
		set(in, "name", b.word())
		set(in, "amount", b.rng.Float32()*500)
		set(in, "unit", []string{"g", "ml", "cup", "tbsp"}[b.rng.IntN(4)])
		add(m, "ingredients", in)
	}
	for i := 0; i < 3; i++ {
		r := b.msg("structtensor.testdata.recipe.UserRating")
		set(r, "user", b.word())
		set(r, "rating", int32(1+b.rng.IntN(5)))
		for k := 0; k < 8; k++ {
			add(r, "user_embedding", b.rng.Float32())
		}
		add(m, "ratings", r)
	}
	for i := 0; i < 4; i++ {
		s := b.msg("structtensor.testdata.recipe.Step")
		set(s, "instruction", b.word()+" the "+b.word()+" with "+b.word())
		set(s, "minutes", int32(b.rng.IntN(60)))
		for k := 0; k < 2; k++ {
			tl := b.msg("structtensor.testdata.recipe.Tool")
			set(tl, "name", b.word())
			set(tl, "electric", b.rng.IntN(2) == 0)
			add(s, "tools", tl)
		}
		add(m, "steps", s)
	}
	for i := 0; i < 3; i++ {
		add(m, "tags", b.word())
	}
	return m
}

func (b *benchBuilder) example(nfeatures int) *dynamicpb.Message {
	ex := b.msg("structtensor.testdata.example.Example")
	fs := b.msg("structtensor.testdata.example.Features")
	fm := fs.Mutable(fs.Descriptor().Fields().ByName("feature")).Map()
	for i := 0; i < nfeatures; i++ {
		f := b.msg("structtensor.testdata.example.Feature")
		switch i % 5 {
		case 0, 1:
			l := b.msg("structtensor.testdata.example.Int64List")
			for k := 0; k < 5; k++ {
				add(l, "value", b.rng.Int64N(1<<30))
			}
			set(f, "int64_list", l)
		case 2, 3:
			l := b.msg("structtensor.testdata.example.FloatList")
			for k := 0; k < 5; k++ {
				add(l, "value", b.rng.Float32())
			}
			set(f, "float_list", l)
		default:
			l := b.msg("structtensor.testdata.example.BytesList")
			for k := 0; k < 2; k++ {
				add(l, "value", []byte(b.word()))
			}
			set(f, "bytes_list", l)
		}
		fm.Set(protoreflect.ValueOfString(fmt.Sprintf("feature_%02d", i)).MapKey(), protoreflect.ValueOfMessage(f))
	}
	set(ex, "features", fs)
	return ex
}

func (b *benchBuilder) elwc() *dynamicpb.Message {
	m := b.msg("structtensor.testdata.example.ExampleListWithContext")
	for i := 0; i < 20; i++ {
		add(m, "examples", b.example(10))
	}
	set(m, "context", b.example(10))
	return m
}

type benchDataset struct {
	name    string
	message string
	records [][]byte
	bytes   int64
}

func benchDatasets(t testing.TB, n int) []benchDataset {
	d := testDescriptors(t)
	b := &benchBuilder{t: t, d: d, rng: rand.New(rand.NewPCG(1, 2))}
	gens := []struct {
		name, message string
		gen           func() *dynamicpb.Message
		count         int
	}{
		{"flat", "structtensor.testdata.flat.Flat", b.flat, n / 8},
		{"recipe", "structtensor.testdata.recipe.Recipe", b.recipe, n},
		{"tfexample", "structtensor.testdata.example.Example", func() *dynamicpb.Message { return b.example(50) }, n},
		{"elwc", "structtensor.testdata.example.ExampleListWithContext", b.elwc, n / 4},
	}
	var out []benchDataset
	for _, g := range gens {
		ds := benchDataset{name: g.name, message: g.message}
		for i := 0; i < g.count; i++ {
			rec, err := proto.MarshalOptions{Deterministic: true}.Marshal(g.gen())
			if err != nil {
				t.Fatal(err)
			}
			ds.records = append(ds.records, rec)
			ds.bytes += int64(len(rec))
		}
		out = append(out, ds)
	}
	return out
}

// BenchmarkDecode measures decoding throughput (MB/s of serialized input)
// single-threaded (1t) and on all cores (all), with every field projected.
func BenchmarkDecode(b *testing.B) {
	d := testDescriptors(b)
	for _, ds := range benchDatasets(b, 1024) {
		plan, err := Compile(d, ds.message)
		if err != nil {
			b.Fatal(err)
		}
		for _, threads := range []struct {
			name string
			n    int
		}{{"1t", 1}, {"all", 0}} {
			b.Run(ds.name+"/"+threads.name, func(b *testing.B) {
				b.SetBytes(ds.bytes)
				runtime.GC() // the datasets' construction garbage is not the decoder's
				cpu0 := cpuTime()
				for b.Loop() {
					if _, err := plan.Decode(ds.records, DecodeOptions{Threads: threads.n}); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu0, ds.bytes)
			})
		}
	}
}

// BenchmarkReference measures the reference path (dynamicpb unmarshal
// only, without even building columns) on the same data, as an anchor.
func BenchmarkReference(b *testing.B) {
	d := testDescriptors(b)
	for _, ds := range benchDatasets(b, 1024) {
		md, err := d.Message(ds.message)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(ds.name, func(b *testing.B) {
			b.SetBytes(ds.bytes)
			runtime.GC()
			cpu0 := cpuTime()
			for b.Loop() {
				for _, r := range ds.records {
					if _, err := refUnmarshal(md, r); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, cpu0, ds.bytes)
		})
	}
}

// cpuTime is the process's user+system CPU time: on a shared machine,
// throughput per CPU-second is steadier than per wall-second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration, bytes int64) {
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}
