package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/structtensor/structtensor-go/native"
)

// machineLine describes what a run measured on, as the first line of its
// results: every figure is this CPU's (the same code measures 1.5-2x
// apart on two x86-64 models), the packed-varint decoder the engine chose
// for it (STRUCTTENSOR_NATIVE_PORTABLE moves it down), the cores, and the
// load when the run started (other work on the machine slows every
// figure).
func machineLine() string {
	var b strings.Builder
	b.WriteString("machine")
	for _, kv := range cpuInfo() {
		if strings.ContainsAny(kv[1], " \t\"") {
			fmt.Fprintf(&b, " %s=%q", kv[0], kv[1])
		} else {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	fmt.Fprintf(&b, " cpus=%d packed_varints=%s", runtime.NumCPU(), native.PackedVarintDecoder())
	if v, ok := os.LookupEnv("STRUCTTENSOR_NATIVE_PORTABLE"); ok {
		fmt.Fprintf(&b, " STRUCTTENSOR_NATIVE_PORTABLE=%q", v)
	}
	fmt.Fprintf(&b, " go=%s/%s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(l)); len(f) >= 3 {
			fmt.Fprintf(&b, " load=%s,%s,%s", f[0], f[1], f[2])
		}
	}
	return b.String()
}

// cpuInfo returns the first processor's model name, vendor, family, model
// and stepping from /proc/cpuinfo (Linux), in that order; nothing where
// there is no such file.
func cpuInfo() [][2]string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	keys := []struct{ in, out string }{
		{"model name", "cpu"}, {"vendor_id", "vendor"}, {"cpu family", "family"}, {"model", "model"}, {"stepping", "stepping"},
	}
	found := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.TrimSpace(line) == "" && len(found) > 0 {
			break // the first processor's block ends
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			found[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	var out [][2]string
	for _, k := range keys {
		if v, ok := found[k.in]; ok {
			out = append(out, [2]string{k.out, v})
		}
	}
	return out
}
