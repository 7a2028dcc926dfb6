package mcp

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
)

const playbookYAML = `name: Acme standard
version: "1"
clauses:
  governing_law:
    title: Governing Law
    standard_text: This agreement is governed by the laws of England.
`

// TestDocumentToolsPlumbing: the document tools check what the host can
// (playbooks, vendor masters, limits) before any sandbox, and every
// result, failed ones too, is one their output schema accepts (the SDK
// validates it, or the call would be a protocol error). Local machines
// have none of the document templates, so the jobs end sandbox_failed.
func TestDocumentToolsPlumbing(t *testing.T) {
	pbs := t.TempDir()
	must(t, os.WriteFile(filepath.Join(pbs, "acme.yaml"), []byte(playbookYAML), 0o644))
	must(t, os.WriteFile(filepath.Join(pbs, "broken.json"), []byte(`{"name": 1}`), 0o644))
	e := newTestEnv(t, Options{PlaybookDir: pbs, MaxDocumentBytes: 1 << 20})
	cs := e.connect(tenantA)
	doc := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 not much of a contract"))

	for _, args := range []map[string]any{
		{"content_base64": doc},
		{"content_base64": doc, "playbook": "acme"},
		{"content_base64": doc, "playbook": "default"},
		{"content_base64": doc, "playbook_inline": playbookYAML},
	} {
		var r DocumentResult[ReviewResult]
		mustCall(t, cs, "review_contract", args, &r)
		if r.OK || r.Error == nil || r.Error.Code != "sandbox_failed" || r.Result != nil {
			t.Errorf("review %v: %+v", args["playbook"], r)
		}
	}
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"content_base64": doc, "playbook": "nope"}), "not_found")
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"content_base64": doc, "playbook": "../acme"}), "invalid_argument")
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"content_base64": doc, "playbook": "broken"}), "failed_precondition")
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"content_base64": doc, "playbook_inline": "clauses: 7"}), "invalid_argument")
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"content_base64": "%%%"}), "invalid_argument")
	big := base64.StdEncoding.EncodeToString(make([]byte, 1<<20+4096))
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"content_base64": big}), "resource_exhausted")

	var inv DocumentResult[InvoiceResult]
	mustCall(t, cs, "extract_invoice", map[string]any{"content_base64": doc, "filename": "inv.pdf",
		"vendors": `{"tenant_id": "acme", "vendors": [{"vendor_id": "v1", "name": "Acme GmbH"}]}`}, &inv)
	if inv.OK || inv.Result == nil || inv.Result.Decision != "review" || len(inv.Result.Flags) == 0 {
		t.Errorf("invoice that could not be read: %+v, want decision review with a flag", inv)
	}
	wantToolError(t, call(t, cs, "extract_invoice", map[string]any{"content_base64": doc, "vendors": `{"vendors": 3}`}), "invalid_argument")
	wantToolError(t, call(t, cs, "extract_invoice", map[string]any{"content_base64": doc, "approve_limit": "lots"}), "invalid_argument")

	var red DocumentResult[RedactResult]
	mustCall(t, cs, "redact_document", map[string]any{"content_base64": base64.StdEncoding.EncodeToString([]byte("Bob, 555-0100")),
		"filename": "note.txt", "canaries": []string{"555-0100"}}, &red)
	if red.OK || red.Error == nil || red.Document.Name != "note.txt" || red.Document.Bytes != 13 {
		t.Errorf("redact: %+v", red)
	}
	wantToolError(t, call(t, cs, "redact_document", map[string]any{"content_base64": doc, "filename": ".."}), "invalid_argument")
	if n := e.running(tenantA); n != 0 {
		t.Errorf("%d sandboxes left running by the document tools", n)
	}
}
