// Package externalmodule holds the test that a Go module outside this
// repository can use the library as its README says: scripts/setup-tf.sh
// writes the pkg-config file outside the repository, and a program of
// another module, requiring this one through a replace directive, builds
// against it and runs with TensorFlow. The program is in testdata.
package externalmodule
