package local

import (
	"context"
	"log/slog"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// oauthResource builds the resource server from the `oauth:` section of
// keys.yaml (nil Validator without one: API keys only) and starts fetching
// the issuer's keys in the background.
func oauthResource(ctx context.Context, env config.Env, getenv func(string) string, keys []policy.Key, log *slog.Logger) (*oauth.Resource, error) {
	res := &oauth.Resource{MCPPath: env.MCPPath,
		KeyHelp: "Keys are listed in the gateway's keys.yaml (" + env.KeysPath + "); its operator adds one (see docs/clients.md)."}
	if env.WithoutAuth {
		return res, nil
	}
	cfg, err := oauth.LoadKeysFile(env.KeysPath, getenv)
	if err != nil || cfg == nil {
		return res, err
	}
	if err := oauth.CheckKeyIDs(keys); err != nil {
		return nil, err
	}
	if res.Validator, err = oauth.New(*cfg, oauth.Options{Logger: log}); err != nil {
		return nil, err
	}
	go func() {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if err := res.Validator.Prefetch(pctx); err != nil {
			log.Warn("oauth: cannot fetch the authorization server's keys yet; tokens are refused until it answers", "issuer", cfg.Issuer, "error", err)
		}
	}()
	log.Info("oauth: accepting access tokens", "issuer", cfg.Issuer, "audience", cfg.Audience, "grants", len(cfg.Grants))
	return res, nil
}
