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
	"slices"
	"sort"
	"strings"
	"time"
)

// Rule narrows a key's grant on one server. A rule that names no list
// ({} in keys.yaml, or "*") grants the whole server. A rule that names any
// list grants, of each kind, only what its own list names: a list it does
// not name, or an empty list, grants nothing of that kind, and "*" in a
// list grants everything of that kind. Tool and prompt prefixes match the
// start of the original name; URI prefixes match canonical URIs on segment
// boundaries (see uri.go).
//
// The lists are stored without omitempty so that "not named" (nil) and
// "explicitly empty" survive JSON and DynamoDB.
type Rule struct {
	ToolPrefixes   []string `json:"tool_prefixes" yaml:"tool_prefixes,omitempty" dynamodbav:"tool_prefixes"`
	URIPrefixes    []string `json:"uri_prefixes" yaml:"uri_prefixes,omitempty" dynamodbav:"uri_prefixes"`
	PromptPrefixes []string `json:"prompt_prefixes" yaml:"prompt_prefixes,omitempty" dynamodbav:"prompt_prefixes"`
}

// Whole reports whether the rule grants the whole server (it names no
// list).
func (r Rule) Whole() bool {
	return r.ToolPrefixes == nil && r.URIPrefixes == nil && r.PromptPrefixes == nil
}

// Wildcard is the list entry (and the whole-rule value in keys.yaml) that
// grants everything of a kind.
const Wildcard = "*"

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

// For returns the policy a key grants. URI prefixes are made canonical
// (CanonicalURIPrefix); a prefix that cannot be is dropped, so it grants nothing.
func For(k Key) Policy {
	servers := make(map[string]Rule, len(k.Servers))
	for id, r := range k.Servers {
		if r.URIPrefixes != nil {
			canon := make([]string, 0, len(r.URIPrefixes))
			for _, p := range r.URIPrefixes {
				if c, err := CanonicalURIPrefix(p); err == nil {
					canon = append(canon, c)
				}
			}
			r.URIPrefixes = canon
		}
		servers[id] = r
	}
	return Policy{KeyID: k.ID, Admin: k.Admin, servers: servers}
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
	return p.allows(server, tool, func(r Rule) []string { return r.ToolPrefixes }, strings.HasPrefix)
}

// AllowsURI reports whether the original resource URI on server is
// granted. The URI is made canonical first; one that cannot be is refused.
func (p Policy) AllowsURI(server, uri string) bool {
	canon, err := CanonicalURI(uri)
	if err != nil {
		return false
	}
	return p.allows(server, canon, func(r Rule) []string { return r.URIPrefixes }, func(uri, prefix string) bool {
		return MatchURIPrefix(prefix, uri)
	})
}

// AllowsPrompt reports whether the original prompt name on server is granted.
func (p Policy) AllowsPrompt(server, prompt string) bool {
	return p.allows(server, prompt, func(r Rule) []string { return r.PromptPrefixes }, strings.HasPrefix)
}

// MayAllowURIPrefix reports whether some URI starting with prefix (the
// literal start of a resource template) is granted on server: either the
// prefix lies inside a granted prefix, or a granted prefix extends it.
// Used to list resource templates.
func (p Policy) MayAllowURIPrefix(server, prefix string) bool {
	if p.all {
		return true
	}
	rule, ok := p.servers[server]
	if !ok {
		return false
	}
	if rule.Whole() || slices.Contains(rule.URIPrefixes, Wildcard) {
		return true
	}
	canon, err := CanonicalURIPrefix(prefix)
	if err != nil {
		return false
	}
	for _, g := range rule.URIPrefixes {
		if MatchURIPrefix(g, canon) || strings.HasPrefix(g, canon) {
			return true
		}
	}
	return false
}

func (p Policy) allows(server, name string, prefixes func(Rule) []string, match func(name, prefix string) bool) bool {
	if p.all {
		return true
	}
	rule, ok := p.servers[server]
	if !ok {
		return false
	}
	if rule.Whole() {
		return true
	}
	for _, prefix := range prefixes(rule) {
		if prefix == Wildcard || match(name, prefix) {
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

// ChangedMeaning describes, one line per list, where k's grant is
// narrower than what the same rule granted before the explicit model,
// when a list the rule did not name granted everything of its kind. The
// gateway logs these once at start, so that an operator upgrading sees
// which keys lost prompts or resources and how to keep them; writing the
// list explicitly (`[]` for none, `["*"]` for all) silences the line.
func ChangedMeaning(k Key) []string {
	var out []string
	ids := make([]string, 0, len(k.Servers))
	for id := range k.Servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := k.Servers[id]
		if r.Whole() {
			continue
		}
		for _, l := range []struct {
			field, kind string
			list        []string
		}{{"tool_prefixes", "tools", r.ToolPrefixes}, {"uri_prefixes", "resources", r.URIPrefixes}, {"prompt_prefixes", "prompts", r.PromptPrefixes}} {
			if l.list != nil {
				continue
			}
			out = append(out, fmt.Sprintf("key %q, server %q: the rule does not name %s, so it now grants no %s of that server (before, it granted all); write %s: [\"*\"] to grant them all, or %s: [] to confirm none", k.ID, id, l.field, l.kind, l.field, l.field))
		}
	}
	return out
}

// UnknownServers returns the server ids k grants that are not registered,
// sorted: such a grant is a typo or a stale key, and is refused rather than
// silently granting nothing.
func UnknownServers(k Key, registered func(id string) bool) []string {
	var out []string
	for id := range k.Servers {
		if !registered(id) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
