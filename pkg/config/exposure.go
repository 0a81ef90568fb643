package config

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// exampleSecretHashes are the hashes of the secrets published in
// config/keys.example.yaml (a test keeps them in step with the file):
// anyone can read them, so a gateway reachable from other machines must
// not accept them.
var exampleSecretHashes = map[string]bool{
	policy.HashSecret("dev-key-admin"):       true,
	policy.HashSecret("dev-key-full-access"): true,
	policy.HashSecret("dev-key-restricted"):  true,
}

// IsLoopback reports whether host (MCP_GATEWAY_HOST) listens on the
// loopback interface only: localhost, 127.0.0.0/8 or ::1. An empty host,
// 0.0.0.0 and :: listen on every interface.
func IsLoopback(host string) bool {
	h := strings.Trim(strings.TrimSpace(host), "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// CheckExposure refuses a configuration that would let anyone in: a host
// other than loopback while a key from config/keys.example.yaml (whose
// secret is public) is active. now decides which keys have expired.
func CheckExposure(host string, keys []policy.Key, now time.Time) error {
	if IsLoopback(host) {
		return nil
	}
	for _, k := range keys {
		if k.Disabled || k.Expired(now) || !exampleSecretHashes[k.SecretHash] {
			continue
		}
		return fmt.Errorf("refusing to listen on %q: key %q uses a secret from config/keys.example.yaml, which anyone can read; "+
			"replace its secret (e.g. secret_hash from `printf %%s NEW-SECRET | sha256sum`), disable it, or set MCP_GATEWAY_HOST=127.0.0.1 to stay on this machine",
			host, k.ID)
	}
	return nil
}

// CheckWithoutAuth refuses TOOL_RAG_WITHOUT_AUTH on a host other than
// loopback: every caller would be an anonymous admin.
func CheckWithoutAuth(host string) error {
	if IsLoopback(host) {
		return nil
	}
	if host == "" {
		host = "every interface"
	}
	return fmt.Errorf("refusing to listen on %q with TOOL_RAG_WITHOUT_AUTH=1: whoever reaches it would be an admin without a key; "+
		"set MCP_GATEWAY_HOST=127.0.0.1 to stay on this machine, or turn authentication on (config/keys.yaml)", host)
}
