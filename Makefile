# structtensor build. `make demo` and `make test` do all set-up themselves
# on a fresh machine; every download is cached and idempotent.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 1
# tfbridge finds TensorFlow through build/pkgconfig/tensorflow.pc (make setup-tf).
export PKG_CONFIG_PATH := $(CURDIR)/build/pkgconfig:$(PKG_CONFIG_PATH)
# The go build cache does not key on pkg-config output: a define naming the
# .pc content makes a different TensorFlow (STRUCTTENSOR_TF_DIR) rebuild.
# A sub-make inherits the define of the make that started it, perhaps made
# before the .pc existed: it is replaced, not defined twice.
user_cgo_cppflags := $(filter-out -DSTRUCTTENSOR_TF_PC=%,$(CGO_CPPFLAGS))
export CGO_CPPFLAGS = $(user_cgo_cppflags) -DSTRUCTTENSOR_TF_PC=$(shell [ -f build/pkgconfig/tensorflow.pc ] && cksum < build/pkgconfig/tensorflow.pc | cut -d' ' -f1)

.PHONY: all setup setup-go setup-tf build demo test vet bench bench-go fmt ops-lib beam-test beam-bench worker wheel

all: build

setup: setup-go setup-tf

setup-go:
	$(GO) mod download
	cd beam && $(GO) mod download

# TensorFlow C runtime for cgo (the .venv wheel, or STRUCTTENSOR_TF_DIR).
setup-tf:
	scripts/setup-tf.sh >/dev/null

build: setup-go setup-tf
	$(GO) build -o bin/structtensor ./cmd/structtensor

