# airlock build. The agent is static (it is the guest's PID 1), and so is
# the document tool (it runs inside the guest).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO      ?= go
# Where the binaries go (deploy/image/build.sh builds into its own).
BIN     ?= bin
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build image test test-short bench generate clean

# The agent and the document tool are baked into templates by content
# hash: they are built reproducibly (no version stamp, no VCS stamp), so a
# commit that does not touch their code does not rebuild every template.
# (The agent reports its own content hash as its version.)
build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/airlock ./cmd/airlock
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags "-s -w" -o $(BIN)/airlock-agent ./cmd/airlock-agent
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/airlock-jailer ./cmd/airlock-jailer
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags "-s -w" -o $(BIN)/airlock-docs ./cmd/airlock-docs

# The container images (root; README, "Container images"): bin/image/.
image:
	./deploy/image/build.sh

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
