package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
		Short: "Query and verify the hash-chained audit log (on the local store)",
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
	)
	cmd := &cobra.Command{
		Use:     "ls [--sandbox ID] [--meta k=v]... [--since 1h|RFC3339] [--tenant T]",
		Aliases: []string{"list"},
		Short:   "List audit records: what touched which sandbox and document, when, and how it went",
		Args:    cobra.NoArgs,
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
			st, err := f.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			recs, err := st.QueryAudit(cmd.Context(), flt)
			if err != nil {
				return err
			}
			if f.json {
				out := api.AuditList{Records: make([]api.AuditRecord, len(recs))}
				for i, r := range recs {
					out.Records[i] = api.AuditRecordFromStore(r)
				}
				return printJSON(cmd.OutOrStdout(), out)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SEQ\tTIME\tTENANT\tSANDBOX\tEVENT\tOUTCOME\tEXIT\tBYTES\tMS\tMETADATA\tDETAIL")
			for _, r := range recs {
				exit := "-"
				if r.ExitCode != nil {
					exit = fmt.Sprint(*r.ExitCode)
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05.000"),
					dash(r.Tenant), dash(r.SandboxID), r.Event, r.Outcome, exit, r.Bytes, r.DurationMS, formatMeta(r.Metadata), formatMeta(r.Detail))
			}
			return w.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sandboxID, "sandbox", "", "only records about this sandbox")
	fl.StringArrayVar(&meta, "meta", nil, "only records whose metadata has KEY=VALUE (repeatable; all must match)")
	fl.StringVar(&since, "since", "", "records at or after: RFC 3339 or a duration back from now (1h)")
	fl.StringVar(&until, "until", "", "records before: RFC 3339 or a duration back from now")
	fl.StringVar(&tenant, "tenant", "", "only this tenant's records (default: all)")
	fl.StringSliceVar(&events, "event", nil, "only these events (create, exec, file_write, kill, ...)")
	fl.IntVar(&limit, "limit", 0, "at most this many records (0 = all)")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func auditVerifyCmd(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Walk the audit hash chain; exit 1 naming the first bad record if it is broken",
		Long: `Walk the whole audit hash chain and report the first record at which it
stops being trustworthy (modified, deleted, inserted or reordered). Keep the
printed last hash somewhere else: comparing it later is what detects a
rewrite of the whole chain by someone with write access to the file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
}
