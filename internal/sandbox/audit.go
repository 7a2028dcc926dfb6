package sandbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// auditRecord starts the record of event about the sandbox info
// describes: its tenant, id, template and metadata (so that every record
// of a sandbox is found by `audit ls --meta`). Callers add what the event
// measured: outcome, duration, bytes, detail and, for records that name
// it, the parent.
func auditRecord(event string, info Info) store.AuditRecord {
	return store.AuditRecord{Tenant: info.Tenant, SandboxID: info.ID, Template: info.Template,
		Event: event, Metadata: info.Metadata}
}

// audit appends a record; a failure to audit is logged and counted, never
// silently dropped.
func (m *Manager) audit(ctx context.Context, r store.AuditRecord) {
	if _, err := m.cfg.Store.AppendAudit(context.WithoutCancel(ctx), r); err != nil {
		m.log.Error("audit append failed", "event", r.Event, "sandbox", r.SandboxID, "err", err)
		m.cfg.Metrics.Error(err)
	}
}

// outcomeOf is an audit record's Outcome for err: "ok" or its errdefs code.
func outcomeOf(err error) string {
	if err == nil {
		return "ok"
	}
	return errdefs.Code(err)
}

// pathDigest lets an auditor check "was this exact path touched in this
// sandbox" without the log holding the path: an HMAC keyed by the sandbox
// id, so digests cannot be correlated across sandboxes.
func pathDigest(sandboxID, path string) string {
	h := hmac.New(sha256.New, []byte(sandboxID))
	h.Write([]byte(path))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// auditInfo describes sandbox id of tenant for a record made outside a
// call into it (the egress proxy's events, which come in after a
// connection closes, perhaps after the sandbox ended): from the running
// sandbox, else from the store, else by its ids alone.
func (m *Manager) auditInfo(tenant, id string) Info {
	if l := m.liveOf(tenant, id); l != nil {
		return l.infoCopy()
	}
	if sb, err := m.cfg.Store.GetSandbox(context.Background(), tenant, id); err == nil {
		return infoFromStore(sb)
	}
	return Info{ID: id, Tenant: tenant}
}

// logUndo logs what undoing a failed operation could not remove; the
// operation's own error is what its caller reports.
func (m *Manager) logUndo(op string, err error) {
	if err != nil {
		m.log.Error("undo of a failed "+op+" left resources", "err", err)
	}
}
