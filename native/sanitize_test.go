package native_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/internal/testenv"
	"github.com/structtensor/structtensor-go/tfrecord"
)

// TestEngineUnderSanitizers builds the engine with its C++ runner under
// AddressSanitizer and UndefinedBehaviorSanitizer and decodes valid,
// mutated and random records with plans for every test schema, one batch
// per record and then whole batches on several threads. Any out-of-bounds
// access, leak or undefined behaviour aborts the runner and fails the test.
func TestEngineUnderSanitizers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the engine with sanitizers")
	}
	cxx, err := exec.LookPath("g++")
	if err != nil {
		testenv.Missing(t, "g++ not found")
	}
	dir := t.TempDir()
	runner := filepath.Join(dir, "runner")
	// -g1: line tables for the sanitizers' reports, without the rest of
	// the debug information, which took 40% of this test's time to make.
	build := exec.Command(cxx, "-std=c++17", "-O1", "-g1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
		"-DST_COUNT_DECODERS", "-pthread", "-I", ".", "engine.cc", "internal/runner/runner.cc", "-o", runner)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sanitized runner: %v\n%s", err, out)
	}

	raw, err := os.ReadFile("../testdata/proto/testdata.pb")
	if err != nil {
		t.Fatal(err)
	}
	desc, err := decode.LoadDescriptorSet(raw)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../testdata/decode/recipes.tfrecord")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	batch, err := tfrecord.NewReader(f).NextBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	valid := batch.Records()

	rng := rand.New(rand.NewPCG(7, 7))
	var records [][]byte
	records = append(records, valid...)
	records = append(records, nil)
	for i := 0; i < 600; i++ {
		r := append([]byte(nil), valid[rng.IntN(len(valid))]...)
		for k := 0; k < 1+rng.IntN(4); k++ {
			j := rng.IntN(len(r))
			switch rng.IntN(4) {
			case 0:
				r[j] ^= byte(1 << rng.IntN(8))
			case 1:
				r = r[:j]
			case 2:
				r[j] = byte(rng.IntN(256))
			default:
				r = append(r[:j:j], append([]byte{byte(rng.IntN(256))}, r[j:]...)...)
			}
			if len(r) == 0 {
				break
			}
		}
		records = append(records, r)
	}
	for i := 0; i < 200; i++ {
		r := make([]byte, rng.IntN(64))
		for j := range r {
			r[j] = byte(rng.IntN(256))
		}
		records = append(records, r)
	}
	var delimited []byte
	for _, r := range records {
		delimited = binary.AppendUvarint(delimited, uint64(len(r)))
		delimited = append(delimited, r...)
	}
	recFile := filepath.Join(dir, "records")
	if err := os.WriteFile(recFile, delimited, 0o644); err != nil {
		t.Fatal(err)
	}
	var validDelimited []byte
	for i := 0; i < 400; i++ {
		r := valid[i%len(valid)]
		validDelimited = binary.AppendUvarint(validDelimited, uint64(len(r)))
		validDelimited = append(validDelimited, r...)
	}
	validFile := filepath.Join(dir, "valid")
	if err := os.WriteFile(validFile, validDelimited, 0o644); err != nil {
		t.Fatal(err)
	}

	messages := []string{
		"structtensor.testdata.recipe.Recipe",
		"structtensor.testdata.scalars.AllScalars",
		"structtensor.testdata.proto3.Proto3Msg",
		"structtensor.testdata.recursive.Node",
		"structtensor.testdata.editions.EdMsg",
		"structtensor.testdata.example.ExampleListWithContext",
	}
	for _, m := range messages {
		plan, err := decode.CompileOptions{MaxDepth: 5}.Compile(desc, m)
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := plan.MarshalBinary()
		planFile := filepath.Join(dir, "plan")
		if err := os.WriteFile(planFile, pb, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{recFile, "each", "1"}, {validFile, "3", "4"}, {recFile, "1", "2"}} {
			runEveryDecoder(t, runner, m, append([]string{planFile}, args...))
		}
	}
	// Packed varints of every length (1 to 10 bytes, a few overlong or
	// overflowing), valid and cut short, through the CPU-specific and the
	// portable packed decoders: same output. Flat has int64 columns only;
	// AllScalars' repeated varint fields cover every conversion (32-bit
	// truncation, zigzag, bool, enum), packed or not.
	flat, err := decode.Compile(desc, "structtensor.testdata.flat.Flat")
	if err != nil {
		t.Fatal(err)
	}
	scalarPaths := []string{"u_int32", "u_int64", "u_uint32", "u_uint64", "u_sint32", "u_sint64", "u_bool", "u_enum",
		"p_int32", "p_int64", "p_uint32", "p_uint64", "p_sint32", "p_sint64", "p_bool", "p_enum"}
	scalars, err := decode.CompileOptions{FillRequired: true}.Compile(desc, "structtensor.testdata.scalars.AllScalars", scalarPaths...)
	if err != nil {
		t.Fatal(err)
	}
	scalarFields := []int{41, 42, 43, 44, 45, 46, 53, 56, 61, 62, 63, 64, 65, 66, 73, 76}
	flatFields := make([]int, 100)
	for i := range flatFields {
		flatFields[i] = 1 + i
	}
	for _, c := range []struct {
		name   string
		plan   *decode.Plan
		fields []int
	}{{"flat", flat, flatFields}, {"scalars", scalars, scalarFields}} {
		pb, _ := c.plan.MarshalBinary()
		planFile := filepath.Join(dir, c.name+"-plan")
		if err := os.WriteFile(planFile, pb, 0o644); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{c.name + "-packed-valid": packedRecords(rng, c.fields, false), c.name + "-packed-bad": packedRecords(rng, c.fields, true)} {
			file := filepath.Join(dir, name)
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{file, "2", "1"}, {file, "each", "1"}} {
				vector, avx2, pext := runEveryDecoder(t, runner, name, append([]string{planFile}, args...))
				if vector == 0 {
					if cpuHasVBMI2(t) {
						t.Fatalf("%s %v: the CPU has AVX-512 VBMI2 but no packed run took the vector decoder", name, args)
					}
					t.Logf("%s %v: the CPU lacks AVX-512 VBMI2: portable decoder only", name, args)
				}
				if avx2 == 0 {
					if cpuHasAVX2(t) {
						t.Fatalf("%s %v: the CPU has AVX2 but no portable packed run took the AVX2 decoder", name, args)
					}
					t.Logf("%s %v: no AVX2 on this CPU: the AVX2 decoder is not compared", name, args)
				}
				if pext == 0 {
					if cpuHasFastPext(t) {
						t.Fatalf("%s %v: the CPU has a fast pext but no portable packed run took the pext decoder", name, args)
					}
					t.Logf("%s %v: no fast pext on this CPU: the pext decoder is not compared", name, args)
				}
			}
		}
	}
	// Corrupt plans must be rejected, not trusted.
	plan, _ := decode.Compile(desc, "structtensor.testdata.recipe.Recipe")
	pb, _ := plan.MarshalBinary()
	for i := 0; i < 300; i++ {
		bad := append([]byte(nil), pb...)
		if rng.IntN(2) == 0 {
			bad = bad[:rng.IntN(len(bad))]
		} else {
			bad[4+rng.IntN(len(bad)-4)] ^= byte(1 << rng.IntN(8))
		}
		planFile := filepath.Join(dir, "badplan")
		if err := os.WriteFile(planFile, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(runner, planFile, recFile, "each", "1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil {
			t.Fatalf("corrupt plan %d: %v\n%s\n%s", i, err, out, stderr.String())
		}
	}
}

