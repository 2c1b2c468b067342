package native

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// vmaOf returns the VmFlags and AnonHugePages lines of the mapping of this
// process that holds addr (/proc/self/smaps).
func vmaOf(t *testing.T, addr uintptr) (flags, anonHuge string) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps to check the advice in: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && strings.Contains(strings.Fields(line)[0], "-") {
			if in {
				break
			}
			in = lo <= addr && addr < hi
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			flags = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			anonHuge = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if flags == "" {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return flags, anonHuge
}

// TestLargeBlocksAdviseHugePages checks that a fresh block of several huge
// pages has every huge page inside it advised (the kernel's "hg" flag on
// its mapping) and that a small one is left alone.
func TestLargeBlocksAdviseHugePages(t *testing.T) {
	huge := hugePageBytes()
	if huge == 0 {
		t.Skip("this system has no transparent huge pages")
	}
	// A probe: a system whose madvise refuses the advice (a sandbox's
	// filter) leaves blocks as they are, which is no failure of ours.
	if err := syscall.Madvise(hugePagesInside(make([]byte, 2*huge), huge), syscall.MADV_HUGEPAGE); err != nil {
		t.Skipf("madvise(MADV_HUGEPAGE) refused here: %v", err)
	}
	if got := adviseHugePages(make([]byte, (hugeAdviseMinPages-1)*huge)); got != nil {
		t.Errorf("a block of %d huge pages was advised: %d bytes", hugeAdviseMinPages-1, len(got))
	}
	// An odd size, so the block neither starts nor ends on a huge page.
	b := makeUncleared[byte](int(6*huge) + 12345)
	inside := hugePagesInside(b, huge)
	first := uintptr(unsafe.Pointer(unsafe.SliceData(inside)))
	last := first + uintptr(len(inside)) - 1
	if base := uintptr(unsafe.Pointer(unsafe.SliceData(b))); first%huge != 0 || uintptr(len(inside))%huge != 0 ||
		len(inside) < 5*int(huge) || first-base >= huge || last >= base+uintptr(len(b)) {
		t.Fatalf("huge pages inside the block at %#x of %d bytes: %d bytes at %#x", base, len(b), len(inside), first)
	}
	for _, addr := range []uintptr{first, first + huge, last} {
		flags, _ := vmaOf(t, addr)
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("the block's huge page at %#x is not advised: VmFlags %q", addr, flags)
		}
	}
	for i := range b {
		b[i] = byte(i)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d of the advised block reads %d, want %d", i, b[i], byte(i))
		}
	}
	_, anon := vmaOf(t, first)
	t.Logf("huge pages %d bytes; the block's mapping holds AnonHugePages %s", huge, anon)
	runtime.KeepAlive(b)
}
