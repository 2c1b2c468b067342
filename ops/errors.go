package ops

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them
// (and, where a constructor of package structtensor rejected a result, that
// package's sentinel too), with the axis, index, row or field path that
// caused it. Callers test with errors.Is.
var (
	// ErrAxis reports an axis or batch_dims outside the value's rank, or
	// an axis the operation cannot act on (a ragged dimension where a
	// uniform one is needed).
	ErrAxis = errors.New("ops: bad axis")
	// ErrIndex reports an index out of range for its row, or indices of a
	// type that is not int32 or int64.
	ErrIndex = errors.New("ops: index out of range")
	// ErrShape reports arguments whose shapes disagree: a mask or condition
	// that does not match the value, batch dimensions that differ, a
	// dimension squeezed that is not of size 1.
	ErrShape = errors.New("ops: shape mismatch")
	// ErrSchema reports values that must share a schema and do not: a
	// field missing from one input, different dtypes or ranks. The error
	// names the differing path.
	ErrSchema = errors.New("ops: schema mismatch")
	// ErrPath reports a path that does not exist, that does not lead
	// through structs, or whose steps do not relate as the operation
	// needs (not siblings, not a child).
	ErrPath = errors.New("ops: bad path")
	// ErrFieldExists reports a new field name already used in its struct.
	ErrFieldExists = errors.New("ops: field already exists")
	// ErrArgument reports any other bad argument: a negative multiple, a
	// function that returned a value of the wrong type or size.
	ErrArgument = errors.New("ops: bad argument")
)
