// Package testenv decides what a test does when something it compares
// against is absent (a Python virtualenv, the ops library, a compiler).
//
// On a developer's machine such a test skips with the reason. Under
// `make test`, which installs every reference first and sets
// STRUCTTENSOR_REQUIRE_REFERENCES=1, the same absence fails the test:
// a comparison with TensorFlow, struct2tensor or pyarrow must not turn
// into a silent skip in CI.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv is the variable `make test` sets.
const RequireEnv = "STRUCTTENSOR_REQUIRE_REFERENCES"

// Missing reports that a reference the test needs is absent: a skip, or a
// failure when RequireEnv is set.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s (%s is set: make test installs every reference before testing)", msg, RequireEnv)
	}
	t.Skip(msg)
}
