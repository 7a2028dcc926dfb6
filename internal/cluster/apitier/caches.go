package apitier

import (
	"context"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/store"
)

// keyCache is the database as api.Store, with authenticated keys trusted
// for ttl: most requests then never wait on the database, and calls into
// running sandboxes ride out a short database outage. Revocation takes
// up to ttl to reach every replica.
type keyCache struct {
	*pgstore.Store
	ttl time.Duration // <= 0: no cache

	mu   sync.Mutex
	keys map[string]cachedKey // guarded by mu; by the key's hash
}

type cachedKey struct {
	key   store.Key
	until time.Time
}

// maxCachedKeys bounds the cache; past it, it is emptied.
const maxCachedKeys = 10000

func newKeyCache(st *pgstore.Store, ttl time.Duration) *keyCache {
	return &keyCache{Store: st, ttl: ttl, keys: map[string]cachedKey{}}
}

func (c *keyCache) AuthenticateKey(ctx context.Context, plaintext string) (store.Key, error) {
	if c.ttl <= 0 {
		return c.Store.AuthenticateKey(ctx, plaintext)
	}
	h := store.HashKey(plaintext)
	now := time.Now()
	c.mu.Lock()
	e, ok := c.keys[h]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.key, nil
	}
	k, err := c.Store.AuthenticateKey(ctx, plaintext)
	if err != nil {
		return k, err
	}
	c.mu.Lock()
	if len(c.keys) >= maxCachedKeys {
		c.keys = map[string]cachedKey{}
	}
	c.keys[h] = cachedKey{key: k, until: now.Add(c.ttl)}
	c.mu.Unlock()
	return k, nil
}

// routeCache remembers where running sandboxes run, so calls into them
// need no database read (and go on while the database is away). A
// sandbox never moves; an entry goes when the sandbox ends, its node is
// written off or registers again, or after routeTTL.
type routeCache struct {
	mu sync.Mutex
	m  map[string]cachedRoute // guarded by mu; by sandbox id
}

type cachedRoute struct {
	sb    pgstore.Sandbox
	until time.Time
}

const (
	routeTTL       = 10 * time.Second
	maxCachedRoute = 100000
)

func newRouteCache() *routeCache { return &routeCache{m: map[string]cachedRoute{}} }

func (c *routeCache) get(id string) (pgstore.Sandbox, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || time.Now().After(e.until) {
		return pgstore.Sandbox{}, false
	}
	return e.sb, true
}

func (c *routeCache) put(sb pgstore.Sandbox) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedRoute {
		c.m = map[string]cachedRoute{}
	}
	c.m[sb.ID] = cachedRoute{sb: sb, until: time.Now().Add(routeTTL)}
}

func (c *routeCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

func (c *routeCache) dropNode(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.m {
		if e.sb.NodeID == node {
			delete(c.m, id)
		}
	}
}
