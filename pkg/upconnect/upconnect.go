// Package upconnect gives each caller their own identity toward upstream
// servers whose auth is per principal (pkg/upauth): it finds the caller's
// grant in the vault and hands the call the headers to send, and when
// there is none it answers with a connect link — a short-lived,
// single-use URL bound to the principal that asked — where the user
// connects (stores a personal secret, or authorises the gateway with the
// server's OAuth authorization server).
//
// The link is opened in a browser, which does not carry the agent's
// credential, so the page asks the user to prove who they are (their API
// key, as the console does) and refuses anyone but the principal the link
// was issued to; a replayed or expired link is refused too, and in every
// refusal nothing is stored.
package upconnect

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upauth"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// Sealer seals the link and state tokens (the vault's key file).
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, string, error)
	Open(ctx context.Context, sealed []byte, keyID string, aad []byte) ([]byte, error)
}

// Nonces remembers the nonces of used connect links and OAuth states
// until they expire, so each is used once: in memory for one process
// (MemoryNonces), in a shared store where instances come and go (the
// DynamoDB vault table on AWS).
type Nonces interface {
	// Claim records nonce as used until until; false when it already was.
	Claim(ctx context.Context, nonce string, until time.Time) (bool, error)
}

// MemoryNonces is Nonces in this process's memory.
type MemoryNonces struct {
	mu   sync.Mutex
	used map[string]time.Time
	now  func() time.Time
}

// NewMemoryNonces returns an empty MemoryNonces.
func NewMemoryNonces() *MemoryNonces {
	return &MemoryNonces{used: map[string]time.Time{}, now: time.Now}
}

// Claim implements Nonces.
func (m *MemoryNonces) Claim(_ context.Context, nonce string, until time.Time) (bool, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, u := range m.used {
		if now.After(u) {
			delete(m.used, n)
		}
	}
	if _, dup := m.used[nonce]; dup {
		return false, nil
	}
	m.used[nonce] = until
	return true, nil
}

// Server is what the service needs of one registry entry.
type Server struct {
	URL  string
	Auth *upauth.Config
}

// Config configures a Service.
type Config struct {
	Vault  *vault.Vault
	Sealer Sealer
	// Server returns a server of the current registry.
	Server func(id string) (Server, bool)
	// PublicURL is the gateway's external base URL (e.g.
	// https://gw.example.com); empty: taken from each request's Host.
	PublicURL string
	// LinkTTL bounds a connect link's life (default 10 minutes).
	LinkTTL time.Duration
	// HTTP is the client for authorization servers (default: 10 s timeout).
	HTTP   *http.Client
	Logger *slog.Logger
	Now    func() time.Time
	// OnRevoke is told when a principal's grants are removed, so their
	// upstream connections are closed (upstream.Manager.DropPrincipal).
	OnRevoke func(principal string)
	// OnConnected is told when a principal connected a server (e.g. to
	// sync the tools of a server that has no catalog credential).
	OnConnected func(server string)
	// Nonces keeps links and states single use (default: in memory).
	Nonces Nonces
}

// Service is the per-principal identity service.
type Service struct {
	cfg Config
	log *slog.Logger
}

// DefaultLinkTTL is a connect link's default life.
const DefaultLinkTTL = 10 * time.Minute

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = DefaultLinkTTL
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Nonces == nil {
		cfg.Nonces = NewMemoryNonces()
	}
	return &Service{cfg: cfg, log: cfg.Logger}
}

// NeedsConnection is the error of a call to a per-principal server the
// caller has not connected (or whose grant ended): the user has to open
// URL, then call again.
type NeedsConnection struct {
	Server  string
	URL     string
	ID      string // the elicitation id: the link's nonce
	Message string
}

func (e *NeedsConnection) Error() string { return e.Message + ": " + e.URL }

// ConnectURL returns the link to open.
func (e *NeedsConnection) ConnectURL() string { return e.URL }

