package policy

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// ParseGrant parses one --server value of `toolrag keys create`: "id"
// grants every tool, prompt and resource of the server; "id:p1,p2" grants
// only the tools whose names start with one of the prefixes (and, as the
// rule names no other list, no prompt or resource).
func ParseGrant(s string) (id string, rule Rule, err error) {
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

// SecretPrefix starts every API key secret NewSecret makes.
const SecretPrefix = "trg_"

// NewSecret returns a fresh API key secret: SecretPrefix and 256 random
// bits. Store only HashSecret of it.
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails: Go crashes the program if the OS has no randomness
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}
