package upconnect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/upauth"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// The exchange request follows RFC 8693, and its result is cached per
// (principal, server) until shortly before it expires.
func TestTokenExchangeRequestAndCache(t *testing.T) {
	var n atomic.Int32
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		r.ParseForm()
		id, secret, _ := r.BasicAuth()
		if r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || r.Form.Get("subject_token") != "inbound-alice" ||
			r.Form.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" || r.Form.Get("audience") != "https://up.example/mcp" ||
			r.Form.Get("resource") != "https://up.example/mcp" || id != "gw" || secret != "gw-secret" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_request"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"exchanged-alice","token_type":"Bearer","expires_in":300,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`))
	}))
	defer ep.Close()
	dir := t.TempDir()
	kf, _ := vault.OpenKeyFile(filepath.Join(dir, "k"))
	rows, _ := vault.OpenSQLite(context.Background(), filepath.Join(dir, "db"))
	defer rows.Close()
	now := time.Now()
	s := New(Config{Vault: vault.New(rows, kf, time.Minute), Sealer: kf, Now: func() time.Time { return now },
		Server: func(id string) (Server, bool) {
			return Server{URL: "https://up.example/mcp", Auth: &upauth.Config{Mode: upauth.ModeTokenExchange, ClientID: "gw", ClientSecret: "gw-secret", TokenEndpoint: ep.URL}}, true
		}})
	ctx := auth.WithPrincipal(context.Background(), "token:alice")
	if _, err := s.Credential(ctx, "up"); err == nil || !strings.Contains(err.Error(), "only callers signed in with OAuth") {
		t.Fatalf("without an inbound token: %v", err)
	}
	ctx = WithSubjectToken(ctx, "inbound-alice")
	for range 3 {
		if _, err := s.Credential(ctx, "up"); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d exchanges for 3 calls, want 1 (cached)", n.Load())
	}
	now = now.Add(250 * time.Second) // within the refresh margin of the 300 s token
	if _, err := s.Credential(ctx, "up"); err != nil || n.Load() != 2 {
		t.Errorf("near expiry: %v, %d exchanges", err, n.Load())
	}
	bad := WithSubjectToken(auth.WithPrincipal(context.Background(), "token:bob"), "inbound-bob")
	if _, err := s.Credential(bad, "up"); err == nil || !strings.Contains(err.Error(), "invalid_request") {
		t.Errorf("a refused exchange: %v", err)
	}
	var nc *NeedsConnection
	if err := s.Refused(ctx, "up"); err == nil || errors.As(err, &nc) {
		t.Errorf("a 401 to an exchanged token: %v", err)
	}
	_ = upstream.ErrUnauthorized
}
