package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

func sbxKillCmd(f *clientFlags) *cobra.Command {
	var (
		meta   []string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "kill ID... | kill --meta k=v... [--dry-run]",
		Short: "Destroy sandboxes (by id, or every running one with all the given labels): their VMs, memory and files stop existing",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0 && len(meta) == 0:
				return usageErr("name sandboxes to kill: IDs, or --meta KEY=VALUE to kill every running sandbox with those labels")
			case len(args) > 0 && len(meta) > 0:
				return usageErr("give sandbox IDs or --meta, not both")
			case dryRun && len(meta) == 0:
				return usageErr("--dry-run goes with --meta")
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			ids := args
			if len(meta) > 0 {
				if ids, err = sandboxesLabelled(cmd.Context(), c, meta); err != nil {
					return err
				}
			}
			return killSandboxes(cmd, f.json, c, ids, len(meta) > 0, dryRun)
		},
	}
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "kill every running sandbox with this KEY=VALUE label (repeatable; all must match)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --meta: list what would be killed, kill nothing")
	return cmd
}

// sandboxesLabelled returns the ids of the caller's running sandboxes
// carrying every KEY=VALUE pair of meta.
func sandboxesLabelled(ctx context.Context, c *client.Client, meta []string) ([]string, error) {
	md, err := parseMeta(meta)
	if err != nil {
		return nil, err
	}
	list, err := c.ListSandboxes(ctx, md)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	return ids, nil
}

// killResult is what `sandbox kill --json` prints.
type killResult struct {
	Killed []string `json:"killed"`
	// AlreadyEnded: selected by label, these ended (TTL, another kill)
	// between the list and their kill.
	AlreadyEnded []string     `json:"already_ended,omitempty"`
	Failed       []killFailed `json:"failed,omitempty"`
	DryRun       bool         `json:"dry_run,omitempty"`
}

type killFailed struct {
	ID    string    `json:"id"`
	Error jsonError `json:"error"`
}

// killSandboxes kills ids one after another (a kill takes milliseconds),
// reporting each failure; any failure makes the exit code 125. Selected
// by label, ids may name sandboxes that ended since the list.
func killSandboxes(cmd *cobra.Command, asJSON bool, c *client.Client, ids []string, byLabel, dryRun bool) error {
	res := killResult{Killed: []string{}, DryRun: dryRun}
	for _, id := range ids {
		if dryRun {
			res.Killed = append(res.Killed, id)
			continue
		}
		err := c.Sandbox(id).Kill(cmd.Context())
		if byLabel && errors.Is(err, client.ErrFailedPrecondition) {
			res.AlreadyEnded = append(res.AlreadyEnded, id)
			continue
		}
		if err != nil {
			res.Failed = append(res.Failed, killFailed{ID: id, Error: jsonError{Code: errdefs.Code(err), Message: errorMessage(err)}})
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "airlock: kill %s: %s [%s]\n", id, errorMessage(err), errdefs.Code(err))
			}
			continue
		}
		res.Killed = append(res.Killed, id)
	}
	if asJSON {
		if err := printJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else if byLabel {
		// Say what was (or would be) killed: the caller did not name it.
		verb := "killed"
		if dryRun {
			verb = "would kill"
		}
		for _, id := range res.Killed {
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", verb, id)
		}
	}
	if len(res.Failed) > 0 {
		return exitError{exitAirlock}
	}
	return nil
}