// runEveryDecoder runs the runner with args once per packed-varint
// decoder tier: the CPU's best (AVX-512 where the CPU has it), then the
// tiers STRUCTTENSOR_NATIVE_PORTABLE names below it: "1" (without
// AVX-512: the AVX2 decoder where the CPU has AVX2), "bmi2" (without
// AVX2: the pext decoder where the CPU has a fast pext) and "scalar"
// (without BMI2). The outputs (checksums, counts, errors) must agree. The
// runner's last line says how many packed runs each decoder took: a
// forced tier must take no decoder above it. It returns the runs the
// first run gave the vector decoder, the second the AVX2 one and the
// third the pext one.
func runEveryDecoder(t *testing.T, runner, name string, args []string) (vectorRuns, avx2Runs, pextRuns int64) {
	t.Helper()
	tiers := []string{"0", "1", "bmi2", "scalar"}
	outs := make([]string, len(tiers))
	for i, portable := range tiers {
		cmd := exec.Command(runner, args...)
		cmd.Env = append(os.Environ(), "STRUCTTENSOR_NATIVE_PORTABLE="+portable)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || !(strings.HasPrefix(string(out), "ok") || strings.HasPrefix(string(out), "error")) {
			t.Fatalf("%s %v (portable=%s): %v\n%s\n%s", name, args, portable, err, out, stderr.String())
		}
		body, last, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\ndecoders ")
		var vector, scalar, avx2, pext int64
		if _, err := fmt.Sscanf(last, "packed_vector=%d packed_portable=%d packed_avx2=%d packed_pext=%d", &vector, &scalar, &avx2, &pext); err != nil {
			t.Fatalf("%s %v (portable=%s): no decoder counts in the output: %q", name, args, portable, out)
		}
		switch portable {
		case "0":
			vectorRuns = vector
			if vector > 0 && scalar > 0 {
				t.Fatalf("%s %v: %d packed runs took the portable decoder beside %d vector ones", name, args, scalar, vector)
			}
		case "1":
			avx2Runs = avx2
			if vector != 0 || pext != 0 {
				t.Fatalf("%s %v: STRUCTTENSOR_NATIVE_PORTABLE=1, yet %d packed runs took the vector decoder and %d the pext one", name, args, vector, pext)
			}
		case "bmi2":
			pextRuns = pext
			if vector != 0 || avx2 != 0 {
				t.Fatalf("%s %v: STRUCTTENSOR_NATIVE_PORTABLE=bmi2, yet %d packed runs took the vector decoder and %d the AVX2 one", name, args, vector, avx2)
			}
		case "scalar":
			if vector != 0 || avx2 != 0 || pext != 0 {
				t.Fatalf("%s %v: STRUCTTENSOR_NATIVE_PORTABLE=scalar, yet %d packed runs took the vector decoder, %d the AVX2 one and %d the pext one", name, args, vector, avx2, pext)
			}
		}
		outs[i] = strings.Split(body, " mb_per_cpu_s=")[0]
	}
	for i := 1; i < len(outs); i++ {
		if outs[i] != outs[0] {
			t.Fatalf("%s %v: the packed decoders disagree (portable=%s, portable=%s):\n%s\n%s", name, args, tiers[0], tiers[i], outs[0], outs[i])
		}
	}
	return vectorRuns, avx2Runs, pextRuns
}

