#!/usr/bin/env bash
# The quick start, end to end: install, build, bake the legal-doc-review
# template, and run a contract PDF through a throwaway sandbox restored from
# it. Prints the text the guest extracted.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
bin/airlock doctor
# Baked once (about a minute the first time; cached afterwards).
bin/airlock template build legal-doc-review
echo "--- contract.pdf, extracted inside a sandbox restored from legal-doc-review ---" >&2
bin/airlock run -v --template legal-doc-review --timeout 2m \
  --put examples/contract.pdf:/job/in.pdf \
  -- pdftotext -layout /job/in.pdf -
