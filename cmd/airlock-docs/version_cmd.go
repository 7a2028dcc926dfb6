package main

import (
	"context"
	"encoding/json"
	"runtime"
	"sort"

	"github.com/airlock-dev/airlock/internal/docs"
)

// versionCommand prints what this binary is, as JSON on stdout, for image
// checks; it writes no result envelope.
func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the tool's version, result format and commands as JSON",
		run: func(ctx context.Context, inv *invocation) *docs.Envelope {
			var names []string
			for _, c := range commands() {
				names = append(names, c.name)
			}
			sort.Strings(names)
			enc := json.NewEncoder(inv.stdout)
			_ = enc.Encode(map[string]any{ // a closed stdout leaves nothing to report to
				"name":             "airlock-docs",
				"version":          version,
				"go":               runtime.Version(),
				"envelope_version": docs.EnvelopeVersion,
				"commands":         names,
			})
			return nil
		},
	}
}
