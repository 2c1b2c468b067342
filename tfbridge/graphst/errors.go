package graphst

import "errors"

var (
	// ErrSpec: a value's spec does not suit the op (a nested field where a
	// root is needed, specs that differ, a dtype the op does not reduce).
	ErrSpec = errors.New("graphst: spec")
	// ErrRank: the value has too few dimensions for the op.
	ErrRank = errors.New("graphst: rank")
	// ErrBranch: control flow whose functions do not agree (branches
	// returning values of different kinds, dtypes or specs, a loop body
	// returning values that do not fit its loop variables), or a
	// condition that is not a bool scalar.
	ErrBranch = errors.New("graphst: control flow")
)
