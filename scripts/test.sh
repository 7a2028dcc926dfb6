#!/usr/bin/env bash
# The whole test suite: installs what it needs, then runs every Go test
# (including the ones that boot real VMs) and the Python SDK's tests.
# Fast set only: `go test -short ./...`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
export PATH="/usr/local/go/bin:$PATH"

go vet ./...
"${AIRLOCK_CACHE_DIR:-/var/cache/airlock}/bin/staticcheck" ./...
unformatted=$(gofmt -l cmd internal client)
if [ -n "$unformatted" ]; then
  echo "test: gofmt needed on: $unformatted" >&2
  exit 1
fi
# The deployment's offline checks (Kubernetes manifests, systemd units):
# a module of its own, so client-go stays out of airlock's. About a minute
# the first time (client-go builds), seconds once cached. Its TestImages
# builds the container images (deploy/image/build.sh) and runs them, a VM
# too: about 45 s with the node's Debian root cached; the first time 2.5
# minutes (its bootstrap), 4 if the static Go build is not cached either.
# A loaded machine stretches that (a niced build once outlasted go test's
# 10-minute default beside two busy loops), hence the timeout.
(
  export AIRLOCK_REQUIRE_IMAGE=1
  cd deploy/validate
  go vet ./...
  "${AIRLOCK_CACHE_DIR:-/var/cache/airlock}/bin/staticcheck" ./...
  unformatted=$(gofmt -l .)
  if [ -n "$unformatted" ]; then
    echo "test: gofmt needed on deploy/validate: $unformatted" >&2
    exit 1
  fi
  go test -count=1 -timeout 30m ./...
)
# setup.sh installed PostgreSQL: its tests must run, never skip.
export AIRLOCK_REQUIRE_PG=1
# ... and nginx and openssl (the WebDAV server of the --publish tests).
export AIRLOCK_REQUIRE_NGINX=1
PYTHONPATH=sdk/python python3 -m unittest discover -s sdk/python/tests
# VM tests share two cores: one package at a time, generous timeouts.
go test -p 1 -count=1 -timeout 60m ./...
# Every fuzz target for a bounded time (FUZZTIME, default 8s each).
./scripts/fuzz.sh
