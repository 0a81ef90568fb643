package awsrt

import (
	"context"

	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/kmsseal"
	"github.com/toolrag/mcp-gateway/pkg/upconnect"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// openIdentity builds the per-principal identity service of the gateway
// function (docs/upstream-auth.md): grants sealed with KMS envelope
// encryption (TOOL_RAG_VAULT_KMS_KEY) in the vault table, opened grants
// cached in memory for vault.DefaultCacheTTL, connect links and OAuth
// states sealed with the same key and single use through the vault table,
// so any instance serves the link, the callback and the retried call.
//
// It is always built: a static server's call never touches it, and a call
// to a per-principal server without a configured key fails with an error
// that says so, never with the server's catalog credential.
func (g *GatewayFunction) openIdentity(ctx context.Context) (*upconnect.Service, error) {
	cfg := g.cfg
	kc := cfg.KMS
	if kc == nil && cfg.VaultKMSKey != "" {
		c, err := awsclient.KMS(ctx, cfg.KMSEndpoint)
		if err != nil {
			return nil, err
		}
		kc = c
	}
	sealer := kmsseal.New(kc, cfg.VaultKMSKey)
	rows := dynamo.NewVaultRows(cfg.DynamoDB, cfg.Tables.Vault)
	g.Vault = rows
	svc := upconnect.New(upconnect.Config{
		Vault:  vault.New(rows, sealer, 0),
		Sealer: sealer,
		Nonces: rows,
		Server: func(id string) (upconnect.Server, bool) {
			c, ok := g.Upstreams.ServerConfig(id)
			return upconnect.Server{URL: c.URL, Auth: c.Auth}, ok
		},
		PublicURL: cfg.Env.PublicURL,
		LinkTTL:   cfg.ConnectLinkTTL,
		Logger:    g.log,
		OnRevoke:  g.Upstreams.DropPrincipal,
	})
	return svc, nil
}
