//go:build !invariants

package structtensor

// invariantsEnabled is false in normal builds: constructors validate their
// inputs, but do not re-check the values they build.
const invariantsEnabled = false
