package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// A principal is who authenticated a request, as one opaque string that
// state bound to a caller (an MCP session) records and compares. It is
// the same for every request of one credential and different across
// credentials, and it reveals neither the secret nor its hash. Other
// authenticators (OAuth) set their own, under their own prefix.
type principalKey struct{}

// AnonymousPrincipal is the principal of requests when authentication is
// disabled (TOOL_RAG_WITHOUT_AUTH).
const AnonymousPrincipal = "anonymous"

// KeyPrincipal is the principal of an authenticated grant: for an API key
// "key:" and a hash of its id and secret hash (a key whose secret is
// replaced is a new principal); for an OAuth access token (a grant without
// a secret hash, whose id names the subject, pkg/oauth) "token:" and a
// hash of that id, the same for every token of the subject.
func KeyPrincipal(k policy.Key) string {
	kind := "key"
	if k.SecretHash == "" {
		kind = "token"
	}
	sum := sha256.Sum256([]byte("toolrag-principal\x00" + kind + "\x00" + k.ID + "\x00" + k.SecretHash))
	return kind + ":" + hex.EncodeToString(sum[:16])
}

// WithPrincipal returns ctx carrying principal.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns the principal attached by the middleware; ok is
// false for an unauthenticated context.
func PrincipalFrom(ctx context.Context) (string, bool) {
	p, ok := ctx.Value(principalKey{}).(string)
	return p, ok && p != ""
}
