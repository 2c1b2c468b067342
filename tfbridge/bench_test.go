package tfbridge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/structtensor"
)

// Conversion benchmarks. Each case runs next to its anchor, a plain Go copy
// of the same bytes (the floor for any conversion that copies once), so
// `go test -bench Convert ./tfbridge/` reports both side by side:
//
//	to-tf-copy: structtensor.Tensor -> TF_Tensor, copying
//	to-tf-lend: the same, lending the pinned Go buffer (NewTensor does
//	            this from 64 KiB on)
//	from-tf:   TF_Tensor -> structtensor.Tensor (Tensor.Value)
//	go-copy:   copy() of the same payload between Go buffers
//	roundtrip: NewTensor + feed + Identity + fetch + Value through a Session

func benchTensors(b *testing.B) map[string]*structtensor.Tensor {
	b.Helper()
	const n = 1 << 20
	ints := make([]int64, n)
	floats := make([]float32, n)
	for i := range ints {
		ints[i] = int64(i)
		floats[i] = float32(i)
	}
	small := make([]string, n)
	for i := range small {
		small[i] = fmt.Sprintf("value-%d", i) // 7-13 bytes: inline TF_TStrings
	}
	large := make([]string, 1<<12)
	for i := range large {
		large[i] = strings.Repeat("x", 1000+i%100) // heap TF_TStrings
	}
	out := map[string]*structtensor.Tensor{}
	for name, v := range map[string]any{"int64-1M": ints, "float32-1M": floats, "string-1Mx10B": small, "string-4Kx1KB": large} {
		t, err := structtensor.NewTensor(nil, v)
		if err != nil {
			b.Fatal(err)
		}
		out[name] = t
	}
	return out
}

func payload(t *structtensor.Tensor) int {
	if t.DType() == structtensor.String {
		data, offsets := t.StringData()
		return len(data) + 8*len(offsets)
	}
	return t.Len() * t.DType().Size()
}

func BenchmarkConvert(b *testing.B) {
	tensors := benchTensors(b)
	for _, name := range []string{"int64-1M", "float32-1M", "string-1Mx10B", "string-4Kx1KB"} {
		v := tensors[name]
		size := int64(payload(v))
		for _, m := range []struct {
			name string
			mode conversion
		}{{"to-tf-copy", convCopy}, {"to-tf-lend", convBorrow}} {
			b.Run(name+"/"+m.name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					t, err := newTensor(v, m.mode)
					if err != nil {
						b.Fatal(err)
					}
					t.Close()
				}
			})
		}
		b.Run(name+"/from-tf", func(b *testing.B) {
			t, err := NewTensor(v)
			if err != nil {
				b.Fatal(err)
			}
			defer t.Close()
			b.SetBytes(size)
			for b.Loop() {
				if _, err := t.Value(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/go-copy", func(b *testing.B) {
			b.SetBytes(size)
			if v.DType() == structtensor.String {
				data, offsets := v.StringData()
				for b.Loop() {
					d := make([]byte, len(data))
					o := make([]int64, len(offsets))
					copy(d, data)
					copy(o, offsets)
				}
				return
			}
			src := goBytes(v.Data(), int(size))
			for b.Loop() {
				dst := make([]byte, len(src))
				copy(dst, src)
			}
		})
		b.Run(name+"/roundtrip", func(b *testing.B) {
			dt, _ := DTypeOf(v.DType())
			g := NewGraph()
			defer g.Close()
			x, err := g.AddOperation(OpSpec{Type: "Placeholder", Attrs: map[string]any{"dtype": dt}})
			if err != nil {
				b.Fatal(err)
			}
			y, err := g.AddOperation(OpSpec{Type: "Identity", Input: []Input{x.Output(0)}})
			if err != nil {
				b.Fatal(err)
			}
			s, err := NewSession(g)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(size)
			for b.Loop() {
				in, err := NewTensor(v)
				if err != nil {
					b.Fatal(err)
				}
				out, err := s.Run(map[Output]*Tensor{x.Output(0): in}, []Output{y.Output(0)}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := out[0].Value(); err != nil {
					b.Fatal(err)
				}
				in.Close()
				out[0].Close()
			}
		})
	}
}
