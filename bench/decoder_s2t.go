package main

import (
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
		name:  "struct2tensor",
		order: 40,
		about: "struct2tensor 0.48.1 (Python, TF 2.17): create_expression_from_file_descriptor_set + project + calculate_prensors + get_ragged_tensors in a tf.function",
		unavailable: func(e *env) string {
			if _, err := os.Stat(e.s2tPython); err != nil {
				return fmt.Sprintf("%s is absent (scripts/setup-python.sh builds .venv-s2t)", e.s2tPython)
			}
			return ""
		},
		external: func(e *env, ds *dataset, file string) (*measurement, error) {
			cmd := exec.Command(e.s2tPython, filepath.Join(e.root, "python", "bench", "s2t_decode.py"),
				"--descriptors", e.descPath,
				"--message", string(ds.message.FullName()),
				"--paths", strings.Join(ds.paths, ","),
				"--file", file,
				"--min-time", fmt.Sprint(e.minTime.Seconds()),
				"--min-iters", fmt.Sprint(e.minIters))
			cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
			return runChild(cmd)
		},
	})
}
