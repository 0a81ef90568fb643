package testenv

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// WhoServer is a real mcp-go Streamable HTTP server that authenticates
// every request by its bearer token (401 with a WWW-Authenticate challenge
// naming its RFC 9728 metadata otherwise) and whose whoami tool answers
// "sub=<subject>" for the caller. Its MCP endpoint is URL+"/mcp".
type WhoServer struct {
	URL string
	// Issuer, when set, is named in the server's RFC 9728
	// protected-resource metadata.
	Issuer string
	// Check, when set, verifies a token (and tells its subject) instead of
	// the token map.
	Check func(tok string) (sub string, ok bool)

	mu     sync.Mutex
	tokens map[string]string // bearer → subject
	seen   map[string]string // subject → last bearer it came with
	calls  map[string]int    // subject → whoami calls
	denied map[string]bool   // subjects refused whatever their token
}

type whoKey struct{}

// NewWhoServer starts a WhoServer that knows the bearer tokens in tokens
// (token → subject; nil: none yet); it stops with the test.
func NewWhoServer(t testing.TB, tokens map[string]string) *WhoServer {
	t.Helper()
	if tokens == nil {
		tokens = map[string]string{}
	}
	u := &WhoServer{tokens: tokens, seen: map[string]string{}, calls: map[string]int{}, denied: map[string]bool{}}
	s := server.NewMCPServer("who", "1")
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("who am i: tell the identity of the caller at this server")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sub, _ := ctx.Value(whoKey{}).(string)
			u.mu.Lock()
			u.calls[sub]++
			u.mu.Unlock()
			return mcp.NewToolResultText("sub=" + sub), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		sub, _ := u.subject(r)
		return context.WithValue(ctx, whoKey{}, sub)
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") && u.Issuer != "" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": u.URL + "/mcp", "authorization_servers": []string{u.Issuer}})
			return
		}
		if _, ok := u.subject(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+u.URL+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

// NewJWTWhoServer starts a WhoServer protected by the authorization
// server issuer: it verifies each token's signature (the issuer's JWKS at
// issuer+"/jwks"), issuer, audience (its own URL+"/mcp") and expiry, and
// the caller is the token's subject.
func NewJWTWhoServer(t testing.TB, issuer string) *WhoServer {
	t.Helper()
	u := NewWhoServer(t, nil)
	u.Issuer = issuer
	v := oidc.NewVerifier(issuer, oidc.NewRemoteKeySet(context.Background(), issuer+"/jwks"), &oidc.Config{ClientID: u.URL + "/mcp"})
	u.Check = func(tok string) (string, bool) {
		idt, err := v.Verify(context.Background(), tok)
		if err != nil {
			return "", false
		}
		return idt.Subject, true
	}
	return u
}

func (u *WhoServer) subject(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return "", false
	}
	var sub string
	if u.Check != nil {
		// outside the lock: a check may fetch keys
		if sub, ok = u.Check(tok); !ok {
			return sub, false
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.Check == nil {
		if sub, ok = u.tokens[tok]; !ok {
			return "", false
		}
	}
	if u.denied[sub] {
		return sub, false
	}
	u.seen[sub] = tok
	return sub, true
}

// Set makes tok the bearer token of sub (sub "": tok is no longer known).
func (u *WhoServer) Set(tok, sub string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if sub == "" {
		delete(u.tokens, tok)
	} else {
		u.tokens[tok] = sub
	}
}

// Deny refuses (true) or accepts again (false) every token of sub, as a
// server does that has revoked the caller's access.
func (u *WhoServer) Deny(sub string, deny bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.denied[sub] = deny
}

// Calls returns how many times each subject called whoami.
func (u *WhoServer) Calls() map[string]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.calls)
}

// Seen returns the subjects the server accepted, each with the last
// bearer token it came with.
func (u *WhoServer) Seen() map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.seen)
}
