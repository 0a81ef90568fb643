package upconnect

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/upauth"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// maxSecretBytes bounds a stored personal secret.
const maxSecretBytes = 8 << 10

var page = template.Must(template.New("connect").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="referrer" content="no-referrer"><title>Connect {{.Server}}</title>
<style>body{font:16px system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:1rem 0 .3rem;font-weight:600}input{width:100%;padding:.5rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}.hint{color:#555;font-size:.9rem;margin:.3rem 0 0}</style>
</head><body>
<h1>Connect {{.Server}}</h1>
{{if .Error}}<p role="alert" id="error"><strong>{{.Error}}</strong></p>{{end}}
{{if .Done}}<p role="status" id="done">{{.Done}}</p>{{else if .Form}}
<p>Your agent asked to use <strong>{{.Server}}</strong> as you. Sign in with the gateway API key your agent uses: this link works only for that key, once, until it expires.</p>
<form method="post" autocomplete="off">
<label for="key">Your gateway API key</label><input id="key" name="key" type="password" autocomplete="off" spellcheck="false" autocapitalize="off" required>
{{if .Secret}}<label for="secret">Your personal access token for {{.Server}}</label><input id="secret" name="secret" type="password" autocomplete="off" spellcheck="false" autocapitalize="off" maxlength="8192" required>
<p class="hint">It is stored encrypted, sent only to {{.Server}} with your own calls, and never shown again. To replace it, revoke the connection and connect again.</p>{{else}}
<p class="hint">Next, {{.Server}}'s sign-in page asks you to allow the gateway to act as you there.</p>{{end}}
<button type="submit" id="submit">{{if .Secret}}Store the token{{else}}Continue to {{.Server}}{{end}}</button>
</form>{{end}}
</body></html>`))

type pageData struct {
	Server, Error, Done string
	Form, Secret        bool
}

// render writes the connect page: no script at all, no framing, never
// cached. A user_secret form may only post to the gateway itself; the
// OAuth form leaves form-action open, because its answer redirects to the
// authorization server (and on to any identity provider it federates to),
// a chain browsers check against form-action and that no list can name in
// advance.
func (s *Service) render(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	csp := "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
	if !d.Form || d.Secret {
		csp += "; form-action 'self'"
	}
	h.Set("Content-Security-Policy", csp)
	w.WriteHeader(status)
	_ = page.Execute(w, d)
}

// sameOrigin refuses a connect form posted from another site (the
// browser's Sec-Fetch-Site, else Origin against Host): the form is the
// gateway's own page, and only it may post to a link.
func (s *Service) sameOrigin(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.render(w, http.StatusForbidden, pageData{Server: "a server", Error: "this form was sent from another site; open the link your agent gave you and submit its own page"})
	}))
	return cop.Handler(next)
}

func linkToken(r *http.Request) string {
	return strings.TrimPrefix(r.URL.Path, LinkPath)
}

// ServeLink serves GET /connect/{token}: the sign-in form (no credential
// is needed to see it; nothing is checked but the link itself).
func (s *Service) ServeLink(w http.ResponseWriter, r *http.Request) {
	t, err := s.open(r.Context(), linkAAD, linkToken(r))
	if err != nil {
		s.render(w, http.StatusGone, pageData{Server: "a server", Error: err.Error()})
		return
	}
	srv, ok := s.cfg.Server(t.Server)
	if !ok || !upauth.PerPrincipal(srv.Auth) {
		s.render(w, http.StatusGone, pageData{Server: t.Server, Error: "this server no longer connects per user"})
		return
	}
	s.render(w, http.StatusOK, pageData{Server: t.Server, Form: true, Secret: upauth.ModeOf(srv.Auth) == upauth.ModeUserSecret})
}

// CompleteLink serves POST /connect/{token}, behind the gateway's
// authentication (the form's key becomes the request's bearer, see
// FormKey): it refuses anyone but the link's principal, a replayed or
// expired link, then stores the secret or starts the OAuth flow.
func (s *Service) CompleteLink(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, err := s.open(ctx, linkAAD, linkToken(r))
	if err != nil {
		s.render(w, http.StatusGone, pageData{Server: "a server", Error: err.Error()})
		return
	}
	principal, keyID, ok := caller(ctx)
	if !ok {
		s.render(w, http.StatusUnauthorized, pageData{Server: t.Server, Error: "sign in with your API key"})
		return
	}
	srv, ok := s.cfg.Server(t.Server)
	if !ok || !upauth.PerPrincipal(srv.Auth) {
		s.render(w, http.StatusGone, pageData{Server: t.Server, Error: "this server no longer connects per user"})
		return
	}
	secret := r.PostFormValue("secret")
	mode := upauth.ModeOf(srv.Auth)
	if mode == upauth.ModeUserSecret && (secret == "" || len(secret) > maxSecretBytes || strings.ContainsAny(secret, "\r\n\x00")) {
		s.render(w, http.StatusBadRequest, pageData{Server: t.Server, Form: true, Secret: true, Error: "enter the token (one line, at most 8 KiB)"})
		return
	}
	if err := s.claim(ctx, t, principal); err != nil {
		status := http.StatusGone
		if errors.Is(err, errNotYours) {
			status = http.StatusForbidden
			s.log.WarnContext(ctx, "connect link opened by another principal; refused", "server", t.Server)
		}
		s.render(w, status, pageData{Server: t.Server, Error: err.Error()})
		return
	}
	switch mode {
	case upauth.ModeUserSecret:
		err := s.cfg.Vault.Put(ctx, vault.Key{Principal: principal, Server: t.Server}, vault.Grant{Kind: vault.KindSecret, Secret: secret, KeyID: keyID})
		if err != nil {
			s.log.ErrorContext(ctx, "storing a user secret failed", "server", t.Server, "error", err)
			s.render(w, http.StatusInternalServerError, pageData{Server: t.Server, Error: "the token could not be stored; try again"})
			return
		}
		s.connected(t.Server)
		s.render(w, http.StatusOK, pageData{Server: t.Server, Done: "Stored. Return to your agent and call the tool again."})
	case upauth.ModeOAuth:
		to, err := s.startOAuth(ctx, principal, keyID, t.Server, srv)
		if err != nil {
			s.log.WarnContext(ctx, "starting the upstream authorization failed", "server", t.Server, "error", err)
			s.render(w, http.StatusBadGateway, pageData{Server: t.Server, Error: err.Error()})
			return
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	default:
		s.render(w, http.StatusBadRequest, pageData{Server: t.Server, Error: "this server's connections are not made through a link (mode " + mode + ")"})
	}
}

// FormKey lets the connect form's key field authenticate the request: it
// becomes the Authorization header the gateway's authentication reads.
func FormKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if k := r.PostFormValue("key"); k != "" && r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+k)
		}
		next.ServeHTTP(w, r)
	})
}

// refusedAsPage answers a connect form the gateway's authentication
// refused (a wrong key: 401; too many failures or requests: 429) with the
// connect page and the form again, not the API's JSON error.
func (s *Service) refusedAsPage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&pageOnRefusal{ResponseWriter: w, s: s, r: r}, r)
	})
}

type pageOnRefusal struct {
	http.ResponseWriter
	s       *Service
	r       *http.Request
	written bool // the page replaced the refusal
}

func (p *pageOnRefusal) WriteHeader(code int) {
	if (code != http.StatusUnauthorized && code != http.StatusTooManyRequests) || p.Header().Get("Content-Type") != "application/json" {
		p.ResponseWriter.WriteHeader(code)
		return
	}
	p.written = true
	p.Header().Del("Content-Length")
	d := pageData{Server: "a server", Error: "this API key was not accepted; check it and try again"}
	if code == http.StatusTooManyRequests {
		d.Error = "too many attempts; wait a minute and try again"
	}
	if t, err := p.s.open(p.r.Context(), linkAAD, linkToken(p.r)); err == nil {
		if srv, ok := p.s.cfg.Server(t.Server); ok {
			d.Server, d.Form, d.Secret = t.Server, true, upauth.ModeOf(srv.Auth) == upauth.ModeUserSecret
		}
	}
	p.s.render(p.ResponseWriter, code, d)
}

func (p *pageOnRefusal) Write(b []byte) (int, error) {
	if p.written {
		return len(b), nil
	}
	return p.ResponseWriter.Write(b)
}

// ServeConnections serves the caller's own connections (behind the
// gateway's authentication):
//
//	GET    /tool-rag/connections           → {"connections": [{server, kind, expires_at, connected_at}]}
//	POST   /tool-rag/connections/{server}  → {"server", "connect_url"}: a link to connect it
//	DELETE /tool-rag/connections/{server}  → {"revoked": true|false}
//	DELETE /tool-rag/connections?key_id=ID → admin keys: every connection of that key
func (s *Service) ServeConnections(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	reply := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	server := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/tool-rag/connections"), "/")
	switch {
	case r.Method == http.MethodGet && server == "":
		list, err := s.List(ctx)
		if err != nil {
			reply(http.StatusInternalServerError, map[string]string{"error": "could not list connections"})
			return
		}
		if list == nil {
			list = []vault.Info{}
		}
		reply(http.StatusOK, map[string]any{"connections": list})
	case r.Method == http.MethodPost && server != "":
		if s.cfg.PublicURL == "" {
			ctx = WithBaseURL(ctx, BaseURLOf(r))
		}
		link, err := s.Link(ctx, server)
		if err != nil {
			reply(http.StatusNotFound, map[string]string{"error": err.Error()})
			return
		}
		reply(http.StatusOK, map[string]string{"server": server, "connect_url": link})
	case r.Method == http.MethodDelete && server != "":
		ok, err := s.Revoke(ctx, server)
		if err != nil {
			reply(http.StatusInternalServerError, map[string]string{"error": "could not revoke the connection"})
			return
		}
		reply(http.StatusOK, map[string]bool{"revoked": ok})
	case r.Method == http.MethodDelete && r.URL.Query().Get("key_id") != "":
		if !isAdmin(r) {
			reply(http.StatusForbidden, map[string]string{"error": "revoking another key's connections needs an admin key"})
			return
		}
		n, err := s.RevokeKey(ctx, r.URL.Query().Get("key_id"))
		if err != nil {
			reply(http.StatusInternalServerError, map[string]string{"error": "could not revoke the connections"})
			return
		}
		reply(http.StatusOK, map[string]int{"revoked": n})
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		reply(http.StatusMethodNotAllowed, map[string]string{"error": "GET /tool-rag/connections, POST or DELETE /tool-rag/connections/{server}, or (admin) DELETE /tool-rag/connections?key_id=ID"})
	}
}
