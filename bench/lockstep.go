package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A decoder with an anchor is timed in lockstep with it: two child
// processes, one per decoder, each having read the dataset and made its
// untimed first call, make one timed call at a time at this process's
// word, alternating (each pair in the other order from the last), until
// the decoder has used the minimum CPU time and calls. Both so meet the
// same spells of the host's other load, which on a shared virtual machine
// change the speed of the same code by as much as 1.7x for seconds at a
// time: decoders run apart, minutes apart, differed by more than the
// margins of the goals their ratio is judged on.
//
// Processes of their own, not calls alternating in one process: decoders
// in one process share the Go heap and the pool of lent blocks
// (native/lendpool.go), so the anchor's memory changed the decoder's
// speed. 1 MB batches of wide sparse records alternating in one process
// with whole 32 MB calls, whose output is 24 times their input, ran at
// half the speed they run alone: each batch found the pool holding only
// the big calls' blocks and its bound raised by them, so took fresh
// memory. Processes also let the decoder be another program
// (tf-parse-example-paired: python/bench/example_decode.py --lockstep,
// anchored on ours-1t of this build) or come from another build
// (tf-op-paired, -tags tensorflow, anchored on ours-1t of that build).
//
// The protocol, on the children's standard input and output: the child
// writes lockstepReady once ready, then for each lockstepCall line it
// reads times one call and writes "lockstepDone <cpu ns> <wall ns>"; at
// the end of its input it prints its measurement as JSON (the last line,
// as every child does) and exits.
const (
	lockstepReady = "ready"
	lockstepCall  = "call"
	lockstepDone  = "done"
)

// lockstepPeer is one side of a lockstep pair: call has it make one timed
// call and returns the process CPU and wall time it took.
type lockstepPeer interface {
	call() (cpu, wall time.Duration, err error)
}

// alternate makes the timed calls of a pair: one of x and one of anchor
// at a time, the anchor first in every other pair, until x has used
// minCPU and made minIters calls. It returns the calls each made.
func alternate(x, anchor lockstepPeer, minCPU time.Duration, minIters int) (int, error) {
	iters := 0
	var cpu time.Duration
	for iters < minIters || cpu < minCPU {
		anchorFirst := iters%2 == 0
		if anchorFirst {
			if _, _, err := anchor.call(); err != nil {
				return iters, err
			}
		}
		c, _, err := x.call()
		if err != nil {
			return iters, err
		}
		cpu += c
		if !anchorFirst {
			if _, _, err := anchor.call(); err != nil {
				return iters, err
			}
		}
		iters++
	}
	return iters, nil
}

// lockstepChild is a child process timing one decoder in lockstep.
type lockstepChild struct {
	name   string // the decoder, for errors
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// harnessCmd is the command that times decoder dec of this harness's
// build bin on the dataset file in lockstep (-lockstep -run-one), with
// extra flags before -run-one.
func harnessCmd(e *env, bin, dsName, dec, file string, extra ...string) *exec.Cmd {
	args := append(e.childArgs(), extra...)
	args = append(args, "-lockstep", "-run-one", dsName, dec, file)
	return exec.Command(bin, args...)
}

// startLockstep starts cmd, a child speaking the protocol for decoder
// name.
func startLockstep(name string, cmd *exec.Cmd) (*lockstepChild, error) {
	c := &lockstepChild{name: name, cmd: cmd}
	c.cmd.Stderr = &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.out = bufio.NewReader(out)
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	return c, nil
}

// line reads the child's next line of the protocol.
func (c *lockstepChild) line() (string, error) {
	s, err := c.out.ReadString('\n')
	if err != nil {
		c.in.Close()
		c.cmd.Wait()
		return "", fmt.Errorf("%s %s: the child ended (%v)\n%s", filepath.Base(c.cmd.Path), c.name, err, lastLines(c.stderr.String(), 15))
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// ready waits for the child's first call to be done.
func (c *lockstepChild) ready() error {
	s, err := c.line()
	if err != nil {
		return err
	}
	if s != lockstepReady {
		return fmt.Errorf("%s: the child wrote %q, want %q", c.name, s, lockstepReady)
	}
	return nil
}

func (c *lockstepChild) call() (cpu, wall time.Duration, err error) {
	if _, err := fmt.Fprintln(c.in, lockstepCall); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", c.name, err)
	}
	s, err := c.line()
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(s)
	if len(f) != 3 || f[0] != lockstepDone {
		return 0, 0, fmt.Errorf("%s: the child wrote %q, want %q and two times", c.name, s, lockstepDone)
	}
	cn, err1 := strconv.ParseInt(f[1], 10, 64)
	wn, err2 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil || cn < 0 || wn < 0 {
		return 0, 0, fmt.Errorf("%s: the child wrote %q: not two times in ns", c.name, s)
	}
	return time.Duration(cn), time.Duration(wn), nil
}

// finish ends the child's input and returns the measurement it prints.
func (c *lockstepChild) finish() (*measurement, error) {
	c.in.Close()
	rest, err := io.ReadAll(c.out)
	if werr := c.cmd.Wait(); werr != nil || err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", filepath.Base(c.cmd.Path), c.name, errors.Join(werr, err), lastLines(c.stderr.String(), 15))
	}
	return parseMeasurement(c.name, rest)
}

// kill stops a child that will not be finished.
func (c *lockstepChild) kill() {
	c.cmd.Process.Kill()
	c.in.Close()
	c.cmd.Wait()
}

// runPaired times decoder d and its anchor in lockstep, each in a child
// process of this build, and returns d's measurement holding the
// anchor's CPU and wall seconds (as many calls, each beside one of d's).
// A CPU profile asked for (-cpuprofile) is of d's calls.
func runPaired(e *env, dsName string, d decoder, file string) (*measurement, error) {
	a, ok := registry[d.anchor]
	if !ok || a.prepare == nil {
		return nil, fmt.Errorf("decoder %s: no in-process anchor %q", d.name, d.anchor)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var extra []string
	if e.cpuProfile != "" {
		extra = []string{"-cpuprofile", e.cpuProfile}
	}
	return runLockstep(e, d.name, harnessCmd(e, self, dsName, d.name, file, extra...), a.name, harnessCmd(e, self, dsName, a.name, file))
}

// runLockstep times the decoder name run by xCmd and the anchor run by
// anchorCmd, two children speaking the protocol, in lockstep, and returns
// the decoder's measurement holding the anchor's CPU and wall seconds.
func runLockstep(e *env, name string, xCmd *exec.Cmd, anchorName string, anchorCmd *exec.Cmd) (*measurement, error) {
	x, err := startLockstep(name, xCmd)
	if err != nil {
		return nil, err
	}
	anchor, err := startLockstep(anchorName, anchorCmd)
	if err != nil {
		x.kill()
		return nil, err
	}
	var iters int
	err = x.ready()
	if err == nil {
		err = anchor.ready()
	}
	if err == nil {
		iters, err = alternate(x, anchor, e.minTime, e.minIters)
	}
	if err != nil {
		x.kill()
		anchor.kill()
		return nil, err
	}
	mx, errx := x.finish()
	ma, erra := anchor.finish()
	if err := errors.Join(errx, erra); err != nil {
		return nil, err
	}
	if mx.Iters != iters || ma.Iters != iters {
		return nil, fmt.Errorf("decoder %s: %d and %d timed calls (%s's), want %d each", name, mx.Iters, ma.Iters, anchorName, iters)
	}
	mx.AnchorCPUSec, mx.AnchorWallSec = ma.CPUSec, ma.WallSec
	return mx, nil
}
