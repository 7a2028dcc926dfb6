package sandbox

import (
	"context"
	"io"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/store"
)

// Exec runs a command in a sandbox, streaming its output.
func (m *Manager) Exec(ctx context.Context, tenant, id string, opts guest.ExecOptions, stdout, stderr io.Writer) (res guest.ExecResult, err error) {
	if err := m.admit(); err != nil {
		return guest.ExecResult{}, err
	}
	began := time.Now()
	var info Info
	err = m.use(ctx, tenant, id, func(l *live) error {
		info = l.infoCopy()
		l.exec.apply(&opts)
		disarm := m.failpointDuring(FailExecRunning, 3*time.Second)
		res, err = l.machine.Exec(ctx, opts, stdout, stderr)
		disarm()
		return err
	})
	if info.ID == "" {
		return res, err // unknown sandbox: nothing to audit against
	}
	d := time.Since(began)
	m.cfg.Metrics.ExecObserved(d)
	rec := auditRecord(store.EventExec, info)
	rec.Bytes, rec.DurationMS, rec.Outcome = res.StdoutBytes+res.StderrBytes, d.Milliseconds(), "ok"
	rec.Detail = map[string]string{}
	execDetail(rec.Detail, opts)
	if err != nil {
		rec.Outcome = errdefs.Code(err)
	} else {
		code := res.ExitCode
		rec.ExitCode = &code
		if res.TimedOut {
			rec.Detail["timed_out"] = "true"
		}
		if res.StdoutTruncated || res.StderrTruncated {
			rec.Detail["output_truncated"] = "true"
		}
	}
	m.audit(ctx, rec)
	return res, err
}
