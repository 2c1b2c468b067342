//go:build !linux

package beam

import "errors"

func pinToCPU(int) error {
	return errors.New(CPUsEnv + " pins worker processes to CPUs on Linux only")
}