// ElicitationID returns the elicitation's id.
func (e *NeedsConnection) ElicitationID() string { return e.ID }

// ElicitationMessage returns the message shown with the link.
func (e *NeedsConnection) ElicitationMessage() string { return e.Message }

type baseURLKey struct{}

// WithBaseURL records the gateway's base URL as the request reached it,
// for links when Config.PublicURL is empty.
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseURLKey{}, base)
}

// BaseURLOf is the base URL of r (scheme and host); https when r came
// over TLS or through a proxy that says so (X-Forwarded-Proto, as API
// Gateway and function URLs set it).
func BaseURLOf(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Service) base(ctx context.Context) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	b, _ := ctx.Value(baseURLKey{}).(string)
	return b
}

// caller returns the principal and key id of ctx.
func caller(ctx context.Context) (principal, keyID string, ok bool) {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return "", "", false
	}
	pol, _ := policy.FromContext(ctx)
	return p, pol.KeyID, true
}

// PerPrincipal reports whether server's auth is per principal.
func (s *Service) PerPrincipal(server string) bool {
	srv, ok := s.cfg.Server(server)
	return ok && upauth.PerPrincipal(srv.Auth)
}

// Credential returns ctx carrying the caller's credential for server
// (unchanged for a static server), or a *NeedsConnection error.
func (s *Service) Credential(ctx context.Context, server string) (context.Context, error) {
	srv, ok := s.cfg.Server(server)
	if !ok || !upauth.PerPrincipal(srv.Auth) {
		return ctx, nil
	}
	principal, keyID, ok := caller(ctx)
	if !ok {
		return ctx, fmt.Errorf("server %s reaches each caller as themselves, and this request has no authenticated caller", server)
	}
	k := vault.Key{Principal: principal, Server: server}
	if upauth.ModeOf(srv.Auth) == upauth.ModeTokenExchange {
		headers, err := s.exchange(ctx, k, keyID, srv)
		if err != nil {
			return ctx, err
		}
		return upstream.WithCredential(ctx, upstream.Credential{Principal: principal, Headers: headers}), nil
	}
	g, err := s.cfg.Vault.Get(ctx, k)
	if errors.Is(err, vault.ErrNotFound) {
		return ctx, s.needs(ctx, principal, server, srv)
	}
	if err != nil {
		s.log.WarnContext(ctx, "stored upstream connection unusable; asking again", "server", server, "error", err)
		_ = s.cfg.Vault.Delete(ctx, k)
		return ctx, s.needs(ctx, principal, server, srv)
	}
	headers, err := s.headers(ctx, k, srv, g)
	if err != nil {
		return ctx, err
	}
	return upstream.WithCredential(ctx, upstream.Credential{Principal: principal, Headers: headers}), nil
}

// headers returns what grant g sends to the server, refreshing an OAuth
// token about to expire.
func (s *Service) headers(ctx context.Context, k vault.Key, srv Server, g vault.Grant) (map[string]string, error) {
	switch g.Kind {
	case vault.KindSecret:
		name, prefix := srv.Auth.SecretHeader()
		return map[string]string{name: prefix + g.Secret}, nil
	case vault.KindOAuth, vault.KindExchange:
		if !g.Expiry.IsZero() && s.cfg.Now().Add(refreshMargin).After(g.Expiry) {
			ng, err := s.refresh(ctx, k, srv, g)
			if err != nil {
				s.log.InfoContext(ctx, "upstream token refresh failed; asking the user again", "server", k.Server, "error", err)
				_ = s.cfg.Vault.Delete(ctx, k)
				return nil, s.needs(ctx, k.Principal, k.Server, srv)
			}
			g = ng
		}
		return map[string]string{"Authorization": "Bearer " + g.AccessToken}, nil
	}
	return nil, fmt.Errorf("the stored connection to %s is of an unknown kind %q", k.Server, g.Kind)
}

