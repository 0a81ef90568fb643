package awsrt

import (
	"context"
	"log/slog"

	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// loadServers reads the registry table into upstream configs (see
// config.DecodeRegistry).
func loadServers(ctx context.Context, reg *dynamo.RegistryStore, secret config.SecretFunc, log *slog.Logger) (map[string]upstream.ServerConfig, error) {
	raw, err := reg.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	return config.DecodeRegistry(ctx, raw, secret, log), nil
}
