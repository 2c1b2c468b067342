// Package tfbridge is structtensor's own thin cgo layer over the TensorFlow
// C API: graphs, an operation builder, sessions, tensors, SavedModels and
// custom-op libraries. It does not use TensorFlow's Go bindings.
//
// # Building
//
// cgo finds TensorFlow through pkg-config (`#cgo pkg-config: tensorflow`).
// `make setup-tf` (scripts/setup-tf.sh) writes build/pkgconfig/tensorflow.pc
// for the tensorflow-cpu wheel in the project's .venv, or for the
// libtensorflow named by STRUCTTENSOR_TF_DIR, with an rpath so that
// binaries run without LD_LIBRARY_PATH. The Makefile exports
// PKG_CONFIG_PATH; outside make, set PKG_CONFIG_PATH=$PWD/build/pkgconfig.
// Only packages importing tfbridge need any of this.
package tfbridge