// refreshMargin: a token expiring within it is refreshed before the call.
const refreshMargin = 60 * time.Second

// Refused is told that server answered the caller's credential with HTTP
// 401: the grant is dropped, and the returned error asks for a new one.
func (s *Service) Refused(ctx context.Context, server string) error {
	srv, ok := s.cfg.Server(server)
	principal, _, okc := caller(ctx)
	if !ok || !okc || !upauth.PerPrincipal(srv.Auth) {
		return nil
	}
	k := vault.Key{Principal: principal, Server: server}
	if err := s.cfg.Vault.Delete(ctx, k); err != nil {
		s.log.WarnContext(ctx, "could not drop a refused upstream grant", "server", server, "error", err)
	}
	if s.cfg.OnRevoke != nil {
		s.cfg.OnRevoke(principal)
	}
	if upauth.ModeOf(srv.Auth) == upauth.ModeTokenExchange {
		return fmt.Errorf("server %s refused the token exchanged for you (HTTP 401); call again to exchange a new one", server)
	}
	return s.needs(ctx, principal, server, srv)
}

// Status reports whether the caller has connected server, and if not the
// link to connect it ("" for a static server).
func (s *Service) Status(ctx context.Context, server string) (needs bool, link string) {
	srv, ok := s.cfg.Server(server)
	if !ok || !upauth.PerPrincipal(srv.Auth) || upauth.ModeOf(srv.Auth) == upauth.ModeTokenExchange {
		return false, ""
	}
	principal, _, ok := caller(ctx)
	if !ok {
		return false, ""
	}
	if _, err := s.cfg.Vault.Get(ctx, vault.Key{Principal: principal, Server: server}); err == nil {
		return false, ""
	}
	var nc *NeedsConnection
	if errors.As(s.needs(ctx, principal, server, srv), &nc) {
		return true, nc.URL
	}
	return true, ""
}

func (s *Service) needs(ctx context.Context, principal, server string, srv Server) error {
	tok, nonce, err := s.seal(ctx, linkAAD, ticket{Principal: principal, Server: server, Exp: s.cfg.Now().Add(s.cfg.LinkTTL).Unix()})
	if err != nil {
		return fmt.Errorf("could not make a connect link for %s: %w", server, err)
	}
	what := "connect your account"
	if upauth.ModeOf(srv.Auth) == upauth.ModeUserSecret {
		what = "store your personal access token"
	}
	return &NeedsConnection{
		Server:  server,
		URL:     s.base(ctx) + LinkPath + tok,
		ID:      nonce,
		Message: fmt.Sprintf("Server %s acts as you: open the link to %s (valid %s, for you only), then call again", server, what, s.cfg.LinkTTL),
	}
}

// LinkPath is where connect links are served; CallbackPath receives the
// authorization servers' redirects.
const (
	LinkPath     = "/connect/"
	CallbackPath = "/connect-callback"
)

// ticket is what a connect link or an OAuth state carries, sealed.
type ticket struct {
	Principal string `json:"p"`
	Server    string `json:"s"`
	Nonce     string `json:"n"`
	Exp       int64  `json:"e"`
	// OAuth state only: the PKCE verifier and what the token request
	// needs.
	Verifier string            `json:"v,omitempty"`
	Client   map[string]string `json:"c,omitempty"`
	KeyID    string            `json:"k,omitempty"`
}

var (
	linkAAD  = []byte("toolrag-connect-link-v1")
	stateAAD = []byte("toolrag-oauth-state-v1")
)

func (s *Service) seal(ctx context.Context, aad []byte, t ticket) (string, string, error) {
	nb := make([]byte, 16)
	rand.Read(nb)
	t.Nonce = base64.RawURLEncoding.EncodeToString(nb)
	pt, err := json.Marshal(t)
	if err != nil {
		return "", "", err
	}
	sealed, kid, err := s.cfg.Sealer.Seal(ctx, pt, aad)
	if err != nil {
		return "", "", err
	}
	return kid + "." + base64.RawURLEncoding.EncodeToString(sealed), t.Nonce, nil
}

