package native_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	tfexample "github.com/wamuir/graft/tensorflow/core/example/example_protos_go_proto"
	"google.golang.org/protobuf/proto"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/native"
	"github.com/structtensor/structtensor-go/structtensor"
)

// TestExampleCopyIntoChecksItsArguments checks st_example_result_copy_into
// against a caller that gets the layout wrong: an output past the block's
// end, an output the slot does not have, too few offsets, no block. Each
// is refused with ST_ERR_ARGUMENT and leaves the block as it was; the
// right layout copies the values and row splits a decode gives.
func TestExampleCopyIntoChecksItsArguments(t *testing.T) {
	spec := &decode.ExampleSpec{Features: map[string]decode.Feature{
		"a": {Kind: decode.VarLen, DType: structtensor.Int64},
	}}
	compiled, err := decode.CompileExample(spec)
	if err != nil {
		t.Fatal(err)
	}
	form, err := compiled.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := native.NewExamplePlan(form)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	offsets := []int64{0}
	for _, vals := range [][]int64{{1, 2}, {}, {3, 4, 5}} {
		ex := &tfexample.Example{Features: &tfexample.Features{Feature: map[string]*tfexample.Feature{
			"a": {Kind: &tfexample.Feature_Int64List{Int64List: &tfexample.Int64List{Value: vals}}},
		}}}
		b, err := proto.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
		offsets = append(offsets, int64(len(data)))
	}
	// One slot: 5 int64 values (40 bytes) and 4 row splits (32 bytes).
	const values, splits = 40, 32
	good := []int64{0, -1, 64, -1}
	for _, c := range []struct {
		name  string
		block int
		at    []int64
	}{
		{"values past the end", 96, []int64{64, -1, 0, -1}},
		{"splits past the end", 96, []int64{0, -1, 65, -1}},
		{"an offset beyond the block", 96, []int64{1 << 40, -1, 0, -1}},
		{"string offsets of an int64 slot", 256, []int64{0, 64, 128, -1}},
		{"a second level the slot lacks", 256, []int64{0, -1, 64, 128}},
		{"too few offsets", 256, good[:3]},
		{"no block", 0, good},
	} {
		block := bytes.Repeat([]byte{0xAA}, c.block)
		code, err := native.ExampleCopyInto(plan, data, offsets, block, c.at)
		if err != nil {
			t.Fatal(err)
		}
		if code != native.CodeArgument {
			t.Errorf("%s: code %d, want %d (ST_ERR_ARGUMENT)", c.name, code, native.CodeArgument)
		}
		if !bytes.Equal(block, bytes.Repeat([]byte{0xAA}, c.block)) {
			t.Errorf("%s: the refused copy wrote into the block", c.name)
		}
	}
	block := bytes.Repeat([]byte{0xAA}, 64+splits)
	code, err := native.ExampleCopyInto(plan, data, offsets, block, good)
	if err != nil || code != 0 {
		t.Fatalf("the right layout: code %d, %v", code, err)
	}
	read := func(b []byte) []int64 {
		out := make([]int64, len(b)/8)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return out
	}
	if got, want := read(block[:values]), []int64{1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
	if got, want := read(block[64:]), []int64{0, 2, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("row splits %v, want %v", got, want)
	}
}
