package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// LoadRegistry reads the hand-written registry and the provisioner's
// generated one and merges them; on an id conflict the hand-written entry
// wins. A missing file counts as empty. ${VAR} in headers is expanded with
// getenv (UpstreamEnv: TOOLRAG_UPSTREAM_* and the names listed in
// TOOL_RAG_UPSTREAM_ENV only); an unset variable, and any other name, is an
// error naming the server, the header and the variable.
func LoadRegistry(handPath, generatedPath string, getenv func(string) string) (map[string]upstream.ServerConfig, error) {
	merged := map[string]upstream.ServerConfig{}
	for _, path := range []string{generatedPath, handPath} {
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read registry: %w", err)
		}
		servers, err := ParseRegistry(path, data, getenv)
		if err != nil {
			return nil, err
		}
		for id, s := range servers {
			merged[id] = s // later (hand-written) files win
		}
	}
	return merged, nil
}

var registryFields = map[string]bool{"transport": true, "command": true, "args": true, "cwd": true, "env": true, "url": true, "headers": true, "timeout": true, "unprefixed": true, "auth": true}

// ParseRegistry parses one registry file. name is used in error messages.
func ParseRegistry(name string, data []byte, getenv func(string) string) (map[string]upstream.ServerConfig, error) {
	servers, err := topLevel(name, data, "servers", "key")
	if err != nil {
		return nil, err
	}
	out := map[string]upstream.ServerConfig{}
	if servers == nil {
		return out, nil
	}
	if servers.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: \"servers\" must be a mapping of server id to settings", name, servers.Line)
	}
	for i := 0; i+1 < len(servers.Content); i += 2 {
		k, v := servers.Content[i], servers.Content[i+1]
		id := k.Value
		where := fmt.Sprintf("%s:%d: server %q", name, k.Line, id)
		if err := catalog.ValidServerID(id); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s: duplicate server id", where)
		}
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: settings must be a mapping", where)
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			if f := v.Content[j].Value; !registryFields[f] {
				return nil, fmt.Errorf("%s:%d: server %q: unknown field %q (known: transport, command, args, cwd, env, url, headers, timeout, unprefixed, auth)", name, v.Content[j].Line, id, f)
			}
		}
		var cfg upstream.ServerConfig
		if err := v.Decode(&cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var timeout string
		if t := mapValue(v, "timeout"); t != nil {
			timeout = t.Value
		}
		cfg, err := resolveServer(context.Background(), cfg, timeout, UpstreamEnv(getenv))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out[id] = cfg
	}
	return out, nil
}

// topLevel parses data (the file name) as YAML and returns the value of its
// top-level key, nil when the document or the value is empty; shape says
// what the key holds, for the error about a document that is not a mapping.
func topLevel(name string, data []byte, key, shape string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: invalid YAML: %w", name, err)
	}
	root := docRoot(&doc)
	if root == nil {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: expected a mapping with a top-level %q %s", name, root.Line, key, shape)
	}
	v := mapValue(root, key)
	if v == nil || v.Tag == "!!null" {
		return nil, nil
	}
	return v, nil
}

type keyEntry struct {
	ID         string                 `yaml:"id"`
	Secret     string                 `yaml:"secret"`
	SecretHash string                 `yaml:"secret_hash"`
	Admin      bool                   `yaml:"admin"`
	Servers    map[string]policy.Rule `yaml:"servers"`
	RateLimit  policy.RateLimit       `yaml:"rate_limit"`
	Disabled   bool                   `yaml:"disabled"`
	ExpiresAt  string                 `yaml:"expires_at"`
}

var keyFields = map[string]bool{"id": true, "secret": true, "secret_hash": true, "admin": true, "servers": true, "rate_limit": true, "disabled": true, "expires_at": true}
var ruleFields = map[string]bool{"tool_prefixes": true, "uri_prefixes": true, "prompt_prefixes": true}

// LoadKeys reads keys.yaml. Plain secrets are hashed on load and never kept.
func LoadKeys(path string) ([]policy.Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keys: %w", err)
	}
	return ParseKeys(path, data)
}

