# structtensor build. `make demo` and `make test` do all set-up themselves
# on a fresh machine; every download is cached and idempotent.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 1

.PHONY: all setup setup-go build demo test vet bench fmt

all: build

setup: setup-go

setup-go:
	$(GO) mod download

build: setup-go
	$(GO) build -o bin/structtensor ./cmd/structtensor

demo: build
	./bin/structtensor demo

vet: setup-go
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }

test: setup vet
	$(GO) test ./...

bench: setup
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
