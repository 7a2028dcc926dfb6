package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// clientFlags reach a daemon over its API. Flags beat the environment.
type clientFlags struct {
	url    string
	apiKey string
	json   bool
}

func (f *clientFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.url, "url", daemonURL(), "daemon address: unix:///path.sock or http://host:port (env AIRLOCK_URL; AIRLOCK_SOCKET, which airlock serve also reads, names a socket)")
	// The key is better given through the environment: flags show up in ps.
	pf.StringVar(&f.apiKey, "api-key", "", "API key (env AIRLOCK_API_KEY, preferred: flags are visible in ps)")
	pf.BoolVar(&f.json, "json", false, "print machine-readable JSON")
}

// daemonURL is where the CLI finds the daemon: AIRLOCK_URL, else the
// socket AIRLOCK_SOCKET names (the variable `serve` listens on), else the
// default socket. So one variable set for both sides is enough.
func daemonURL() string {
	if u := os.Getenv("AIRLOCK_URL"); u != "" {
		return u
	}
	if s := os.Getenv("AIRLOCK_SOCKET"); s != "" {
		return "unix://" + s
	}
	// Where a daemon with the same run directory listens (AIRLOCK_RUN_DIR
	// moves both): client.DefaultURL as root.
	return "unix://" + runDirSocket("")
}

func (f *clientFlags) client() (*client.Client, error) {
	key := f.apiKey
	if key == "" {
		key = os.Getenv("AIRLOCK_API_KEY")
	}
	if key == "" {
		return nil, errdefs.InvalidArgument("no API key: set AIRLOCK_API_KEY (create one with `airlock key create --tenant T`)")
	}
	return client.New(f.url, key, client.WithUserAgent("airlock-cli/"+version))
}

// tenantView lets a host-admin listing (audit ls, key ls) ask a daemon
// instead, as the tenant of an API key: what a tenant on another machine
// sees. With an API key (--api-key or AIRLOCK_API_KEY) and without
// --local, the listing goes through the API; otherwise it reads the local
// store, every tenant.
type tenantView struct {
	url, apiKey string
	local       bool
}

func (v *tenantView) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&v.url, "url", daemonURL(), "with an API key: the daemon to ask (env AIRLOCK_URL or AIRLOCK_SOCKET)")
	fl.StringVar(&v.apiKey, "api-key", "", "ask the daemon as this key's tenant instead of reading the local store (env AIRLOCK_API_KEY)")
	fl.BoolVar(&v.local, "local", false, "read the local store (every tenant) even when an API key is set")
}

// client returns a client when the listing goes through the API, nil when
// it reads the local store.
func (v *tenantView) client() (*client.Client, error) {
	if v.local {
		return nil, nil
	}
	cf := clientFlags{url: v.url, apiKey: v.apiKey}
	if cf.apiKey == "" && os.Getenv("AIRLOCK_API_KEY") == "" {
		return nil, nil
	}
	return cf.client()
}

// adminFlags open the daemon's store directly: host-admin commands (keys,
// audit) that work whether or not the daemon runs, for whoever can read the
// state directory.
type adminFlags struct {
	stateDir string
	json     bool
}

// DefaultStateDir holds the daemon's SQLite store.
const defaultStateDir = "/var/lib/airlock"

func (f *adminFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.stateDir, "state-dir", envOr("AIRLOCK_STATE_DIR", defaultStateDir), "daemon state directory holding airlock.db (env AIRLOCK_STATE_DIR)")
	pf.BoolVar(&f.json, "json", false, "print machine-readable JSON")
}

// openStore opens STATE_DIR/airlock.db. Only create may make a new one, so a
// mistyped --state-dir reads as an error, not as an empty audit log.
func (f *adminFlags) openStore(create bool) (*store.Store, error) {
	path := filepath.Join(f.stateDir, "airlock.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, errdefs.NotFound("no store at %s (is --state-dir / AIRLOCK_STATE_DIR right?)", path)
		}
		if err := os.MkdirAll(f.stateDir, 0o700); err != nil {
			return nil, fmt.Errorf("create state dir: %w", err)
		}
	}
	return store.Open(path)
}

// parseMeta turns repeated k=v flags into a map.
func parseMeta(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	md := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, errdefs.InvalidArgument("--meta %q: want KEY=VALUE", p)
		}
		md[k] = v
	}
	return md, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// formatMeta prints metadata as sorted k=v pairs.
func formatMeta(md map[string]string) string {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sortStrings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + md[k]
	}
	return strings.Join(parts, ",")
}
