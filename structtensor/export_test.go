package structtensor

// Internal test helpers lent to the external tests (package
// structtensor_test, built into the same test binary), so that each helper
// is written once.

// AsJSON is asJSON, for the TensorFlow comparisons of tfcompare_test.go and
// tfupdates_test.go.
var AsJSON = asJSON
