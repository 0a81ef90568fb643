package awsrt

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// ParseGrant parses one --server value of `toolrag keys create`: "id"
// grants every tool, prompt and resource of the server; "id:p1,p2" grants
// only the tools whose names start with one of the prefixes (and, as the
// rule names no other list, no prompt or resource).
func ParseGrant(s string) (id string, rule policy.Rule, err error) {
	id, prefixes, hasPrefixes := strings.Cut(strings.TrimSpace(s), ":")
	if err := catalog.ValidServerID(id); err != nil {
		return "", rule, fmt.Errorf("--server %q: %w", s, err)
	}
	if hasPrefixes {
		for _, p := range strings.Split(prefixes, ",") {
			if p = strings.TrimSpace(p); p != "" {
				rule.ToolPrefixes = append(rule.ToolPrefixes, p)
			}
		}
		if len(rule.ToolPrefixes) == 0 {
			return "", rule, fmt.Errorf("--server %q: list tool name prefixes after the colon, or drop it to grant the whole server", s)
		}
	}
	return id, rule, nil
}

// NewSecret returns a fresh API key secret: "trg_" and 256 random bits.
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails: Go crashes the program if the OS has no randomness
	return "trg_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// CreateKey stores k under a fresh secret and returns the secret, which is
// not stored anywhere (only its SHA-256 hash is): show it once.
func CreateKey(ctx context.Context, keys *dynamo.KeyStore, k policy.Key) (string, error) {
	secret := NewSecret()
	k.SecretHash = policy.HashSecret(secret)
	if err := keys.Create(ctx, k); err != nil {
		return "", err
	}
	return secret, nil
}

// LoadRegistry reads registry.yaml and registry.generated.yaml for `toolrag
// registry push`. With expand false, ${VAR} in headers is kept as it is, so
// secrets stay out of the table and each function expands them from its
// own environment when it reads the entry; with expand true they are
// replaced from getenv now (and stored in the table).
func LoadRegistry(handPath, generatedPath string, expand bool, getenv func(string) string) (map[string]upstream.ServerConfig, error) {
	if !expand {
		getenv = func(name string) string { return "${" + name + "}" }
	}
	return config.LoadRegistry(handPath, generatedPath, getenv)
}

// RegistryDocs turns registry entries into registry-table documents. A
// Lambda function reaches only HTTP upstreams, so stdio entries are
// rejected (all of them named) unless allowStdio.
func RegistryDocs(servers map[string]upstream.ServerConfig, allowStdio bool) (map[string]json.RawMessage, error) {
	var stdio []string
	out := make(map[string]json.RawMessage, len(servers))
	for id, cfg := range servers {
		if cfg.Transport == upstream.TransportStdio && !allowStdio {
			stdio = append(stdio, id)
			continue
		}
		doc, err := EncodeServerConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", id, err)
		}
		out[id] = doc
	}
	if len(stdio) > 0 {
		sort.Strings(stdio)
		verb := "uses"
		if len(stdio) > 1 {
			verb = "use"
		}
		return nil, fmt.Errorf("registry push rejected, nothing written: %s %s transport stdio, which a Lambda function cannot start; "+
			"deploy stdio servers as Fargate services running `toolrag bridge` (add servers/<id>/manifest.yaml and run `toolrag provision`, then `make deploy`) "+
			"and register their http://<id>.<namespace>:<port>/mcp URL, or pass --allow-stdio if the function image really contains their commands",
			strings.Join(stdio, ", "), verb)
	}
	return out, nil
}

// CheckGrants refuses a key that grants a server the registry table does
// not have, naming the key and the ids (`toolrag keys create` runs it
// before storing a key): a typo would otherwise silently grant nothing.
func CheckGrants(ctx context.Context, reg *dynamo.RegistryStore, k policy.Key) error {
	servers, err := reg.ListServers(ctx)
	if err != nil {
		return fmt.Errorf("read the registry to check the key's grants: %w", err)
	}
	unknown := policy.UnknownServers(k, func(id string) bool { _, ok := servers[id]; return ok })
	if len(unknown) > 0 {
		return fmt.Errorf("key %q grants %s, not in the registry table (push it first with `toolrag registry push`, or fix the id)", k.ID, strings.Join(quoted(unknown), ", "))
	}
	return nil
}

func quoted(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("server %q", id)
	}
	return out
}
