package awsrt

import (
	"context"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/oauth"
)

// oauthResource builds the resource server from Config.OAuth (nil: API
// keys only). The validator lives as long as the Lambda execution
// environment, so the issuer's keys are fetched once per cold start and
// reused by every warm invocation; the fetch starts here, concurrently
// with the first load of the index and catalog.
func (g *GatewayFunction) oauthResource(ctx context.Context) (*oauth.Resource, error) {
	res := &oauth.Resource{MCPPath: g.cfg.Env.MCPPath,
		KeyHelp: "Its operator creates keys with `go run ./cmd/toolrag keys create --id NAME --server SERVER` (docs/deploy.md)."}
	if g.cfg.OAuth == nil || g.cfg.Env.WithoutAuth {
		return res, nil
	}
	v, err := oauth.New(*g.cfg.OAuth, oauth.Options{Logger: g.log, Now: g.cfg.Now})
	if err != nil {
		return nil, err
	}
	res.Validator = v
	g.oauth = v
	go func() {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := v.Prefetch(pctx); err != nil {
			g.log.Warn("oauth: cannot fetch the authorization server's keys yet; tokens are refused until it answers", "issuer", g.cfg.OAuth.Issuer, "error", err)
			return
		}
		g.log.Info("oauth: authorization server keys fetched", "issuer", g.cfg.OAuth.Issuer, "duration_ms", time.Since(start).Milliseconds())
	}()
	return res, nil
}
