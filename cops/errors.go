package cops

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them, or an
// error of tfbridge or decode, with context.
var (
	// ErrRegister reports that TensorFlow refused the op or kernel
	// registration.
	ErrRegister = errors.New("cops: op registration failed")
	// ErrPlan reports a plan whose components do not match its spec.
	ErrPlan = errors.New("cops: plan does not fit the op")
)
