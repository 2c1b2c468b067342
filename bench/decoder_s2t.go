package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The struct2tensor decoder runs python/bench/s2t_decode.py in the
// struct2tensor virtualenv (.venv-s2t, built by scripts/setup-python.sh):
// struct2tensor 0.48.1 on TensorFlow 2.17, the newest release whose wheel
// runs here (see python/requirements-struct2tensor.txt).
func init() {
	registerDecoder(decoder{
		name:      "struct2tensor",
		order:     40,
		about:     "struct2tensor 0.48.1 (Python, TF 2.17): create_expression_from_file_descriptor_set + project + calculate_prensors + get_ragged_tensors in a tf.function",
		timedOnce: true,
		unavailable: func(e *env) string {
			if _, err := os.Stat(e.s2tPython); err != nil {
				return fmt.Sprintf("%s is absent (scripts/setup-python.sh builds .venv-s2t)", e.s2tPython)
			}
			return ""
		},
		external: func(e *env, ds *dataset, file string) (*measurement, error) {
			ms, err := runS2T(e, []s2tJob{{ds, file}})
			if err != nil {
				return nil, err
			}
			return ms[0], nil
		},
	})
}

type s2tJob struct {
	ds   *dataset
	file string
}

// runS2T runs the script once for several jobs (one TensorFlow import)
// and returns a measurement per job. The harness gives it one job per
// process, so that peak RSS is per dataset.
func runS2T(e *env, jobs []s2tJob) ([]*measurement, error) {
	args := []string{filepath.Join(e.root, "python", "bench", "s2t_decode.py"),
		"--descriptors", e.descPath,
		"--min-time", fmt.Sprint(e.minTime.Seconds()),
		"--min-iters", fmt.Sprint(e.minIters)}
	if e.agreementOnly {
		args = append(args, "--no-graph-optimizer")
	}
	for _, j := range jobs {
		args = append(args, "--message", string(j.ds.message.FullName()),
			"--paths", strings.Join(j.ds.paths, ","), "--file", j.file)
	}
	cmd := exec.Command(e.s2tPython, args...)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("s2t_decode.py: %v\n%s", err, lastLines(stderr.String(), 15))
	}
	var out []*measurement
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // anything TensorFlow prints
		}
		m := new(measurement)
		if err := json.Unmarshal([]byte(line), m); err != nil {
			return nil, fmt.Errorf("s2t_decode.py printed %q: %v", line, err)
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("s2t_decode.py: %w", err)
		}
		out = append(out, m)
	}
	if len(out) != len(jobs) {
		return nil, fmt.Errorf("s2t_decode.py printed %d measurements for %d jobs:\n%s", len(out), len(jobs), stdout.String())
	}
	return out, nil
}