// Refusals of a link or state.
var (
	errBadLink  = errors.New("this link is not valid")
	errExpired  = errors.New("this link has expired; call the tool again to get a new one")
	errUsed     = errors.New("this link was already used; call the tool again to get a new one")
	errNotYours = errors.New("this link was issued to someone else; open the link your own agent gave you")
	errNoStore  = errors.New("the gateway could not check this link right now; try again in a minute")
)

// open checks a token: well-formed, sealed by this gateway for aad, not
// expired. It does not consume it.
func (s *Service) open(ctx context.Context, aad []byte, tok string) (ticket, error) {
	kid, b64, ok := strings.Cut(tok, ".")
	if !ok {
		return ticket{}, errBadLink
	}
	sealed, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		return ticket{}, errBadLink
	}
	pt, err := s.cfg.Sealer.Open(ctx, sealed, kid, aad)
	if err != nil {
		return ticket{}, errBadLink
	}
	var t ticket
	if json.Unmarshal(pt, &t) != nil || t.Nonce == "" {
		return ticket{}, errBadLink
	}
	if s.cfg.Now().Unix() > t.Exp {
		return ticket{}, errExpired
	}
	return t, nil
}

// claim checks that t belongs to principal and consumes its nonce (single
// use). Nothing is consumed when it is refused.
func (s *Service) claim(ctx context.Context, t ticket, principal string) error {
	if subtle.ConstantTimeCompare([]byte(t.Principal), []byte(principal)) != 1 {
		return errNotYours
	}
	fresh, err := s.cfg.Nonces.Claim(ctx, t.Nonce, time.Unix(t.Exp, 0).Add(time.Minute))
	if err != nil {
		s.log.ErrorContext(ctx, "could not record a used connect link", "error", err)
		return errNoStore
	}
	if !fresh {
		return errUsed
	}
	return nil
}

// List returns the caller's connections, without secrets.
func (s *Service) List(ctx context.Context) ([]vault.Info, error) {
	principal, _, ok := caller(ctx)
	if !ok {
		return nil, errors.New("no authenticated caller")
	}
	return s.cfg.Vault.List(ctx, principal)
}

// Revoke removes the caller's connection to server (revoking its token at
// the authorization server when it offers RFC 7009 revocation).
func (s *Service) Revoke(ctx context.Context, server string) (bool, error) {
	principal, _, ok := caller(ctx)
	if !ok {
		return false, errors.New("no authenticated caller")
	}
	n, err := s.revoke(ctx, principal, func(in vault.Info) bool { return in.Server == server })
	return n > 0, err
}

// RevokeKey removes every connection made with API key (or subject) id
// keyID: an admin's revocation, or the key was removed or disabled.
func (s *Service) RevokeKey(ctx context.Context, keyID string) (int, error) {
	return s.revoke(ctx, "", func(in vault.Info) bool { return in.KeyID == keyID })
}

// RevokePrincipal removes principal's connection to server, or every
// connection of principal when server is "": an admin's revocation from
// the console.
func (s *Service) RevokePrincipal(ctx context.Context, principal, server string) (int, error) {
	if principal == "" {
		return 0, errors.New("name the principal whose connections to revoke")
	}
	return s.revoke(ctx, principal, func(in vault.Info) bool { return server == "" || in.Server == server })
}

