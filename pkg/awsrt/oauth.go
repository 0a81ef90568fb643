package awsrt

import (
	"context"

	"github.com/toolrag/mcp-gateway/pkg/oauth"
)

// oauthResource builds the resource server from Config.OAuth (nil: API
// keys only).
func (g *GatewayFunction) oauthResource(ctx context.Context) (*oauth.Resource, error) {
	res := &oauth.Resource{MCPPath: g.cfg.Env.MCPPath,
		KeyHelp: "Its operator creates keys with `go run ./cmd/toolrag keys create --id NAME --server SERVER` (docs/deploy.md)."}
	if g.cfg.Env.WithoutAuth {
		return res, nil
	}
	res, err := res.WithTokens(ctx, g.cfg.OAuth, oauth.Options{Logger: g.log, Now: g.cfg.Now})
	if err == nil {
		g.oauth = res.Validator()
	}
	return res, err
}
