package tfbridge

// #cgo pkg-config: tensorflow
// #include "bridge.h"
import "C"

import (
	"errors"
	"fmt"

	// The C API's functions, loaded on first use (package doc).
	_ "github.com/structtensor/structtensor-go/internal/tfruntime"
)

// Code is a TensorFlow status code (TF_Code).
type Code int

// The TensorFlow status codes.
const (
	CodeOK                 Code = C.TF_OK
	CodeCancelled          Code = C.TF_CANCELLED
	CodeUnknown            Code = C.TF_UNKNOWN
	CodeInvalidArgument    Code = C.TF_INVALID_ARGUMENT
	CodeDeadlineExceeded   Code = C.TF_DEADLINE_EXCEEDED
	CodeNotFound           Code = C.TF_NOT_FOUND
	CodeAlreadyExists      Code = C.TF_ALREADY_EXISTS
	CodePermissionDenied   Code = C.TF_PERMISSION_DENIED
	CodeResourceExhausted  Code = C.TF_RESOURCE_EXHAUSTED
	CodeFailedPrecondition Code = C.TF_FAILED_PRECONDITION
	CodeAborted            Code = C.TF_ABORTED
	CodeOutOfRange         Code = C.TF_OUT_OF_RANGE
	CodeUnimplemented      Code = C.TF_UNIMPLEMENTED
	CodeInternal           Code = C.TF_INTERNAL
	CodeUnavailable        Code = C.TF_UNAVAILABLE
	CodeDataLoss           Code = C.TF_DATA_LOSS
	CodeUnauthenticated    Code = C.TF_UNAUTHENTICATED
)

// Sentinel errors, one per TensorFlow status code. Every error that comes
// from a TF_Status is a *StatusError that wraps the sentinel of its code,
// so callers test with errors.Is(err, tfbridge.ErrInvalidArgument).
var (
	ErrCancelled          = errors.New("tensorflow: cancelled")
	ErrUnknown            = errors.New("tensorflow: unknown")
	ErrInvalidArgument    = errors.New("tensorflow: invalid argument")
	ErrDeadlineExceeded   = errors.New("tensorflow: deadline exceeded")
	ErrNotFound           = errors.New("tensorflow: not found")
	ErrAlreadyExists      = errors.New("tensorflow: already exists")
	ErrPermissionDenied   = errors.New("tensorflow: permission denied")
	ErrResourceExhausted  = errors.New("tensorflow: resource exhausted")
	ErrFailedPrecondition = errors.New("tensorflow: failed precondition")
	ErrAborted            = errors.New("tensorflow: aborted")
	ErrOutOfRange         = errors.New("tensorflow: out of range")
	ErrUnimplemented      = errors.New("tensorflow: unimplemented")
	ErrInternal           = errors.New("tensorflow: internal")
	ErrUnavailable        = errors.New("tensorflow: unavailable")
	ErrDataLoss           = errors.New("tensorflow: data loss")
	ErrUnauthenticated    = errors.New("tensorflow: unauthenticated")
)

// Errors raised by tfbridge itself, before TensorFlow is called.
var (
	// ErrClosed reports a Graph, Session or Tensor used after Close.
	ErrClosed = errors.New("tfbridge: use after Close")
	// ErrAttr reports an attribute value of a Go type that has no
	// TensorFlow attribute type.
	ErrAttr = errors.New("tfbridge: unsupported attribute value")
	// ErrDType reports a TensorFlow dtype with no structtensor counterpart,
	// or a component whose dtype is not the one its Spec calls for.
	ErrDType = errors.New("tfbridge: dtype mismatch")
	// ErrShape reports a component whose shape does not fit its Spec, or a
	// tensor name that cannot be parsed.
	ErrShape = errors.New("tfbridge: shape mismatch")
	// ErrGraph reports an Output or Operation used with a graph or session
	// it does not belong to.
	ErrGraph = errors.New("tfbridge: wrong graph")
)

var codeErrors = map[Code]error{
	CodeCancelled:          ErrCancelled,
	CodeUnknown:            ErrUnknown,
	CodeInvalidArgument:    ErrInvalidArgument,
	CodeDeadlineExceeded:   ErrDeadlineExceeded,
	CodeNotFound:           ErrNotFound,
	CodeAlreadyExists:      ErrAlreadyExists,
	CodePermissionDenied:   ErrPermissionDenied,
	CodeResourceExhausted:  ErrResourceExhausted,
	CodeFailedPrecondition: ErrFailedPrecondition,
	CodeAborted:            ErrAborted,
	CodeOutOfRange:         ErrOutOfRange,
	CodeUnimplemented:      ErrUnimplemented,
	CodeInternal:           ErrInternal,
	CodeUnavailable:        ErrUnavailable,
	CodeDataLoss:           ErrDataLoss,
	CodeUnauthenticated:    ErrUnauthenticated,
}

// String returns the sentinel's text without its prefix ("invalid argument").
func (c Code) String() string {
	if c == CodeOK {
		return "ok"
	}
	if e, ok := codeErrors[c]; ok {
		return e.Error()[len("tensorflow: "):]
	}
	return fmt.Sprintf("code %d", int(c))
}

// StatusError is a non-OK TF_Status: its code and TensorFlow's message.
type StatusError struct {
	Code    Code
	Message string
}

func (e *StatusError) Error() string {
	return "tensorflow: " + e.Code.String() + ": " + e.Message
}

// Unwrap returns the sentinel error of e.Code (ErrUnknown for codes
// TensorFlow may add later).
func (e *StatusError) Unwrap() error {
	if s, ok := codeErrors[e.Code]; ok {
		return s
	}
	return ErrUnknown
}

// CodeOf returns the TensorFlow status code carried by err, CodeOK for nil,
// and CodeUnknown for errors that did not come from TensorFlow.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return CodeUnknown
}

// status owns one TF_Status.
type status struct{ c *C.TF_Status }

func newStatus() status { return status{C.TF_NewStatus()} }

func (s status) free() { C.TF_DeleteStatus(s.c) }

// err returns nil for TF_OK and a *StatusError otherwise.
func (s status) err() error {
	code := Code(C.TF_GetCode(s.c))
	if code == CodeOK {
		return nil
	}
	return &StatusError{Code: code, Message: C.GoString(C.TF_Message(s.c))}
}
