// Package copstest generates deterministic random protobuf records of any
// message type, for the tests of the decode op (package cops), of DataViews
// (package savedmodel) and of their Python interop: the same seed always
// gives the same bytes, so Go and Python tests can be compared record by
// record.
package copstest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// DescriptorSetPath is the FileDescriptorSet of the test schemas, relative
// to the module root.
const DescriptorSetPath = "testdata/proto/testdata.pb"

// Messages are the test schemas the issue names: the recipe, tf.Example and
// ExampleListWithContext.
var Messages = []string{
	"structtensor.testdata.recipe.Recipe",
	"structtensor.testdata.example.Example",
	"structtensor.testdata.example.ExampleListWithContext",
}

// LoadDescriptors reads the FileDescriptorSet at path.
func LoadDescriptors(path string) (*decode.Descriptors, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decode.LoadDescriptorSet(b)
}

// Descriptors loads the test schemas (DescriptorSetPath at the module
// root) for a test, failing it when they cannot be read.
func Descriptors(t testing.TB) *decode.Descriptors {
	t.Helper()
	d, err := LoadDescriptors(filepath.Join(testenv.ModuleRoot(t), DescriptorSetPath))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Options shape the generated records.
type Options struct {
	// MaxRepeated bounds the length of repeated fields and maps (default 3).
	MaxRepeated int
	// MaxDepth bounds message nesting; deeper message fields stay unset
	// (default 4).
	MaxDepth int
}

// Records returns n serialized records of message md, generated from seed.
func Records(md protoreflect.MessageDescriptor, n int, seed uint64, opts Options) ([][]byte, error) {
	if opts.MaxRepeated <= 0 {
		opts.MaxRepeated = 3
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 4
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), opts: opts}
	out := make([][]byte, n)
	for i := range out {
		m := dynamicpb.NewMessage(md)
		g.fill(m, 0)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("copstest: record %d of %s: %w", i, md.FullName(), err)
		}
		out[i] = b
	}
	return out, nil
}

type gen struct {
	r    *rand.Rand
	opts Options
}

var words = []string{"flour", "sugar", "egg", "milk", "salt", "butter", "oven", "whisk", "pan", "knife", "ünïcode", "", "a somewhat longer string that does not fit inline"}

func (g *gen) fill(m protoreflect.Message, depth int) {
	// A oneof gets at most one member, chosen at random.
	chosen := map[protoreflect.FieldDescriptor]bool{}
	oneofs := m.Descriptor().Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		if od := oneofs.Get(i); !od.IsSynthetic() {
			if k := g.r.IntN(od.Fields().Len() + 1); k < od.Fields().Len() {
				chosen[od.Fields().Get(k)] = true
			}
		}
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && !chosen[fd] {
			continue
		}
		if fd.Message() != nil && !fd.IsMap() && depth >= g.opts.MaxDepth && fd.Cardinality() != protoreflect.Required {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for n := g.r.IntN(g.opts.MaxRepeated + 1); n > 0; n-- {
				k := g.scalar(fd.MapKey()).MapKey()
				if fd.MapValue().Message() != nil {
					v := mp.NewValue()
					g.fill(v.Message(), depth+1)
					mp.Set(k, v)
				} else {
					mp.Set(k, g.scalar(fd.MapValue()))
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for n := g.r.IntN(g.opts.MaxRepeated + 1); n > 0; n-- {
				if fd.Message() != nil {
					v := l.NewElement()
					g.fill(v.Message(), depth+1)
					l.Append(v)
				} else {
					l.Append(g.scalar(fd))
				}
			}
		default:
			if fd.Cardinality() != protoreflect.Required && g.r.IntN(3) == 0 {
				continue // absent
			}
			if fd.Message() != nil {
				g.fill(m.Mutable(fd).Message(), depth+1)
			} else {
				m.Set(fd, g.scalar(fd))
			}
		}
	}
}

func (g *gen) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	small := g.r.IntN(4) == 0 // zero values and small numbers are common
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.r.IntN(2) == 1)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(g.r.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if small {
			return protoreflect.ValueOfInt32(int32(g.r.IntN(3)))
		}
		return protoreflect.ValueOfInt32(int32(g.r.Uint32()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if small {
			return protoreflect.ValueOfInt64(int64(g.r.IntN(3)))
		}
		return protoreflect.ValueOfInt64(int64(g.r.Uint64()) >> g.r.IntN(64))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(g.r.Uint32() >> g.r.IntN(32))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(g.r.Uint64() >> g.r.IntN(64))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(math.Round(g.r.NormFloat64()*1000) / 100))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.r.NormFloat64() * 100)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(words[g.r.IntN(len(words))])
	case protoreflect.BytesKind:
		b := make([]byte, g.r.IntN(12))
		for i := range b {
			b[i] = byte(g.r.Uint32())
		}
		return protoreflect.ValueOfBytes(b)
	}
	panic(fmt.Sprintf("copstest: unhandled kind %v", fd.Kind()))
}
