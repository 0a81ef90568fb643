package local

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// checkKeyGrants refuses keys that grant a server the registry does not
// have (a typo or a stale key would otherwise silently grant nothing), and
// logs once, at start, each key whose rules mean something else under the
// explicit grant model (a list not named or empty grants nothing).
func checkKeyGrants(path string, keys []policy.Key, servers map[string]upstream.ServerConfig, log *slog.Logger) error {
	var bad []string
	for _, k := range keys {
		if unknown := policy.UnknownServers(k, func(id string) bool { _, ok := servers[id]; return ok }); len(unknown) > 0 {
			bad = append(bad, fmt.Sprintf("key %q grants %s, not in the registry", k.ID, quoteAll(unknown)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %s (fix the server id, add the server to registry.yaml, or remove the grant)", path, strings.Join(bad, "; "))
	}
	for _, k := range keys {
		for _, line := range policy.ChangedMeaning(k) {
			log.Warn("key grant changed meaning: "+line, "key", k.ID)
		}
	}
	return nil
}

func quoteAll(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	if len(q) == 1 {
		return "server " + q[0]
	}
	return "servers " + strings.Join(q, ", ")
}
