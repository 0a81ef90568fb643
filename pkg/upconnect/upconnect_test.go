package upconnect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/upauth"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

func newService(t *testing.T) (*Service, *vault.Vault, *time.Time) {
	t.Helper()
	dir := t.TempDir()
	kf, err := vault.OpenKeyFile(filepath.Join(dir, "k"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := vault.OpenSQLite(context.Background(), filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rows.Close() })
	v := vault.New(rows, kf, time.Minute)
	now := time.Now()
	s := New(Config{Vault: v, Sealer: kf, PublicURL: "https://gw.example",
		Server: func(id string) (Server, bool) {
			return Server{URL: "https://up.example/mcp", Auth: &upauth.Config{Mode: upauth.ModeUserSecret}}, id == "up"
		},
		Now: func() time.Time { return now }})
	return s, v, &now
}

func complete(s *Service, link, principal string, form url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, strings.TrimPrefix(link, "https://gw.example"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if principal != "" {
		req = req.WithContext(auth.WithPrincipal(req.Context(), principal))
	}
	w := httptest.NewRecorder()
	s.CompleteLink(w, req)
	return w
}

func TestConnectLinkRefusals(t *testing.T) {
	s, v, now := newService(t)
	ctx := auth.WithPrincipal(context.Background(), "key:alice")
	_, err := s.Credential(ctx, "up")
	var nc *NeedsConnection
	if !errors.As(err, &nc) || !strings.HasPrefix(nc.URL, "https://gw.example/connect/") {
		t.Fatalf("credential without a grant: %v", err)
	}
	form := url.Values{"secret": {"pat"}}
	stored := func() int {
		l, _ := v.List(context.Background(), "")
		return len(l)
	}

	cases := []struct {
		name      string
		link      string
		principal string
		advance   time.Duration
		code      int
		want      string
	}{
		{"tampered", nc.URL[:len(nc.URL)-4] + "AAAA", "key:alice", 0, http.StatusGone, "not valid"},
		{"other key id", strings.Replace(nc.URL, "/connect/k", "/connect/x", 1), "key:alice", 0, http.StatusGone, "not valid"},
		{"no caller", nc.URL, "", 0, http.StatusUnauthorized, "sign in"},
		{"another principal", nc.URL, "key:mallory", 0, http.StatusForbidden, "someone else"},
		{"expired", nc.URL, "key:alice", DefaultLinkTTL + time.Second, http.StatusGone, "expired"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			saved := *now
			*now = now.Add(c.advance)
			defer func() { *now = saved }()
			w := complete(s, c.link, c.principal, form)
			if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body.String(), c.code, c.want)
			}
			if n := stored(); n != 0 {
				t.Errorf("a refused link stored %d grants", n)
			}
		})
	}
	if w := complete(s, nc.URL, "key:alice", form); w.Code != http.StatusOK {
		t.Fatalf("alice: %d %s", w.Code, w.Body.String())
	}
	if w := complete(s, nc.URL, "key:alice", url.Values{"secret": {"other"}}); w.Code != http.StatusGone || !strings.Contains(w.Body.String(), "already used") {
		t.Errorf("replay: %d %s", w.Code, w.Body.String())
	}
	g, err := v.Get(context.Background(), vault.Key{Principal: "key:alice", Server: "up"})
	if err != nil || g.Secret != "pat" {
		t.Fatalf("stored grant: %v %v", g, err)
	}
	// The credential is the secret as the configured header.
	cctx, err := s.Credential(ctx, "up")
	if err != nil || cctx == ctx {
		t.Fatalf("credential: %v", err)
	}
}

func TestChallenge(t *testing.T) {
	got := challenge([]string{`Basic realm="x"`, `Bearer error="invalid_token", scope="repo read:org", resource_metadata="https://up.example/.well-known/oauth-protected-resource/mcp"`})
	if got["scope"] != "repo read:org" || got["resource_metadata"] != "https://up.example/.well-known/oauth-protected-resource/mcp" || got["error"] != "invalid_token" {
		t.Errorf("challenge = %v", got)
	}
	if got := challenge([]string{`Bearer realm=api, scope=a`}); got["realm"] != "api" || got["scope"] != "a" {
		t.Errorf("unquoted challenge = %v", got)
	}
}

// The work a per-user call adds over a static one, warm: the grant from
// the cache and the principal's headers on the context.
func BenchmarkUpstreamIdentityCredentialWarm(b *testing.B) {
	dir := b.TempDir()
	kf, _ := vault.OpenKeyFile(filepath.Join(dir, "k"))
	rows, _ := vault.OpenSQLite(context.Background(), filepath.Join(dir, "db"))
	defer rows.Close()
	v := vault.New(rows, kf, time.Minute)
	s := New(Config{Vault: v, Sealer: kf, Server: func(id string) (Server, bool) {
		return Server{URL: "https://up.example/mcp", Auth: &upauth.Config{Mode: upauth.ModeOAuth}}, true
	}})
	ctx := auth.WithPrincipal(context.Background(), "key:alice")
	v.Put(ctx, vault.Key{Principal: "key:alice", Server: "up"}, vault.Grant{Kind: vault.KindOAuth, AccessToken: "tok", Expiry: time.Now().Add(time.Hour)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Credential(ctx, "up"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestClientMetadataDocument(t *testing.T) {
	s, _, _ := newService(t)
	w := httptest.NewRecorder()
	s.ServeClientMetadata(w, httptest.NewRequest(http.MethodGet, ClientMetadataPath, nil))
	body := w.Body.String()
	for _, want := range []string{`"client_id":"https://gw.example/connect-client.json"`, `"redirect_uris":["https://gw.example/connect-callback"]`, `"token_endpoint_auth_method":"none"`} {
		if !strings.Contains(body, want) {
			t.Errorf("document %s lacks %s", body, want)
		}
	}
}

// The connect page: its headers, the secret field's attributes, and a
// form posted from another site refused before anything is read.
func TestConnectPage(t *testing.T) {
	s, v, _ := newService(t)
	mux := http.NewServeMux()
	s.Routes(mux, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "Bearer k-alice" {
				r = r.WithContext(auth.WithPrincipal(r.Context(), "key:alice"))
			}
			h.ServeHTTP(w, r)
		})
	})
	var nc *NeedsConnection
	if _, err := s.Credential(auth.WithPrincipal(context.Background(), "key:alice"), "up"); !errors.As(err, &nc) {
		t.Fatalf("credential without a grant: %v", err)
	}
	path := strings.TrimPrefix(nc.URL, "https://gw.example")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s", csp, want)
		}
	}
	if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Referrer-Policy") != "no-referrer" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: %v", w.Header())
	}
	if body := w.Body.String(); !strings.Contains(body, `id="secret" name="secret" type="password" autocomplete="off"`) || strings.Contains(body, "<script") {
		t.Errorf("page: %s", body)
	}

	cases := []struct {
		name    string
		headers map[string]string
		code    int
	}{
		{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site, another origin", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"another Origin, no Sec-Fetch-Site", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"the page itself", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "null"}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(url.Values{"key": {"k-alice"}, "secret": {"pat"}}.Encode()))
			req.Host = "gw.example"
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, val := range c.headers {
				req.Header.Set(k, val)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			_, err := v.Get(context.Background(), vault.Key{Principal: "key:alice", Server: "up"})
			if w.Code != c.code || (c.code != http.StatusOK) != errors.Is(err, vault.ErrNotFound) {
				t.Errorf("%d (stored: %v), want %d", w.Code, err, c.code)
			}
		})
	}
}
