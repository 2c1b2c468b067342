package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/structtensor/structtensor-go/structtensor"
)

// leafDigest summarises the flat values of one leaf path in a form that
// python/bench/s2t_decode.py computes the same way from struct2tensor's
// ragged tensors: the number of values and a SHA-256 over them, each
// little-endian in its dtype's width (bool as one byte, a string as a
// uint64 length then its bytes).
//
// The harness compares ours with struct2tensor on these, so a speed ratio
// is between decoders that read the same values. Only flat values are
// compared: the two differ, by design, in how they shape proto3 implicit
// fields. struct2tensor gives such a field no value when the record does
// not carry it (a 0/1 list); the mapping table gives it its default (a
// scalar). So for an implicit leaf the default values are dropped from our
// side before hashing, which is exactly what a record without the field
// means to struct2tensor.
type leafDigest struct {
	N   int    `json:"n"`
	SHA string `json:"sha"`
}

func leafDigests(st *structtensor.StructTensor, md protoreflect.MessageDescriptor, paths []string) (map[string]leafDigest, error) {
	out := make(map[string]leafDigest, len(paths))
	for _, p := range paths {
		steps := strings.Split(p, ".")
		fd, err := leafField(md, steps)
		if err != nil {
			return nil, err
		}
		v, err := st.FieldValue(steps...)
		if err != nil {
			return nil, err
		}
		var t *structtensor.Tensor
		switch x := v.(type) {
		case *structtensor.Tensor:
			t = x
		case *structtensor.Ragged:
			t = x.Values()
		default:
			return nil, fmt.Errorf("path %s is not a leaf: %v", p, v.Spec())
		}
		out[p] = hashValues(t, implicitPresence(fd))
	}
	return out, nil
}

// leafField follows steps from md to the leaf field descriptor.
func leafField(md protoreflect.MessageDescriptor, steps []string) (protoreflect.FieldDescriptor, error) {
	var fd protoreflect.FieldDescriptor
	for i, s := range steps {
		if md == nil {
			return nil, fmt.Errorf("path %s: %s is not a message", strings.Join(steps, "."), steps[i-1])
		}
		fd = md.Fields().ByName(protoreflect.Name(s))
		if fd == nil {
			return nil, fmt.Errorf("path %s: %s has no field %s", strings.Join(steps, "."), md.FullName(), s)
		}
		md = fd.Message()
	}
	return fd, nil
}

// implicitPresence reports whether fd is a singular field without
// presence, whose default a record never carries.
func implicitPresence(fd protoreflect.FieldDescriptor) bool {
	return !fd.IsList() && !fd.HasPresence() && fd.Cardinality() != protoreflect.Required &&
		!fd.ContainingMessage().IsMapEntry()
}

func hashValues(t *structtensor.Tensor, dropZero bool) leafDigest {
	h := sha256.New()
	buf := make([]byte, 0, 8)
	n := 0
	emit := func(b []byte) {
		h.Write(b)
		n++
	}
	switch d := t.Data().(type) {
	case []bool:
		for _, v := range d {
			if v || !dropZero {
				b := byte(0)
				if v {
					b = 1
				}
				emit(append(buf[:0], b))
			}
		}
	case []int32:
		for _, v := range d {
			if v != 0 || !dropZero {
				emit(binary.LittleEndian.AppendUint32(buf[:0], uint32(v)))
			}
		}
	case []int64:
		for _, v := range d {
			if v != 0 || !dropZero {
				emit(binary.LittleEndian.AppendUint64(buf[:0], uint64(v)))
			}
		}
	case []uint32:
		for _, v := range d {
			if v != 0 || !dropZero {
				emit(binary.LittleEndian.AppendUint32(buf[:0], v))
			}
		}
	case []uint64:
		for _, v := range d {
			if v != 0 || !dropZero {
				emit(binary.LittleEndian.AppendUint64(buf[:0], v))
			}
		}
	case []float32:
		for _, v := range d {
			if b := math.Float32bits(v); b != 0 || !dropZero {
				emit(binary.LittleEndian.AppendUint32(buf[:0], b))
			}
		}
	case []float64:
		for _, v := range d {
			if b := math.Float64bits(v); b != 0 || !dropZero {
				emit(binary.LittleEndian.AppendUint64(buf[:0], b))
			}
		}
	case nil: // strings
		for i := 0; i < t.Len(); i++ {
			s := t.StringAt(i)
			if len(s) > 0 || !dropZero {
				h.Write(binary.LittleEndian.AppendUint64(buf[:0], uint64(len(s))))
				emit(s)
			}
		}
	}
	return leafDigest{N: n, SHA: hex.EncodeToString(h.Sum(nil))}
}
