package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// serverDoc is the JSON document in the registry table's config attribute:
// upstream.ServerConfig plus its per-server timeout, which ServerConfig
// does not serialise.
type serverDoc struct {
	upstream.ServerConfig
	Timeout string `json:"timeout,omitempty"` // Go duration, e.g. "45s"
}

// EncodeServerConfig returns the registry-table document of one server
// (what `toolrag registry push` writes and the functions read).
func EncodeServerConfig(cfg upstream.ServerConfig) (json.RawMessage, error) {
	doc := serverDoc{ServerConfig: cfg}
	if cfg.Timeout > 0 {
		doc.Timeout = cfg.Timeout.String()
	}
	return json.Marshal(doc)
}

// DecodeServerConfig parses a registry-table document. ${VAR} in header
// values is expanded from the function's environment (e.g. a secret that
// the deployment injects as an environment variable); an unset variable is
// an error, so that the server is reported as misconfigured instead of
// being called without its credentials.
func DecodeServerConfig(raw json.RawMessage, getenv func(string) string) (upstream.ServerConfig, error) {
	return decodeServerConfig(raw, func(h, v string) (string, error) {
		var missing []string
		out := os.Expand(v, func(name string) string {
			val := getenv(name)
			if val == "" {
				missing = append(missing, name)
			}
			return val
		})
		if len(missing) > 0 {
			return "", fmt.Errorf("header %s needs environment variable %s, which is not set", h, strings.Join(missing, ", "))
		}
		return out, nil
	})
}

// SecretFunc returns the value of ${NAME} in a registry header, or an
// error saying why there is none. (*secrets.Resolver).Value is one:
// environment first, then the SSM parameter or Secrets Manager secret
// <TOOL_RAG_SECRETS_PREFIX>NAME (TOOL_RAG_SECRETS_STORE).
type SecretFunc func(ctx context.Context, name string) (string, error)

// DecodeServerConfigWith is DecodeServerConfig with ${VAR} resolved by
// secret. A failure makes the entry an error naming the header, the
// variable and the cause, e.g. "header Authorization needs secret
// GITHUB_TOKEN: reading SSM parameters under /toolrag/prod/: ...".
func DecodeServerConfigWith(ctx context.Context, raw json.RawMessage, secret SecretFunc) (upstream.ServerConfig, error) {
	return decodeServerConfig(raw, func(h, v string) (string, error) {
		var err error
		out := os.Expand(v, func(name string) string {
			if err != nil {
				return ""
			}
			val, e := secret(ctx, name)
			if e != nil {
				err = fmt.Errorf("header %s needs secret %s: %w", h, name, e)
			}
			return val
		})
		return out, err
	})
}

// decodeServerConfig parses a registry document and expands its header
// values (in header order, so that the error is the same on every run).
func decodeServerConfig(raw json.RawMessage, expand func(header, value string) (string, error)) (upstream.ServerConfig, error) {
	var doc serverDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return upstream.ServerConfig{}, fmt.Errorf("config is not a valid server entry: %w", err)
	}
	cfg := doc.ServerConfig
	if doc.Timeout != "" {
		d, err := time.ParseDuration(doc.Timeout)
		if err != nil || d < 0 {
			return cfg, fmt.Errorf("timeout %q is not a duration like 30s", doc.Timeout)
		}
		cfg.Timeout = d
	}
	headers := make([]string, 0, len(cfg.Headers))
	for h := range cfg.Headers {
		headers = append(headers, h)
	}
	sort.Strings(headers)
	for _, h := range headers {
		v, err := expand(h, cfg.Headers[h])
		if err != nil {
			return cfg, err
		}
		cfg.Headers[h] = v
	}
	return cfg, cfg.Validate()
}

// loadServers reads the registry table into upstream configs, resolving
// ${VAR} in headers with secret (nil: the process environment only). An
// entry that does not decode is kept as a misconfigured server (its calls
// fail with the reason and a sync marks its tools stale instead of
// deleting them) and is logged.
func loadServers(ctx context.Context, reg *dynamo.RegistryStore, secret SecretFunc, log *slog.Logger) (map[string]upstream.ServerConfig, error) {
	raw, err := reg.ListServers(ctx)
	if err != nil {
		return nil, err
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
		var cfg upstream.ServerConfig
		if secret == nil {
			cfg, err = DecodeServerConfig(raw[id], os.Getenv)
		} else {
			cfg, err = DecodeServerConfigWith(ctx, raw[id], secret)
		}
		if err != nil {
			log.Error("registry entry is unusable; its calls fail until it is fixed", "server", id, "error", err)
			// An unknown transport makes every call fail with this text.
			cfg = upstream.ServerConfig{Transport: "(invalid registry entry: " + err.Error() + ")"}
		}
		out[id] = cfg
	}
	return out, nil
}