// ParseKeys parses a keys file. name is used in error messages.
func ParseKeys(name string, data []byte) ([]policy.Key, error) {
	list, err := topLevel(name, data, "keys", "list")
	if list == nil || err != nil {
		return nil, err
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: \"keys\" must be a list", name, list.Line)
	}
	var keys []policy.Key
	ids := map[string]bool{}
	hashes := map[string]string{}
	for i, n := range list.Content {
		where := fmt.Sprintf("%s:%d: key #%d", name, n.Line, i+1)
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a mapping with id and secret", where)
		}
		if idNode := mapValue(n, "id"); idNode != nil {
			where = fmt.Sprintf("%s:%d: key %q", name, n.Line, idNode.Value)
		}
		for j := 0; j+1 < len(n.Content); j += 2 {
			if f := n.Content[j].Value; !keyFields[f] {
				return nil, fmt.Errorf("%s: unknown field %q (known: id, secret, secret_hash, admin, servers, rate_limit, disabled, expires_at)", where, f)
			}
		}
		if srv := mapValue(n, "servers"); srv != nil && srv.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(srv.Content); j += 2 {
				if err := normalizeRuleNode(srv.Content[j+1]); err != nil {
					return nil, fmt.Errorf("%s:%d: key %q: server %q: %w", name, srv.Content[j+1].Line, keyID(n), srv.Content[j].Value, err)
				}
			}
		}
		var e keyEntry
		if err := n.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if e.ID == "" {
			return nil, fmt.Errorf("%s: id is required", where)
		}
		if ids[e.ID] {
			return nil, fmt.Errorf("%s: duplicate key id", where)
		}
		ids[e.ID] = true
		var hash string
		switch {
		case e.Secret != "" && e.SecretHash != "":
			return nil, fmt.Errorf("%s: set either secret or secret_hash, not both", where)
		case e.Secret != "":
			hash = policy.HashSecret(e.Secret)
		case e.SecretHash != "":
			h, err := policy.ParseSecretHash(e.SecretHash)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			hash = h
		default:
			return nil, fmt.Errorf("%s: one of secret or secret_hash is required", where)
		}
		if other, dup := hashes[hash]; dup {
			return nil, fmt.Errorf("%s: has the same secret as key %q", where, other)
		}
		hashes[hash] = e.ID
		for sid, rule := range e.Servers {
			if err := catalog.ValidServerID(sid); err != nil {
				return nil, fmt.Errorf("%s: servers: %w", where, err)
			}
			for i, p := range rule.URIPrefixes {
				c, err := policy.CanonicalURIPrefix(p)
				if err != nil {
					return nil, fmt.Errorf("%s: server %q: uri_prefixes: %w", where, sid, err)
				}
				rule.URIPrefixes[i] = c
			}
		}
		if e.RateLimit.Rate < 0 || e.RateLimit.Burst < 0 {
			return nil, fmt.Errorf("%s: rate_limit values must not be negative", where)
		}
		var expires time.Time
		if e.ExpiresAt != "" {
			t, err := parseExpiry(e.ExpiresAt)
			if err != nil {
				return nil, fmt.Errorf("%s: expires_at: %w", where, err)
			}
			expires = t
		}
		keys = append(keys, policy.Key{ID: e.ID, SecretHash: hash, Admin: e.Admin, Servers: e.Servers, RateLimit: e.RateLimit, Disabled: e.Disabled, ExpiresAt: expires})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].ID < keys[j].ID })
	return keys, nil
}

// parseExpiry reads an expires_at: an RFC 3339 time
// ("2027-01-31T18:00:00Z") or a date ("2027-01-31", the start of that day
// in UTC).
func parseExpiry(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use RFC 3339 (2027-01-31T18:00:00Z) or a date (2027-01-31)", v)
}

// normalizeRuleNode checks one server rule of a key and rewrites it to
// the form policy.Rule decodes without losing meaning: "*" (the whole
// server) becomes {}, and a list that is named with no value (null)
// becomes an explicit empty list, which grants nothing of its kind.
func normalizeRuleNode(rule *yaml.Node) error {
	switch {
	case rule.Kind == yaml.ScalarNode && rule.Tag == "!!null":
		return fmt.Errorf("the rule is empty: write {} or \"*\" to grant the whole server, or list tool_prefixes, uri_prefixes and prompt_prefixes")
	case rule.Kind == yaml.ScalarNode && rule.Value == policy.Wildcard:
		*rule = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: rule.Line, Column: rule.Column}
		return nil
	case rule.Kind != yaml.MappingNode:
		return fmt.Errorf("the rule must be {} or \"*\" (the whole server) or a mapping of tool_prefixes, uri_prefixes and prompt_prefixes")
	}
	for r := 0; r+1 < len(rule.Content); r += 2 {
		f, v := rule.Content[r].Value, rule.Content[r+1]
		if !ruleFields[f] {
			return fmt.Errorf("unknown field %q (known: tool_prefixes, uri_prefixes, prompt_prefixes)", f)
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			*v = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: v.Line, Column: v.Column}
		}
	}
	return nil
}

func keyID(n *yaml.Node) string {
	if id := mapValue(n, "id"); id != nil {
		return id.Value
	}
	return ""
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	if doc.Kind == 0 {
		return nil
	}
	return doc
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
