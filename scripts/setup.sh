#!/usr/bin/env bash
# Install what airlock needs on a Debian 12 host, and build it.
#   scripts/setup.sh          what running airlock needs (the quick start)
#   scripts/setup.sh --test   that, plus what the test suite needs
#                             (PostgreSQL, host copies of the document tools,
#                             staticcheck, Node and the MCP TypeScript SDK)
# Idempotent: re-running only installs what is missing and rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."
for_tests=false
case "${1:-}" in
  --test) for_tests=true ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--test]" >&2; exit 2 ;;
esac

export PATH="/usr/local/go/bin:$PATH"
if ! command -v go >/dev/null; then
  echo "setup: Go 1.26+ is required (expected at /usr/local/go/bin/go)" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: run as root (apt, VMs, namespaces and nftables need it)" >&2
  exit 1
fi

packages=(
  qemu-system-x86 qemu-utils   # the VMM (microvm machine; qboot firmware comes with qemu-system-data)
  mmdebstrap e2fsprogs         # template root filesystems: debootstrap into a dir, mkfs.ext4 -d
  busybox-static               # the minimal root for `airlock run` without a template
  nftables iproute2            # sandbox networking
  ca-certificates python3      # the Python SDK
)
test_packages=(
  # The cluster's shared-state tests start a throwaway PostgreSQL 15 from
  # these binaries (internal/cluster/clustertest); test.sh requires them.
  postgresql-15 postgresql-client-15
  # Only for the unit tests of the in-guest document tool, which run its
  # pure-Go parts on the host against the same Debian tools the templates
  # carry. airlock itself never runs them on the host.
  poppler-utils tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-nld
  ghostscript qpdf
  nodejs npm                   # the MCP tests' TypeScript client (skipped when a node and npm are on PATH)
  nginx openssl                # review --publish tests: a real WebDAV server (http_dav_module) with an htpasswd
  umoci skopeo                 # deploy/image/build.sh packs the container images; the image test reads them back
  docker-registry              # ... and pushes them to a registry of its own (loopback, temporary storage)
)
if $for_tests; then
  packages+=("${test_packages[@]}")
fi
missing=()
for p in "${packages[@]}"; do
  case "$p" in \#*) continue ;; esac
  # A Node installed another way (NodeSource's nodejs carries its own npm,
  # and conflicts with Debian's npm package) serves the tests as well.
  case "$p" in
    nodejs) command -v node >/dev/null && continue ;;
    npm) command -v npm >/dev/null && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# apt-cache needs fresh lists to resolve the guest kernel package; refresh
# them when missing or older than a day.
lists_age=$(( $(date +%s) - $(stat -c %Y /var/lib/apt/lists 2>/dev/null || echo 0) ))
if [ ${#missing[@]} -gt 0 ] || [ ! -e /var/lib/apt/lists/lock ] || [ "$lists_age" -gt 86400 ] \
   || ! apt-cache show linux-image-cloud-amd64 >/dev/null 2>&1; then
  echo "setup: apt-get update" >&2
  apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Tests start nginx themselves, each on its own address; the packaged
  # service (port 80) is not wanted where systemd started it.
  # Likewise the image test's registry (port 5000).
  for svc in nginx docker-registry; do
    if [[ " ${missing[*]} " == *" $svc "* ]] && command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
      systemctl disable --now "$svc" >/dev/null 2>&1 || true
    fi
  done
fi

if $for_tests; then
  # staticcheck for scripts/test.sh, built once into the cache (outside the
  # clone) and rebuilt only when the pinned version changes.
  cache="${AIRLOCK_CACHE_DIR:-/var/cache/airlock}"
  staticcheck_version=v0.8.2
  if [ "$(cat "$cache/bin/staticcheck.version" 2>/dev/null)" != "$staticcheck_version" ]; then
    echo "setup: building staticcheck $staticcheck_version" >&2
    mkdir -p "$cache/bin"
    GOBIN="$cache/bin" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
    echo "$staticcheck_version" > "$cache/bin/staticcheck.version"
  fi
  # oapi-codegen, which internal/api's TestGeneratedClient generates a Go
  # client from openapi.json with, and the module its code imports.
  oapi_version=v2.5.1
  if [ "$(cat "$cache/bin/oapi-codegen.version" 2>/dev/null)" != "$oapi_version" ]; then
    echo "setup: building oapi-codegen $oapi_version" >&2
    mkdir -p "$cache/bin"
    GOBIN="$cache/bin" go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$oapi_version"
    echo "$oapi_version" > "$cache/bin/oapi-codegen.version"
  fi
  # Two tests run `go mod tidy` offline (GOPROXY=off) in modules of their
  # own, so the module cache must already hold every module those tidies
  # load, tests of dependencies included, or a fresh machine fails them:
  # client.TestUsableFromAnotherModule requires this module (what its
  # build and tests need: go mod download), and internal/api's
  # TestGeneratedClient requires oapi-codegen's runtime (the same tidy,
  # run here online, fills its graph).
  go mod download
  prefetch=$(mktemp -d)
  printf 'module example.com/prefetch\n\ngo 1.26\n\nrequire github.com/oapi-codegen/runtime v1.1.2\n' >"$prefetch/go.mod"
  printf 'package main\n\nimport _ "github.com/oapi-codegen/runtime"\n\nfunc main() {}\n' >"$prefetch/main.go"
  (cd "$prefetch" && GOWORK=off go mod tidy)
  rm -rf "$prefetch"
  # The official TypeScript MCP client, which the MCP tests drive airlock's
  # server with (internal/mcp/testdata/tsclient), installed from its lock
  # file into the cache, outside the clone, and again only when it changes.
  tsclient=internal/mcp/testdata/tsclient
  if ! cmp -s "$tsclient/package-lock.json" "$cache/npm/package-lock.json" \
     || [ ! -d "$cache/npm/node_modules/@modelcontextprotocol/sdk" ]; then
    echo "setup: installing the MCP TypeScript SDK into $cache/npm" >&2
    mkdir -p "$cache/npm"
    cp "$tsclient/package.json" "$tsclient/package-lock.json" "$cache/npm/"
    (cd "$cache/npm" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
fi

make -s build
echo "setup: built bin/airlock, bin/airlock-agent, bin/airlock-jailer and bin/airlock-docs ($(bin/airlock version))" >&2
