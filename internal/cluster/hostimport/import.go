package hostimport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/airlock-dev/airlock/internal/cluster/nodeagent"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// Options say what to import and as which node.
type Options struct {
	// StateDir is the host's state directory (its store is airlock.db
	// there).
	StateDir string
	// Node is the node id the host has, or will have, in the cluster.
	Node string
	// HostClass is recorded on the host's node row if it has none.
	HostClass string
}

// Report says what an import found and wrote.
type Report struct {
	Node  string `json:"node"`
	Chain string `json:"chain"`
	// Tenants are those of the keys and ended sandboxes.
	Tenants []string `json:"tenants"`
	// Keys and KeysAdded: found on the host, new in the cluster.
	Keys      int `json:"keys"`
	KeysAdded int `json:"keys_added"`
	// Ended and EndedAdded: ended sandbox records found, new.
	Ended      int `json:"ended_sandboxes"`
	EndedAdded int `json:"ended_sandboxes_added"`
	// Running sandboxes are not imported: they run on the host.
	Running int `json:"running_sandboxes_not_imported"`
	// Templates are counted, not copied: the cluster has no template
	// metadata of its own yet; a node reports the templates it holds
	// when it registers, so the host reports its own once it joins.
	Templates int `json:"templates_not_imported"`
	// AuditRecords is the host chain's length; AuditAdded the records new
	// in the cluster.
	AuditRecords int64 `json:"audit_records"`
	AuditAdded   int64 `json:"audit_records_added"`
	// LastHash is the chain's last hash, equal on the host and in the
	// cluster after the import.
	LastHash string `json:"last_hash"`
}

// Import imports o.StateDir into st (see the package comment).
func Import(ctx context.Context, st *pgstore.Store, o Options) (Report, error) {
	rep := Report{Node: o.Node}
	if err := store.ValidateID("node id", o.Node); err != nil {
		return rep, err
	}
	dbPath := filepath.Join(o.StateDir, "airlock.db")
	if _, err := os.Stat(dbPath); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return rep, errdefs.NotFound("no airlock store in %s (no airlock.db)", o.StateDir)
		}
		return rep, fmt.Errorf("import %s: %w", o.StateDir, err)
	}
	lock, err := daemon.LockStateDir(o.StateDir)
	if err != nil {
		return rep, fmt.Errorf("import %s: %w (stop its daemon first)", o.StateDir, err)
	}
	defer lock.Close()
	local, err := store.Open(dbPath)
	if err != nil {
		return rep, fmt.Errorf("import %s: %w", o.StateDir, err)
	}
	defer local.Close()
	before, err := verifyLocal(ctx, local, o.StateDir)
	if err != nil {
		return rep, err
	}
	rep.AuditRecords, rep.LastHash = before.Records, before.LastHash
	if rep.Chain, err = nodeagent.ChainOf(o.StateDir, o.Node); err != nil {
		return rep, fmt.Errorf("import %s: %w", o.StateDir, err)
	}
	if err := st.ImportHostNode(ctx, o.Node, o.HostClass); err != nil {
		return rep, err
	}
	if err := importRecords(ctx, st, local, o.Node, &rep); err != nil {
		return rep, err
	}
	if rep.AuditAdded, err = importChain(ctx, st, local, o.Node, rep.Chain); err != nil {
		return rep, err
	}
	return rep, verifyImported(ctx, st, rep.Chain, before)
}

// verifyLocal walks the host's chain; a broken one is refused.
func verifyLocal(ctx context.Context, local *store.Store, dir string) (store.VerifyReport, error) {
	if err := local.AuditIntegrity(); err != nil {
		return store.VerifyReport{}, errdefs.FailedPrecondition("the audit log of %s was tampered with: %v; nothing imported", dir, err)
	}
	v, err := local.VerifyAudit(ctx)
	if err != nil {
		return v, fmt.Errorf("verify the audit chain of %s: %w", dir, err)
	}
	if !v.OK {
		return v, errdefs.FailedPrecondition("the audit chain of %s fails verification at record %d: %s; nothing imported",
			dir, v.FirstBadSeq, v.Problem)
	}
	return v, nil
}

