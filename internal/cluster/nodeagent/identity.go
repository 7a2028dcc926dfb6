package nodeagent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// identityFile holds what a node keeps across restarts, in its state
// directory beside the store: its id, its audit chain's id, the epoch it
// last registered under and the secret that registered it.
const identityFile = "cluster-node.json"

type identity struct {
	NodeID string `json:"node_id"`
	Chain  string `json:"chain"`
	Epoch  int64  `json:"epoch"`
	Secret string `json:"secret"`
}

// loadIdentity reads dir's identity, or makes a new one for node. A
// state directory that served another node id is refused: its chain and
// sandboxes are that node's.
func loadIdentity(dir, node string) (identity, error) {
	b, err := os.ReadFile(filepath.Join(dir, identityFile))
	if errors.Is(err, os.ErrNotExist) {
		sec := make([]byte, 32)
		if _, err := rand.Read(sec); err != nil {
			return identity{}, err
		}
		id := identity{NodeID: node, Chain: uuid.NewString(), Secret: hex.EncodeToString(sec)}
		return id, saveIdentity(dir, id)
	}
	if err != nil {
		return identity{}, err
	}
	var id identity
	if err := json.Unmarshal(b, &id); err != nil {
		return identity{}, fmt.Errorf("%s: %w", identityFile, err)
	}
	if id.NodeID != node {
		return identity{}, fmt.Errorf("state directory %s belongs to node %s, not %s", dir, id.NodeID, node)
	}
	if err := store.ValidateID("node id", id.NodeID); err != nil || id.Secret == "" {
		return identity{}, fmt.Errorf("%s: malformed", identityFile)
	}
	return id, nil
}

// ChainOf returns the id of the audit chain the store in state
// directory dir ships as node's, making the directory's identity (as a
// node's first start would) when it has none. `airlock cluster import`
// uses it, so a host whose chain was imported goes on shipping that same
// chain when it joins the cluster as node.
func ChainOf(dir, node string) (string, error) {
	id, err := loadIdentity(dir, node)
	if err != nil {
		return "", errdefs.FailedPrecondition("%v", err)
	}
	return id.Chain, nil
}

// saveIdentity writes id atomically (rename over the old file).
func saveIdentity(dir string, id identity) error {
	b, err := json.Marshal(id)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, identityFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, identityFile))
}
