package structtensor

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them,
// with context (a field path, an index, the offending sizes) added by
// fmt.Errorf("...: %w", ...). Callers test with errors.Is.
var (
	// ErrPartition reports row splits or a uniform row length that do not
	// describe a valid partition (splits[0] != 0, decreasing splits, a last
	// split that disagrees with the number of values).
	ErrPartition = errors.New("structtensor: invalid row partition")
	// ErrShape reports shapes that disagree: a flat slice whose length is not
	// the product of the shape, field values whose outer dimensions differ
	// from the struct's, partitions that do not nest.
	ErrShape = errors.New("structtensor: shape mismatch")
	// ErrDType reports a value whose element type is not the one expected.
	ErrDType = errors.New("structtensor: dtype mismatch")
	// ErrFieldName reports a field name that does not match
	// ^[A-Za-z][A-Za-z0-9_]*$ or that appears twice.
	ErrFieldName = errors.New("structtensor: invalid field name")
	// ErrNoField reports a field name or path that does not exist.
	ErrNoField = errors.New("structtensor: no such field")
	// ErrIndex reports an index out of range or an index that does not apply
	// to the value it is used on.
	ErrIndex = errors.New("structtensor: bad index")
	// ErrInference reports a Go or JSON value that cannot be encoded as a
	// StructTensor (mixed types, ranks or field sets).
	ErrInference = errors.New("structtensor: cannot infer value")
	// ErrSpec reports a value that does not match a given Spec, or a Spec
	// that cannot be parsed.
	ErrSpec = errors.New("structtensor: spec mismatch")
)
