package local

import (
	"context"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// WatchConfig reloads keys.yaml and registry.yaml when they change, so that
// revoking a key (or disabling it, or letting it expire) takes effect
// within MCP_GATEWAY_CONFIG_POLL seconds, without a restart. SIGHUP checks
// at once. A file that does not load keeps the previous configuration and
// the error (file:line) is logged. It returns when ctx ends.
func (g *Runtime) WatchConfig(ctx context.Context) {
	config.Watch(ctx, g.Env.ConfigPoll, func() {
		g.log.Info("SIGHUP: checking keys.yaml and registry.yaml for changes")
	}, func() {
		if !g.ReloadConfig(ctx) {
			g.recheck(ctx) // keys and tokens that expired since the last look
		}
	})
}

// recheck ends the open streams, running calls and sessions of credentials
// that no longer authenticate (revoked, removed, expired) or whose grant
// changed.
func (g *Runtime) recheck(ctx context.Context) {
	if n := g.Live.Recheck(ctx); n > 0 {
		g.log.Info("ended the open requests of revoked or changed credentials", "requests", n)
	}
}

// ReloadConfig reloads the files that changed since they were last loaded
// and reports whether something was reloaded.
func (g *Runtime) ReloadConfig(ctx context.Context) bool {
	g.cfgMu.Lock()
	defer g.cfgMu.Unlock()
	reloaded := false
	if g.keySet != nil && g.keyFiles.Changed() && g.reloadKeys() {
		reloaded = true
	}
	if g.registryFiles.Changed() && g.reloadRegistry(ctx) {
		reloaded = true
	}
	if reloaded {
		g.recheck(ctx)
	}
	return reloaded
}

// CheckExposure refuses to serve beyond loopback while a key from
// config/keys.example.yaml is active (see config.CheckExposure), or with
// TOOL_RAG_WITHOUT_AUTH (config.CheckWithoutAuth); call it
// before listening.
func (g *Runtime) CheckExposure() error {
	if g.Env.WithoutAuth {
		return config.CheckWithoutAuth(g.Env.Host)
	}
	keys, err := config.LoadKeys(g.Env.KeysPath)
	if err != nil {
		return err
	}
	return config.CheckExposure(g.Env.Host, keys, time.Now())
}

func (g *Runtime) reloadKeys() bool {
	keys, err := config.LoadKeys(g.Env.KeysPath)
	if err == nil {
		err = config.CheckExposure(g.Env.Host, keys, time.Now())
	}
	if err == nil {
		var servers map[string]upstream.ServerConfig
		if servers, err = config.LoadRegistry(g.Env.RegistryPath, g.Env.GeneratedPath, g.getenv); err == nil {
			err = config.CheckKeyGrants(g.Env.KeysPath, keys, servers, g.log)
		}
	}
	if err != nil {
		g.log.Error("keys.yaml changed but does not load; the previous keys stay in force", "error", err)
		return false
	}
	g.keySet.Replace(keys)
	g.reloadedKeys.Store(&keys)
	g.endInactiveKeys(context.Background(), keys)
	g.log.Info("keys.yaml reloaded", "keys", len(keys))
	g.reloadOAuth(keys)
	return true
}

// reloadOAuth applies the `oauth:` section of keys.yaml as it is now: a
// section added turns OAuth on, one removed turns it off, a changed one
// replaces the grants (tokens verified under the old grants are checked
// again). A section that does not load keeps the previous one in force.
func (g *Runtime) reloadOAuth(keys []policy.Key) {
	cfg, err := oauth.LoadKeysFile(g.Env.KeysPath, g.getenv)
	if err == nil && cfg != nil {
		err = oauth.CheckKeyIDs(keys)
	}
	if err == nil {
		err = g.oauth.SetConfig(context.Background(), cfg, oauth.Options{Logger: g.log})
	}
	if err != nil {
		g.log.Error("the oauth section of keys.yaml does not load; the previous OAuth configuration stays in force", "error", err)
		return
	}
	if cfg != nil {
		g.log.Info("keys.yaml: oauth section reloaded", "issuer", cfg.Issuer, "grants", len(cfg.Grants))
	}
}

func (g *Runtime) reloadRegistry(ctx context.Context) bool {
	servers, err := config.LoadRegistry(g.Env.RegistryPath, g.Env.GeneratedPath, g.getenv)
	if err != nil {
		g.log.Error("the registry changed but does not load; the previous servers stay in force", "error", err)
		return false
	}
	g.Upstreams.SetServers(servers)
	g.log.Info("registry reloaded; syncing the servers", "servers", len(servers))
	go func() {
		if _, err := g.Sync(ctx, indexer.ModeIncremental); err != nil {
			g.log.Error("sync after a registry reload failed", "error", err)
		}
	}()
	return true
}
