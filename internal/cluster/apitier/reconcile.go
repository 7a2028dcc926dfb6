package apitier

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// reconcile resolves creates left creating past the create timeout (the
// API process that made the row died, or gave up without recording it):
// the node is asked; a sandbox it runs becomes running, one it does not
// know failed (create_lost), one that ended takes its end. A node that
// does not answer is left to the sweep, which writes its rows off if it
// is gone.
func (t *Tier) reconcile(ctx context.Context) error {
	rows, err := t.st.StaleCreating(ctx, t.cfg.ReconcileAfter, 100)
	if err != nil {
		return err
	}
	for _, sb := range rows {
		t.resolve(ctx, sb)
	}
	return nil
}

func (t *Tier) resolve(ctx context.Context, sb pgstore.Sandbox) {
	n, ok := t.node(sb.NodeID)
	if !ok || n.epoch != sb.NodeEpoch || !n.state.Live() {
		return // written off with its node, or about to be
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := t.nodeClient(n, sb.Tenant).GetSandbox(cctx, sb.ID)
	switch {
	case err == nil && got.State == pgstore.StateRunning:
		err = t.st.ConfirmSandbox(ctx, sb.ID, got.CreatedAt, got.Deadline, got.Jailed)
	case err == nil:
		_, err = t.st.EndSandbox(ctx, sb.ID, got.State, got.State)
	case errdefs.IsNotFound(err):
		_, err = t.st.FailSandbox(ctx, sb.ID, "create_lost")
	default:
		return
	}
	if err != nil {
		t.cfg.Log.Warn("reconcile a create", "sandbox", sb.ID, "err", err)
		return
	}
	t.cfg.Log.Info("reconciled a create left creating", "sandbox", sb.ID)
}
