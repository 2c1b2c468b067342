package native_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/structtensor/structtensor-go/native"
)

// tierEnv, set in a child's environment, makes TestPackedVarintDecoder
// print native.PackedVarintDecoder() and nothing else.
const tierEnv = "STRUCTTENSOR_NATIVE_TEST_PRINT_TIER"

// tiers are PackedVarintDecoder's answers, from the fastest.
var tiers = []string{"avx512", "avx2", "bmi2", "scalar"}

// TestPackedVarintDecoder checks PackedVarintDecoder in child processes
// (the engine reads STRUCTTENSOR_NATIVE_PORTABLE once per process): with
// the variable unset, the CPU's best tier, which on x86-64 is AVX-512
// exactly when the CPU (as Go's x/sys/cpu sees it) has what that decoder
// needs, else AVX2 when it has that decoder's; with a tier named, that
// tier or the best below it the CPU has.
func TestPackedVarintDecoder(t *testing.T) {
	if os.Getenv(tierEnv) == "1" {
		os.Stdout.WriteString(native.PackedVarintDecoder())
		os.Exit(0)
	}
	tierWith := func(portable string) int {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestPackedVarintDecoder$")
		cmd.Env = append(os.Environ(), tierEnv+"=1", "STRUCTTENSOR_NATIVE_PORTABLE="+portable)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("STRUCTTENSOR_NATIVE_PORTABLE=%q: %v", portable, err)
		}
		i := slices.Index(tiers, strings.TrimSpace(string(out)))
		if i < 0 {
			t.Fatalf("STRUCTTENSOR_NATIVE_PORTABLE=%q: PackedVarintDecoder() = %q, want one of %q", portable, out, tiers)
		}
		return i
	}
	best := tierWith("")
	if cpu.X86.HasAVX512F { // an x86-64 CPU: say what its best must be
		avx512 := cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512VBMI2 &&
			cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT
		if got, want := tiers[best], map[bool]string{true: "avx512", false: "avx2"}[avx512]; got != want {
			t.Errorf("unset: %q, want %q on this CPU", got, want)
		}
	} else if cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT && tiers[best] != "avx2" {
		t.Errorf("unset: %q, want avx2 on this CPU", tiers[best])
	}
	for portable, want := range map[string]int{"0": 0, "avx2": 1, "1": 1, "yes": 1, "bmi2": 2, "scalar": 3} {
		if got := tierWith(portable); got != max(want, best) {
			t.Errorf("STRUCTTENSOR_NATIVE_PORTABLE=%q: %q, want %q (the CPU's best is %q)", portable, tiers[got], tiers[max(want, best)], tiers[best])
		}
	}
}
