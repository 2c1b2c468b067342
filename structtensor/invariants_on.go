//go:build invariants

package structtensor

// invariantsEnabled turns on checkInvariants in every constructor. Build
// with -tags invariants (make test does) to run the whole test suite with
// every value re-validated where it is made.
const invariantsEnabled = true
