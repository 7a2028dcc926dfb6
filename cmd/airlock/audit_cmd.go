package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// newAuditCmd is `airlock audit ...`: read and verify the audit log,
// directly on the store (host-admin; every tenant unless --tenant).
func newAuditCmd(_ *globalFlags) *cobra.Command {
	f := &adminFlags{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Query and verify the hash-chained audit log (the local store; `ls` also your tenant's, through the API)",
	}
	f.register(cmd)
	cmd.AddCommand(auditListCmd(f), auditVerifyCmd(f))
	return cmd
}

// parseSince accepts RFC 3339 or a duration back from now ("1h").
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, errdefs.InvalidArgument("%q: want an RFC 3339 time or a duration like 1h", s)
	}
	return now.Add(-d), nil
}

func auditListCmd(f *adminFlags) *cobra.Command {
	var (
		sandboxID, since, until, tenant string
		meta, events                    []string
		limit                           int
		view                            tenantView
	)
	cmd := &cobra.Command{
		Use:     "ls [--sandbox ID] [--meta k=v]... [--since 1h|RFC3339] [--tenant T | --api-key K]",
		Aliases: []string{"list"},
		Short:   "List audit records: what touched which sandbox and document, when, and how it went",
		Long: `List audit records, oldest first.

Without an API key this reads the local store (host admin: every tenant,
--tenant to pick one). With one (--api-key or AIRLOCK_API_KEY) it asks the
daemon at --url / AIRLOCK_URL and shows that key's tenant's records only:
the view a tenant on another machine has. --local forces the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			md, err := parseMeta(meta)
			if err != nil {
				return err
			}
			now := time.Now()
			flt := store.AuditFilter{Tenant: tenant, SandboxID: sandboxID, Metadata: md, Events: events, Limit: limit}
			if flt.Since, err = parseSince(since, now); err != nil {
				return fmt.Errorf("--since %w", err)
			}
			if flt.Until, err = parseSince(until, now); err != nil {
				return fmt.Errorf("--until %w", err)
			}
			c, err := view.client()
			if err != nil {
				return err
			}
			var recs []wire.AuditRecord
			if c != nil {
				if tenant != "" {
					return usageErr("--tenant reads the local store; through the API you see only your key's tenant (drop --tenant, or use --local)")
				}
				recs, err = auditViaAPI(cmd.Context(), c, flt)
			} else {
				recs, err = auditFromStore(cmd.Context(), f, flt)
			}
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), wire.AuditList{Records: recs})
			}
			return printAudit(cmd.OutOrStdout(), recs)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sandboxID, "sandbox", "", "only records about this sandbox")
	fl.StringArrayVar(&meta, "meta", nil, "only records whose metadata has KEY=VALUE (repeatable; all must match)")
	fl.StringVar(&since, "since", "", "records at or after: RFC 3339 or a duration back from now (1h)")
	fl.StringVar(&until, "until", "", "records before: RFC 3339 or a duration back from now")
	fl.StringVar(&tenant, "tenant", "", "local store: only this tenant's records (default: all)")
	fl.StringSliceVar(&events, "event", nil, "only these events (create, exec, file_write, kill, ...)")
	fl.IntVar(&limit, "limit", 0, "at most this many records (0 = all)")
	view.register(cmd)
	return cmd
}

func auditFromStore(ctx context.Context, f *adminFlags, flt store.AuditFilter) ([]wire.AuditRecord, error) {
	st, err := f.openStore(false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	recs, err := st.QueryAudit(ctx, flt)
	if err != nil {
		return nil, err
	}
	out := make([]wire.AuditRecord, len(recs))
	for i, r := range recs {
		out[i] = api.AuditRecordFromStore(r)
	}
	return out, nil
}

// auditViaAPI reads the key's tenant's records page by page until
// flt.Limit records (0: all of them).
func auditViaAPI(ctx context.Context, c *client.Client, flt store.AuditFilter) ([]wire.AuditRecord, error) {
	cf := client.AuditFilter{SandboxID: flt.SandboxID, Metadata: flt.Metadata, Since: flt.Since, Until: flt.Until, Events: flt.Events}
	out := []wire.AuditRecord{}
	for {
		cf.Limit = 0 // the server's page
		if flt.Limit > 0 {
			cf.Limit = min(flt.Limit-len(out), auditPage)
		}
		page, err := c.Audit(ctx, cf)
		if err != nil {
			return nil, err
		}
		for _, r := range page {
			out = append(out, wire.AuditRecord(r))
		}
		if len(page) == 0 || (flt.Limit > 0 && len(out) >= flt.Limit) {
			return out, nil
		}
		cf.AfterSeq = page[len(page)-1].Seq
	}
}

// auditPage is the most records the CLI asks the daemon for at once (its
// largest page).
const auditPage = 1000

func printAudit(w io.Writer, recs []wire.AuditRecord) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tTENANT\tSANDBOX\tEVENT\tOUTCOME\tEXIT\tBYTES\tMS\tMETADATA\tDETAIL")
	for _, r := range recs {
		exit := "-"
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05.000"),
			dash(r.Tenant), dash(r.SandboxID), r.Event, r.Outcome, exit, r.Bytes, r.DurationMS, formatMeta(r.Metadata), formatMeta(r.Detail))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func auditVerifyCmd(f *adminFlags) *cobra.Command {
	var cluster bool
	var dsn string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Walk the audit hash chain; exit 1 naming the first bad record if it is broken",
		Long: `Walk the whole audit hash chain and report the first record at which it
stops being trustworthy (modified, deleted, inserted or reordered). Keep the
printed last hash somewhere else: comparing it later is what detects a
rewrite of the whole chain by someone with write access to the file.

With --cluster, walk every chain of a cluster's database instead: each
node's chain as shipped and the API tier's control chain.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cluster {
				return verifyCluster(cmd, dsn, f.json)
			}
			st, err := f.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := st.VerifyAudit(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.json {
				if err := printJSON(out, map[string]any{"ok": rep.OK, "records": rep.Records, "first_bad_seq": rep.FirstBadSeq,
					"problem": rep.Problem, "last_hash": rep.LastHash, "anchor": rep.Anchor, "anchor_seq": rep.AnchorSeq,
					"anchor_append_only": rep.AnchorAppendOnly}); err != nil {
					return err
				}
			} else if rep.OK {
				fmt.Fprintf(out, "audit chain ok: %d records, last hash %s\n", rep.Records, rep.LastHash)
				ao := "append-only"
				if !rep.AnchorAppendOnly {
					ao = "NOT append-only (the daemon makes it so where the filesystem allows)"
				}
				fmt.Fprintf(out, "anchor %s agrees up to record %d; %s\n", rep.Anchor, rep.AnchorSeq, ao)
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "airlock: audit chain BROKEN at record %d: %s\n", rep.FirstBadSeq, strings.TrimSpace(rep.Problem))
				fmt.Fprintf(out, "%d records verified before it; last good hash %s\n", rep.Records, rep.LastHash)
			}
			if !rep.OK {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&cluster, "cluster", false, "verify every chain in the cluster database instead of this host's")
	cmd.Flags().StringVar(&dsn, "dsn", "", "with --cluster: PostgreSQL connection string (default $"+clusterDSNEnv+")")
	return cmd
}
