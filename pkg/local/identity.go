package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upconnect"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// identity is the local runtime's per-principal upstream identity: the
// vault (a SQLite table sealed under a key file) and the service.
type identity struct {
	svc  *upconnect.Service
	rows *vault.SQLite
}

// openIdentity builds the identity service when a server of the registry
// is per principal, or the vault key file is configured; otherwise nil.
//
//	TOOL_RAG_VAULT_KEY_FILE   key file (default vault.key next to TOOL_RAG_DB; created 0600)
//	TOOL_RAG_VAULT_DB         SQLite file of the grants (default upstream_grants.db next to TOOL_RAG_DB)
//	MCP_GATEWAY_PUBLIC_URL    the gateway's external base URL for connect links and the OAuth callback
//	TOOL_RAG_CONNECT_LINK_TTL seconds a connect link lives (default 600)
func (g *Runtime) openIdentity(ctx context.Context, servers map[string]upstream.ServerConfig) (*identity, error) {
	keyFile := g.getenv("TOOL_RAG_VAULT_KEY_FILE")
	if keyFile == "" && !upstream.AnyPerPrincipal(servers) {
		return nil, nil
	}
	dir := filepath.Dir(g.Env.DBPath)
	if keyFile == "" {
		keyFile = filepath.Join(dir, "vault.key")
	}
	dbPath := g.getenv("TOOL_RAG_VAULT_DB")
	if dbPath == "" {
		dbPath = filepath.Join(dir, "upstream_grants.db")
	}
	ttl := upconnect.DefaultLinkTTL
	if v := g.getenv("TOOL_RAG_CONNECT_LINK_TTL"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("TOOL_RAG_CONNECT_LINK_TTL=%q: want a positive number of seconds", v)
		}
		ttl = time.Duration(n * float64(time.Second))
	}
	kf, err := vault.OpenKeyFile(keyFile)
	if err != nil {
		return nil, err
	}
	rows, err := vault.OpenSQLite(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	svc := upconnect.New(upconnect.Config{
		Vault:  vault.New(rows, kf, 0),
		Sealer: kf,
		Server: func(id string) (upconnect.Server, bool) {
			c, ok := g.Upstreams.ServerConfig(id)
			return upconnect.Server{URL: c.URL, Auth: c.Auth}, ok
		},
		PublicURL: g.Env.PublicURL,
		LinkTTL:   ttl,
		Logger:    g.log,
		OnRevoke:  g.Upstreams.DropPrincipal,
		OnConnected: func(server string) {
			// A server without a catalog credential lists its tools with a
			// connected principal's grant: sync once someone has connected.
			if c, ok := g.Upstreams.ServerConfig(server); ok && len(c.Headers) == 0 && g.Store != nil {
				go func() {
					if _, err := g.Sync(context.Background(), indexer.ModeIncremental); err != nil {
						g.log.Warn("sync after a connection failed", "server", server, "error", err)
					}
				}()
			}
		},
	})
	g.Upstreams.SetCatalogCredential(svc.CatalogCredential)
	return &identity{svc: svc, rows: rows}, nil
}

// endInactiveKeys removes the connections of keys that are gone, disabled
// or expired (after keys.yaml changed).
func (g *Runtime) endInactiveKeys(ctx context.Context, keys []policy.Key) {
	if g.identity == nil {
		return
	}
	active := map[string]bool{}
	now := time.Now()
	for _, k := range keys {
		if !k.Disabled && !k.Expired(now) {
			active[k.ID] = true
		}
	}
	infos, err := g.identity.svc.ConnectedKeys(ctx)
	if err != nil {
		g.log.Error("could not read the upstream connections after a key change", "error", err)
		return
	}
	for _, id := range infos {
		if active[id] {
			continue
		}
		if n, err := g.identity.svc.RevokeKey(ctx, id); err != nil {
			g.log.Error("could not end the upstream connections of a removed key", "key", id, "error", err)
		} else if n > 0 {
			g.log.Info("ended the upstream connections of a removed or disabled key", "key", id, "connections", n)
		}
	}
}

func (i *identity) close() error {
	if i == nil {
		return nil
	}
	return errors.Join(i.rows.Close())
}
