package local

import (
	"context"
	"log/slog"

	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// oauthResource builds the resource server from the `oauth:` section of
// keys.yaml (nil Validator without one: API keys only).
func oauthResource(ctx context.Context, env config.Env, getenv func(string) string, keys []policy.Key, log *slog.Logger) (*oauth.Resource, error) {
	res := &oauth.Resource{MCPPath: env.MCPPath, PublicURL: env.PublicBaseURL(),
		KeyHelp: "Keys are listed in the gateway's keys file; its operator adds one (see docs/clients.md)."}
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
	return res.WithTokens(ctx, cfg, oauth.Options{Logger: log})
}
