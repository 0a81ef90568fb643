package upconnect

// The gateway as an OAuth 2.1 client of an upstream's authorization
// server: discovery from the server's 401 (RFC 9728 protected-resource
// metadata, then RFC 8414 authorization-server metadata), client identity
// (pre-registered, dynamic registration RFC 7591, or the gateway's client
// ID metadata document), authorization code with PKCE S256 and the
// resource indicator (RFC 8707), refresh, and revocation (RFC 7009).

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

func isAdmin(r *http.Request) bool {
	p, ok := policy.FromContext(r.Context())
	return ok && p.Admin
}

// asMeta is what the gateway reads of RFC 8414 metadata.
type asMeta struct {
	Issuer                 string   `json:"issuer"`
	AuthorizationEndpoint  string   `json:"authorization_endpoint"`
	TokenEndpoint          string   `json:"token_endpoint"`
	RegistrationEndpoint   string   `json:"registration_endpoint"`
	RevocationEndpoint     string   `json:"revocation_endpoint"`
	CodeChallengeMethods   []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocs   bool     `json:"client_id_metadata_document_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	TokenEndpointAuthMeths []string `json:"token_endpoint_auth_methods_supported"`
}

// discovery is one server's discovered authorization setup.
type discovery struct {
	resource string // the resource indicator: the server's canonical URL
	scopes   string
	as       asMeta
}

// clients caches dynamically registered clients per (server, issuer,
// redirect URI).
var clients sync.Map // string → map[string]string

const maxMetaBytes = 256 << 10

func (s *Service) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered HTTP %d", u, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxMetaBytes)).Decode(v)
}

// challenge parses the parameters of a Bearer WWW-Authenticate challenge.
func challenge(h []string) map[string]string {
	out := map[string]string{}
	for _, v := range h {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		for rest != "" {
			rest = strings.TrimLeft(rest, " ,")
			name, after, ok := strings.Cut(rest, "=")
			if !ok {
				break
			}
			name = strings.ToLower(strings.TrimSpace(name))
			var val string
			if strings.HasPrefix(after, `"`) {
				q, err := strconv.QuotedPrefix(after)
				if err != nil {
					end := strings.IndexByte(after[1:], '"')
					if end < 0 {
						break
					}
					q = after[:end+2]
					val = q[1 : len(q)-1]
				} else {
					val, _ = strconv.Unquote(q)
				}
				rest = after[len(q):]
			} else {
				val, rest, _ = strings.Cut(after, ",")
				val = strings.TrimSpace(val)
			}
			out[name] = val
		}
	}
	return out
}

