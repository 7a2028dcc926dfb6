# airlock build. The agent is static (it is the guest's PID 1).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO      ?= go
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test test-short bench generate clean

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/airlock ./cmd/airlock
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/airlock-agent ./cmd/airlock-agent

test:
	./scripts/test.sh

test-short:
	$(GO) test -short ./...

bench: build
	bin/airlock template build base
	bin/airlock bench --template base

generate:
	$(GO) generate ./internal/guest/agentpb

clean:
	rm -rf bin
