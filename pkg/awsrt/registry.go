package awsrt

import (
	"context"
	"log/slog"
	"os"
	"sort"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// loadServers reads the registry table into upstream configs, resolving
// ${VAR} in headers with secret (nil: the process environment only). An
// entry that does not decode is kept as a misconfigured server (its calls
// fail with the reason and a sync marks its tools stale instead of
// deleting them) and is logged.
func loadServers(ctx context.Context, reg *dynamo.RegistryStore, secret config.SecretFunc, log *slog.Logger) (map[string]upstream.ServerConfig, error) {
	raw, err := reg.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	if secret == nil {
		secret = config.EnvSecrets(os.Getenv)
	}
	out := make(map[string]upstream.ServerConfig, len(raw))
	ids := make([]string, 0, len(raw))
	for id := range raw {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := catalog.ValidServerID(id); err != nil {
			// Written before the id rules tightened (e.g. "evil_", which
			// makes tool ids ambiguous): left out, so the sync purges its
			// tools.
			log.Error("registry entry ignored: its server id is invalid; remove it with `toolrag registry push`", "server", id, "error", err)
			continue
		}
		cfg, err := config.DecodeServerConfig(ctx, raw[id], secret)
		if err != nil {
			log.Error("registry entry is unusable; its calls fail until it is fixed", "server", id, "error", err)
			// An unknown transport makes every call fail with this text.
			cfg = upstream.ServerConfig{Transport: "(invalid registry entry: " + err.Error() + ")"}
		}
		out[id] = cfg
	}
	return out, nil
}