// discover finds the server's authorization server: probe for the 401
// challenge, read the protected-resource metadata, then the AS metadata.
func (s *Service) discover(ctx context.Context, srv Server) (discovery, error) {
	d := discovery{resource: srv.URL}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolrag-mcp-gateway","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	if err != nil {
		return d, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		return d, fmt.Errorf("could not reach the server: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	params := challenge(resp.Header.Values("WWW-Authenticate"))
	d.scopes = params["scope"]

	u, err := url.Parse(srv.URL)
	if err != nil {
		return d, err
	}
	origin := u.Scheme + "://" + u.Host
	var prmURLs []string
	if p := params["resource_metadata"]; p != "" {
		pu, err := url.Parse(p)
		if err != nil || pu.Scheme+"://"+pu.Host != origin {
			return d, errors.New("the server's 401 names protected-resource metadata on another origin; refused")
		}
		prmURLs = append(prmURLs, p)
	}
	path := strings.TrimRight(u.Path, "/")
	if path != "" {
		prmURLs = append(prmURLs, origin+"/.well-known/oauth-protected-resource"+path)
	}
	prmURLs = append(prmURLs, origin+"/.well-known/oauth-protected-resource")
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	issuer := ""
	if srv.Auth != nil {
		issuer = srv.Auth.AuthorizationServer
	}
	var lastErr error
	found := false
	for _, pu := range prmURLs {
		if lastErr = s.getJSON(ctx, pu, &prm); lastErr == nil {
			found = true
			break
		}
	}
	if found {
		if prm.Resource != "" {
			if strings.TrimRight(prm.Resource, "/") != strings.TrimRight(srv.URL, "/") && !strings.HasPrefix(srv.URL, strings.TrimRight(prm.Resource, "/")+"/") {
				return d, fmt.Errorf("the server's protected-resource metadata names resource %q, not %q; refused", prm.Resource, srv.URL)
			}
			d.resource = prm.Resource
		}
		if issuer == "" && len(prm.AuthorizationServers) > 0 {
			issuer = prm.AuthorizationServers[0]
		}
		if d.scopes == "" && len(prm.ScopesSupported) > 0 {
			d.scopes = strings.Join(prm.ScopesSupported, " ")
		}
	}
	if issuer == "" {
		return d, fmt.Errorf("the server names no authorization server (no RFC 9728 metadata: %v); set auth.authorization_server", lastErr)
	}
	if srv.Auth != nil && len(srv.Auth.Scopes) > 0 {
		d.scopes = strings.Join(srv.Auth.Scopes, " ")
	}
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" {
		return d, fmt.Errorf("authorization server %q is not a URL", issuer)
	}
	ipath := strings.TrimRight(iu.Path, "/")
	iorigin := iu.Scheme + "://" + iu.Host
	for _, mu := range []string{
		iorigin + "/.well-known/oauth-authorization-server" + ipath,
		iorigin + "/.well-known/openid-configuration" + ipath,
		strings.TrimRight(issuer, "/") + "/.well-known/openid-configuration",
	} {
		if lastErr = s.getJSON(ctx, mu, &d.as); lastErr == nil && d.as.AuthorizationEndpoint != "" && d.as.TokenEndpoint != "" {
			break
		}
	}
	if d.as.AuthorizationEndpoint == "" || d.as.TokenEndpoint == "" {
		return d, fmt.Errorf("could not read the authorization server's metadata (RFC 8414) at %s: %v", issuer, lastErr)
	}
	s256 := false
	for _, m := range d.as.CodeChallengeMethods {
		s256 = s256 || m == "S256"
	}
	if !s256 {
		return d, errors.New("the authorization server does not advertise PKCE S256 (code_challenge_methods_supported); the MCP authorization spec requires it, so the gateway refuses to continue")
	}
	return d, nil
}

// ClientMetadataPath is where the gateway serves its client ID metadata
// document.
const ClientMetadataPath = "/connect-client.json"

// client returns the gateway's client at the authorization server.
func (s *Service) client(ctx context.Context, server string, srv Server, d discovery, redirect string) (map[string]string, error) {
	a := srv.Auth
	switch {
	case a.ClientID != "":
		return map[string]string{"client_id": a.ClientID, "client_secret": a.ClientSecret}, nil
	case a.ClientMetadataDocument:
		return map[string]string{"client_id": strings.TrimSuffix(redirect, CallbackPath) + ClientMetadataPath}, nil
	}
	if d.as.RegistrationEndpoint == "" {
		return nil, errors.New("the authorization server offers no dynamic client registration; set auth.client_id (a pre-registered client) or auth.client_metadata_document")
	}
	ck := server + "\x00" + d.as.Issuer + "\x00" + redirect
	if c, ok := clients.Load(ck); ok {
		return c.(map[string]string), nil
	}
	meta := map[string]any{
		"client_name":                "MCP gateway",
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if d.scopes != "" { // RFC 7591: scope, when present, is a non-empty list
		meta["scope"] = d.scopes
	}
	reg, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.RegistrationEndpoint, strings.NewReader(string(reg)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dynamic client registration: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("dynamic client registration answered HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetaBytes)).Decode(&out); err != nil || out.ClientID == "" {
		return nil, errors.New("dynamic client registration returned no client_id")
	}
	c := map[string]string{"client_id": out.ClientID, "client_secret": out.ClientSecret}
	clients.Store(ck, c)
	return c, nil
}

// stateCookie binds an authorization in flight to the browser that
// started it (so a victim cannot be made to finish an attacker's flow).
const stateCookie = "toolrag_connect"

func cookieValue(nonce string) string {
	sum := sha256.Sum256([]byte("toolrag-connect-cookie\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// startOAuth discovers, registers if needed, and returns the authorization
// URL to send the user to; the state is sealed and bound to principal.
func (s *Service) startOAuth(ctx context.Context, principal, keyID, server string, srv Server) (string, error) {
	d, err := s.discover(ctx, srv)
	if err != nil {
		return "", err
	}
	redirect := s.base(ctx) + CallbackPath
	c, err := s.client(ctx, server, srv, d, redirect)
	if err != nil {
		return "", err
	}
	vb := make([]byte, 32)
	randRead(vb)
	verifier := base64.RawURLEncoding.EncodeToString(vb)
	sum := sha256.Sum256([]byte(verifier))
	client := map[string]string{
		"client_id": c["client_id"], "client_secret": c["client_secret"],
		"token_endpoint": d.as.TokenEndpoint, "revocation_endpoint": d.as.RevocationEndpoint,
		"resource": d.resource, "redirect_uri": redirect,
	}
	state, nonce, err := s.seal(ctx, stateAAD, ticket{Principal: principal, Server: server, KeyID: keyID, Verifier: verifier, Client: client,
		Exp: s.cfg.Now().Add(s.cfg.LinkTTL).Unix()})
	if err != nil {
		return "", err
	}
	if w, ok := ctx.Value(writerKey{}).(http.ResponseWriter); ok {
		http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: cookieValue(nonce), Path: CallbackPath, HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(redirect, "https://"), MaxAge: int(s.cfg.LinkTTL.Seconds())})
	}
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", c["client_id"])
	q.Set("redirect_uri", redirect)
	if d.scopes != "" {
		q.Set("scope", d.scopes)
	}
	q.Set("state", state)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", d.resource)
	sep := "?"
	if strings.Contains(d.as.AuthorizationEndpoint, "?") {
		sep = "&"
	}
	return d.as.AuthorizationEndpoint + sep + q.Encode(), nil
}

type writerKey struct{}

// tokenResponse is an OAuth token endpoint's answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
}

// tokenRequest posts form to the client's token endpoint.
func (s *Service) tokenRequest(ctx context.Context, client map[string]string, form url.Values) (tokenResponse, error) {
	var tr tokenResponse
	if client["client_secret"] == "" {
		form.Set("client_id", client["client_id"])
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, client["token_endpoint"], strings.NewReader(form.Encode()))
	if err != nil {
		return tr, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if client["client_secret"] != "" {
		req.SetBasicAuth(url.QueryEscape(client["client_id"]), url.QueryEscape(client["client_secret"]))
	}
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		return tr, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return tr, fmt.Errorf("token endpoint answered HTTP %d with %q, not JSON", resp.StatusCode, mt)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetaBytes)).Decode(&tr); err != nil {
		return tr, errors.New("token endpoint answered with invalid JSON")
	}
	if resp.StatusCode != http.StatusOK || tr.Error != "" || tr.AccessToken == "" {
		return tr, fmt.Errorf("token endpoint refused (HTTP %d, error %q)", resp.StatusCode, tr.Error)
	}
	return tr, nil
}

func (s *Service) grantFrom(tr tokenResponse, client map[string]string, keyID string, kind string) vault.Grant {
	g := vault.Grant{Kind: kind, AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken, TokenType: tr.TokenType, Scope: tr.Scope, Client: client, KeyID: keyID}
	if tr.ExpiresIn > 0 {
		g.Expiry = s.cfg.Now().Add(time.Duration(tr.ExpiresIn) * time.Second).UTC()
	}
	return g
}

// ServeCallback serves GET /connect-callback: the authorization server's
// redirect. The state must be this gateway's, unexpired, unused, and
// started in this browser; then the code is exchanged and the grant
// stored for the state's principal.
func (s *Service) ServeCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	t, err := s.open(ctx, stateAAD, q.Get("state"))
	if err != nil {
		s.render(w, http.StatusBadRequest, pageData{Server: "a server", Error: "this authorization is not valid or has expired; call the tool again to get a new link"})
		return
	}
	ck, cerr := r.Cookie(stateCookie)
	if cerr != nil || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(cookieValue(t.Nonce))) != 1 {
		s.render(w, http.StatusForbidden, pageData{Server: t.Server, Error: "this authorization was started in another browser; open your own connect link"})
		return
	}
	if err := s.claim(ctx, t, t.Principal); err != nil {
		s.render(w, http.StatusGone, pageData{Server: t.Server, Error: err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: CallbackPath, MaxAge: -1})
	if e := q.Get("error"); e != "" {
		s.render(w, http.StatusOK, pageData{Server: t.Server, Error: "the authorization server answered " + e + "; nothing was stored"})
		return
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {t.Client["redirect_uri"]},
		"code_verifier": {t.Verifier}, "resource": {t.Client["resource"]}}
	tr, err := s.tokenRequest(ctx, t.Client, form)
	if err != nil {
		s.log.WarnContext(ctx, "upstream authorization code exchange failed", "server", t.Server, "error", err)
		s.render(w, http.StatusBadGateway, pageData{Server: t.Server, Error: "the authorization server did not issue a token; nothing was stored"})
		return
	}
	if err := s.cfg.Vault.Put(ctx, vault.Key{Principal: t.Principal, Server: t.Server}, s.grantFrom(tr, t.Client, t.KeyID, vault.KindOAuth)); err != nil {
		s.log.ErrorContext(ctx, "storing an upstream grant failed", "server", t.Server, "error", err)
		s.render(w, http.StatusInternalServerError, pageData{Server: t.Server, Error: "the connection could not be stored; try again"})
		return
	}
	s.connected(t.Server)
	s.render(w, http.StatusOK, pageData{Server: t.Server, Done: "Connected. Return to your agent and call the tool again."})
}

// refresh renews g with its refresh token and stores the result.
func (s *Service) refresh(ctx context.Context, k vault.Key, srv Server, g vault.Grant) (vault.Grant, error) {
	if g.RefreshToken == "" || g.Client["token_endpoint"] == "" {
		return g, errors.New("the token expired and there is no refresh token")
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.RefreshToken}}
	if r := g.Client["resource"]; r != "" {
		form.Set("resource", r)
	}
	tr, err := s.tokenRequest(ctx, g.Client, form)
	if err != nil {
		return g, err
	}
	ng := s.grantFrom(tr, g.Client, g.KeyID, g.Kind)
	if ng.RefreshToken == "" {
		ng.RefreshToken = g.RefreshToken
	}
	if err := s.cfg.Vault.Put(ctx, k, ng); err != nil {
		return g, err
	}
	return ng, nil
}