# The decode op for Python TensorFlow (tf.load_op_library): the native engine
# and the cops kernel in one shared library, against the runtime of setup-tf.
OPS_LIB := build/libstructtensor_ops.so
OPS_SRCS := $(wildcard native/*.cc) cops/decode_op.cc cops/example_op.cc cops/reduceop/reduce_op.cc cops/sharedlib/load.cc
ops-lib: $(OPS_LIB)
$(OPS_LIB): $(OPS_SRCS) $(wildcard native/*.h) native/include/structtensor_native.h native/include/structtensor_example.h cops/decode_op.h cops/kernel_common.h cops/reduceop/reduce_op.h | setup-tf
	$(CXX) -std=c++17 -O2 -shared -fPIC -pthread -fvisibility=hidden -Wl,--no-undefined \
		-Inative/include -Icops -Icops/reduceop $$(pkg-config --cflags tensorflow) \
		$(OPS_SRCS) -o $@ $$(pkg-config --libs tensorflow)

# The Python package structtensor_tf (python/): the op library and the
# DataView loader, as a wheel in build/wheel (pip install build/wheel/*.whl).
wheel: $(OPS_LIB)
	cp $(OPS_LIB) python/structtensor_tf/libstructtensor_ops.so
	rm -rf build/wheel python/build python/*.egg-info
	.venv/bin/python -m pip wheel --no-deps --no-build-isolation -w build/wheel ./python
	rm -rf python/build python/*.egg-info

demo: build
	./bin/structtensor demo

vet: setup-go setup-tf
	$(GO) mod tidy -diff
	cd beam && $(GO) mod tidy -diff
	$(GO) vet ./...
	cd beam && $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }

# Every reference the tests compare against (TensorFlow and pyarrow in .venv,
# struct2tensor in .venv-s2t, the ops library) is installed first, and
# STRUCTTENSOR_REQUIRE_REFERENCES turns a test's "reference absent" skip into
# a failure (internal/testenv), so CI never passes by skipping a comparison.
# On a fresh machine the two reference virtualenvs (struct2tensor's and
# tfx-bsl's, each with its own TensorFlow) take most of the set-up's
# minutes, in downloads: they install in the background, side by side,
# while the Go side is set up, vetted and built (two jobs at a time), and
# the tests start once all of it is done. A failed installation's log is
# printed.
test:
	@mkdir -p build
	@scripts/setup-python.sh s2t >build/setup-s2t.log 2>&1 & s2t=$$!; \
	scripts/setup-python.sh tfx >build/setup-tfx.log 2>&1 & tfx=$$!; \
	$(MAKE) -j2 setup vet ops-lib wheel; built=$$?; \
	refs=0; \
	wait $$s2t || { cat build/setup-s2t.log >&2; echo "make test: scripts/setup-python.sh s2t failed (above)" >&2; refs=1; }; \
	wait $$tfx || { cat build/setup-tfx.log >&2; echo "make test: scripts/setup-python.sh tfx failed (above)" >&2; refs=1; }; \
	[ $$built -eq 0 ] && [ $$refs -eq 0 ]
	STRUCTTENSOR_REQUIRE_REFERENCES=1 $(GO) test ./...
	STRUCTTENSOR_REQUIRE_REFERENCES=1 $(GO) test -short -tags invariants ./structtensor/...
	$(MAKE) beam-test
	$(MAKE) test-cgo
	.venv/bin/python -m pytest python/tests

# The Beam module (beam/, a Go module of its own so that the core module
# never downloads Beam): its pipelines run on Prism in process. Building its
# test binary (Beam's dependencies) takes about a minute on 2 cores, the
# pipelines about ten seconds.
beam-test: setup-go
	cd beam && STRUCTTENSOR_REQUIRE_REFERENCES=1 $(GO) test ./...

# The Beam scale-out benchmark (beam/bench_test.go): >= 1 GiB of TFRecords,
# generated once under /tmp/structtensor-beam-bench (-beam_bench_dir), decoded in one
# process and by pipelines on Prism with one and with two worker processes,
# in one run; prints MB per CPU-second of each and the speedup of two
# workers over one, with the CPU and the load.
beam-bench: setup-go
	@lscpu | grep 'Model name' || true
	@uptime
	cd beam && $(GO) test -run '^$$' -bench BenchmarkPrismWorkers -benchtime 1x -timeout 60m $(BEAMBENCHFLAGS) .
	@uptime

# The packages that pass memory across the cgo and TensorFlow boundaries,
# again under the race detector with GOEXPERIMENT=cgocheck2 (every store
# of a Go pointer into C memory checked at run time), in one run: the two
# checks combine, and each build of the packages and their dependencies
# costs minutes on a fresh machine. -short skips the slowest tests (the
# sanitizer build, the long benchmarks' datasets), which the plain run
# above covers.
CGO_PKGS := ./native/... ./decode/... ./tfbridge/... ./cops/... ./starrow/...
.PHONY: test-cgo
test-cgo: setup ops-lib
	GOEXPERIMENT=cgocheck2 STRUCTTENSOR_REQUIRE_REFERENCES=1 $(GO) test -short -race $(CGO_PKGS)

# The Beam worker (and launcher): structtensor-beam for linux/amd64 with cgo,
# libstdc++ and libgcc linked in, so it runs in Beam's Go SDK container
# (Debian 12: glibc 2.36, no libstdc++). beam/cmd/structtensor-beam's tests
# check the symbol versions of a binary built this way.
WORKER_LDFLAGS := -extldflags "-static-libstdc++ -static-libgcc"
worker: setup-go
	cd beam && CGO_ENABLED=1 GOOS=linux GOARCH=amd64 $(GO) build -ldflags '$(WORKER_LDFLAGS)' \
		-o ../bin/structtensor-beam-worker ./cmd/structtensor-beam

# The decode benchmark harness (bench/README.md): every decoder side by side on
# generated datasets, one line per dataset and decoder, then the targets.
# BENCHFLAGS passes flags, e.g. BENCHFLAGS='-mb 200 -min-time 5s'.
# The pure decoders run from bin/bench; bin/bench-tf (-tags tensorflow) adds
# the tf-op decoder, run from it alone so that loading the TensorFlow runtime
# does not inflate the other decoders' peak RSS. The references it times are
# installed first (cached, like make test's): struct2tensor in .venv-s2t and
# tfx-bsl in .venv-tfx, whose decoders are the feature-spec datasets' anchors.
bench: setup
	scripts/setup-python.sh s2t
	scripts/setup-python.sh tfx
	$(GO) build -o bin/bench ./bench
	$(GO) build -tags tensorflow -o bin/bench-tf ./bench
	./bin/bench -decoders-from bin/bench-tf $(BENCHFLAGS)

# Every package's testing.B benchmarks (slower: minutes on 2 cores).
bench-go: setup
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
