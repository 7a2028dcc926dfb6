package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/store"
)

// newKeyCmd is `airlock key ...`: API key management, directly on the
// store (a host-admin operation; the daemon need not run).
func newKeyCmd(_ *globalFlags) *cobra.Command {
	f := &adminFlags{}
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Create, list and revoke tenant API keys (on the local store; `ls` also your tenant's, through the API)",
	}
	f.register(cmd)
	cmd.AddCommand(keyCreateCmd(f), keyListCmd(f), keyRevokeCmd(f))
	return cmd
}

// keyJSON is a key as --json prints it; Key is set only on create.
type keyJSON struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Current   bool       `json:"current,omitempty"` // through the API: the key in use
	Key       string     `json:"key,omitempty"`
}

func toKeyJSON(k store.Key) keyJSON {
	return keyJSON{ID: k.ID, Tenant: k.Tenant, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

func keyCreateCmd(f *adminFlags) *cobra.Command {
	var tenant, name string
	cmd := &cobra.Command{
		Use:   "create --tenant T [--name N]",
		Short: "Create an API key for a tenant and print it (shown this once only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.openStore(true)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			plain, k, err := st.CreateKey(ctx, tenant, name)
			if err != nil {
				return err
			}
			// An operator event: no acting tenant, the key's tenant in detail.
			if _, err := st.AppendAudit(ctx, store.AuditRecord{Event: store.EventKeyCreate, Outcome: "ok",
				Detail: map[string]string{"key_id": k.ID, "key_tenant": k.Tenant}}); err != nil {
				return fmt.Errorf("key %s created but not audited: %w", k.ID, err)
			}
			if f.json {
				j := toKeyJSON(k)
				j.Key = plain
				return printJSON(cmd.OutOrStdout(), j)
			}
			fmt.Fprintln(cmd.OutOrStdout(), plain)
			fmt.Fprintf(cmd.ErrOrStderr(), "airlock: key %s for tenant %s; store it now, it cannot be shown again\n", k.ID, k.Tenant)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "tenant the key acts as (required)")
	cmd.Flags().StringVar(&name, "name", "default", "label to tell keys apart")
	_ = cmd.MarkFlagRequired("tenant")
	return cmd
}

func keyListCmd(f *adminFlags) *cobra.Command {
	var (
		tenant string
		view   tenantView
	)
	cmd := &cobra.Command{
		Use:     "ls [--tenant T | --api-key K]",
		Aliases: []string{"list"},
		Short:   "List API keys (never the keys themselves)",
		Long: `List API keys, never the keys themselves.

Without an API key this reads the local store (host admin: every tenant).
With one (--api-key or AIRLOCK_API_KEY) it asks the daemon and lists that
key's tenant's keys, marking the one in use. --local forces the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := view.client()
			if err != nil {
				return err
			}
			var keys []keyJSON
			if c != nil {
				if tenant != "" {
					return usageErr("--tenant reads the local store; through the API you see only your key's tenant")
				}
				keys, err = keysViaAPI(cmd.Context(), c)
			} else {
				keys, err = keysFromStore(cmd.Context(), f, tenant)
			}
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"keys": keys})
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tTENANT\tNAME\tPREFIX\tCREATED\tREVOKED")
			for _, k := range keys {
				revoked := "-"
				if k.RevokedAt != nil {
					revoked = k.RevokedAt.Local().Format(time.DateTime)
				}
				id := k.ID
				if k.Current {
					id += " *"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", id, k.Tenant, k.Name, k.Prefix, k.CreatedAt.Local().Format(time.DateTime), revoked)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "local store: only this tenant's keys")
	view.register(cmd)
	return cmd
}

func keysFromStore(ctx context.Context, f *adminFlags, tenant string) ([]keyJSON, error) {
	st, err := f.openStore(false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	keys, err := st.ListKeys(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = toKeyJSON(k)
	}
	return out, nil
}

func keysViaAPI(ctx context.Context, c *client.Client) ([]keyJSON, error) {
	keys, err := c.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = keyJSON{ID: k.ID, Tenant: k.Tenant, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
			RevokedAt: k.RevokedAt, Current: k.Current}
	}
	return out, nil
}

func keyRevokeCmd(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key; it never authenticates again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := f.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			if err := st.RevokeKey(ctx, args[0]); err != nil {
				return err
			}
			if _, err := st.AppendAudit(ctx, store.AuditRecord{Event: store.EventKeyRevoke, Outcome: "ok",
				Detail: map[string]string{"key_id": args[0]}}); err != nil {
				return fmt.Errorf("key %s revoked but not audited: %w", args[0], err)
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), map[string]string{"revoked": args[0]})
			}
			return nil
		},
	}
}
