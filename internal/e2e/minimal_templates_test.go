package e2e

import (
	"strings"
	"testing"
)

// TestJobTemplatesCarryNoToolbox: the three document job templates are
// cut to their tools (templates/docs-base.yaml keep): a parser an attacker
// took over finds no shell, network client, interpreter or package manager
// to run next. Each is missing (127, as a shell reports it); the job's own
// tool is there.
func TestJobTemplatesCarryNoToolbox(t *testing.T) {
	e := getEnv(t)
	for _, tmpl := range []string{"legal-doc-review", "invoice-ocr", "pii-redact"} {
		docsTemplate(t, e, tmpl)
		run := func(argv ...string) (string, int) {
			args := append([]string{"run", "--state-dir", e.stateDir, "--run-dir", shortRunDir(t), "--template", tmpl, "--"}, argv...)
			out, _, code := e.cli(t, args...)
			return out, code
		}
		for _, prog := range []string{"sh", "bash", "curl", "wget", "python3", "perl", "apt-get", "dpkg"} {
			if _, code := run(prog, "--version"); code != 127 {
				t.Errorf("%s: %s exits %d, want 127 (not in the template)", tmpl, prog, code)
			}
		}
		if out, code := run("airlock-docs", "version"); code != 0 || !strings.Contains(out, `"name":"airlock-docs"`) {
			t.Errorf("%s: airlock-docs version: exit %d %q", tmpl, code, out)
		}
	}
}