// revokeAtServer revokes g's tokens where the server offers RFC 7009.
func (s *Service) revokeAtServer(ctx context.Context, g vault.Grant) {
	ep := g.Client["revocation_endpoint"]
	if ep == "" {
		return
	}
	for _, tok := range []struct{ v, hint string }{{g.RefreshToken, "refresh_token"}, {g.AccessToken, "access_token"}} {
		if tok.v == "" {
			continue
		}
		form := url.Values{"token": {tok.v}, "token_type_hint": {tok.hint}}
		if g.Client["client_secret"] == "" {
			form.Set("client_id", g.Client["client_id"])
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, strings.NewReader(form.Encode()))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if g.Client["client_secret"] != "" {
			req.SetBasicAuth(url.QueryEscape(g.Client["client_id"]), url.QueryEscape(g.Client["client_secret"]))
		}
		if resp, err := s.cfg.HTTP.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
		}
	}
}

// ServeClientMetadata serves the gateway's client ID metadata document.
func (s *Service) ServeClientMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.base(r.Context())
	if base == "" {
		base = BaseURLOf(r)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"client_id":                  base + ClientMetadataPath,
		"client_name":                "MCP gateway",
		"redirect_uris":              []string{base + CallbackPath},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	})
}

// Routes mounts the service's routes on mux: the unauthenticated link
// page, callback and metadata document; authenticated (by authn) the
// link's completion and /tool-rag/connections.
func (s *Service) Routes(mux *http.ServeMux, authn func(http.Handler) http.Handler) {
	withBase := func(h http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := context.WithValue(r.Context(), writerKey{}, w)
			if s.cfg.PublicURL == "" {
				ctx = WithBaseURL(ctx, BaseURLOf(r))
			}
			h(w, r.WithContext(ctx))
		})
	}
	mux.Handle("GET "+LinkPath, withBase(s.ServeLink))
	mux.Handle("POST "+LinkPath, s.sameOrigin(FormKey(s.refusedAsPage(authn(withBase(s.CompleteLink))))))
	mux.Handle("GET "+CallbackPath, withBase(s.ServeCallback))
	mux.Handle("GET "+ClientMetadataPath, withBase(s.ServeClientMetadata))
	mux.Handle("/tool-rag/connections", authn(http.HandlerFunc(s.ServeConnections)))
	mux.Handle("/tool-rag/connections/", authn(http.HandlerFunc(s.ServeConnections)))
}