// cpuHasFastPext reports whether the CPU is one the engine gives the pext
// decoder (fast_pext in engine_wire.h): BMI2, and Intel or AMD from
// family 0x19 (Zen 3) on.
func cpuHasFastPext(t *testing.T) bool {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Logf("cannot read /proc/cpuinfo: %v", err)
		return false
	}
	var vendor string
	family, bmi2 := -1, false
	for _, line := range strings.Split(string(info), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "vendor_id":
			vendor = strings.TrimSpace(val)
		case "cpu family":
			fmt.Sscan(val, &family)
		case "flags":
			bmi2 = slices.Contains(strings.Fields(val), "bmi2")
		}
		if vendor != "" && family >= 0 && strings.HasPrefix(strings.TrimSpace(key), "flags") {
			break
		}
	}
	return bmi2 && (vendor == "GenuineIntel" || (vendor == "AuthenticAMD" && family >= 0x19))
}

// cpuHasAVX2 reports whether the CPU has every feature the AVX2
// packed-varint decoder needs (/proc/cpuinfo flags).
func cpuHasAVX2(t *testing.T) bool {
	return cpuHasFlags(t, "avx2", "bmi1", "bmi2", "popcnt")
}

// cpuHasVBMI2 reports whether the CPU has every feature the vector
// packed-varint decoder needs (/proc/cpuinfo flags).
func cpuHasVBMI2(t *testing.T) bool {
	return cpuHasFlags(t, "avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx512_vbmi2", "bmi2", "popcnt")
}

// cpuHasFlags reports whether the CPU has every one of the flags
// (/proc/cpuinfo).
func cpuHasFlags(t *testing.T, need ...string) bool {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Logf("cannot read /proc/cpuinfo: %v", err)
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if !strings.HasPrefix(line, "flags") {
			continue
		}
		flags := map[string]bool{}
		for _, f := range strings.Fields(line) {
			flags[f] = true
		}
		for _, f := range need {
			if !flags[f] {
				return false
			}
		}
		return true
	}
	return false
}

// packedRecords returns 300 varint-length-delimited records of packed runs
// of the given fields, each value 1 to 10 bytes long (lengths mixed within
// a run, so that runs cross the vector decoder's 64-byte windows at every
// offset). With bad, about one value in 500 is an invalid 11-byte or
// overflowing 10-byte varint and half the records are cut at a random byte.
func packedRecords(rng *rand.Rand, fields []int, bad bool) []byte {
	var out []byte
	for i := 0; i < 300; i++ {
		var rec []byte
		for k := rng.IntN(12); k > 0; k-- {
			var run []byte
			for v := rng.IntN(60); v > 0; v-- {
				switch r := rng.IntN(500); {
				case bad && r == 0:
					run = append(run, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
				case bad && r == 1:
					run = append(run, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02)
				default:
					run = binary.AppendUvarint(run, rng.Uint64()>>(7*rng.IntN(10)))
				}
			}
			rec = binary.AppendUvarint(rec, uint64(fields[rng.IntN(len(fields))])<<3|2)
			rec = binary.AppendUvarint(rec, uint64(len(run)))
			rec = append(rec, run...)
		}
		if bad && len(rec) > 0 && rng.IntN(2) == 0 {
			rec = rec[:rng.IntN(len(rec))]
		}
		out = binary.AppendUvarint(out, uint64(len(rec)))
		out = append(out, rec...)
	}
	return out
}
