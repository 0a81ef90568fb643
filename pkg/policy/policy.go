// Package policy holds API keys and the access policy each key grants:
// which upstream servers it may use and, per server, which tool, resource
// URI and prompt prefixes. Every gateway surface asks a Policy before it
// lists, describes or calls anything.
package policy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Rule narrows a key's grant on one server. An empty prefix list grants
// everything of that kind on the server.
type Rule struct {
	ToolPrefixes   []string `json:"tool_prefixes,omitempty" yaml:"tool_prefixes,omitempty" dynamodbav:"tool_prefixes,omitempty"`
	URIPrefixes    []string `json:"uri_prefixes,omitempty" yaml:"uri_prefixes,omitempty" dynamodbav:"uri_prefixes,omitempty"`
	PromptPrefixes []string `json:"prompt_prefixes,omitempty" yaml:"prompt_prefixes,omitempty" dynamodbav:"prompt_prefixes,omitempty"`
}

// RateLimit is a per-key token bucket: Rate requests per second with bursts
// of up to Burst. Zero values mean unlimited.
type RateLimit struct {
	Rate  float64 `json:"rate,omitempty" yaml:"rate,omitempty" dynamodbav:"rate,omitempty"`
	Burst int     `json:"burst,omitempty" yaml:"burst,omitempty" dynamodbav:"burst,omitempty"`
}

// Key is an API key as stored: only the SHA-256 hash of its secret.
type Key struct {
	ID         string          `json:"id" dynamodbav:"id"`
	SecretHash string          `json:"secret_hash" dynamodbav:"secret_hash"` // "sha256:<hex>"
	Admin      bool            `json:"admin,omitempty" dynamodbav:"admin"`
	Servers    map[string]Rule `json:"servers,omitempty" dynamodbav:"servers"`
	RateLimit  RateLimit       `json:"rate_limit,omitempty" dynamodbav:"rate_limit"`
	Disabled   bool            `json:"disabled,omitempty" dynamodbav:"disabled"`
	CreatedAt  time.Time       `json:"created_at,omitempty" dynamodbav:"created_at"`
	// ExpiresAt, when set, is the instant the key stops working.
	ExpiresAt time.Time `json:"expires_at,omitempty" dynamodbav:"expires_at,omitempty"`
}

// Expired reports whether the key has an expiry at or before now.
func (k Key) Expired(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt)
}

// HashSecret returns the stored form of a secret: "sha256:<hex>".
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ParseSecretHash validates a "sha256:<64 hex>" string and returns it in
// canonical (lower-case) form.
func ParseSecretHash(s string) (string, error) {
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if !ok {
		return "", fmt.Errorf("secret_hash must start with \"sha256:\"")
	}
	b, err := hex.DecodeString(hexPart)
	if err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("secret_hash must be \"sha256:\" followed by 64 hex digits")
	}
	return "sha256:" + hex.EncodeToString(b), nil
}

// MatchesSecret reports whether secret hashes to the key's SecretHash. The
// comparison is constant-time.
func (k Key) MatchesSecret(secret string) bool {
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(k.SecretHash)) == 1
}

// Policy is what a request may do. The zero Policy grants nothing; use
// Unrestricted for TOOL_RAG_WITHOUT_AUTH.
type Policy struct {
	KeyID   string
	Admin   bool
	all     bool
	servers map[string]Rule
}

// For returns the policy a key grants.
func For(k Key) Policy {
	return Policy{KeyID: k.ID, Admin: k.Admin, servers: k.Servers}
}

// Unrestricted grants every server (used only when auth is disabled).
func Unrestricted() Policy { return Policy{KeyID: "anonymous", all: true} }

// AllowsServer reports whether the policy grants any access to the server.
func (p Policy) AllowsServer(server string) bool {
	if p.all {
		return true
	}
	_, ok := p.servers[server]
	return ok
}

// Servers returns the granted server ids; nil with all=true means every server.
func (p Policy) Servers() (ids []string, all bool) {
	if p.all {
		return nil, true
	}
	for id := range p.servers {
		ids = append(ids, id)
	}
	return ids, false
}

// NoGrant explains a policy that grants no server (a key with an empty
// servers map, or a request's allowed_servers outside the key's grant);
// it is "" when the policy grants something.
func (p Policy) NoGrant() string {
	if p.all || len(p.servers) > 0 {
		return ""
	}
	return "this API key is granted no upstream server here, so nothing can be found or called with it; the gateway's admin grants servers in the key's servers map"
}

// AllowsTool reports whether the original tool name on server is granted.
func (p Policy) AllowsTool(server, tool string) bool {
	return p.allows(server, tool, func(r Rule) []string { return r.ToolPrefixes })
}

// AllowsURI reports whether the original resource URI on server is granted.
func (p Policy) AllowsURI(server, uri string) bool {
	return p.allows(server, uri, func(r Rule) []string { return r.URIPrefixes })
}

// AllowsPrompt reports whether the original prompt name on server is granted.
func (p Policy) AllowsPrompt(server, prompt string) bool {
	return p.allows(server, prompt, func(r Rule) []string { return r.PromptPrefixes })
}

// MayAllowURIPrefix reports whether some URI starting with prefix is
// granted on server: either the prefix lies inside a granted prefix, or a
// granted prefix extends it. Used to list resource templates.
func (p Policy) MayAllowURIPrefix(server, prefix string) bool {
	if p.all {
		return true
	}
	rule, ok := p.servers[server]
	if !ok {
		return false
	}
	if len(rule.URIPrefixes) == 0 {
		return true
	}
	for _, g := range rule.URIPrefixes {
		if strings.HasPrefix(prefix, g) || strings.HasPrefix(g, prefix) {
			return true
		}
	}
	return false
}

func (p Policy) allows(server, name string, prefixes func(Rule) []string) bool {
	if p.all {
		return true
	}
	rule, ok := p.servers[server]
	if !ok {
		return false
	}
	pf := prefixes(rule)
	if len(pf) == 0 {
		return true
	}
	for _, prefix := range pf {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// Narrow returns a policy limited to the given servers: a request's
// allowed_servers can only narrow a key's grant, never widen it. An empty
// list leaves the policy unchanged.
func (p Policy) Narrow(servers []string) Policy {
	if len(servers) == 0 {
		return p
	}
	out := Policy{KeyID: p.KeyID, Admin: p.Admin, servers: map[string]Rule{}}
	for _, s := range servers {
		if p.all {
			out.servers[s] = Rule{}
		} else if r, ok := p.servers[s]; ok {
			out.servers[s] = r
		}
	}
	return out
}
