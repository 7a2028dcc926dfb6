#!/usr/bin/env bash
# The quick start, end to end: install what airlock needs, build it, bake
# the legal-doc-review template, and review a contract PDF against the
# built-in playbook in a throwaway sandbox restored from it (egress denied,
# the in-guest self-check passed before the document goes in). Prints the
# findings; writes an HTML report too.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
bin/airlock doctor
# Baked once (a minute or two the first time; cached afterwards).
bin/airlock template build legal-doc-review
report_dir="${TMPDIR:-/tmp}/airlock-demo-report"
echo "--- examples/contract.pdf, reviewed inside a sandbox restored from legal-doc-review ---" >&2
bin/airlock review --out "$report_dir" examples/contract.pdf
echo "--- the same, as the JSON line a script would read ---" >&2
bin/airlock review --json examples/contract.pdf | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(json.dumps({k: d[k] for k in ("file", "ok", "error", "pages", "ocr_pages", "timings_ms")}))
    for f in d["findings"]:
        print("  %-28s %-9s numeric_change=%-5s similarity=%.2f  %s" % (
            f["clause"], f["status"], f["numeric_change"], f["similarity"], f["heading"]))
'