// revoke removes the grants of principal ("" for every principal's) that
// match. The tokens of an OAuth or exchanged grant are first revoked at
// the authorization server where it offers RFC 7009 revocation; the
// principals' upstream connections are closed after.
func (s *Service) revoke(ctx context.Context, principal string, match func(vault.Info) bool) (int, error) {
	list, err := s.cfg.Vault.List(ctx, principal)
	if err != nil {
		return 0, err
	}
	dropped := map[string]bool{}
	defer func() {
		if s.cfg.OnRevoke != nil {
			for p := range dropped {
				s.cfg.OnRevoke(p)
			}
		}
	}()
	n := 0
	for _, in := range list {
		if !match(in) {
			continue
		}
		k := vault.Key{Principal: in.Principal, Server: in.Server}
		if in.Kind != vault.KindSecret {
			if g, err := s.cfg.Vault.Get(ctx, k); err == nil {
				s.revokeAtServer(ctx, g)
			}
		}
		if err := s.cfg.Vault.Delete(ctx, k); err != nil {
			return n, err
		}
		dropped[in.Principal] = true
		n++
	}
	return n, nil
}

// Connections lists every principal's connections to server ("" for
// every server), without secrets: what an admin sees.
func (s *Service) Connections(ctx context.Context, server string) ([]vault.Info, error) {
	all, err := s.cfg.Vault.List(ctx, "")
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, in := range all {
		if server == "" || in.Server == server {
			out = append(out, in)
		}
	}
	return out, nil
}

// Counts returns how many principals are connected to each server.
func (s *Service) Counts(ctx context.Context) (map[string]int, error) {
	all, err := s.Connections(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, in := range all {
		out[in.Server]++
	}
	return out, nil
}

func randRead(b []byte) { rand.Read(b) }

// ConnectedKeys returns the key ids that have connections.
func (s *Service) ConnectedKeys(ctx context.Context) ([]string, error) {
	all, err := s.cfg.Vault.List(ctx, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, in := range all {
		if !seen[in.KeyID] {
			seen[in.KeyID] = true
			out = append(out, in.KeyID)
		}
	}
	return out, nil
}

// CatalogCredential returns the credential of the most recently connected
// principal of server, for the gateway's own tool list sync of a server
// that has no catalog credential configured (upstream.SetCatalogCredential).
func (s *Service) CatalogCredential(ctx context.Context, server string) (upstream.Credential, bool) {
	srv, ok := s.cfg.Server(server)
	if !ok || !upauth.PerPrincipal(srv.Auth) || upauth.ModeOf(srv.Auth) == upauth.ModeTokenExchange {
		return upstream.Credential{}, false
	}
	all, err := s.cfg.Vault.List(ctx, "")
	if err != nil {
		return upstream.Credential{}, false
	}
	var best *vault.Info
	for i := range all {
		if all[i].Server == server && (best == nil || all[i].Updated.After(best.Updated)) {
			best = &all[i]
		}
	}
	if best == nil {
		return upstream.Credential{}, false
	}
	k := vault.Key{Principal: best.Principal, Server: server}
	g, err := s.cfg.Vault.Get(ctx, k)
	if err != nil {
		return upstream.Credential{}, false
	}
	h, err := s.headers(ctx, k, srv, g)
	if err != nil {
		return upstream.Credential{}, false
	}
	return upstream.Credential{Principal: best.Principal, Headers: h}, true
}

// Link returns a connect link for the caller to server (POST
// /tool-rag/connections/{server}): the way to connect a server before any
// of its tools is known.
func (s *Service) Link(ctx context.Context, server string) (string, error) {
	srv, ok := s.cfg.Server(server)
	principal, _, okc := caller(ctx)
	pol, _ := policy.FromContext(ctx)
	if !ok || !okc || !pol.AllowsServer(server) {
		return "", fmt.Errorf("server %q not found", server)
	}
	if !upauth.PerPrincipal(srv.Auth) || upauth.ModeOf(srv.Auth) == upauth.ModeTokenExchange {
		return "", fmt.Errorf("server %s is not connected per user through a link", server)
	}
	var nc *NeedsConnection
	err := s.needs(ctx, principal, server, srv)
	if errors.As(err, &nc) {
		return nc.URL, nil
	}
	return "", err
}

func (s *Service) connected(server string) {
	if s.cfg.OnConnected != nil {
		s.cfg.OnConnected(server)
	}
}