// importRecords copies keys and ended sandboxes and counts what is left
// behind.
func importRecords(ctx context.Context, st *pgstore.Store, local *store.Store, node string, rep *Report) error {
	keys, err := local.StoredKeys(ctx)
	if err != nil {
		return err
	}
	tenants := map[string]bool{}
	for _, k := range keys {
		tenants[k.Tenant] = true
	}
	rep.Keys = len(keys)
	if rep.KeysAdded, err = st.ImportKeys(ctx, keys); err != nil {
		return err
	}
	sbs, err := local.ListSandboxes(ctx, store.SandboxFilter{})
	if err != nil {
		return err
	}
	var ended []store.Sandbox
	for _, sb := range sbs {
		if sb.EndedAt == nil {
			rep.Running++
			continue
		}
		ended = append(ended, sb)
		tenants[sb.Tenant] = true
	}
	// Parents first: a child names its parent only if the parent is there.
	slices.SortStableFunc(ended, func(a, b store.Sandbox) int { return a.CreatedAt.Compare(b.CreatedAt) })
	rep.Ended = len(ended)
	if rep.EndedAdded, err = st.ImportEnded(ctx, node, ended); err != nil {
		return err
	}
	tms, err := local.ListTemplates(ctx)
	if err != nil {
		return err
	}
	rep.Templates = len(tms)
	for t := range tenants {
		rep.Tenants = append(rep.Tenants, t)
	}
	slices.Sort(rep.Tenants)
	return nil
}

// importChain ships the host's chain after the head the cluster holds of
// it, whose last record must be the host's own; it returns the records
// added.
func importChain(ctx context.Context, st *pgstore.Store, local *store.Store, node, chain string) (int64, error) {
	head, err := st.GetChainHead(ctx, chain)
	if err != nil {
		return 0, err
	}
	if head.Seq > 0 {
		mine, err := local.QueryAudit(ctx, store.AuditFilter{AfterSeq: head.Seq - 1, Limit: 1})
		if err != nil {
			return 0, err
		}
		if len(mine) == 0 || mine[0].Seq != head.Seq || mine[0].Hash != head.Hash {
			return 0, fmt.Errorf("import audit chain %s: %w", chain, errdefs.FailedPrecondition(
				"the cluster holds %d records of this host's chain and its last is not the host's record %d: the chains diverged", head.Seq, head.Seq))
		}
	}
	var added int64
	for {
		recs, err := local.QueryAudit(ctx, store.AuditFilter{AfterSeq: head.Seq, Limit: pgstore.MaxShipBatch})
		if err != nil {
			return added, err
		}
		if len(recs) == 0 {
			return added, nil
		}
		if head, err = st.ImportChain(ctx, node, chain, recs); err != nil {
			return added, err
		}
		added += int64(len(recs))
	}
}

// verifyImported walks the chain in PostgreSQL: it must verify and end
// where the host's did.
func verifyImported(ctx context.Context, st *pgstore.Store, chain string, local store.VerifyReport) error {
	if local.Records == 0 {
		return nil
	}
	v, err := st.VerifyChain(ctx, chain)
	if err != nil {
		return err
	}
	switch {
	case !v.OK:
		return errdefs.FailedPrecondition("the imported chain %s fails verification in the cluster at record %d: %s", chain, v.FirstBadSeq, v.Problem)
	case v.Records < local.Records:
		return errdefs.FailedPrecondition("the imported chain %s holds %d records, the host %d", chain, v.Records, local.Records)
	}
	h, err := st.ChainRecordHash(ctx, chain, local.Records)
	if err != nil {
		return err
	}
	if h != local.LastHash {
		return errdefs.FailedPrecondition("the imported chain %s record %d is not the host's", chain, local.Records)
	}
	return nil
}
