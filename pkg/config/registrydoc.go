package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/internal/duration"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// SecretFunc returns the value of ${NAME} in a registry header, or an
// error saying why there is none. (*secrets.Resolver).Value is one:
// environment first, then the SSM parameter or Secrets Manager secret
// <TOOL_RAG_SECRETS_PREFIX>NAME (TOOL_RAG_SECRETS_STORE).
type SecretFunc func(ctx context.Context, name string) (string, error)

// EnvSecrets resolves ${NAME} from getenv: an unset (or empty) variable is
// an error, so that a server is reported as misconfigured instead of being
// called without its credentials.
func EnvSecrets(getenv func(string) string) SecretFunc {
	return func(_ context.Context, name string) (string, error) {
		if v := getenv(name); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("environment variable %s is %w", name, errUnset)
	}
}

var errUnset = errors.New("not set")

// UpstreamEnv resolves ${NAME} in registry headers from getenv, for the
// names the environment may give them (secrets.EnvAllowed:
// TOOLRAG_UPSTREAM_* and the names listed in TOOL_RAG_UPSTREAM_ENV); any
// other name is an error, as is an unset (or empty) variable. A value that
// is the reference itself (KeepVars) is kept.
func UpstreamEnv(getenv func(string) string) SecretFunc {
	return func(_ context.Context, name string) (string, error) {
		v := getenv(name)
		if v == "${"+name+"}" {
			return v, nil // kept for the functions to expand
		}
		if !secrets.EnvAllowed(name, getenv) {
			return "", &secrets.NotAllowedError{Name: name}
		}
		if v != "" {
			return v, nil
		}
		return "", fmt.Errorf("environment variable %s is %w", name, errUnset)
	}
}

// KeepVars is a getenv for LoadRegistry that keeps every ${VAR} as it is
// (`toolrag registry push` without --expand-env: secrets stay out of the
// table, and each function expands them from its own environment).
func KeepVars(name string) string { return "${" + name + "}" }

// ExpandVars replaces every ${VAR} (and $VAR) in s with its value from
// secret; the first failure is the error. It is the one ${VAR} expander
// of registry headers, YAML files and registry-table documents alike.
func ExpandVars(ctx context.Context, s string, secret SecretFunc) (string, error) {
	var err error
	out := os.Expand(s, func(name string) string {
		if err != nil {
			return ""
		}
		v, e := secret(ctx, name)
		err = e
		return v
	})
	return out, err
}

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

// DecodeServerConfig parses a registry-table document, with ${VAR} in
// header values resolved by secret (EnvSecrets for the environment). A failure makes the entry an error naming the header, the
// variable and the cause, e.g. "header Authorization needs secret
// GITHUB_TOKEN: reading SSM parameters under /toolrag/prod/: ...".
// Headers are expanded in name order, so that the error is the same on
// every run.
func DecodeServerConfig(ctx context.Context, raw json.RawMessage, secret SecretFunc) (upstream.ServerConfig, error) {
	var doc serverDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return upstream.ServerConfig{}, fmt.Errorf("config is not a valid server entry: %w", err)
	}
	return resolveServer(ctx, doc.ServerConfig, doc.Timeout, secret)
}

// resolveServer finishes one registry entry decoded from either format
// (a YAML registry file or a registry-table document): timeout (seconds
// or a Go duration, "" for none), ${VAR} in header values resolved by
// secret in header-name order (so that the error is the same on every
// run), then Validate.
func resolveServer(ctx context.Context, cfg upstream.ServerConfig, timeout string, secret SecretFunc) (upstream.ServerConfig, error) {
	if timeout != "" {
		d, err := duration.Parse(timeout)
		if err != nil {
			return cfg, fmt.Errorf("timeout: %w", err)
		}
		cfg.Timeout = d
	}
	headers := make([]string, 0, len(cfg.Headers))
	for h := range cfg.Headers {
		headers = append(headers, h)
	}
	sort.Strings(headers)
	for _, h := range headers {
		var name string
		var reserved error
		v, err := ExpandVars(ctx, cfg.Headers[h], func(ctx context.Context, n string) (string, error) {
			name = n
			if reserved = secrets.Reserved(n); reserved != nil {
				return "", reserved // never handed to secret
			}
			return secret(ctx, n)
		})
		switch {
		case reserved != nil:
			return cfg, fmt.Errorf("header %s names ${%s}, which registry headers may never read: %w", h, name, reserved)
		case errors.Is(err, errUnset):
			return cfg, fmt.Errorf("header %s needs environment variable %s, which is not set", h, name)
		case err != nil:
			return cfg, fmt.Errorf("header %s needs secret %s: %w", h, name, err)
		}
		cfg.Headers[h] = v
	}
	if cfg.Auth != nil && cfg.Auth.ClientSecret != "" {
		var name string
		v, err := ExpandVars(ctx, cfg.Auth.ClientSecret, func(ctx context.Context, n string) (string, error) {
			name = n
			return secret(ctx, n)
		})
		switch {
		case errors.Is(err, errUnset):
			return cfg, fmt.Errorf("auth client_secret needs environment variable %s, which is not set", name)
		case err != nil:
			return cfg, fmt.Errorf("auth client_secret needs secret %s: %w", name, err)
		}
		a := *cfg.Auth
		a.ClientSecret = v
		cfg.Auth = &a
	}
	return cfg, cfg.Validate()
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

// DecodeRegistry decodes the registry-table documents (server id →
// document) into upstream configs, resolving ${VAR} in headers with
// secret (nil: the process environment only, UpstreamEnv). An entry that does not
// decode is kept as a misconfigured server (its calls fail with the
// reason and a sync marks its tools stale instead of deleting them) and is
// logged; an entry whose id is invalid is left out and logged.
func DecodeRegistry(ctx context.Context, raw map[string]json.RawMessage, secret SecretFunc, log *slog.Logger) map[string]upstream.ServerConfig {
	if secret == nil {
		secret = UpstreamEnv(os.Getenv)
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
		cfg, err := DecodeServerConfig(ctx, raw[id], secret)
		if err != nil {
			log.Error("registry entry is unusable; its calls fail until it is fixed", "server", id, "error", err)
			// An unknown transport makes every call fail with this text.
			cfg = upstream.ServerConfig{Transport: "(invalid registry entry: " + err.Error() + ")"}
		}
		out[id] = cfg
	}
	return out
}
