// Package tfbridge is structtensor's own thin cgo layer over the TensorFlow
// C API: graphs, an operation builder, sessions, tensors, SavedModels and
// custom-op libraries. StructTensors in a graph are package graphst's
// (tfbridge/graphst), typed op wrappers package op's. It does not use
// TensorFlow's Go bindings, which the Go module proxy cannot serve and which
// are no longer maintained; the C API (c_api.h) is the ABI-stable surface
// TensorFlow ships in every wheel.
//
// # Building
//
// cgo finds TensorFlow through pkg-config (`#cgo pkg-config: tensorflow`).
// `make setup-tf` (scripts/setup-tf.sh) writes build/pkgconfig/tensorflow.pc
// for the tensorflow-cpu wheel in the project's .venv (its
// libtensorflow_cc.so.2, libtensorflow_framework.so.2 and include/), or for
// the libtensorflow named by STRUCTTENSOR_TF_DIR, with an rpath so that
// binaries run without LD_LIBRARY_PATH. The Makefile exports
// PKG_CONFIG_PATH; outside make, set PKG_CONFIG_PATH=$PWD/build/pkgconfig.
// Only packages importing tfbridge need any of this: the value model, the
// decoder and the format packages never import it.
//
// # Loading the runtime
//
// The runtime is loaded when a program first calls TensorFlow, not when it
// starts (package internal/tfruntime: every C API function is a trampoline
// that loads libtensorflow with dlopen on the first call, and no
// TensorFlow library is a dependency of the executable). A program that
// imports tfbridge but does not use TensorFlow on a given run does not pay
// the runtime's some 300 MB of memory. STRUCTTENSOR_TF_LIBRARY names the
// library to load instead of the one the run path finds. TensorFlow's
// INFO logging is off by default (TF_CPP_MIN_LOG_LEVEL=1 unless set, and
// its start-up lines are dropped); STRUCTTENSOR_TF_LOG=1 turns it back on.
//
// # Handles and lifetimes
//
// Every C handle (Graph, Session, Tensor) has a Close method and a
// runtime.AddCleanup that releases it if Close was never called. A Graph
// holds one *Operation per TensorFlow operation, so Outputs are comparable
// map keys however they were obtained (AddOperation, Operation,
// OutputByName). A Session keeps its Graph alive; TensorFlow itself defers
// deleting a graph until its sessions are gone. Graphs and sessions are
// independent: two of each in one process do not share state, and Run may
// be called from many goroutines at once. Session.RunContext takes a
// context: its deadline becomes the run's TensorFlow timeout (the C API
// offers no other way to stop a run once started).
//
// # Errors
//
// A non-OK TF_Status becomes a *StatusError carrying the code and
// TensorFlow's message; it wraps the sentinel of its code (ErrInvalidArgument,
// ErrNotFound, ...), so callers use errors.Is, and tfbridge adds the
// operation name and type (AddOperation) or the step (Run, load) as
// context. Errors raised before TensorFlow is called wrap tfbridge's own
// sentinels (ErrAttr, ErrDType, ErrShape, ErrGraph, ErrClosed).
//
// # Tensor conversion and its cost
//
// NewTensor and Tensor.Value convert between *structtensor.Tensor and
// TF_Tensor for every structtensor dtype (bool, int32, int64, uint32, uint64,
// float32, float64, string). Numeric and bool layouts are identical on both
// sides; strings are TF_TString arrays on the TensorFlow side and one data
// buffer plus offsets on ours.
//
// Go to TensorFlow lends rather than copies from 64 KiB on: the Go buffer
// is pinned (runtime.Pinner) and wrapped with TF_NewTensor, numerics as
// they are, strings as TF_TString views into the data buffer, and the
// buffer is unpinned when TensorFlow drops its last reference, which may
// be after Run returns and after Close (Identity forwards its input into
// the fetched output). String views have an owner (TStringOwnerCApi)
// that TensorFlow references for every copy it makes of a view (Gather,
// Concat, a lookup table's keys or values all copy views, not bytes), so
// the buffer stays pinned until the last view anywhere is gone: the fed
// tensor's, or any copy in an output, a variable or a table. Strings of
// up to 22 bytes are copied inline and reference nothing. This is sound
// because structtensor values are immutable. TensorFlow itself copies numeric buffers that are not 64-byte
// aligned (Go's large allocations are page-aligned, so whole slices of
// 64 KiB or more usually are). Smaller tensors are copied: one
// TF_AllocateTensor and a memcpy, or for strings one C loop writing a
// TF_TString per element, which is cheaper than pinning there.
//
// TensorFlow to Go always copies (one memcpy; for strings one C loop
// summing the sizes into the offsets and one copying the bytes back to
// back): TensorFlow owns its output buffers, and a Go slice over them
// could outlive any owner we could attach a release to. The string loops
// use the header-only TF_TString code, with no library call per element.
// Embedded NULs and strings of any size survive.
//
// BenchmarkConvert measures each direction and a Session round trip next to
// a plain Go copy of the same bytes:
//
//	go test -run '^$' -bench Convert ./tfbridge/
//
// On the 2-core development machine lending 8 MiB of int64 costs about
// 3 µs against about 2 ms for the copy (which runs at the speed of Go's
// copy), and 4096 strings of 1 KB cost about 25 µs lent against 2 ms copied.
package tfbridge
